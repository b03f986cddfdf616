package sample

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"math/big"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testStream is a stream as the running process describes it, with fixed
// answers.
type testStream struct {
	fe, be, srv string
	feID, beID  int
	srvID       int
	listener    string
	first       bool
	reqLine     string
	stats       map[string]int64 // "<proxy>:<stat>" and "<be>/<srv>:<stat>"
	tcpInfo     *TCPInfo
	srvLocal    net.Addr
	payload     []byte
	tls         *tls.ConnectionState
	body        []byte
}

func (t *testStream) Frontend() (string, int) { return t.fe, t.feID }
func (t *testStream) Backend() (string, int, bool) {
	return t.be, t.beID, t.be != ""
}
func (t *testStream) Server() (string, int, bool) { return t.srv, t.srvID, t.srv != "" }
func (t *testStream) Listener() (string, int, bool) {
	return t.listener, 1, true
}
func (t *testStream) ProxyStat(name string, st ProxyStat) (int64, bool) {
	if name == "" {
		name = t.be
	}
	v, ok := t.stats[name+":"+strconv.Itoa(int(st))]
	return v, ok
}
func (t *testStream) ServerStat(be, srv string, st ServerStat) (int64, bool) {
	if be == "" {
		be = t.be
	}
	v, ok := t.stats[be+"/"+srv+":"+strconv.Itoa(int(st))]
	return v, ok
}
func (t *testStream) Stopping() bool { return false }
func (t *testStream) Thread() int    { return 0 }
func (t *testStream) FirstRequest() bool {
	return t.first
}
func (t *testStream) RequestLine() ([]byte, bool) {
	return []byte(t.reqLine), t.reqLine != ""
}
func (t *testStream) ClientTCPInfo(ti *TCPInfo) bool {
	if t.tcpInfo == nil {
		return false
	}
	*ti = *t.tcpInfo
	return true
}
func (t *testStream) ServerAddrs() (net.Addr, net.Addr, bool) {
	return t.srvLocal, &net.TCPAddr{IP: net.ParseIP("10.0.0.9"), Port: 8000}, t.srvLocal != nil
}
func (t *testStream) Payload(res bool) ([]byte, bool) { return t.payload, t.payload != nil }
func (t *testStream) TLSState() *tls.ConnectionState  { return t.tls }
func (t *testStream) Body(res bool) ([]byte, bool)    { return t.body, t.body != nil }

