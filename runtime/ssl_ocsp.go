package runtime

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"goha/core/certstore"
	"goha/core/tlsconf"
)

// The OCSP commands: the responses the binds staple, by the CertID they
// answer for, shown with OpenSSL's OCSP_RESPONSE_print text as HAProxy
// does, and replaced at run time.
func init() {
	Register(
		&Command{Words: []string{"set", "ssl", "ocsp-response"}, Usage: "set ssl ocsp-response <resp|payload>", Help: "update a certificate's OCSP Response from a base64-encode DER", Level: LevelUser, Run: cmdSetOCSP},
		&Command{Words: []string{"show", "ssl", "ocsp-response"}, Usage: "show ssl ocsp-response [id]", Help: "display the IDs of the OCSP responses used in memory, or the details of a single OCSP response", Level: LevelUser, Run: cmdShowOCSP},
	)
}

// ocspMaxKey is HAProxy's OCSP_MAX_CERTID_ASN1_LENGTH.
const ocspMaxKey = 128

func cmdSetOCSP(c *Ctx) {
	payload := c.Payload
	if payload == "" {
		payload = c.Arg(3)
	}
	if payload == "" {
		c.Err("'set ssl ocsp-response' expects response in base64 encoding.\n")
		return
	}
	payload = strings.NewReplacer("\r", "", "\n", "").Replace(payload)
	der, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		c.Err("'set ssl ocsp-response' received invalid base64 encoded response.\n")
		return
	}
	if err := certStore(c).SetOCSP(der, time.Now()); err != nil {
		msg := err.Error()
		if errors.Is(err, certstore.ErrOCSPUnparsable) {
			msg = "Unable to parse OCSP response"
		}
		c.Err(msg + ".\n")
		return
	}
	c.Msg("OCSP Response updated!\n")
}

func cmdShowOCSP(c *Ctx) {
	st := certStore(c)
	if id := c.Arg(3); id != "" {
		if len(id) > 2*ocspMaxKey {
			c.Err("'show ssl ocsp-response' received a too big key.\n")
			return
		}
		key, err := hex.DecodeString(id)
		var der []byte
		if err == nil {
			der = st.OCSPResponse(key)
		}
		if der == nil {
			c.Err("Certificate ID does not match any certificate.\n")
			return
		}
		c.WriteString(ocspText(der))
		return
	}
	var b strings.Builder
	b.WriteString("# Certificate IDs\n")
	for _, e := range st.OCSPResponses() {
		fmt.Fprintf(&b, "Certificate ID key : %x\n", e.Key)
		r, err := tlsconf.ParseOCSP(e.DER)
		if err != nil || len(r.Single) == 0 {
			continue
		}
		s := r.Single[0]
		fmt.Fprintf(&b, " Certificate ID:\n   Issuer Name Hash: %s\n   Issuer Key Hash: %s\n   Serial Number: %s\n",
			asn1StringHex(s.NameHash), asn1StringHex(s.KeyHash), asn1IntegerHex(s.SerialInt()))
	}
	c.WriteString(b.String())
}

// showCertOCSP answers `show ssl cert <path>.ocsp`: a transaction's own
// response, else the one the binds staple for the certificate's CertID.
func showCertOCSP(c *Ctx, st *certstore.Store, e *certstore.Cert, inTx bool) {
	if inTx && e.OCSP != nil {
		c.WriteString(ocspText(e.OCSP))
		return
	}
	if key := certstore.OCSPKey(e); key != nil {
		if der := st.OCSPResponse(key); der != nil {
			c.WriteString(ocspText(der))
		}
	}
}

// ocspText is OpenSSL's OCSP_RESPONSE_print of a response, with a space
// on each empty line as HAProxy writes it (an empty line would end the
// reply); empty when the response does not parse.
func ocspText(der []byte) string {
	r, err := tlsconf.ParseOCSP(der)
	if err != nil {
		return ""
	}
	var b strings.Builder
	ocspPrint(&b, r)
	return spaceEmptyLines(b.String())
}

// spaceEmptyLines puts a space on each empty line, as HAProxy does to
// the text OpenSSL prints.
func spaceEmptyLines(s string) string {
	for strings.Contains(s, "\n\n") {
		s = strings.ReplaceAll(s, "\n\n", "\n \n")
	}
	return s
}

