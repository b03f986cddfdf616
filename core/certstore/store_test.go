package certstore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testCert returns a self-signed certificate and its key as PEM.
func testCert(t testing.TB, name string, serial int64) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})
}

func write(t *testing.T, path string, parts ...[]byte) {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadCertSiblings(t *testing.T) {
	dir := t.TempDir()
	c1, k1 := testCert(t, "a.test", 1)
	// The key in <file>.key.
	write(t, filepath.Join(dir, "a.pem"), c1)
	write(t, filepath.Join(dir, "a.pem.key"), k1)
	if _, err := LoadCertFile(filepath.Join(dir, "a.pem"), false, 0); err != nil {
		t.Errorf("key in a.pem.key: %v", err)
	}
	// Not with ssl-load-extra-files leaving keys out.
	if _, err := LoadCertFile(filepath.Join(dir, "a.pem"), false, ExtraAll&^ExtraOCSP); !errors.Is(err, ErrNoKey) {
		t.Errorf("ssl-load-extra-files ocsp: %v, want ErrNoKey", err)
	}
	// With ssl-load-extra-del-ext, in a.key next to a.crt; not without.
	write(t, filepath.Join(dir, "b.crt"), c1)
	write(t, filepath.Join(dir, "b.key"), k1)
	if _, err := LoadCertFile(filepath.Join(dir, "b.crt"), true, 0); err != nil {
		t.Errorf("del-ext: %v", err)
	}
	if _, err := LoadCertFile(filepath.Join(dir, "b.crt"), false, 0); !errors.Is(err, ErrNoKey) {
		t.Errorf("without del-ext: %v, want ErrNoKey", err)
	}
	// A key that is not the certificate's.
	_, k2 := testCert(t, "other.test", 2)
	write(t, filepath.Join(dir, "c.pem"), c1, k2)
	if _, err := LoadCertFile(filepath.Join(dir, "c.pem"), false, 0); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("mismatched key: %v", err)
	}
}

func TestCertTransaction(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.pem")
	c1, k1 := testCert(t, "a.test", 1)
	c2, k2 := testCert(t, "b.test", 2)
	write(t, path, c1, k1)
	s := New()
	if _, err := s.LoadCert(path); err != nil {
		t.Fatal(err)
	}
	s.Use(path)
	gen := s.Gen()

	if _, _, err := s.SetCert(filepath.Join(dir, "nope.pem"), c2); !errors.Is(err, ErrUnknownPath) {
		t.Errorf("unknown path: %v", err)
	}
	if _, _, err := s.SetCert(path, []byte("junk")); !errors.Is(err, ErrNoCert) {
		t.Errorf("junk: %v", err)
	}
	// Certificate alone, then its key through <path>.key.
	p, created, err := s.SetCert(path, c2)
	if err != nil || !created || p != path {
		t.Fatalf("set cert: %q %v %v", p, created, err)
	}
	if _, err := s.CommitCert(path); !errors.Is(err, ErrIncomplete) {
		t.Errorf("commit without key: %v", err)
	}
	if _, _, err := s.SetCert(path+".key", k1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitCert(path); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("commit with the old key: %v", err)
	}
	if s.Gen() != gen || s.Cert(path).Certs[0].SerialNumber.Int64() != 1 {
		t.Errorf("a refused commit changed the entry")
	}
	if _, created, err := s.SetCert(path+".key", k2); err != nil || created {
		t.Fatalf("update: %v %v", created, err)
	}
	if _, _, err := s.SetCert(filepath.Join(dir, "other.pem"), c2); !errors.Is(err, ErrOtherTx) {
		t.Errorf("second transaction: %v", err)
	}
	if n, err := s.CommitCert(path); err != nil || n != 1 {
		t.Fatalf("commit: %d %v", n, err)
	}
	if s.Gen() == gen || s.Cert(path).TLS() == nil || s.Cert(path).Certs[0].SerialNumber.Int64() != 2 {
		t.Errorf("commit did not replace the entry")
	}
	if err := s.AbortCert(path); !errors.Is(err, ErrNoTx) {
		t.Errorf("abort without transaction: %v", err)
	}
	if err := s.DelCert(path); !errors.Is(err, ErrInUse) {
		t.Errorf("delete in use: %v", err)
	}
	if !s.NewCert("/x.pem") || s.NewCert("/x.pem") {
		t.Errorf("new cert twice")
	}
	if err := s.DelCert("/x.pem"); err != nil {
		t.Errorf("delete unused: %v", err)
	}
}

