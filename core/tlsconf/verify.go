package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"strings"
	"time"
)

// OpenSSL's X509_V_ERR numbers of the verification failures goha tells
// apart; ssl_c_verify, ssl_c_err and ssl_c_ca_err report them and
// ca-ignore-err / crt-ignore-err name them.
const (
	VerifyOK                  = 0
	ErrUnableToGetCRL         = 3
	ErrCertSignatureFailure   = 7
	ErrCertNotYetValid        = 9
	ErrCertHasExpired         = 10
	ErrCRLHasExpired          = 12
	ErrDepthZeroSelfSigned    = 18
	ErrSelfSignedCertInChain  = 19
	ErrUnableToGetIssuerLocal = 20
	ErrUnableToVerifyLeafSig  = 21
	ErrCertRevoked            = 23
	ErrInvalidPurpose         = 26
)

// VerifyError is one failure of a client's chain, at its depth (0 the
// client's certificate, 1 its issuer...).
type VerifyError struct {
	Depth, Code int
}

// ClientVerify checks client certificates as a bind's verify, ca-file,
// crl-file, ca-ignore-err and crt-ignore-err ask; the fields are set once
// at load and read-only after.
type ClientVerify struct {
	Roots []*x509.Certificate
	CRLs  []*x509.RevocationList
	// The errors tolerated at depth > 0 (CA) and at depth 0 (client);
	// a nil set tolerates none, ignoreAll every one.
	IgnoreCA, IgnoreCrt map[int]bool
	IgnoreCAAll         bool
	IgnoreCrtAll        bool
}

// maxIgnoreErr is the highest error ID HAProxy 2.6 (as installed, 2.6.12)
// takes in an ignore list.
const maxIgnoreErr = 94

// atoi is C's: optional blanks and sign, then the leading digits.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<30; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// ParseIgnoreErr reads the argument of ca-ignore-err or crt-ignore-err:
// "all" or a comma-separated list of X509_V_ERR numbers.
func ParseIgnoreErr(kw, v string) (all bool, set map[int]bool, err error) {
	if v == "" {
		return false, nil, fmt.Errorf("'%s' : missing error IDs list", kw)
	}
	if v == "all" {
		return true, nil, nil
	}
	set = map[int]bool{}
	for _, w := range strings.Split(v, ",") {
		// HAProxy reads each ID with atoi: "x" is 0, "12x" is 12.
		n := atoi(w)
		if n <= 0 || n > maxIgnoreErr {
			return false, nil, fmt.Errorf("'%s' : ID '%d' out of range (1..%d) in error IDs list '%s'", kw, n, maxIgnoreErr, v)
		}
		set[n] = true
	}
	return false, set, nil
}

func (v *ClientVerify) ignored(e VerifyError) bool {
	if e.Depth > 0 {
		return v.IgnoreCAAll || v.IgnoreCA[e.Code]
	}
	return v.IgnoreCrtAll || v.IgnoreCrt[e.Code]
}

// Check is a tls.Config's VerifyPeerCertificate for a bind that asks for
// client certificates: the handshake fails on the first error not
// tolerated, as HAProxy's verify callback makes OpenSSL do.
func (v *ClientVerify) Check(raw [][]byte, _ [][]*x509.Certificate) error {
	if len(raw) == 0 {
		return nil
	}
	for _, e := range v.Errors(raw, time.Now()) {
		if !v.ignored(e) {
			return fmt.Errorf("client certificate verification failed at depth %d: error %d", e.Depth, e.Code)
		}
	}
	return nil
}

// Result is what the ssl_c_verify, ssl_c_err, ssl_c_ca_err and
// ssl_c_ca_err_depth fetches tell of a client's chain: the last error,
// the first at depth 0, and the first above it with its depth.
func (v *ClientVerify) Result(raw [][]byte, now time.Time) (verify, crtErr, caErr, caDepth int) {
	errs := v.Errors(raw, now)
	for _, e := range errs {
		verify = e.Code
		if e.Depth == 0 {
			if crtErr == 0 {
				crtErr = e.Code
			}
		} else if caErr == 0 {
			caErr, caDepth = e.Code, e.Depth
		}
	}
	return verify, crtErr, caErr, caDepth
}

