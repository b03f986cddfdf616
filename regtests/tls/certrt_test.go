//go:build regtest

package tls

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestCertRotationUnderLoad: while a client loop makes TLS handshakes
// against a bind, `set ssl cert` + `commit ssl cert` on the stats socket
// replace its certificate. Every handshake that starts after the commit
// reply sees the new certificate, and no handshake fails, before, during
// or after. A bad payload, and a certificate committed with a key that is
// not its own, are refused with HAProxy's messages and the committed
// certificate keeps serving. On goha as on HAProxy.
func TestCertRotationUnderLoad(t *testing.T) {
	p := newPKI(t)
	crt, oldCert := p.issue(t, "rot.test")
	newPath, newCert := p.issue(t, "rot-new.test", "rot.test")
	newPEM, err := os.ReadFile(newPath)
	if err != nil {
		t.Fatal(err)
	}
	_, otherCert := p.issue(t, "other.test")
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	serial := func(c tls.Certificate) *big.Int {
		x, _ := x509.ParseCertificate(c.Certificate[0])
		return x.SerialNumber
	}
	oldSerial, newSerial := serial(oldCert), serial(newCert)

	// goha starts a tcp stream's handshake once its server connection is
	// up: the origin accepts and waits for the client to go.
	origin := harness.TCPServer(t, func(c net.Conn) {
		io.Copy(io.Discard, c)
		c.Close()
	})
	for name, prog := range proxies(t) {
		t.Run(name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "admin.sock")
			cfg := fmt.Sprintf(`
global
    stats socket %s level admin

defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}" ssl crt %s
    default_backend be

backend be
    server o %s
`, sock, crt, origin)
			h := harness.Start(t, prog, cfg, "fe")
			defer h.Stop()
			harness.WaitListening(t, h.Addrs["fe"], harness.Patience)
			harness.WaitCLI(t, sock)

			handshake := func() (*big.Int, error) {
				c, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{ServerName: "rot.test", RootCAs: roots})
				if err != nil {
					return nil, err
				}
				defer c.Close()
				return c.ConnectionState().PeerCertificates[0].SerialNumber, nil
			}

			// committed turns true once the commit reply is read: a
			// handshake begun after that must see the new certificate.
			var committed atomic.Bool
			var mu sync.Mutex // guards the counters below
			var oldSeen, newSeen, stale int
			var failures []error
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						after := committed.Load()
						s, err := handshake()
						mu.Lock()
						switch {
						case err != nil:
							failures = append(failures, err)
						case s.Cmp(newSerial) == 0:
							newSeen++
						case s.Cmp(oldSerial) == 0:
							oldSeen++
							if after {
								stale++
							}
						default:
							failures = append(failures, fmt.Errorf("unknown serial %v", s))
						}
						mu.Unlock()
					}
				}()
			}
			harness.Eventually(t, "handshakes with the old certificate", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return oldSeen >= 20
			})

			out := harness.MustSocket(t, sock, "set ssl cert "+crt+" <<\n"+string(newPEM))
			if want := "Transaction created for certificate " + crt + "!\n"; !strings.HasPrefix(out, want) {
				t.Errorf("set ssl cert: %q, want %q", out, want)
			}
			out = harness.MustSocket(t, sock, "commit ssl cert "+crt)
			committed.Store(true)
			if !strings.HasPrefix(out, "Committing "+crt) || !strings.Contains(out, "\nSuccess!\n") {
				t.Errorf("commit ssl cert: %q", out)
			}
			if s, err := handshake(); err != nil || s.Cmp(newSerial) != 0 {
				t.Errorf("first handshake after commit: serial %v, %v; want %v", s, err, newSerial)
			}
			harness.Eventually(t, "handshakes with the new certificate", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return newSeen >= 20
			})

			// A payload with no certificate is refused at once.
			out = harness.MustSocket(t, sock, "set ssl cert "+crt+" <<\nnot a certificate\n")
			if want := "unable to load certificate from file '" + crt + "'.\nCan't load the payload\nCan't update " + crt + "!\n"; !strings.HasPrefix(out, want) {
				t.Errorf("bad payload: %q, want %q", out, want)
			}
			// A certificate with another certificate's key is refused
			// at commit.
			certOnly := strings.SplitAfter(string(newPEM), "-----END CERTIFICATE-----\n")[0]
			otherKey := pemKey(t, otherCert)
			harness.MustSocket(t, sock, "set ssl cert "+crt+" <<\n"+certOnly+otherKey)
			out = harness.MustSocket(t, sock, "commit ssl cert "+crt)
			if want := "inconsistencies between private key and certificate loaded '" + crt + "'.\nCan't commit " + crt + "!\n"; !strings.HasPrefix(out, want) {
				t.Errorf("mismatched key: %q, want %q", out, want)
			}
			harness.MustSocket(t, sock, "abort ssl cert "+crt)
			for i := 0; i < 10; i++ {
				if s, err := handshake(); err != nil || s.Cmp(newSerial) != 0 {
					t.Errorf("after refused changes: serial %v, %v; want %v", s, err, newSerial)
				}
			}
			close(stop)
			wg.Wait()
			if len(failures) > 0 {
				t.Errorf("%d handshakes failed, first: %v", len(failures), failures[0])
			}
			if stale > 0 {
				t.Errorf("%d handshakes begun after the commit saw the old certificate", stale)
			}
			if !strings.Contains(harness.MustSocket(t, sock, "show ssl cert "+crt), fmt.Sprintf("Serial: %X\n", newSerial.Bytes())) {
				t.Errorf("show ssl cert does not show the new serial")
			}
		})
	}
}