var ocspStatusNames = []string{"successful", "malformedrequest", "internalerror", "trylater", "", "sigrequired", "unauthorized"}

var crlReasonNames = map[int]string{0: "unspecified", 1: "keyCompromise", 2: "cACompromise", 3: "affiliationChanged",
	4: "superseded", 5: "cessationOfOperation", 6: "certificateHold", 8: "removeFromCRL"}

// oidNames are OpenSSL's long names of the objects an OCSP response
// names.
var oidNames = map[string]string{
	"1.3.14.3.2.26": "sha1", "2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384",
	"2.16.840.1.101.3.4.2.3": "sha512", "1.2.840.113549.2.5": "md5", "2.16.840.1.101.3.4.2.4": "sha224",
	"1.2.840.113549.1.1.5": "sha1WithRSAEncryption", "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
	"1.2.840.113549.1.1.12": "sha384WithRSAEncryption", "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
	"1.2.840.113549.1.1.4": "md5WithRSAEncryption", "1.2.840.113549.1.1.14": "sha224WithRSAEncryption",
	"1.2.840.10045.4.1": "ecdsa-with-SHA1", "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
	"1.2.840.10045.4.3.3": "ecdsa-with-SHA384", "1.2.840.10045.4.3.4": "ecdsa-with-SHA512",
	"1.3.101.112": "ED25519", "1.2.840.113549.1.1.10": "rsassaPss",
	"1.3.6.1.5.5.7.48.1.1": "Basic OCSP Response", "1.3.6.1.5.5.7.48.1.2": "OCSP Nonce",
	"1.3.6.1.5.5.7.48.1.3": "OCSP CRL ID", "1.3.6.1.5.5.7.48.1.4": "Acceptable OCSP Responses",
	"1.3.6.1.5.5.7.48.1.5": "OCSP No Check", "1.3.6.1.5.5.7.48.1.6": "OCSP Archive Cutoff",
	"1.3.6.1.5.5.7.48.1.7": "OCSP Service Locator", "1.3.6.1.5.5.7.48.1.8": "Extended OCSP Status",
	"2.5.29.19": "X509v3 Basic Constraints", "2.5.29.14": "X509v3 Subject Key Identifier",
	"2.5.29.35": "X509v3 Authority Key Identifier", "2.5.29.15": "X509v3 Key Usage",
	"2.5.29.37": "X509v3 Extended Key Usage", "2.5.29.17": "X509v3 Subject Alternative Name",
	"1.2.840.113549.1.1.1": "rsaEncryption", "1.2.840.10045.2.1": "id-ecPublicKey",
}

func oidName(o asn1.ObjectIdentifier) string {
	if n, ok := oidNames[o.String()]; ok {
		return n
	}
	return o.String()
}

// asn1Time is ASN1_TIME_print's form.
func asn1Time(t time.Time) string { return t.UTC().Format("Jan _2 15:04:05 2006 GMT") }

// asn1StringHex is i2a_ASN1_STRING: upper-case hex, a backslash and a
// line break every 35 bytes, "0" when empty.
func asn1StringHex(b []byte) string {
	if len(b) == 0 {
		return "0"
	}
	var s strings.Builder
	for i, c := range b {
		if i > 0 && i%35 == 0 {
			s.WriteString("\\\n")
		}
		fmt.Fprintf(&s, "%02X", c)
	}
	return s.String()
}

// asn1IntegerHex is i2a_ASN1_INTEGER.
func asn1IntegerHex(n *big.Int) string {
	sign := ""
	if n.Sign() < 0 {
		sign = "-"
	}
	b := new(big.Int).Abs(n).Bytes()
	if len(b) == 0 {
		return sign + "00"
	}
	return sign + asn1StringHex(b)
}

