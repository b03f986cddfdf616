package tlsconf

import (
	"crypto/tls"
	"strings"
	"testing"
)

// OpenSSL's names for Go's suites, as HAProxy's ciphers lists spell them.
func TestCipherNames(t *testing.T) {
	if n := OpenSSLName("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"); n != "ECDHE-RSA-AES128-GCM-SHA256" {
		t.Errorf("OpenSSLName: %q", n)
	}
	ids, err := CipherIDs("ECDHE-RSA-AES128-GCM-SHA256:NOT-A-CIPHER")
	if err != nil || len(ids) != 1 || ids[0] != tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 {
		t.Errorf("CipherIDs: %v %v (unknown names are skipped)", ids, err)
	}
	if _, err := CipherIDs("NOT-A-CIPHER"); err == nil {
		t.Error("a list with no cipher Go knows is accepted")
	}
}

// Versions by HAProxy's names; SSLv3 is refused in words that say why.
func TestParseVersion(t *testing.T) {
	if v, err := ParseVersion("ssl-min-ver", "TLSv1.2"); err != nil || v != tls.VersionTLS12 {
		t.Errorf("TLSv1.2: %v %v", v, err)
	}
	if _, err := ParseVersion("ssl-min-ver", "SSLv3"); err == nil || !strings.Contains(err.Error(), "SSLv3") {
		t.Errorf("SSLv3: %v", err)
	}
	if _, err := ParseVersion("ssl-max-ver", "TLSv9"); err == nil || !strings.Contains(err.Error(), "unknown ssl/tls version string 'TLSv9'") {
		t.Errorf("TLSv9: %v", err)
	}
}

// ALPN lists lose h2, which goha does not speak, and say so.
func TestWithoutH2(t *testing.T) {
	c := &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
	if !WithoutH2(c) || len(c.NextProtos) != 1 || c.NextProtos[0] != "http/1.1" {
		t.Errorf("h2 kept: %v", c.NextProtos)
	}
	if WithoutH2(c) {
		t.Error("a list without h2 reported one")
	}
}

// A crt-list line's options are skipped and its names kept, lower-cased;
// negative filters are dropped.
func TestSNIFilters(t *testing.T) {
	got := SNIFilters([]string{"[ssl-min-ver", "TLSv1.2]", "WWW.Example.com", "!bad.example.com", "*.example.org"})
	if strings.Join(got, " ") != "www.example.com *.example.org" {
		t.Errorf("%q", got)
	}
}
