//go:build regtest

package tls

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestSSLCommandsLikeHAProxy runs the same sequence of ssl commands (show,
// new, set, commit, abort, del of certificates, crt-lists, CA and CRL
// files, with their errors) on goha and on HAProxy, each with the same
// configuration and files, and compares the replies byte for byte.
func TestSSLCommandsLikeHAProxy(t *testing.T) {
	hap, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("needs HAProxy to compare with")
	}
	p := newPKI(t)
	a, _ := p.issue(t, "a.test")
	b, _ := p.issue(t, "b.test")
	x, _ := p.issue(t, "x.test")
	// The key of c in its own file, as ssl-load-extra-files reads it.
	cPath, _ := p.issue(t, "c.test")
	cData, _ := os.ReadFile(cPath)
	cCert, cKey, _ := strings.Cut(string(cData), "-----END CERTIFICATE-----\n")
	cCert += "-----END CERTIFICATE-----\n"
	os.WriteFile(cPath, []byte(cCert), 0o600)
	os.WriteFile(cPath+".key", []byte(cKey), 0o600)

	crl := filepath.Join(p.dir, "crl.pem")
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: time.Unix(1700000000, 0), NextUpdate: time.Unix(4000000000, 0),
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: big.NewInt(3), RevocationTime: time.Unix(1700000000, 0)}},
	}, p.ca, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(crl, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}), 0o644)
	list := filepath.Join(p.dir, "list.crt-list")
	os.WriteFile(list, []byte("a.test.pem a.test\nb.test.pem [verify none] b.test !c.test\n"), 0o644)
	xPEM, _ := os.ReadFile(x)
	bPEM, _ := os.ReadFile(b)
	caPEM, _ := os.ReadFile(p.caFile)

	cmds := []string{
		"show ssl cert",
		"show ssl cert " + a,
		"show ssl cert " + cPath,
		"show ssl cert /nope.pem",
		"show ssl crt-list",
		"show ssl crt-list " + list,
		"show ssl crt-list -n " + list,
		"show ssl ca-file " + p.caFile,
		"show ssl ca-file " + p.caFile + ":1",
		"show ssl ca-file " + p.caFile + ":7",
		"show ssl crl-file",
		"show ssl crl-file " + crl,
		"new ssl cert " + a,
		"new ssl cert /tmp/goha-certrt-new.pem",
		"show ssl cert /tmp/goha-certrt-new.pem",
		"add ssl crt-list " + list + " /tmp/goha-certrt-new.pem",
		"set ssl cert /tmp/goha-certrt-new.pem <<\n" + string(xPEM),
		"show ssl cert",
		"show ssl cert */tmp/goha-certrt-new.pem",
		"commit ssl cert /tmp/goha-certrt-new.pem",
		"add ssl crt-list " + list + " <<\n/tmp/goha-certrt-new.pem [verify none ssl-min-ver TLSv1.2] x.test !y.test",
		"add ssl crt-list " + list + " <<\n/tmp/goha-certrt-new.pem [ca-file /nope.pem] x.test",
		"add ssl crt-list " + list + " <<\n/tmp/goha-certrt-new.pem [bogus] x.test",
		"show ssl crt-list -n " + list,
		"del ssl crt-list " + list + " /tmp/goha-certrt-new.pem",
		"del ssl crt-list " + list + " /tmp/goha-certrt-new.pem:9",
		"del ssl crt-list " + list + " /tmp/goha-certrt-new.pem:3",
		"del ssl crt-list " + list + " " + a,
		"show ssl crt-list " + list,
		"show ssl cert /tmp/goha-certrt-new.pem",
		"del ssl cert /tmp/goha-certrt-new.pem",
		"del ssl crt-list " + list + " /tmp/goha-certrt-new.pem",
		"show ssl cert /tmp/goha-certrt-new.pem",
		"del ssl cert /tmp/goha-certrt-new.pem",
		"show ssl cert",
		"set ssl cert " + a + " <<\nnot a certificate",
		"set ssl cert " + a + ".key <<\nnot a key",
		"set ssl cert " + a + ".ocsp <<\nnot base64!",
		"abort ssl cert " + a,
		"set ssl cert " + a + ".ocsp <<\nMAMKAQE=",
		"abort ssl cert " + a,
		"set ssl cert /nope.pem <<\n" + string(xPEM),
		"commit ssl cert " + a,
		"abort ssl cert " + a,
		"set ssl cert " + a + " <<\n" + string(bPEM),
		"set ssl cert " + cPath + " <<\n" + string(bPEM),
		"commit ssl cert " + cPath,
		"show ssl cert *" + a,
		"commit ssl cert " + a,
		"show ssl cert " + a,
		"set ssl cert " + cPath + " <<\n" + cCert,
		"commit ssl cert " + cPath,
		"set ssl cert " + cPath + ".key <<\n" + cKey,
		"commit ssl cert " + cPath,
		"new ssl ca-file /tmp/goha-certrt-ca.pem",
		"new ssl crl-file /tmp/goha-certrt-ca.pem",
		"show ssl ca-file /tmp/goha-certrt-ca.pem",
		"set ssl ca-file /tmp/goha-certrt-ca.pem <<\nnot a CA",
		"set ssl ca-file /tmp/goha-certrt-ca.pem <<\n" + string(caPEM) + string(xPEM),
		"set ssl ca-file " + p.caFile + " <<\n" + string(caPEM),
		"show ssl ca-file */tmp/goha-certrt-ca.pem:2",
		"commit ssl ca-file /tmp/goha-certrt-ca.pem",
		"show ssl ca-file /tmp/goha-certrt-ca.pem",
		"del ssl crl-file /tmp/goha-certrt-ca.pem",
		"del ssl ca-file /tmp/goha-certrt-ca.pem",
		"new ssl crl-file /tmp/goha-certrt-crl.pem",
		"show ssl crl-file /tmp/goha-certrt-crl.pem",
		"set ssl crl-file /tmp/goha-certrt-crl.pem <<\n" + string(pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})),
		"show ssl crl-file",
		"show ssl crl-file */tmp/goha-certrt-crl.pem:1",
		"abort ssl crl-file /tmp/goha-certrt-crl.pem",
		"commit ssl crl-file /tmp/goha-certrt-crl.pem",
		"abort ssl ca-file /tmp/goha-certrt-crl.pem",
		"set ssl cert",
		"commit ssl ca-file",
		"del ssl crt-list " + list,
	}
	replies := map[string][]string{}
	for name, prog := range map[string]string{"goha": proxies(t)["goha"], "haproxy": hap} {
		sock := filepath.Join(t.TempDir(), "admin.sock")
		cfg := fmt.Sprintf(`
global
    stats socket %s level admin
    crt-base %s

defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}" ssl strict-sni crt-list %s ca-file %s verify optional crl-file %s
    bind "fd@${fe2}" ssl crt %s
    default_backend be

backend be
    server o 127.0.0.1:1
`, sock, p.dir, list, p.caFile, crl, cPath)
		h := harness.Start(t, prog, cfg, "fe", "fe2")
		harness.WaitCLI(t, sock)
		for _, c := range cmds {
			if strings.Contains(c, "<<\n") && !strings.HasSuffix(c, "\n") {
				c += "\n" // the empty line that ends the payload
			}
			replies[name] = append(replies[name], harness.MustSocket(t, sock, c))
		}
		h.Stop()
	}
	for i, c := range cmds {
		g, h := replies["goha"][i], replies["haproxy"][i]
		// HAProxy 2.6 ends some errors with two empty lines; goha ends
		// every reply with one (docs/tls.md).
		if strings.HasSuffix(h, "\n\n\n") {
			h = h[:len(h)-1]
		}
		if c == "set ssl cert "+cPath+" <<\n"+string(bPEM) {
			// 2.6 puts the payload in the other certificate's
			// transaction; goha refuses it (docs/tls.md).
			if want := "The ongoing transaction is about '" + a + "' but you are trying to set '" + cPath + "'\nCan't update " + cPath + "!\n\n"; g != want {
				t.Errorf("set during another transaction: %q, want %q", g, want)
			}
			continue
		}
		if g != h {
			t.Errorf("%q:\n--- goha:\n%s--- haproxy:\n%s", strings.SplitN(c, "\n", 2)[0], g, h)
		}
	}
}
