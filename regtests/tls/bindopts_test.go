//go:build regtest

package tls

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestBindTLSOptions runs the bind parameters that choose what a TLS client
// may negotiate on goha and HAProxy: each must offer the same versions and
// curves, and hand out session tickets only where the bind allows them.
func TestBindTLSOptions(t *testing.T) {
	p := newPKI(t)
	crt, _ := p.issue(t, "a.test")
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${plain}" ssl crt %[1]s
    bind "fd@${force12}" ssl crt %[1]s force-tlsv12
    bind "fd@${no13}" ssl crt %[1]s no-tlsv13
    bind "fd@${no12}" ssl crt %[1]s no-tlsv12
    bind "fd@${p384}" ssl crt %[1]s curves P-384
    bind "fd@${notickets}" ssl crt %[1]s no-tls-tickets
    http-request return status 200 content-type text/plain string ok
`, crt)
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	client := func(mod func(c *tls.Config)) *tls.Config {
		c := &tls.Config{ServerName: "a.test", RootCAs: roots}
		if mod != nil {
			mod(c)
		}
		return c
	}
	// dial handshakes, makes one request so that a TLS 1.3 ticket arrives,
	// and returns the version and whether the session was resumed.
	dial := func(addr string, c *tls.Config) (uint16, bool, error) {
		conn, err := tls.Dial("tcp", addr, c)
		if err != nil {
			return 0, false, err
		}
		defer conn.Close()
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
		io.ReadAll(conn)
		st := conn.ConnectionState()
		return st.Version, st.DidResume, nil
	}
	tls12 := func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "plain", "force12", "no13", "no12", "p384", "notickets")
		for _, tc := range []struct {
			bind string
			mod  func(c *tls.Config)
			want uint16 // 0: the handshake must fail
		}{
			{"plain", nil, tls.VersionTLS13},
			{"force12", nil, tls.VersionTLS12},
			{"no13", nil, tls.VersionTLS12},
			{"no12", nil, tls.VersionTLS13},
			{"no12", tls12, 0},
			{"p384", func(c *tls.Config) { c.CurvePreferences = []tls.CurveID{tls.CurveP384} }, tls.VersionTLS13},
			{"p384", func(c *tls.Config) {
				c.CurvePreferences = []tls.CurveID{tls.X25519}
				c.MaxVersion = tls.VersionTLS12 // no TLS 1.3 key share retry: one curve, refused
			}, 0},
		} {
			v, _, err := dial(h.Addrs[tc.bind], client(tc.mod))
			switch {
			case tc.want == 0 && err == nil:
				t.Errorf("%s %s: handshake succeeded with %s, want a failure", name, tc.bind, tls.VersionName(v))
			case tc.want != 0 && err != nil:
				t.Errorf("%s %s: %v, want %s", name, tc.bind, err, tls.VersionName(tc.want))
			case tc.want != 0 && v != tc.want:
				t.Errorf("%s %s: %s, want %s", name, tc.bind, tls.VersionName(v), tls.VersionName(tc.want))
			}
		}
		// TLS 1.2 resumption rides on tickets for a Go client: without
		// them the second handshake is a full one.
		for bind, want := range map[string]bool{"plain": true, "notickets": false} {
			c := client(tls12)
			c.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			if _, _, err := dial(h.Addrs[bind], c); err != nil {
				t.Fatalf("%s %s: %v", name, bind, err)
			}
			_, resumed, err := dial(h.Addrs[bind], c)
			if err != nil || resumed != want {
				t.Errorf("%s %s: resumed %v (%v), want %v", name, bind, resumed, err, want)
			}
		}
		h.Stop()
	}
}

// TestBindStrictSNI checks that a strict-sni bind serves only clients that
// name a host one of its certificates is for, where a plain bind falls
// back to its first certificate.
func TestBindStrictSNI(t *testing.T) {
	p := newPKI(t)
	crtA, _ := p.issue(t, "a.test")
	crtB, _ := p.issue(t, "b.test")
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${strict}" ssl crt %[1]s crt %[2]s strict-sni
    bind "fd@${plain}" ssl crt %[1]s crt %[2]s
    http-request return status 200 content-type text/plain string ok
`, crtA, crtB)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "strict", "plain")
		for _, tc := range []struct {
			bind, sni string
			ok        bool
		}{
			{"strict", "a.test", true},
			{"strict", "b.test", true},
			{"strict", "other.test", false},
			{"strict", "", false},
			{"plain", "other.test", true},
			{"plain", "", true},
		} {
			// The name is checked by the proxy, not by this client.
			conn, err := tls.Dial("tcp", h.Addrs[tc.bind], &tls.Config{ServerName: tc.sni, InsecureSkipVerify: true})
			if err == nil {
				conn.Close()
			}
			if (err == nil) != tc.ok {
				t.Errorf("%s %s with SNI %q: handshake error %v, want success %v", name, tc.bind, tc.sni, err, tc.ok)
			}
		}
		h.Stop()
	}
}

