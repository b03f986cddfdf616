// Package tls tests TLS towards servers and on binds, against Go TLS
// origins that record what was negotiated, and against HAProxy 2.6 on the
// same configurations.
package tls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

type pki struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caFile string
}

func newPKI(t *testing.T) *pki {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "goha test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	ca, _ := x509.ParseCertificate(der)
	p := &pki{dir: dir, ca: ca, caKey: key, caFile: filepath.Join(dir, "ca.pem")}
	os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	return p
}

// issue writes a certificate and key for names into one PEM file (cert
// then key, as HAProxy's crt wants) and returns its path.
func (p *pki) issue(t *testing.T, names ...string) (string, tls.Certificate) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		DNSNames: names, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	path := filepath.Join(p.dir, names[0]+".pem")
	os.WriteFile(path, append(certPEM, keyPEM...), 0o600)
	c, _ := tls.X509KeyPair(certPEM, keyPEM)
	return path, c
}

// tlsOrigin is an HTTPS server that answers with the TLS version it
// negotiated.
type tlsOrigin struct {
	addr string
	mu   sync.Mutex
	seen []uint16
}

func newTLSOrigin(t *testing.T, cert tls.Certificate) *tlsOrigin {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &tlsOrigin{addr: ln.Addr().String()}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.mu.Lock()
			o.seen = append(o.seen, r.TLS.Version)
			o.mu.Unlock()
			fmt.Fprintf(w, "%s", tls.VersionName(r.TLS.Version))
		}),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS10},
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return o
}

func proxies(t *testing.T) map[string]string {
	m := map[string]string{"goha": bin.Path(t, "goha")}
	if p, err := exec.LookPath("haproxy"); err == nil {
		m["haproxy"] = p
	}
	return m
}

// TestSeedSSLDefaults runs the seed's two listen sections: l1 takes
// ssl-max-ver TLSv1.2 from ssl-default-server-options, l2 overrides it
// through default-server and negotiates TLS 1.3.
func TestSeedSSLDefaults(t *testing.T) {
	p := newPKI(t)
	_, cert := p.issue(t, "origin.test")
	o := newTLSOrigin(t, cert)
	cfg := fmt.Sprintf(`
global
    ssl-default-server-options ssl-max-ver TLSv1.2
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen l1
    bind "fd@${l1}"
    default-server ssl verify none
    server s1 %s
listen l2
    bind "fd@${l2}"
    default-server ssl verify none ssl-max-ver TLSv1.3 ssl-min-ver TLSv1.2
    server s1 %s
`, o.addr, o.addr)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "l1", "l2")
		c := &http.Client{}
		if st, body := harness.Get(t, c, h.Addrs["l1"], "/"); st != 200 || body != "TLS 1.2" {
			t.Errorf("%s l1: %d %q, want TLS 1.2", name, st, body)
		}
		if st, body := harness.Get(t, c, h.Addrs["l2"], "/"); st != 200 || body != "TLS 1.3" {
			t.Errorf("%s l2: %d %q, want TLS 1.3", name, st, body)
		}
		h.Stop()
	}
}

func TestVerifyFailureAnd503(t *testing.T) {
	p := newPKI(t)
	_, cert := p.issue(t, "origin.test")
	other := newPKI(t) // a CA that did not sign the origin
	o := newTLSOrigin(t, cert)
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
    retries 1
listen good
    bind "fd@${good}"
    server s1 %s ssl verify required ca-file %s
listen bad
    bind "fd@${bad}"
    server s1 %s ssl verify required ca-file %s
`, o.addr, p.caFile, o.addr, other.caFile)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "good", "bad")
		c := &http.Client{}
		if st, _ := harness.Get(t, c, h.Addrs["good"], "/"); st != 200 {
			t.Errorf("%s: verified server: status %d", name, st)
		}
		if st, _ := harness.Get(t, c, h.Addrs["bad"], "/"); st != 503 {
			t.Errorf("%s: unverifiable server: status %d, want 503", name, st)
		}
		h.Stop()
	}
}

func TestBindSNISelectsCertificate(t *testing.T) {
	p := newPKI(t)
	certA, _ := p.issue(t, "a.test")
	certB, _ := p.issue(t, "b.test")
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}" ssl crt %s crt %s
    http-request return status 200 content-type text/plain string ok
`, certA, certB)
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "fe")
		for _, sni := range []string{"a.test", "b.test"} {
			conn, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{ServerName: sni, RootCAs: roots})
			if err != nil {
				t.Fatalf("%s: handshake for %s: %v", name, sni, err)
			}
			cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName
			io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+sni+"\r\nConnection: close\r\n\r\n")
			b, _ := io.ReadAll(conn)
			conn.Close()
			if cn != sni || !strings.HasSuffix(string(b), "ok") {
				t.Errorf("%s: SNI %s got certificate %s, reply %q", name, sni, cn, b)
			}
		}
		h.Stop()
	}
}

func TestSSLMinVerRefusesSSLv3(t *testing.T) {
	cfg := `
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen l
    bind 127.0.0.1:1
    server s1 127.0.0.1:2 ssl verify none ssl-min-ver SSLv3
`
	dir := t.TempDir()
	path := filepath.Join(dir, "c.cfg")
	os.WriteFile(path, []byte(cfg), 0o644)
	out, err := exec.Command(bin.Path(t, "goha"), "-c", "-f", path).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "SSLv3") {
		t.Fatalf("SSLv3 accepted: %v\n%s", err, out)
	}
}

func TestShowServersStateUseSSL(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		t.Skip("socat is not installed")
	}
	cfg := `
global
    stats socket ${TMP}/s.sock level admin
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen l
    bind "fd@${fe}"
    server plain 127.0.0.1:1
    server tls 127.0.0.1:2 ssl verify none
    server notls 127.0.0.1:3 no-ssl
`
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "fe")
		sock := filepath.Join(h.Dir, "s.sock")
		harness.WaitCLI(t, sock)
		out := harness.MustSocket(t, sock, "show servers state l")
		// srv_use_ssl is the 21st column.
		want := map[string]string{"plain": "0", "tls": "1", "notls": "-1"}
		for _, ln := range strings.Split(out, "\n") {
			f := strings.Fields(ln)
			if len(f) >= 21 {
				if w, ok := want[f[3]]; ok {
					if f[20] != w {
						t.Errorf("%s: %s srv_use_ssl %s, want %s", name, f[3], f[20], w)
					}
					delete(want, f[3])
				}
			}
		}
		if len(want) > 0 {
			t.Errorf("%s: servers missing from show servers state:\n%s", name, out)
		}
		h.Stop()
	}
}
