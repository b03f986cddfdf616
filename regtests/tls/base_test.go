//go:build regtest

package tls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestCrtBaseCABase: relative crt and ca-file paths of binds and servers
// are read under the global crt-base and ca-base, on goha as on HAProxy:
// the bind presents the certificate from crt-base, and the server line
// verifies its origin with the CA from ca-base.
func TestCrtBaseCABase(t *testing.T) {
	p := newPKI(t)
	front, _ := p.issue(t, "front.test")
	_, originCert := p.issue(t, "127.0.0.1")
	origin := newTLSOrigin(t, originCert)
	cfg := fmt.Sprintf(`
global
    crt-base %s
    ca-base %s

defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}" ssl crt %s
    default_backend be

backend be
    server o %s ssl ca-file %s verify required
`, p.dir, p.dir, filepath.Base(front), origin.addr, filepath.Base(p.caFile))
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "fe")
		harness.WaitListening(t, h.Addrs["fe"], harness.Patience)
		conn, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{ServerName: "front.test", RootCAs: roots})
		if err != nil {
			t.Fatalf("%s: handshake: %v\n%s", name, err, h.Output())
		}
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: front.test\r\nConnection: close\r\n\r\n")
		b, _ := io.ReadAll(conn)
		conn.Close()
		if !strings.HasPrefix(string(b), "HTTP/1.1 200") || !strings.HasSuffix(string(b), "TLS 1.3") {
			t.Errorf("%s: reply %q", name, b)
		}
		h.Stop()
	}
}

// TestSSLServerVerifyNone: with ssl-server-verify none, a server line that
// names no verify and no ca-file connects to an origin whose certificate
// nothing vouches for, on goha as on HAProxy.
func TestSSLServerVerifyNone(t *testing.T) {
	p := newPKI(t)
	_, originCert := p.issue(t, "127.0.0.1")
	origin := newTLSOrigin(t, originCert)
	cfg := fmt.Sprintf(`
global
    ssl-server-verify none

defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}"
    default_backend be

backend be
    server o %s ssl
`, origin.addr)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "fe")
		harness.WaitListening(t, h.Addrs["fe"], harness.Patience)
		resp := harness.RawRequest(t, h.Addrs["fe"], "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5*time.Second)
		if !strings.HasPrefix(resp, "HTTP/1.1 200") {
			t.Errorf("%s: reply %q\n%s", name, resp, h.Output())
		}
		h.Stop()
	}
}

// TestCrtListSNIFilters: a crt-list line's SNI filters name the hosts its
// certificate serves, whatever names the certificate itself carries, and
// strict-sni refuses a host no line names; on goha as on HAProxy.
func TestCrtListSNIFilters(t *testing.T) {
	p := newPKI(t)
	certA, _ := p.issue(t, "a.test")
	certB, _ := p.issue(t, "b.test")
	list := filepath.Join(p.dir, "list")
	if err := os.WriteFile(list, []byte(fmt.Sprintf("%s alias-one.test\n%s [ssl-min-ver TLSv1.2] alias-two.test *.wild.test\n", certA, certB)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}" ssl strict-sni crt-list %s
    http-request return status 200 content-type text/plain string ok
`, list)
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "fe")
		harness.WaitListening(t, h.Addrs["fe"], harness.Patience)
		for sni, want := range map[string]string{"alias-one.test": "a.test", "alias-two.test": "b.test", "x.wild.test": "b.test", "a.test": ""} {
			conn, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{ServerName: sni, InsecureSkipVerify: true})
			got := ""
			if err == nil {
				got = conn.ConnectionState().PeerCertificates[0].Subject.CommonName
				conn.Close()
			}
			if got != want {
				t.Errorf("%s: SNI %s got certificate %q (%v), want %q", name, sni, got, err, want)
			}
		}
		h.Stop()
	}
}

// TestSSLServerOverUnixSocket: a server line naming a UNIX socket speaks
// TLS over it when it says ssl, as HAProxy does.
func TestSSLServerOverUnixSocket(t *testing.T) {
	p := newPKI(t)
	cert, _ := p.issue(t, "inner.test")
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen clear
    bind "fd@${fe}"
    server inner ${TMP}/ssl.sock ssl verify required ca-file %s sni str(inner.test)
listen inner
    bind ${TMP}/ssl.sock ssl crt %s
    http-request return status 200 content-type text/plain string inner
`, p.caFile, cert)
	for name, prog := range proxies(t) {
		h := harness.Start(t, prog, cfg, "fe")
		harness.WaitListening(t, h.Addrs["fe"], harness.Patience)
		resp := harness.RawRequest(t, h.Addrs["fe"], "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5*time.Second)
		if !strings.HasPrefix(resp, "HTTP/1.1 200") || !strings.HasSuffix(resp, "inner") {
			t.Errorf("%s: reply %q\n%s", name, resp, h.Output())
		}
		h.Stop()
	}
}