func TestFetchesInternal(t *testing.T) {
	st := &testStream{fe: "fe", feID: 1, be: "be", beID: 3, srv: "srv1", srvID: 2, listener: "foo",
		first: true, reqLine: "GET /a/b?c=d HTTP/1.1",
		stats: map[string]int64{
			"be:" + strconv.Itoa(int(BeNbSrv)):          2,
			"other:" + strconv.Itoa(int(BeNbSrv)):       5,
			"be:" + strconv.Itoa(int(BeConn)):           7,
			"fe:" + strconv.Itoa(int(FeReqRate)):        9,
			"be/srv1:" + strconv.Itoa(int(SrvIsUp)):     1,
			"be/srv2:" + strconv.Itoa(int(SrvIsUp)):     0,
			"other/s:" + strconv.Itoa(int(SrvConn)):     4,
			"be:" + strconv.Itoa(int(BeServerTmo)):      5000,
			"be/srv1:" + strconv.Itoa(int(SrvConnFree)): -1,
			"be/srv1:" + strconv.Itoa(int(SrvSessRate)): 0,
			"be:" + strconv.Itoa(int(BeAvgQueue)):       0,
			"be:" + strconv.Itoa(int(BeConnSlots)):      -1,
			"fe:" + strconv.Itoa(int(FeConn)):           1,
			"be:" + strconv.Itoa(int(BeQueue)):          0,
			"be:" + strconv.Itoa(int(BeSessRate)):       1,
			"be:" + strconv.Itoa(int(BeConnFree)):       -1,
			"fe:" + strconv.Itoa(int(FeSessRate)):       1,
			"be:" + strconv.Itoa(int(BeTunnelTmo)):      0,
			"be/srv1:" + strconv.Itoa(int(SrvQueue)):    0,
			"be/srv1:" + strconv.Itoa(int(SrvWeight)):   1,
			"be/srv1:" + strconv.Itoa(int(SrvIWeight)):  1,
			"be/srv1:" + strconv.Itoa(int(SrvUWeight)):  1,
			"be/srv1:" + strconv.Itoa(int(SrvConn)):     1,
			"fe:" + strconv.Itoa(int(FeClientTmo)):      1000,
			"be:" + strconv.Itoa(int(FeClientTmo)):      2000,
		}}
	os.Setenv("GOHA_FETCH_TEST", "v1")
	for _, tc := range []struct{ expr, want string }{
		{"fe_name", "fe"}, {"fe_id", "1"}, {"be_name", "be"}, {"be_id", "3"},
		{"srv_name", "srv1"}, {"srv_id", "2"}, {"so_name", "foo"}, {"so_id", "1"},
		{"nbsrv", "2"}, {"nbsrv(other)", "5"}, {"nbsrv(nope)", "<none>"},
		{"be_conn", "7"}, {"be_conn(be)", "7"}, {"queue", "0"},
		{"srv_is_up(srv1)", "1"}, {"srv_is_up(be/srv2)", "0"}, {"srv_conn(other/s)", "4"},
		{"srv_conn(be/nope)", "<none>"},
		{"be_server_timeout", "5000"},
		{"http_first_req", "1"},
		{"capture.req.method", "GET"}, {"capture.req.uri", "/a/b?c=d"},
		{"env(GOHA_FETCH_TEST)", "v1"}, {"env(GOHA_FETCH_UNSET)", "<none>"},
		{"nbproc", "1"}, {"proc", "1"}, {"thread", "0"}, {"stopping", "0"},
		{"bin(4142),hex", "4142"},
		{"wait_end", "1"},
		{"req.body", "k=v&x=1"}, {"req.body_len", "7"}, {"req.body_param(x)", "1"},
		{"req.body_size", "9"}, // as announced; 7 bytes are buffered
	} {
		raw := testReq
		if strings.HasPrefix(tc.expr, "req.body") {
			raw = "POST /f HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\n"
		}
		r := request(t, raw)
		r.Stream = st
		st.body = []byte("k=v&x=1")
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
	// Before a backend is chosen the stream's backend is its frontend.
	st.be = ""
	r := request(t, testReq)
	r.Stream = st
	if got := fetchText(t, r, "be_name"); got != "fe" {
		t.Errorf("be_name without a backend = %q", got)
	}
	if got := fetchText(t, r, "srv_name"); got != "fe" && got != "srv1" {
		t.Errorf("srv_name = %q", got)
	}
	// Without a stream, nothing.
	for _, e := range []string{"fe_name", "be_id", "so_name", "nbsrv", "srv_is_up(x)", "fc_rtt", "ssl_fc_sni"} {
		if got := fetchText(t, request(t, testReq), e); got != "<none>" {
			t.Errorf("%s without a stream = %q", e, got)
		}
	}
	if got := fetchText(t, request(t, testReq), "ssl_fc"); got != "0" {
		t.Errorf("ssl_fc without a stream = %q", got)
	}
}

func TestFetchesClock(t *testing.T) {
	r := request(t, testReq)
	before := time.Now()
	d, _ := strconv.ParseInt(fetchText(t, r, "date"), 10, 64)
	dms, _ := strconv.ParseInt(fetchText(t, r, "date(0,ms)"), 10, 64)
	dplus, _ := strconv.ParseInt(fetchText(t, r, "date(3600)"), 10, 64)
	dus, _ := strconv.ParseInt(fetchText(t, r, "date(-1000,us)"), 10, 64)
	after := time.Now()
	if d < before.Unix() || d > after.Unix() {
		t.Errorf("date = %d, not within [%d,%d]", d, before.Unix(), after.Unix())
	}
	if dms < before.UnixMilli() || dms > after.UnixMilli() {
		t.Errorf("date(0,ms) = %d", dms)
	}
	if dplus < before.Unix()+3600 || dplus > after.Unix()+3600 {
		t.Errorf("date(3600) = %d", dplus)
	}
	if dus < before.UnixMicro()-1000 || dus > after.UnixMicro()-1000 {
		t.Errorf("date(-1000,us) = %d", dus)
	}
	if us, _ := strconv.Atoi(fetchText(t, r, "date_us")); us < 0 || us > 999999 {
		t.Errorf("date_us = %d", us)
	}
	for i := 0; i < 100; i++ {
		if n, _ := strconv.Atoi(fetchText(t, r, "rand(6)")); n < 0 || n >= 6 {
			t.Fatalf("rand(6) = %d", n)
		}
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if u := fetchText(t, r, "uuid"); !uuid.MatchString(u) {
		t.Errorf("uuid = %q", u)
	}
	if u := fetchText(t, r, "uuid(4)"); !uuid.MatchString(u) || u == fetchText(t, r, "uuid") {
		t.Errorf("uuid(4) = %q", u)
	}
	if h, _ := os.Hostname(); fetchText(t, r, "hostname") != h {
		t.Errorf("hostname = %q", fetchText(t, r, "hostname"))
	}
}

func TestFetchArgErrors(t *testing.T) {
	// As haproxy -c words them (2.6.12).
	for _, tc := range []struct{ expr, want string }{
		{"uuid(3)", "fetch method 'uuid' : Unsupported UUID version: '3'"},
		{"date(0,xs)", "fetch method 'date' : expects 's', 'ms' or 'us', got 'xs'"},
		{"bin(4)", "fetch method 'bin' : an even number of hex digit is expected"},
		{"fc_rtt(s)", "fetch method 'fc_rtt' : expects 'us' or 'ms', got 's'"},
		{"req.payload(x,1)", "fetch method 'req.payload' : failed to parse 'x' as type 'integer' at position 1"},
		{"req.payload(0)", "fetch method 'req.payload' : missing arguments (got 1/2)"},
		{"env", "fetch method 'env' : missing arguments (got 0/1)"},
		{"srv_conn", "fetch method 'srv_conn' : missing arguments (got 0/1)"},
		{"fe_name(x)", "fetch method 'fe_name' : expected ')' before 'x)'"},
	} {
		_, err := CompileExpr(nil, tc.expr)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %q", tc.expr, err, tc.want)
		}
	}
}

func TestFetchesTCPInfo(t *testing.T) {
	st := &testStream{fe: "fe", tcpInfo: &TCPInfo{RTT: 12345, RTTVar: 2500, Unacked: 3, Retrans: 1},
		srvLocal: &net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 41000}}
	for _, tc := range []struct{ expr, want string }{
		{"fc_rtt", "12"}, {"fc_rtt(us)", "12345"}, {"fc_rtt(ms)", "12"}, {"fc_rttvar", "2"},
		{"fc_unacked", "3"}, {"fc_retrans", "1"}, {"fc_lost", "0"},
		{"bc_src", "10.0.0.1"}, {"bc_src_port", "41000"}, {"bc_dst", "10.0.0.9"}, {"bc_dst_port", "8000"},
		{"fc_src", "192.0.2.7"}, {"fc_dst_port", "8080"},
		{"src_is_local", "0"}, {"dst_is_local", "1"},
	} {
		r := request(t, testReq)
		r.Stream = st
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// clientHelloBytes is the first record a crypto/tls client sends.
func clientHelloBytes(t *testing.T, cfg *tls.Config) []byte {
	t.Helper()
	c, s := net.Pipe()
	go func() {
		tls.Client(c, cfg).Handshake()
	}()
	defer c.Close()
	defer s.Close()
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for {
		s.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := s.Read(tmp)
		if err != nil {
			t.Fatal(err)
		}
		buf = append(buf, tmp[:n]...)
		if len(buf) >= 5 && len(buf) >= 5+int(buf[3])<<8|int(buf[4]) {
			return buf
		}
	}
}

func TestFetchesPayload(t *testing.T) {
	hello := clientHelloBytes(t, &tls.Config{ServerName: "www.example.org", NextProtos: []string{"h2", "http/1.1"},
		MinVersion: tls.VersionTLS12, ClientSessionCache: tls.NewLRUClientSessionCache(1)})
	st := &testStream{payload: hello}
	rlen := int(hello[3])<<8 | int(hello[4])
	for _, tc := range []struct{ expr, want string }{
		{"req.ssl_hello_type", "1"},
		{"req.ssl_ver", "196611"}, // 3.3: the client hello's legacy version
		{"req.ssl_sni", "www.example.org"},
		{"req_ssl_sni", "www.example.org"},
		{"req.ssl_alpn", "h2"},
		{"req.ssl_ec_ext", "1"},
		{"req.ssl_st_ext", "1"}, // an empty session ticket extension
		{"req.len", strconv.Itoa(len(hello))},
		{"req.payload(0,3),hex", "160301"},
		{"req.payload(5,1),hex", "01"},
		{"req.payload(5,0)", string(hello[5:])},
		{"req.payload_lv(3,2),hex", strings.ToUpper(hex.EncodeToString(hello[5 : 5+rlen]))},
		{"req.payload_lv(3,2,+1),hex", strings.ToUpper(hex.EncodeToString(hello[6 : 6+rlen]))[:len(hello[6:6+rlen])*2]},
		{"req.payload(0,100000)", "<none>"},
		{"req.rdp_cookie", "<none>"},
		{"req.rdp_cookie_cnt", "0"},
	} {
		r := request(t, testReq)
		r.Stream = st
		if tc.expr == "req.payload_lv(3,2,+1),hex" && 6+rlen > len(hello) {
			tc.want = "<none>"
		}
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
	term, err := CompileACL(nil, []string{"req.ssl_alpn", "http/1.1"})
	if err != nil {
		t.Fatal(err)
	}
	r := request(t, testReq)
	r.Stream = st
	if !term.Eval(r) {
		t.Error("req.ssl_alpn http/1.1 did not match the second protocol")
	}
	// Every truncation of the hello is incomplete: no sample, no panic.
	for n := 0; n < len(hello); n++ {
		st.payload = hello[:n]
		if got := fetchText(t, r, "req.ssl_sni"); got != "<none>" {
			t.Fatalf("truncated to %d: %q", n, got)
		}
	}

	rdp := append([]byte{3, 0, 0, 0x2a, 0x25, 0xe0, 0, 0, 0, 0, 0}, "Cookie: mstshash=alice\r\n\x01\x00"...)
	st.payload = rdp
	for _, tc := range []struct{ expr, want string }{
		{"req.rdp_cookie", "alice"}, {"req.rdp_cookie(mstshash)", "alice"}, {"req.rdp_cookie(MSTSHASH)", "alice"},
		{"req.rdp_cookie(other)", "<none>"}, {"req.rdp_cookie_cnt", "1"}, {"rdp_cookie_cnt(other)", "0"},
	} {
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func FuzzParseHello(f *testing.F) {
	f.Add([]byte{0x16, 3, 1, 0, 4, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := parseHello(b)
		if ok && h.full && len(h.sni) > len(b) {
			t.Fatal("sni out of bounds")
		}
		s := Sample{iter: true}
		for n := 0; ok && n < 1000 && helloALPN(&h, &s) && s.more; n++ {
		}
		rdpCookie(b, "")
		rdpCookie(b, "x")
	})
}

// selfSigned makes a certificate for subject, with serial.
func selfSigned(t *testing.T, subject pkix.Name, serial int64) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore:   time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		NotAfter:    time.Date(2034, 6, 7, 8, 9, 10, 0, time.UTC),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"www.example.org"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serverState runs a real handshake over loopback and returns the server
// side's state.
func serverState(t *testing.T, srvCfg, cliCfg *tls.Config) *tls.ConnectionState {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		c, err := tls.Dial("tcp", ln.Addr().String(), cliCfg)
		if err == nil {
			c.Read(make([]byte, 1))
			c.Close()
		}
		errc <- err
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
	cs := tc.ConnectionState()
	tc.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return &cs
}

func TestFetchesTLS(t *testing.T) {
	srvCert := selfSigned(t, pkix.Name{CommonName: "www.example.org"}, 1)
	cliCert := selfSigned(t, pkix.Name{Country: []string{"FR"}, Organization: []string{"Goha, Test"},
		OrganizationalUnit: []string{"a", "b"}, CommonName: "client"}, 0x0102ab)
	pool := x509.NewCertPool()
	leaf, _ := x509.ParseCertificate(cliCert.Certificate[0])
	pool.AddCert(leaf)
	cs := serverState(t,
		&tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
			NextProtos: []string{"h2"}, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}},
		&tls.Config{ServerName: "www.example.org", InsecureSkipVerify: true, Certificates: []tls.Certificate{cliCert},
			NextProtos: []string{"h2", "http/1.1"}})
	sum := sha1.Sum(leaf.Raw)
	r := request(t, testReq)
	r.Stream = &testStream{tls: cs}
	for _, tc := range []struct{ expr, want string }{
		{"ssl_fc", "1"},
		{"ssl_fc_sni", "www.example.org"},
		{"ssl_fc_has_sni", "1"},
		{"ssl_fc_protocol", "TLSv1.2"},
		{"ssl_fc_cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"},
		{"ssl_fc_use_keysize", "128"},
		{"ssl_fc_alpn", "h2"},
		{"ssl_fc_is_resumed", "0"},
		{"ssl_fc_has_crt", "1"},
		{"ssl_c_used", "1"},
		{"ssl_c_verify", "0"},
		{"ssl_c_version", "3"},
		{"ssl_c_serial,hex", "0102AB"},
		{"ssl_c_sha1,hex", strings.ToUpper(hex.EncodeToString(sum[:]))},
		{"ssl_c_notbefore", "240102030405Z"},
		{"ssl_c_notafter", "340607080910Z"},
		{"ssl_c_s_dn", "/C=FR/O=Goha, Test/OU=a/OU=b/CN=client"},
		{"ssl_c_s_dn(CN)", "client"},
		{"ssl_c_s_dn(OU)", "a"},
		{"ssl_c_s_dn(OU,2)", "b"},
		{"ssl_c_s_dn(OU,-1)", "b"},
		{"ssl_c_s_dn(OU,3)", "<none>"},
		{"ssl_c_s_dn(,0,rfc2253)", "CN=client,OU=b+OU=a,O=Goha\\, Test,C=FR"}, // crypto/x509 puts both OUs in one RDN
		{"ssl_c_i_dn(CN)", "client"},
	} {
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
	if d := fetchText(t, r, "ssl_c_der"); d != string(leaf.Raw) {
		t.Error("ssl_c_der is not the certificate's DER")
	}

	// TLS 1.3 without a client certificate.
	cs = serverState(t, &tls.Config{Certificates: []tls.Certificate{srvCert}},
		&tls.Config{InsecureSkipVerify: true})
	r.Stream = &testStream{tls: cs}
	for _, tc := range []struct{ expr, want string }{
		{"ssl_fc_protocol", "TLSv1.3"},
		{"ssl_fc_cipher", tls.CipherSuiteName(cs.CipherSuite)},
		{"ssl_fc_sni", "<none>"},
		{"ssl_fc_alpn", "<none>"},
		{"ssl_c_used", "0"},
		{"ssl_c_verify", "0"},
		{"ssl_c_s_dn", "<none>"},
	} {
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("TLS 1.3: %s = %q, want %q", tc.expr, got, tc.want)
		}
	}
	r.Stream = &testStream{}
	if got := fetchText(t, r, "ssl_fc"); got != "0" {
		t.Errorf("ssl_fc on a plain stream = %q", got)
	}
}
