// Package tlsconf maps HAProxy's TLS vocabulary (OpenSSL's version, cipher
// and curve names, CRL files, ALPN lists) onto Go's crypto/tls, for core to
// build the configurations of binds and servers. It imports only the
// standard library.
package tlsconf

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"time"
)

// Versions are the TLS versions servers accept, by HAProxy's names.
var Versions = map[string]uint16{
	"TLSv1.0": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13,
}

// ParseVersion reads a version name for keyword kw, in HAProxy's words.
func ParseVersion(kw, v string) (uint16, error) {
	if n, ok := Versions[v]; ok {
		return n, nil
	}
	if v == "SSLv3" {
		return 0, fmt.Errorf("'%s' : SSLv3 is not supported by goha (Go's TLS stack has no SSLv3)", kw)
	}
	return 0, fmt.Errorf("'%s' : unknown ssl/tls version string '%s'", kw, v)
}

// CipherIDs maps an OpenSSL cipher list (TLS 1.2 and below) to Go's
// suites. Unknown names are skipped as OpenSSL does; a list with none known
// is an error.
func CipherIDs(list string) ([]uint16, error) {
	byName := map[string]uint16{}
	for _, cs := range tls.CipherSuites() {
		byName[OpenSSLName(cs.Name)] = cs.ID
	}
	var ids []uint16
	for _, n := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		if id, ok := byName[n]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("unable to set SSL cipher list to '%s'", list)
	}
	return ids, nil
}

// OpenSSLName turns Go's IANA suite name into OpenSSL's spelling, e.g.
// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 -> ECDHE-RSA-AES128-GCM-SHA256.
func OpenSSLName(iana string) string {
	n := strings.TrimPrefix(iana, "TLS_")
	n = strings.Replace(n, "_WITH_", "_", 1)
	n = strings.ReplaceAll(n, "AES_128", "AES128")
	n = strings.ReplaceAll(n, "AES_256", "AES256")
	n = strings.ReplaceAll(n, "CHACHA20_POLY1305_SHA256", "CHACHA20_POLY1305")
	return strings.ReplaceAll(n, "_", "-")
}

// BindVersions are the TLS versions binds accept, by HAProxy's names.
var BindVersions = map[string]uint16{
	"tlsv10": tls.VersionTLS10, "tlsv11": tls.VersionTLS11,
	"tlsv12": tls.VersionTLS12, "tlsv13": tls.VersionTLS13,
}

// CurveIDs reads an OpenSSL curves list ("X25519:P-256") as Go's curves.
func CurveIDs(list string) ([]tls.CurveID, error) {
	var out []tls.CurveID
	for _, n := range strings.Split(list, ":") {
		switch n {
		case "X25519", "x25519":
			out = append(out, tls.X25519)
		case "P-256", "prime256v1", "secp256r1":
			out = append(out, tls.CurveP256)
		case "P-384", "secp384r1":
			out = append(out, tls.CurveP384)
		case "P-521", "secp521r1":
			out = append(out, tls.CurveP521)
		default:
			return nil, fmt.Errorf("unable to set SSL curves list to '%s'", list)
		}
	}
	return out, nil
}

