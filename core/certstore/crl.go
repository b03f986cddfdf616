package certstore

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"
	"time"
)

// Go's parser takes only version 2 CRLs; OpenSSL still writes version 1
// ones (no extensions) by default, and HAProxy loads them. parseCRLv1
// reads such a list into the fields revocation checks use, keeping the
// signed bytes so that the issuer's signature can still be checked.

type crlV1 struct {
	Raw       asn1.RawContent
	TBS       crlTBSv1
	SigAlg    pkix.AlgorithmIdentifier
	Signature asn1.BitString
}

type crlTBSv1 struct {
	Raw        asn1.RawContent
	SigAlg     pkix.AlgorithmIdentifier
	Issuer     asn1.RawValue
	ThisUpdate time.Time
	NextUpdate time.Time     `asn1:"optional"`
	Revoked    []crlEntryV1  `asn1:"optional"`
	Extensions asn1.RawValue `asn1:"optional,explicit,tag:0"`
}

type crlEntryV1 struct {
	Serial     *big.Int
	Date       time.Time
	Extensions asn1.RawValue `asn1:"optional"`
}

var sigAlgs = map[string]x509.SignatureAlgorithm{
	"1.2.840.113549.1.1.4":  x509.MD5WithRSA,
	"1.2.840.113549.1.1.5":  x509.SHA1WithRSA,
	"1.2.840.113549.1.1.11": x509.SHA256WithRSA,
	"1.2.840.113549.1.1.12": x509.SHA384WithRSA,
	"1.2.840.113549.1.1.13": x509.SHA512WithRSA,
	"1.2.840.10045.4.1":     x509.ECDSAWithSHA1,
	"1.2.840.10045.4.3.2":   x509.ECDSAWithSHA256,
	"1.2.840.10045.4.3.3":   x509.ECDSAWithSHA384,
	"1.2.840.10045.4.3.4":   x509.ECDSAWithSHA512,
	"1.3.101.112":           x509.PureEd25519,
}

func parseCRLv1(der []byte) (*x509.RevocationList, error) {
	var c crlV1
	rest, err := asn1.Unmarshal(der, &c)
	if err != nil || len(rest) > 0 {
		return nil, errors.New("malformed CRL")
	}
	l := &x509.RevocationList{
		Raw:                  der,
		RawTBSRevocationList: c.TBS.Raw,
		RawIssuer:            c.TBS.Issuer.FullBytes,
		Signature:            c.Signature.RightAlign(),
		SignatureAlgorithm:   sigAlgs[c.SigAlg.Algorithm.String()],
		ThisUpdate:           c.TBS.ThisUpdate,
		NextUpdate:           c.TBS.NextUpdate,
	}
	var seq pkix.RDNSequence
	if _, err := asn1.Unmarshal(l.RawIssuer, &seq); err == nil {
		l.Issuer.FillFromRDNSequence(&seq)
	}
	for _, e := range c.TBS.Revoked {
		l.RevokedCertificateEntries = append(l.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: e.Serial, RevocationTime: e.Date})
	}
	return l, nil
}

// parseCRL reads a DER CRL of either version.
func parseCRL(der []byte) (*x509.RevocationList, error) {
	if l, err := x509.ParseRevocationList(der); err == nil {
		return l, nil
	}
	return parseCRLv1(der)
}