// Errors lists the failures of a presented chain (the client's
// certificate first) in the order OpenSSL meets them: building the chain
// to a trusted CA, then the dates and revocation of each certificate.
func (v *ClientVerify) Errors(raw [][]byte, now time.Time) []VerifyError {
	certs := make([]*x509.Certificate, 0, len(raw))
	for _, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return []VerifyError{{Depth: len(certs), Code: ErrCertSignatureFailure}}
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil
	}
	// A chain that reaches no trusted CA is still checked as far as it
	// goes, as OpenSSL does once the error is tolerated.
	chain, bad := v.build(certs)
	var errs []VerifyError
	if bad != nil {
		errs = append(errs, *bad)
	}
	// OpenSSL checks revocation from the client's certificate up, then
	// the dates and signatures from the CA down.
	if len(v.CRLs) > 0 {
		// crl-file makes OpenSSL check every certificate of the chain.
		for i := range chain {
			if code := crlStatus(v.CRLs, chain[i], chain[min(i+1, len(chain)-1)], now); code != 0 {
				errs = append(errs, VerifyError{Depth: i, Code: code})
			}
		}
	}
	// Signatures and dates go down from the top of the chain; one that
	// stopped short of a CA leaves its top unchecked, and a lone
	// certificate cannot have its signature verified.
	if bad != nil && bad.Code == ErrUnableToGetIssuerLocal {
		if len(chain) == 1 {
			return append(errs, VerifyError{Depth: 0, Code: ErrUnableToVerifyLeafSig})
		}
		chain = chain[:len(chain)-1]
	}
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		switch {
		case now.Before(c.NotBefore):
			errs = append(errs, VerifyError{Depth: i, Code: ErrCertNotYetValid})
		case now.After(c.NotAfter):
			errs = append(errs, VerifyError{Depth: i, Code: ErrCertHasExpired})
		}
	}
	return errs
}

// build finds the chain from the client's certificate to a trusted CA
// through the certificates it sent, by names and signatures only: the
// dates are OpenSSL's next step, reported with their depth. A chain that
// stops short comes with the error that stopped it.
func (v *ClientVerify) build(certs []*x509.Certificate) ([]*x509.Certificate, *VerifyError) {
	issuerIn := func(list []*x509.Certificate, c *x509.Certificate) *x509.Certificate {
		for _, is := range list {
			if bytes.Equal(is.RawSubject, c.RawIssuer) && c.CheckSignatureFrom(is) == nil {
				return is
			}
		}
		return nil
	}
	// A trusted CA that is not self-signed is not the end: OpenSSL goes
	// on through the trusted certificates to the root, and the CRL
	// checks of crl-file then cover the CA too.
	toRoot := func(chain []*x509.Certificate) []*x509.Certificate {
		for len(chain) <= 16 {
			cur := chain[len(chain)-1]
			if bytes.Equal(cur.RawIssuer, cur.RawSubject) {
				break
			}
			is := issuerIn(v.Roots, cur)
			if is == nil {
				break
			}
			chain = append(chain, is)
		}
		return chain
	}
	chain := []*x509.Certificate{certs[0]}
	for len(chain) <= 16 {
		cur := chain[len(chain)-1]
		for _, r := range v.Roots {
			if bytes.Equal(r.Raw, cur.Raw) {
				return toRoot(chain), nil
			}
		}
		if is := issuerIn(v.Roots, cur); is != nil {
			return toRoot(append(chain, is)), nil
		}
		depth := len(chain) - 1
		if bytes.Equal(cur.RawIssuer, cur.RawSubject) && cur.CheckSignature(cur.SignatureAlgorithm, cur.RawTBSCertificate, cur.Signature) == nil {
			if depth == 0 {
				return chain, &VerifyError{Depth: 0, Code: ErrDepthZeroSelfSigned}
			}
			return chain, &VerifyError{Depth: depth, Code: ErrSelfSignedCertInChain}
		}
		is := issuerIn(certs[1:], cur)
		if is == nil {
			return chain, &VerifyError{Depth: depth, Code: ErrUnableToGetIssuerLocal}
		}
		chain = append(chain, is)
	}
	return chain, &VerifyError{Depth: len(chain) - 1, Code: ErrUnableToGetIssuerLocal}
}