func ocspPrint(b *strings.Builder, r *tlsconf.OCSPResponse) {
	status := "(UNKNOWN)"
	if r.Status >= 0 && r.Status < len(ocspStatusNames) && ocspStatusNames[r.Status] != "" {
		status = ocspStatusNames[r.Status]
	}
	fmt.Fprintf(b, "OCSP Response Data:\n    OCSP Response Status: %s (0x%x)\n", status, r.Status)
	if r.Type == nil {
		return
	}
	b.WriteString("    Response Type: " + oidName(r.Type))
	if !r.Basic {
		b.WriteString(" (unknown response type)\n")
		return
	}
	fmt.Fprintf(b, "\n    Version: %d (0x%x)\n    Responder Id: ", r.Version+1, r.Version)
	if r.ByName != nil {
		b.WriteString(nameOneLineSpc(r.ByName))
	} else {
		b.WriteString(asn1StringHex(r.ByKey))
	}
	fmt.Fprintf(b, "\n    Produced At: %s\n    Responses:\n", asn1Time(r.Produced))
	for _, s := range r.Single {
		fmt.Fprintf(b, "    Certificate ID:\n      Hash Algorithm: %s\n      Issuer Name Hash: %s\n      Issuer Key Hash: %s\n      Serial Number: %s\n",
			oidName(s.HashAlg), asn1StringHex(s.NameHash), asn1StringHex(s.KeyHash), asn1IntegerHex(s.SerialInt()))
		fmt.Fprintf(b, "    Cert Status: %s", [...]string{"good", "revoked", "unknown"}[s.CertStatus])
		if s.CertStatus == tlsconf.OCSPRevoked {
			b.WriteString("\n    Revocation Time: " + asn1Time(s.RevTime))
			if s.Reason >= 0 {
				n, ok := crlReasonNames[s.Reason]
				if !ok {
					n = "(UNKNOWN)"
				}
				fmt.Fprintf(b, "\n    Revocation Reason: %s (0x%x)", n, s.Reason)
			}
		}
		b.WriteString("\n    This Update: " + asn1Time(s.This))
		if !s.Next.IsZero() {
			b.WriteString("\n    Next Update: " + asn1Time(s.Next))
		}
		b.WriteString("\n")
		extensionsPrint(b, "Response Single Extensions", s.Exts, 8)
		b.WriteString("\n")
	}
	extensionsPrint(b, "Response Extensions", r.Exts, 4)
	signaturePrint(b, r.SigAlg.Algorithm, r.Sig)
	for _, der := range r.Certs {
		x, err := x509.ParseCertificate(der)
		if err == nil {
			x509Print(b, x)
		}
		pem.Encode(b, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
}

// extensionsPrint is X509V3_extensions_print for the extensions an OCSP
// response carries.
func extensionsPrint(b *strings.Builder, title string, exts []pkix.Extension, indent int) {
	if len(exts) == 0 {
		return
	}
	pad := strings.Repeat(" ", indent)
	fmt.Fprintf(b, "%s%s:\n", pad, title)
	for _, e := range exts {
		crit := ""
		if e.Critical {
			crit = "critical"
		}
		fmt.Fprintf(b, "%s    %s: %s\n%s        ", pad, oidName(e.Id), crit, pad)
		if e.Id.String() == "1.3.6.1.5.5.7.48.1.2" {
			b.WriteString(asn1StringHex(e.Value))
		} else {
			b.WriteString(asn1StringPrint(e.Value))
		}
		b.WriteString("\n")
	}
}

// asn1StringPrint is ASN1_STRING_print: the bytes as text, a dot for
// each one that is not printable.
func asn1StringPrint(v []byte) string {
	out := make([]byte, len(v))
	for i, c := range v {
		if c > '~' || (c < ' ' && c != '\n' && c != '\r') {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}

// signaturePrint is X509_signature_print.
func signaturePrint(b *strings.Builder, alg asn1.ObjectIdentifier, sig []byte) {
	fmt.Fprintf(b, "    Signature Algorithm: %s\n    Signature Value:\n", oidName(alg))
	for i, c := range sig {
		if i%18 == 0 {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("        ")
		}
		fmt.Fprintf(b, "%02x", c)
		if i+1 != len(sig) {
			b.WriteString(":")
		}
	}
	b.WriteString("\n")
}

// dnSpecial are the characters for which OpenSSL's one-line form quotes
// a value.
const dnSpecial = ",+\"\\<>;"

// nameOneLineSpc is X509_NAME_print_ex with XN_FLAG_ONELINE:
// "C = FR, O = Org, CN = name".
func nameOneLineSpc(raw []byte) string { return nameText(raw, " = ", true) }

func nameText(raw []byte, eq string, quote bool) string {
	dn, ok := tlsconf.ParseDN(raw)
	if !ok {
		return ""
	}
	var b strings.Builder
	for i, e := range dn {
		switch {
		case i == 0:
		case e.SameSet:
			b.WriteString(" + ")
		default:
			b.WriteString(", ")
		}
		v := e.Value
		if quote && strings.ContainsAny(v, dnSpecial) {
			v = `"` + v + `"`
		}
		b.WriteString(e.Short + eq + v)
	}
	return b.String()
}

// x509Print is OpenSSL's X509_print for the certificates a responder
// sends: the fields, the public key and the usual extensions; another
// extension is written as its bytes.
func x509Print(b *strings.Builder, x *x509.Certificate) {
	b.WriteString("Certificate:\n    Data:\n")
	fmt.Fprintf(b, "        Version: %d (0x%x)\n", x.Version, x.Version-1)
	b.WriteString("        Serial Number:")
	if x.SerialNumber.BitLen() < 64 {
		fmt.Fprintf(b, " %d (0x%x)\n", x.SerialNumber, x.SerialNumber)
	} else {
		b.WriteString("\n            ")
		sb := x.SerialNumber.Bytes()
		for i, c := range sb {
			fmt.Fprintf(b, "%02x", c)
			if i+1 < len(sb) {
				b.WriteString(":")
			}
		}
		b.WriteString("\n")
	}
	var tbs struct {
		Raw          asn1.RawContent
		Version      int `asn1:"optional,explicit,default:0,tag:0"`
		Serial       asn1.RawValue
		SigAlg       pkix.AlgorithmIdentifier
		Issuer       asn1.RawValue
		Validity     asn1.RawValue
		Subject      asn1.RawValue
		PublicKey    asn1.RawValue
		UniqueID     asn1.BitString   `asn1:"optional,tag:1"`
		SubjUniqueID asn1.BitString   `asn1:"optional,tag:2"`
		Exts         []pkix.Extension `asn1:"optional,explicit,tag:3"`
	}
	asn1.Unmarshal(x.RawTBSCertificate, &tbs)
	fmt.Fprintf(b, "        Signature Algorithm: %s\n", oidName(tbs.SigAlg.Algorithm))
	fmt.Fprintf(b, "        Issuer: %s\n", nameText(x.RawIssuer, "=", false))
	fmt.Fprintf(b, "        Validity\n            Not Before: %s\n            Not After : %s\n", asn1Time(x.NotBefore), asn1Time(x.NotAfter))
	fmt.Fprintf(b, "        Subject: %s\n", nameText(x.RawSubject, "=", false))
	b.WriteString("        Subject Public Key Info:\n")
	switch k := x.PublicKey.(type) {
	case *rsa.PublicKey:
		fmt.Fprintf(b, "            Public Key Algorithm: rsaEncryption\n                Public-Key: (%d bit)\n                Modulus:\n", k.N.BitLen())
		hexDump(b, append([]byte{0}, k.N.Bytes()...), 20)
		fmt.Fprintf(b, "                Exponent: %d (0x%x)\n", k.E, k.E)
	case *ecdsa.PublicKey:
		fmt.Fprintf(b, "            Public Key Algorithm: id-ecPublicKey\n                Public-Key: (%d bit)\n                pub:\n", k.Curve.Params().BitSize)
		pt, _ := k.ECDH()
		if pt != nil {
			hexDump(b, pt.Bytes(), 20)
		}
		curve := map[string]string{"P-256": "prime256v1", "P-384": "secp384r1", "P-521": "secp521r1"}[k.Curve.Params().Name]
		fmt.Fprintf(b, "                ASN1 OID: %s\n                NIST CURVE: %s\n", curve, k.Curve.Params().Name)
	default:
		fmt.Fprintf(b, "            Public Key Algorithm: %s\n", oidName(tbs.SigAlg.Algorithm))
	}
	if len(tbs.Exts) > 0 {
		b.WriteString("        X509v3 extensions:\n")
		for _, e := range tbs.Exts {
			crit := ""
			if e.Critical {
				crit = "critical"
			}
			fmt.Fprintf(b, "            %s: %s\n", oidName(e.Id), crit)
			b.WriteString(extValue(x, e))
		}
	}
	signaturePrint(b, tbs.SigAlg.Algorithm, x.Signature)
}

// hexDump writes bytes as OpenSSL's key dumps: 15 a line, colon
// separated, indented.
func hexDump(b *strings.Builder, v []byte, indent int) {
	pad := strings.Repeat(" ", indent)
	for i, c := range v {
		if i%15 == 0 {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(pad)
		}
		fmt.Fprintf(b, "%02x", c)
		if i+1 < len(v) {
			b.WriteString(":")
		}
	}
	b.WriteString("\n")
}

func colonHex(v []byte) string {
	s := make([]string, len(v))
	for i, c := range v {
		s[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(s, ":")
}

var keyUsageNames = []string{"Digital Signature", "Non Repudiation", "Key Encipherment", "Data Encipherment",
	"Key Agreement", "Certificate Sign", "CRL Sign", "Encipher Only", "Decipher Only"}

var extKeyUsageNames = map[x509.ExtKeyUsage]string{
	x509.ExtKeyUsageServerAuth: "TLS Web Server Authentication", x509.ExtKeyUsageClientAuth: "TLS Web Client Authentication",
	x509.ExtKeyUsageCodeSigning: "Code Signing", x509.ExtKeyUsageEmailProtection: "E-mail Protection",
	x509.ExtKeyUsageTimeStamping: "Time Stamping", x509.ExtKeyUsageOCSPSigning: "OCSP Signing",
	x509.ExtKeyUsageAny: "Any Extended Key Usage",
}

// extValue is the text X509V3_EXT_print gives an extension, indented
// under its name.
func extValue(x *x509.Certificate, e pkix.Extension) string {
	const pad = "                "
	switch e.Id.String() {
	case "2.5.29.19":
		s := pad + "CA:FALSE\n"
		if x.IsCA {
			s = pad + "CA:TRUE"
			if x.MaxPathLen > 0 || x.MaxPathLenZero {
				s += fmt.Sprintf(", pathlen:%d", x.MaxPathLen)
			}
			s += "\n"
		}
		return s
	case "2.5.29.14":
		return pad + colonHex(x.SubjectKeyId) + "\n"
	case "2.5.29.35":
		var aki struct {
			KeyID  []byte        `asn1:"optional,tag:0"`
			Issuer asn1.RawValue `asn1:"optional,tag:1"`
			Serial []byte        `asn1:"optional,tag:2"`
		}
		asn1.Unmarshal(e.Value, &aki)
		var s strings.Builder
		if aki.KeyID != nil {
			s.WriteString(pad + colonHex(aki.KeyID) + "\n")
		}
		if len(aki.Issuer.Bytes) > 0 {
			var gn asn1.RawValue
			if _, err := asn1.Unmarshal(aki.Issuer.Bytes, &gn); err == nil && gn.Tag == 4 {
				s.WriteString(pad + "DirName:" + tlsconf.OneLine(gn.Bytes) + "\n")
			}
		}
		if aki.Serial != nil {
			s.WriteString(pad + "serial:" + colonHex(aki.Serial) + "\n")
		}
		return s.String()
	case "2.5.29.15":
		var names []string
		for i, n := range keyUsageNames {
			if x.KeyUsage&(1<<i) != 0 {
				names = append(names, n)
			}
		}
		return pad + strings.Join(names, ", ") + "\n"
	case "2.5.29.37":
		var names []string
		for _, u := range x.ExtKeyUsage {
			names = append(names, extKeyUsageNames[u])
		}
		for _, o := range x.UnknownExtKeyUsage {
			names = append(names, o.String())
		}
		return pad + strings.Join(names, ", ") + "\n"
	case "2.5.29.17":
		return pad + sanOneLine(x) + "\n"
	}
	return pad + asn1StringPrint(e.Value) + "\n"
}
