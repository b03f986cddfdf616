package sample

import (
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"net"
	"strings"
	"testing"
	"time"
)

// tlsStream adds the frontend's certificate, the server connection and
// the client verification to a testStream.
type tlsStream struct {
	testStream
	front   *x509.Certificate
	back    *tls.ConnectionState
	verify  [4]int
	hasVrfy bool
}

func (t *tlsStream) FrontCertificate() *x509.Certificate   { return t.front }
func (t *tlsStream) BackendTLSState() *tls.ConnectionState { return t.back }
func (t *tlsStream) ClientVerify() (int, int, int, int) {
	return t.verify[0], t.verify[1], t.verify[2], t.verify[3]
}

// handshake runs a real handshake over loopback and returns both sides'
// states.
func handshake(t *testing.T, srvCfg, cliCfg *tls.Config) (srv, cli *tls.ConnectionState) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		cs  tls.ConnectionState
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			ch <- res{err: err}
			return
		}
		defer c.Close()
		tc := tls.Client(c, cliCfg)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		err = tc.Handshake()
		ch <- res{tc.ConnectionState(), err}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := tls.Server(c, srvCfg)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	s := tc.ConnectionState()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	return &s, &r.cs
}

func TestFetchesTLSCertificates(t *testing.T) {
	srvCert := selfSigned(t, pkix.Name{Organization: []string{"Srv"}, CommonName: "www.example.org"}, 7)
	srvLeaf, _ := x509.ParseCertificate(srvCert.Certificate[0])
	cliCert := selfSigned(t, pkix.Name{CommonName: "client"}, 9)
	srv, cli := handshake(t,
		&tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequestClientCert,
			NextProtos: []string{"http/1.1"}, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}},
		&tls.Config{ServerName: "www.example.org", InsecureSkipVerify: true, Certificates: []tls.Certificate{cliCert},
			NextProtos: []string{"http/1.1"}})
	sum := sha1.Sum(srvLeaf.Raw)
	if len(srv.TLSUnique) != 12 || string(srv.TLSUnique) != string(cli.TLSUnique) {
		t.Fatalf("tls-unique: %x %x", srv.TLSUnique, cli.TLSUnique)
	}
	r := request(t, testReq)
	r.Stream = &tlsStream{testStream: testStream{tls: srv}, front: srvLeaf, back: cli, verify: [4]int{10, 10, 20, 1}}
	for _, tc := range []struct{ expr, want string }{
		{"ssl_f_s_dn", "/O=Srv/CN=www.example.org"},
		{"ssl_f_s_dn(CN)", "www.example.org"},
		{"ssl_f_serial,hex", "07"},
		{"ssl_f_sha1,hex", strings.ToUpper(hex.EncodeToString(sum[:]))},
		{"ssl_f_sig_alg", "ecdsa-with-SHA256"},
		{"ssl_f_key_alg", "id-ecPublicKey"},
		{"ssl_f_version", "3"},
		{"ssl_f_notafter", "340607080910Z"},
		{"ssl_c_s_dn", "/CN=client"},
		{"ssl_c_sig_alg", "ecdsa-with-SHA256"},
		// The client sent only its own certificate: OpenSSL's peer
		// chain on the server side leaves it out.
		{"ssl_c_chain_der", "<none>"},
		{"ssl_c_verify", "10"},
		{"ssl_c_err", "10"},
		{"ssl_c_ca_err", "20"},
		{"ssl_c_ca_err_depth", "1"},
		{"ssl_s_s_dn", "/O=Srv/CN=www.example.org"},
		{"ssl_s_serial,hex", "07"},
		{"ssl_s_chain_der,hex", strings.ToUpper(hex.EncodeToString(srvLeaf.Raw))},
		{"ssl_bc", "1"},
		{"ssl_bc_protocol", "TLSv1.2"},
		{"ssl_bc_cipher", "ECDHE-ECDSA-AES256-GCM-SHA384"},
		{"ssl_bc_alg_keysize", "256"},
		{"ssl_bc_alpn", "http/1.1"},
		{"ssl_bc_is_resumed", "0"},
		{"ssl_fc_has_early", "0"},
		{"ssl_fc_npn", "<none>"},
		{"ssl_fc_unique_id,hex", strings.ToUpper(hex.EncodeToString(srv.TLSUnique))},
	} {
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}

	// A plain client connection has no frontend certificate, a stream
	// without a server connection no server one.
	r.Stream = &tlsStream{front: srvLeaf}
	for _, e := range []string{"ssl_f_s_dn", "ssl_s_s_dn", "ssl_bc_protocol", "ssl_c_err"} {
		if got := fetchText(t, r, e); got != "<none>" {
			t.Errorf("without TLS, %s = %q", e, got)
		}
	}
	if got := fetchText(t, r, "ssl_bc"); got != "0" {
		t.Errorf("ssl_bc without a server connection = %q", got)
	}
}

func TestFetchesTLSRefused(t *testing.T) {
	for _, e := range []string{"ssl_fc_session_id", "ssl_bc_client_random", "ssl_fc_server_random", "ssl_bc_unique_id"} {
		_, err := CompileExpr(nil, e)
		if err == nil || !strings.Contains(err.Error(), "not supported by goha") {
			t.Errorf("%s: %v", e, err)
		}
	}
}

func TestASN1TimeCentury(t *testing.T) {
	// A GeneralizedTime (2050 on) is shown without its century.
	got := string(appendASN1Time(nil, time.Date(2050, 4, 21, 18, 59, 42, 0, time.UTC)))
	if got != "500421185942Z" {
		t.Errorf("got %q", got)
	}
}