// pemKey is the PEM form of a certificate's private key.
func pemKey(t *testing.T, c tls.Certificate) string {
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// TestServerCertRotation: `set ssl cert` + `commit ssl cert` on the client
// certificate of a server line is sent by the next server connection; a
// CRL file committed with `set ssl crl-file` that revokes the origin's
// certificate makes the next connection fail verification. On goha as on
// HAProxy.
func TestServerCertRotation(t *testing.T) {
	p := newPKI(t)
	client, _ := p.issue(t, "client.test")
	newClient, newCert := p.issue(t, "client2.test")
	newPEM, _ := os.ReadFile(newClient)
	_, originCert := p.issue(t, "127.0.0.1")
	originX, _ := x509.ParseCertificate(originCert.Certificate[0])
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)

	// The origin answers with the serial of the client certificate it got.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{originCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: roots,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%X", r.TLS.PeerCertificates[0].SerialNumber.Bytes())
	}), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	emptyCRL := crlPEM(t, p)
	crl := filepath.Join(p.dir, "crl.pem")
	os.WriteFile(crl, emptyCRL, 0o644)
	revoking := crlPEM(t, p, originX.SerialNumber)
	want := func(c tls.Certificate) string {
		x, _ := x509.ParseCertificate(c.Certificate[0])
		return fmt.Sprintf("%X", x.SerialNumber.Bytes())
	}

	for name, prog := range proxies(t) {
		t.Run(name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "admin.sock")
			cfg := fmt.Sprintf(`
global
    stats socket %s level admin

defaults
    mode http
    http-reuse never
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}"
    default_backend be

backend be
    server o %s ssl verify required ca-file %s crl-file %s crt %s
`, sock, ln.Addr(), p.caFile, crl, client)
			h := harness.Start(t, prog, cfg, "fe")
			defer h.Stop()
			harness.WaitListening(t, h.Addrs["fe"], harness.Patience)
			harness.WaitCLI(t, sock)
			get := func() string {
				return harness.RawRequest(t, h.Addrs["fe"], "GET / HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n", harness.Patience)
			}
			oldSerial := want(loadPair(t, client))
			if r := get(); !strings.HasSuffix(r, "\r\n\r\n"+oldSerial) {
				t.Fatalf("before: %q, want the serial %s\n%s", r, oldSerial, h.Output())
			}
			harness.MustSocket(t, sock, "set ssl cert "+client+" <<\n"+string(newPEM))
			if out := harness.MustSocket(t, sock, "commit ssl cert "+client); !strings.Contains(out, "Success!") {
				t.Fatalf("commit: %q", out)
			}
			if r := get(); !strings.HasSuffix(r, "\r\n\r\n"+want(newCert)) {
				t.Errorf("after commit: %q, want the serial %s", r, want(newCert))
			}
			harness.MustSocket(t, sock, "set ssl crl-file "+crl+" <<\n"+string(revoking))
			if out := harness.MustSocket(t, sock, "commit ssl crl-file "+crl); !strings.Contains(out, "Success!") {
				t.Fatalf("commit crl: %q", out)
			}
			if r := get(); !strings.HasPrefix(r, "HTTP/1.1 503") {
				t.Errorf("with the origin revoked: %q, want a 503", r)
			}
		})
	}
}

