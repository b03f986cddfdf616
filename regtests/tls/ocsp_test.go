//go:build regtest

package tls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// ocspResponse has openssl's OCSP responder answer for leaf, good or
// revoked, signed by the CA, and returns the DER response.
func ocspResponse(t *testing.T, p *pki, leafPath string, leaf tls.Certificate, revoked bool, name string) []byte {
	t.Helper()
	kb, _ := x509.MarshalECPrivateKey(p.caKey)
	caKey := filepath.Join(p.dir, "ca.key")
	os.WriteFile(caKey, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	exp := leaf.Leaf.NotAfter.UTC().Format("060102150405Z")
	line := fmt.Sprintf("V\t%s\t\t%X\tunknown\t/CN=%s\n", exp, leaf.Leaf.SerialNumber, leaf.Leaf.Subject.CommonName)
	if revoked {
		rev := time.Now().Add(-time.Minute).UTC().Format("060102150405Z")
		line = fmt.Sprintf("R\t%s\t%s,keyCompromise\t%X\tunknown\t/CN=%s\n", exp, rev, leaf.Leaf.SerialNumber, leaf.Leaf.Subject.CommonName)
	}
	idx := filepath.Join(p.dir, name+".idx")
	os.WriteFile(idx, []byte(line), 0o644)
	req, resp := filepath.Join(p.dir, name+".req"), filepath.Join(p.dir, name+".der")
	for _, args := range [][]string{
		{"ocsp", "-issuer", p.caFile, "-cert", leafPath, "-reqout", req, "-no_nonce"},
		{"ocsp", "-index", idx, "-CA", p.caFile, "-rsigner", p.caFile, "-rkey", caKey, "-reqin", req, "-respout", resp, "-ndays", "30"},
	} {
		if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v\n%s", args[0], err, out)
		}
	}
	der, err := os.ReadFile(resp)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestOCSPCommandsLikeHAProxy staples a certificate's .ocsp response,
// shows it with `show ssl ocsp-response` and `show ssl cert <crt>.ocsp`,
// replaces it with `set ssl ocsp-response`, on goha and on HAProxy, and
// compares the replies byte for byte and the stapled responses.
func TestOCSPCommandsLikeHAProxy(t *testing.T) {
	hap, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("needs HAProxy to compare with")
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("needs openssl to make OCSP responses")
	}
	p := newPKI(t)
	a, aCert := p.issue(t, "a.test")
	good := ocspResponse(t, p, a, aCert, false, "good")
	revoked := ocspResponse(t, p, a, aCert, true, "revoked")
	os.WriteFile(a+".ocsp", good, 0o644)
	// HAProxy needs the issuer to match the response with the
	// certificate.
	caPEM, _ := os.ReadFile(p.caFile)
	os.WriteFile(a+".issuer", caPEM, 0o644)

	cmds := func(key string) []string {
		return []string{
			"show ssl ocsp-response " + key,
			"show ssl cert " + a,
			"show ssl cert " + a + ".ocsp",
			"show ssl ocsp-response 00",
			"show ssl ocsp-response " + strings.Repeat("0", 258),
			"set ssl ocsp-response",
			"set ssl ocsp-response %%%",
			"set ssl ocsp-response AAAA",
			"set ssl ocsp-response <<\n" + base64.StdEncoding.EncodeToString(revoked) + "\n",
			"show ssl ocsp-response " + key,
			"show ssl cert " + a + ".ocsp",
			"set ssl cert " + a + ".ocsp <<\n" + base64.StdEncoding.EncodeToString(good) + "\n",
			"show ssl cert *" + a + ".ocsp",
			"show ssl ocsp-response " + key,
		}
	}
	replies := map[string][]string{}
	staples := map[string][]byte{}
	var list []string
	for name, prog := range map[string]string{"goha": proxies(t)["goha"], "haproxy": hap} {
		sock := filepath.Join(t.TempDir(), "admin.sock")
		cfg := fmt.Sprintf(`
global
    stats socket %s level admin

defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}" ssl crt %s
    http-request return status 200
`, sock, a)
		h := harness.Start(t, prog, cfg, "fe")
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("%s output:\n%s", name, h.Output())
			}
		})
		harness.WaitCLI(t, sock)
		ids := harness.MustSocket(t, sock, "show ssl ocsp-response")
		list = append(list, ids)
		_, key, _ := strings.Cut(ids, "Certificate ID key : ")
		key, _, _ = strings.Cut(key, "\n")
		for _, c := range cmds(key) {
			replies[name] = append(replies[name], harness.MustSocket(t, sock, c))
		}
		// After the set, the bind staples the revoked response.
		conn, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{InsecureSkipVerify: true, ServerName: "a.test"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		staples[name] = conn.ConnectionState().OCSPResponse
		conn.Close()
		h.Stop()
	}
	if list[0] != list[1] || !strings.Contains(list[0], "Certificate ID key : 30") {
		t.Errorf("show ssl ocsp-response:\n%s---\n%s", list[0], list[1])
	}
	for i, c := range cmds("<key>") {
		if g, h := replies["goha"][i], replies["haproxy"][i]; g != h {
			t.Errorf("%q:\n--- goha:\n%s--- haproxy:\n%s", strings.SplitN(c, "\n", 2)[0], g, h)
		}
	}
	if string(staples["goha"]) != string(revoked) || string(staples["haproxy"]) != string(revoked) {
		t.Errorf("stapled responses after set ssl ocsp-response: goha %d bytes, haproxy %d bytes, want the revoked one (%d)",
			len(staples["goha"]), len(staples["haproxy"]), len(revoked))
	}
}
