//go:build regtest

package tls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
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