// LoadCRLs reads the certificate revocation lists of a PEM file.
func LoadCRLs(path string) ([]*x509.RevocationList, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to load CRL file '%s'", path)
	}
	var out []*x509.RevocationList
	for {
		var blk *pem.Block
		blk, data = pem.Decode(data)
		if blk == nil {
			break
		}
		if blk.Type != "X509 CRL" {
			continue
		}
		l, err := x509.ParseRevocationList(blk.Bytes)
		if err != nil {
			l, err = parseCRLv1(blk.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("unable to load CRL file '%s': %v", path, err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unable to load CRL file '%s'", path)
	}
	return out, nil
}

// CheckCRLs verifies a client's chain against crls as OpenSSL does with
// every certificate checked (what HAProxy asks of it): each certificate of
// the chain, the CA's own included, needs a current CRL from its issuer
// that does not list it.
func CheckCRLs(crls []*x509.RevocationList) func([][]byte, [][]*x509.Certificate) error {
	return func(_ [][]byte, chains [][]*x509.Certificate) error {
		var last error
		for _, chain := range chains {
			if last = chainRevoked(crls, chain); last == nil {
				return nil
			}
		}
		return last
	}
}

func chainRevoked(crls []*x509.RevocationList, chain []*x509.Certificate) error {
	now := time.Now()
	for i, cert := range chain {
		issuer := chain[min(i+1, len(chain)-1)]
		var crl *x509.RevocationList
		for _, l := range crls {
			if bytes.Equal(l.RawIssuer, cert.RawIssuer) && l.CheckSignatureFrom(issuer) == nil {
				crl = l
				break
			}
		}
		if crl == nil {
			return fmt.Errorf("unable to get certificate CRL for '%s'", cert.Subject)
		}
		if !crl.NextUpdate.IsZero() && now.After(crl.NextUpdate) {
			return fmt.Errorf("CRL has expired for '%s'", cert.Subject)
		}
		for _, e := range crl.RevokedCertificateEntries {
			if e.SerialNumber.Cmp(cert.SerialNumber) == 0 {
				return fmt.Errorf("certificate revoked: '%s'", cert.Subject)
			}
		}
	}
	return nil
}

// WithoutH2 takes h2 out of a bind's ALPN protocols and says whether it
// was there: a client that agreed on h2 would send HTTP/2 frames to an
// HTTP/1 parser, while without it the client falls back to HTTP/1.1.
func WithoutH2(c *tls.Config) bool {
	found := false
	protos := c.NextProtos[:0:0]
	for _, p := range c.NextProtos {
		if p == "h2" {
			found = true
			continue
		}
		protos = append(protos, p)
	}
	c.NextProtos = protos
	return found
}

// SNIFilters reads the words after a crt-list line's file: SSL options in
// brackets, then the SNI names the certificate serves. A negative filter
// (!name) only excludes a name a wildcard would take, and is dropped.
func SNIFilters(words []string) []string {
	var out []string
	inOpts := false
	for _, w := range words {
		switch {
		case inOpts || strings.HasPrefix(w, "["):
			inOpts = !strings.HasSuffix(w, "]")
		case strings.HasPrefix(w, "!"):
		default:
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// SelectBySNI chooses a bind's certificate from the client's SNI: a
// crt-list line's filters (filters[i] for certs[i]) name the hosts its
// certificate serves, exactly or by a "*.domain" wildcard; a certificate
// without filters serves its own names. Without a match, the first
// certificate is the default, or, with strict-sni, the handshake fails.
func SelectBySNI(certs []tls.Certificate, filters [][]string, strict bool) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	byName := map[string]*tls.Certificate{}
	for i, fs := range filters {
		for _, n := range fs {
			if _, ok := byName[n]; !ok {
				byName[n] = &certs[i]
			}
		}
	}
	return func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if name := strings.ToLower(h.ServerName); name != "" {
			if cert := byName[name]; cert != nil {
				return cert, nil
			}
			if i := strings.IndexByte(name, '.'); i > 0 {
				if cert := byName["*"+name[i:]]; cert != nil {
					return cert, nil
				}
			}
			for i := range certs {
				if len(filters[i]) == 0 && h.SupportsCertificate(&certs[i]) == nil {
					return &certs[i], nil
				}
			}
		}
		if strict || len(certs) == 0 {
			// No default: a client must name a host one certificate is for.
			return nil, fmt.Errorf("no certificate for server name '%s' (strict-sni)", h.ServerName)
		}
		return &certs[0], nil
	}
}

// sigAlgNames are OpenSSL's short and long names of the signature
// algorithms Go knows.
var sigAlgNames = map[x509.SignatureAlgorithm][2]string{
	x509.MD5WithRSA:       {"RSA-MD5", "md5WithRSAEncryption"},
	x509.SHA1WithRSA:      {"RSA-SHA1", "sha1WithRSAEncryption"},
	x509.SHA256WithRSA:    {"RSA-SHA256", "sha256WithRSAEncryption"},
	x509.SHA384WithRSA:    {"RSA-SHA384", "sha384WithRSAEncryption"},
	x509.SHA512WithRSA:    {"RSA-SHA512", "sha512WithRSAEncryption"},
	x509.SHA256WithRSAPSS: {"RSASSA-PSS", ""},
	x509.SHA384WithRSAPSS: {"RSASSA-PSS", ""},
	x509.SHA512WithRSAPSS: {"RSASSA-PSS", ""},
	x509.DSAWithSHA1:      {"DSA-SHA1", ""},
	x509.DSAWithSHA256:    {"dsa_with_SHA256", ""},
	x509.ECDSAWithSHA1:    {"ecdsa-with-SHA1", "ecdsa-with-SHA1"},
	x509.ECDSAWithSHA256:  {"ecdsa-with-SHA256", "ecdsa-with-SHA256"},
	x509.ECDSAWithSHA384:  {"ecdsa-with-SHA384", "ecdsa-with-SHA384"},
	x509.ECDSAWithSHA512:  {"ecdsa-with-SHA512", "ecdsa-with-SHA512"},
	x509.PureEd25519:      {"ED25519", "ED25519"},
}

// SigAlgName is OpenSSL's short name of a certificate's signature
// algorithm, as ssl_c_sig_alg and the PROXY protocol's SIG_ALG
// sub-TLV give it; "" for one OpenSSL would not name.
func SigAlgName(c *x509.Certificate) string { return sigAlgNames[c.SignatureAlgorithm][0] }

// SigAlgLongName is OpenSSL's long name of a signature algorithm, as
// show ssl crl-file writes a CRL's; Go's name for the others.
func SigAlgLongName(a x509.SignatureAlgorithm) string {
	if n := sigAlgNames[a][1]; n != "" {
		return n
	}
	return a.String()
}
