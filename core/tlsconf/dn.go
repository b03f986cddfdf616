package tlsconf

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"strconv"
	"strings"
)

// DNEntry is one attribute of a distinguished name, under OpenSSL's short
// name for its type.
type DNEntry struct {
	Short, Value string
	SameSet      bool // in the same RDN as the entry before (multi-valued)
}

// dnShortNames are OpenSSL's short names of the usual DN attributes; an
// attribute of another type is named by its OID.
var dnShortNames = map[string]string{
	"2.5.4.3": "CN", "2.5.4.4": "SN", "2.5.4.5": "serialNumber", "2.5.4.6": "C",
	"2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.9": "street", "2.5.4.10": "O",
	"2.5.4.11": "OU", "2.5.4.12": "title", "2.5.4.42": "GN", "2.5.4.43": "initials",
	"2.5.4.44": "generationQualifier", "2.5.4.46": "dnQualifier", "2.5.4.65": "pseudonym",
	"2.5.4.17": "postalCode", "1.2.840.113549.1.9.1": "emailAddress",
	"0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
}

// ParseDN reads a DER distinguished name, in its order.
func ParseDN(der []byte) ([]DNEntry, bool) {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) != 0 {
		return nil, false
	}
	var out []DNEntry
	for _, rdn := range seq {
		for j, atv := range rdn {
			name, ok := dnShortNames[atv.Type.String()]
			if !ok {
				name = atv.Type.String()
			}
			v, ok := atv.Value.(string)
			if !ok {
				v = fmt.Sprint(atv.Value)
			}
			out = append(out, DNEntry{Short: name, Value: v, SameSet: j > 0})
		}
	}
	return out, true
}

// OneLine writes a distinguished name as OpenSSL's X509_NAME_oneline
// does, in the name's order: /C=FR/ST=.../CN=..., every entry after a
// '/', those of multi-valued RDNs included; "" when it does not parse.
func OneLine(der []byte) string {
	dn, _ := ParseDN(der)
	var b strings.Builder
	for _, e := range dn {
		b.WriteByte('/')
		b.WriteString(e.Short)
		b.WriteByte('=')
		b.WriteString(e.Value)
	}
	return b.String()
}

// KeyBits names a certificate's key as HAProxy's show ssl cert and the
// PROXY protocol's KEY_ALG sub-TLV do: the algorithm and the key's size
// in bits (RSA2048, EC256, ED25519); "" for another kind of key.
func KeyBits(c *x509.Certificate) string {
	switch k := c.PublicKey.(type) {
	case *rsa.PublicKey:
		return "RSA" + strconv.Itoa(k.N.BitLen())
	case *ecdsa.PublicKey:
		return "EC" + strconv.Itoa(k.Curve.Params().BitSize)
	case ed25519.PublicKey:
		return "ED25519"
	}
	return ""
}