func TestCrtListEdits(t *testing.T) {
	dir := t.TempDir()
	c1, k1 := testCert(t, "a.test", 1)
	write(t, filepath.Join(dir, "a.pem"), c1, k1)
	write(t, filepath.Join(dir, "b.pem"), c1, k1)
	list := filepath.Join(dir, "l.crt-list")
	write(t, list, []byte("a.pem [verify none alpn h2] a.test !b.test\n\n# comment\nb.pem\n"))
	s := New()
	l, err := s.LoadCrtList(list, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.Entries {
		got = append(got, e.Format(true))
	}
	a, b := filepath.Join(dir, "a.pem"), filepath.Join(dir, "b.pem")
	want := []string{a + ":1 [alpn h2 verify none] a.test !b.test", b + ":4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	s.Use(list)
	if _, err := s.AddCrtEntry(list, &CrtEntry{Cert: "/nope.pem"}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("add unknown cert: %v", err)
	}
	e, _ := ParseCrtLine(b+" [ca-file /ca.pem] x.test", "CLI", 1)
	if _, err := s.AddCrtEntry(list, e); err == nil || err.Error() != "'ca-file' : unable to load /ca.pem" {
		t.Errorf("add with an unloaded CA file: %v", err)
	}
	if n, err := s.AddCrtEntry(list, &CrtEntry{Cert: b, Line: 1}); err != nil || n != 1 {
		t.Errorf("add: %d %v", n, err)
	}
	if err := s.DelCrtEntry(list, b, 0); err == nil || !strings.Contains(err.Error(), "several entries") {
		t.Errorf("ambiguous delete: %v", err)
	}
	if err := s.DelCrtEntry(list, b, 4); err != nil {
		t.Errorf("delete by line: %v", err)
	}
	if err := s.DelCrtEntry(list, a, 0); err != nil {
		t.Errorf("delete the first entry of a list no bind serves as default: %v", err)
	}
	if got := s.CrtList(list).Entries; len(got) != 1 || got[0].Line != 5 {
		t.Errorf("after deletions: %+v, want the added entry at line 5", got)
	}
	s.UseAsDefault(list, "cfg:3")
	wantErr := "certificate '" + b + "' cannot be deleted, it is used as default certificate by the following frontends:\n\t- cfg:3\n"
	if err := s.DelCrtEntry(list, b, 0); err == nil || err.Error() != wantErr {
		t.Errorf("delete the default: %v, want %q", err, wantErr)
	}
}

func TestParseCrtLineErrors(t *testing.T) {
	for line, want := range map[string]string{
		"[verify none] a.pem":  "parsing [f:3]: file must start with a cert",
		"a.pem [x [y]":         "parsing [f:3]: too many '['",
		"a.pem ] x":            "parsing [f:3]: missing '['",
		"a.pem [a] ]":          "parsing [f:3]: too many ']'",
		"a.pem [bogus 1]":      "parsing [f:3]: unknown ssl keyword bogus",
		"a.pem [verify]":       "parsing [f:3]: ssl args out of '[]' for verify",
		"a.pem [verify maybe]": "verify : unknown verify method 'maybe', only 'none', 'optional', and 'required' are supported",
	} {
		if _, err := ParseCrtLine(line, "f", 3); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
}

func TestCRLv1(t *testing.T) {
	// `openssl ca -gencrl` writes version 1 CRLs (no extensions); this
	// one revokes serial 03 and is signed by crlv1-ca.pem.
	data, err := os.ReadFile("testdata/crlv1.pem")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ParseCRLs(data)
	if err != nil || len(l) != 1 {
		t.Fatalf("%v", err)
	}
	ca, _ := os.ReadFile("testdata/crlv1-ca.pem")
	cas, err := ParseCAs(ca)
	if err != nil {
		t.Fatal(err)
	}
	if err := l[0].CheckSignatureFrom(cas[0]); err != nil {
		t.Errorf("signature: %v", err)
	}
	if len(l[0].RevokedCertificateEntries) != 1 || l[0].RevokedCertificateEntries[0].SerialNumber.Int64() != 3 {
		t.Errorf("revoked: %+v", l[0].RevokedCertificateEntries)
	}
}

// FuzzParseCrtLine: no line makes the parser panic, and a parsed entry
// printed as `show ssl crt-list` prints it parses back to the same entry.
func FuzzParseCrtLine(f *testing.F) {
	for _, s := range []string{
		"common.pem !not.test1.com *.test1.com !localhost # comment",
		"/a/ecdsa.pem [ssl-min-ver SSLv3 verify none allow-0rtt] localhost !www.test1.com",
		"a.pem [alpn h2,http/1.1 ciphers ECDHE ca-file /ca.pem crl-file /crl.pem no-ca-names]",
		"a.pem [", "a.pem ]", "[", "a [b] [c]", "a.pem [verify]", "\t  \t", "a.pem [ ] x",
		"a.pem [ssl-max-ver TLSv1.3 curves X25519 ecdhe prime256v1 npn h2 ciphersuites TLS_AES_128_GCM_SHA256]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, err := ParseCrtLine(line, "CLI", 1)
		if err != nil || e.Cert == "" {
			return
		}
		if _, ok := e.Opts["ca-verify-file"]; ok {
			return // not shown, as in HAProxy
		}
		back, err := ParseCrtLine(e.Format(false), "CLI", 1)
		if err != nil {
			t.Fatalf("%q printed as %q: %v", line, e.Format(false), err)
		}
		if back.Cert != e.Cert || back.HasOpts != e.HasOpts || !reflect.DeepEqual(back.Opts, e.Opts) ||
			strings.Join(back.Filters, " ") != strings.Join(e.Filters, " ") {
			t.Fatalf("%q printed as %q parses to %+v, want %+v", line, e.Format(false), back, e)
		}
	})
}

// TestCrtListBlankLine: a line of blanks after a line under crt-base
// repeats that certificate at line 0, as HAProxy reads it; after an
// absolute path it is skipped.
func TestCrtListBlankLine(t *testing.T) {
	dir := t.TempDir()
	c1, k1 := testCert(t, "a.test", 1)
	write(t, filepath.Join(dir, "a.pem"), c1, k1)
	for _, tc := range []struct {
		base, first string
		want        int
	}{{dir, "a.pem", 2}, {"", filepath.Join(dir, "a.pem"), 1}} {
		list := filepath.Join(dir, "l.crt-list")
		write(t, list, []byte(tc.first+" x.test\n   \n"))
		l, err := New().LoadCrtList(list, tc.base, "")
		if err != nil || len(l.Entries) != tc.want {
			t.Fatalf("base %q: %v, %d entries, want %d", tc.base, err, len(l.Entries), tc.want)
		}
		if tc.want == 2 && l.Entries[1].Format(true) != filepath.Join(dir, "a.pem")+":0" {
			t.Errorf("repeated entry %q", l.Entries[1].Format(true))
		}
	}
}

// FuzzParsePayload: no `set ssl cert`, `set ssl ca-file` or `set ssl
// crl-file` payload makes the parsers panic, and what they accept is
// usable: certificates parsed, CRLs with their issuer.
func FuzzParsePayload(f *testing.F) {
	crl, _ := os.ReadFile("testdata/crlv1.pem")
	ca, _ := os.ReadFile("testdata/crlv1-ca.pem")
	f.Add(crl)
	f.Add(ca)
	if b, _ := pem.Decode(crl); b != nil {
		f.Add(b.Bytes)
	}
	f.Add([]byte("-----BEGIN X509 CRL-----\nMAA=\n-----END X509 CRL-----\n"))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if certs, _, err := ParsePEM(data); err == nil {
			for _, c := range certs {
				if c == nil || c.Raw == nil {
					t.Fatal("nil certificate accepted")
				}
			}
		}
		if l, err := ParseCRLs(data); err == nil {
			for _, c := range l {
				if c.RawIssuer == nil && c.RawTBSRevocationList == nil {
					t.Fatal("empty CRL accepted")
				}
			}
		}
	})
}