// crlPEM is a CRL of the test CA revoking serials.
func crlPEM(t *testing.T, p *pki, serials ...*big.Int) []byte {
	var revoked []x509.RevocationListEntry
	for _, s := range serials {
		revoked = append(revoked, x509.RevocationListEntry{SerialNumber: s, RevocationTime: time.Now().Add(-time.Minute)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(int64(len(serials) + 1)), ThisUpdate: time.Now().Add(-time.Hour), NextUpdate: time.Now().Add(time.Hour),
		RevokedCertificateEntries: revoked,
	}, p.ca, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

func loadPair(t *testing.T, path string) tls.Certificate {
	c, err := tls.LoadX509KeyPair(path, path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCrtListLineOptions: a crt-list line's SSL options apply to the
// connections that get its certificate: the line for b.test requires a
// client certificate from the CA, the line for a.test does not. Then a
// line added through the stats socket with its own options applies to
// the next connection. On goha as on HAProxy.
func TestCrtListLineOptions(t *testing.T) {
	p := newPKI(t)
	a, _ := p.issue(t, "a.test")
	b, _ := p.issue(t, "b.test")
	c, _ := p.issue(t, "c.test")
	_, clientCert := p.issue(t, "client.test")
	list := filepath.Join(p.dir, "list.crt-list")
	os.WriteFile(list, []byte(fmt.Sprintf("%s a.test\n%s [verify required ca-file %s] b.test\n", a, b, p.caFile)), 0o644)
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	// The origin greets each connection, so that the client's first read
	// gets either the greeting or the alert refusing its certificate.
	origin := harness.TCPServer(t, func(c net.Conn) {
		io.WriteString(c, "hello")
		io.Copy(io.Discard, c)
		c.Close()
	})
	for name, prog := range proxies(t) {
		t.Run(name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "admin.sock")
			cfg := fmt.Sprintf(`
global
    stats socket %s level admin

defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}" ssl strict-sni crt-list %s
    default_backend be

backend be
    server o %s
`, sock, list, origin)
			h := harness.Start(t, prog, cfg, "fe")
			defer h.Stop()
			harness.WaitListening(t, h.Addrs["fe"], harness.Patience)
			harness.WaitCLI(t, sock)
			// A TLS 1.3 client learns that its certificate was refused
			// on its first read, where it would read the greeting.
			try := func(sni string, certs ...tls.Certificate) error {
				conn, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{ServerName: sni, RootCAs: roots, Certificates: certs})
				if err != nil {
					return err
				}
				defer conn.Close()
				_, err = conn.Read(make([]byte, 1))
				return err
			}
			if err := try("a.test"); err != nil {
				t.Errorf("a.test without a client certificate: %v", err)
			}
			if err := try("b.test"); err == nil {
				t.Errorf("b.test without a client certificate: accepted")
			}
			if err := try("b.test", clientCert); err != nil {
				t.Errorf("b.test with a client certificate: %v", err)
			}
			harness.MustSocket(t, sock, "new ssl cert "+c)
			cPEM, _ := os.ReadFile(c)
			harness.MustSocket(t, sock, "set ssl cert "+c+" <<\n"+string(cPEM))
			harness.MustSocket(t, sock, "commit ssl cert "+c)
			out := harness.MustSocket(t, sock, fmt.Sprintf("add ssl crt-list %s <<\n%s [verify required ca-file %s] c.test\n", list, c, p.caFile))
			if !strings.Contains(out, "Success!") {
				t.Fatalf("add ssl crt-list: %q", out)
			}
			if err := try("c.test"); err == nil {
				t.Errorf("c.test without a client certificate: accepted")
			}
			if err := try("c.test", clientCert); err != nil {
				t.Errorf("c.test with a client certificate: %v", err)
			}
		})
	}
}