// ParseCerts reads the certificates of a PEM file's contents.
func ParseCerts(data []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, data = pem.Decode(data)
		if blk == nil {
			return out
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(blk.Bytes); err == nil {
			out = append(out, c)
		}
	}
}

func crlStatus(crls []*x509.RevocationList, cert, issuer *x509.Certificate, now time.Time) int {
	var crl *x509.RevocationList
	for _, l := range crls {
		if bytes.Equal(l.RawIssuer, cert.RawIssuer) && crlSignedBy(l, issuer) {
			crl = l
			break
		}
	}
	if crl == nil {
		return ErrUnableToGetCRL
	}
	if !crl.NextUpdate.IsZero() && now.After(crl.NextUpdate) {
		return ErrCRLHasExpired
	}
	for _, e := range crl.RevokedCertificateEntries {
		if e.SerialNumber.Cmp(cert.SerialNumber) == 0 {
			return ErrCertRevoked
		}
	}
	return 0
}

// crlSignedBy checks a CRL's signature; OpenSSL still accepts the
// SHA-1 signatures crypto/x509 refuses, which test CAs keep using.
func crlSignedBy(l *x509.RevocationList, issuer *x509.Certificate) bool {
	if l.CheckSignatureFrom(issuer) == nil {
		return true
	}
	if l.SignatureAlgorithm != x509.SHA1WithRSA && l.SignatureAlgorithm != x509.ECDSAWithSHA1 {
		return false
	}
	sum := sha1.Sum(l.RawTBSRevocationList)
	switch pub := issuer.PublicKey.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(pub, crypto.SHA1, sum[:], l.Signature) == nil
	case *ecdsa.PublicKey:
		return ecdsa.VerifyASN1(pub, sum[:], l.Signature)
	}
	return false
}

// A version 1 CRL, which crypto/x509 no longer parses.
type crlV1 struct {
	TBS struct {
		Raw        asn1.RawContent
		Version    int `asn1:"optional,default:0"`
		Signature  pkix.AlgorithmIdentifier
		Issuer     asn1.RawValue
		ThisUpdate time.Time
		NextUpdate time.Time                 `asn1:"optional"`
		Revoked    []pkix.RevokedCertificate `asn1:"optional"`
		Extensions []pkix.Extension          `asn1:"tag:0,optional,explicit"`
	}
	SigAlg pkix.AlgorithmIdentifier
	Sig    asn1.BitString
}

var (
	oidSHA1WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 5}
	oidSHA256WithRSA = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidECDSAWithSHA1 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 1}
)

// parseCRLv1 reads a CRL without a version field.
func parseCRLv1(der []byte) (*x509.RevocationList, error) {
	var c crlV1
	if rest, err := asn1.Unmarshal(der, &c); err != nil || len(rest) != 0 {
		return nil, fmt.Errorf("malformed CRL")
	}
	l := &x509.RevocationList{
		Raw: der, RawTBSRevocationList: c.TBS.Raw, RawIssuer: c.TBS.Issuer.FullBytes,
		Signature: c.Sig.RightAlign(), ThisUpdate: c.TBS.ThisUpdate, NextUpdate: c.TBS.NextUpdate,
	}
	switch {
	case c.SigAlg.Algorithm.Equal(oidSHA1WithRSA):
		l.SignatureAlgorithm = x509.SHA1WithRSA
	case c.SigAlg.Algorithm.Equal(oidSHA256WithRSA):
		l.SignatureAlgorithm = x509.SHA256WithRSA
	case c.SigAlg.Algorithm.Equal(oidECDSAWithSHA1):
		l.SignatureAlgorithm = x509.ECDSAWithSHA1
	}
	for _, r := range c.TBS.Revoked {
		l.RevokedCertificateEntries = append(l.RevokedCertificateEntries, x509.RevocationListEntry{
			SerialNumber: r.SerialNumber, RevocationTime: r.RevocationTime,
		})
	}
	return l, nil
}