// writeCRL writes a CRL of p's CA that revokes certs, and returns its path.
func (p *pki) writeCRL(t *testing.T, name string, certs ...tls.Certificate) string {
	var revoked []x509.RevocationListEntry
	for _, c := range certs {
		revoked = append(revoked, x509.RevocationListEntry{SerialNumber: c.Leaf.SerialNumber, RevocationTime: time.Now().Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(24 * time.Hour),
		RevokedCertificateEntries: revoked,
	}, p.ca, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBindCRLFile checks that a bind with crl-file refuses a client whose
// certificate its CA revoked, serves the others, and refuses everyone
// when the file holds no CRL of the clients' CA.
func TestBindCRLFile(t *testing.T) {
	p := newPKI(t)
	srv, _ := p.issue(t, "a.test")
	_, good := p.issue(t, "good.client")
	_, bad := p.issue(t, "revoked.client")
	crl := p.writeCRL(t, "ca.crl", bad)
	other := newPKI(t)
	otherCRL := other.writeCRL(t, "other.crl")
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${crl}" ssl crt %[1]s verify required ca-file %[2]s crl-file %[3]s
    bind "fd@${othercrl}" ssl crt %[1]s verify required ca-file %[2]s crl-file %[4]s
    http-request return status 200 content-type text/plain string ok
`, srv, p.caFile, crl, otherCRL)
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	// served says whether a request with client certificate c is answered:
	// with TLS 1.3 a refused certificate shows only after the handshake.
	served := func(addr string, c tls.Certificate) bool {
		conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "a.test", RootCAs: roots, Certificates: []tls.Certificate{c}})
		if err != nil {
			return false
		}
		defer conn.Close()
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
		b, _ := io.ReadAll(conn)
		return strings.HasSuffix(string(b), "ok")
	}
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "crl", "othercrl")
		for _, tc := range []struct {
			bind, client string
			cert         tls.Certificate
			want         bool
		}{
			{"crl", "good", good, true},
			{"crl", "revoked", bad, false},
			{"othercrl", "good", good, false},
		} {
			if got := served(h.Addrs[tc.bind], tc.cert); got != tc.want {
				t.Errorf("%s %s: %s client served %v, want %v", name, tc.bind, tc.client, got, tc.want)
			}
		}
		h.Stop()
	}
}

// TestBindALPNWithoutH2 checks that a bind whose alpn offers h2 does not
// agree on it with goha, which speaks only HTTP/1: a browser-like client
// falls back to HTTP/1.1 and is served, and the configuration says so.
func TestBindALPNWithoutH2(t *testing.T) {
	p := newPKI(t)
	crt, _ := p.issue(t, "a.test")
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}" ssl crt %s alpn h2,http/1.1
    http-request return status 200 content-type text/plain string ok
`, crt)
	h := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	conn, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{ServerName: "a.test", RootCAs: roots, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := conn.ConnectionState().NegotiatedProtocol; got != "http/1.1" {
		t.Errorf("negotiated %q, want http/1.1", got)
	}
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
	if b, _ := io.ReadAll(conn); !strings.HasSuffix(string(b), "ok") {
		t.Errorf("reply %q", b)
	}
	if !strings.Contains(h.Output(), "HTTP/2 is not supported by goha") {
		t.Errorf("no warning about h2:\n%s", h.Output())
	}
}

// TestServerALPNWithoutH2 sends requests through a server line whose alpn
// offers h2 to an origin that speaks both HTTP/2 and HTTP/1.1: goha, which
// speaks HTTP/1 only, must not agree on h2, and the requests must be served
// as by HAProxy.
func TestServerALPNWithoutH2(t *testing.T) {
	p := newPKI(t)
	_, cert := p.issue(t, "origin.test")
	o := newTLSOrigin(t, cert)
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen l
    bind "fd@${l}"
    server s1 %s ssl verify none alpn h2,http/1.1
`, o.addr)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "l")
		if st, body := harness.Get(t, &http.Client{}, h.Addrs["l"], "/"); st != 200 || body != "TLS 1.3" {
			t.Errorf("%s: %d %q, want 200 \"TLS 1.3\"\n%s", name, st, body, h.Output())
		}
		if name == "goha" && !strings.Contains(h.Output(), "'h2' is not offered to the server") {
			t.Errorf("goha does not warn about h2:\n%s", h.Output())
		}
		h.Stop()
	}
}