// A CA file a crt-list line added at run time names can be deleted once
// the line is, as in new_del_ssl_cafile.vtc.
func TestCrtEntryReleasesItsFiles(t *testing.T) {
	dir := t.TempDir()
	c1, k1 := testCert(t, "a.test", 1)
	a := filepath.Join(dir, "a.pem")
	write(t, a, c1, k1)
	list := filepath.Join(dir, "l.crt-list")
	write(t, list, []byte("a.pem\n"))
	s := New()
	if _, err := s.LoadCrtList(list, dir, ""); err != nil {
		t.Fatal(err)
	}
	s.Use(list)
	if !s.NewFile(KindCA, "new.crt") {
		t.Fatal("new CA file refused")
	}
	e, err := ParseCrtLine(a+" [ca-file new.crt] x.test", "CLI", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddCrtEntry(list, e); err != nil {
		t.Fatal(err)
	}
	if err := s.DelFile(KindCA, "new.crt"); !errors.Is(err, ErrInUse) {
		t.Errorf("delete a CA file a line uses: %v, want in use", err)
	}
	if err := s.DelCrtEntry(list, a, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.DelFile(KindCA, "new.crt"); err != nil {
		t.Errorf("delete the CA file once its line is gone: %v", err)
	}
}

// A .ocsp file HAProxy could not read is not stapled.
func TestUnreadableOCSPNotStapled(t *testing.T) {
	dir := t.TempDir()
	c1, k1 := testCert(t, "a.test", 1)
	a := filepath.Join(dir, "a.pem")
	write(t, a, c1, k1)
	write(t, a+".ocsp", []byte{0x30, 3, 0x0a, 1, 6})
	s := New()
	c, err := s.LoadCert(a)
	if err != nil {
		t.Fatal(err)
	}
	if c.OCSP == nil || c.TLS().OCSPStaple != nil || len(s.OCSPResponses()) != 0 {
		t.Errorf("unauthorized response: kept %v, stapled %v, listed %d", c.OCSP != nil, c.TLS().OCSPStaple != nil, len(s.OCSPResponses()))
	}
}
