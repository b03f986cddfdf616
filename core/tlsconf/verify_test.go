package tlsconf

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newCert(t *testing.T, name string, serial int64, ca *testCA, isCA bool, nb, na time.Time) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: nb, NotAfter: na, IsCA: isCA, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	parent, signer := tmpl, crypto.Signer(key)
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCA{cert: c, key: key}
}

func TestClientVerifyErrors(t *testing.T) {
	long := []time.Time{t0.AddDate(-1, 0, 0), t0.AddDate(1, 0, 0)}
	root := newCert(t, "root", 1, nil, true, long[0], long[1])
	inter := newCert(t, "inter", 2, root, true, long[0], long[1])
	good := newCert(t, "good", 3, inter, false, long[0], long[1])
	expired := newCert(t, "expired", 4, inter, false, t0.AddDate(-3, 0, 0), t0.AddDate(-2, 0, 0))
	future := newCert(t, "future", 5, root, false, t0.AddDate(0, 1, 0), long[1])
	self := newCert(t, "self", 6, nil, false, long[0], long[1])
	otherRoot := newCert(t, "other", 7, nil, true, long[0], long[1])
	stranger := newCert(t, "stranger", 8, otherRoot, false, long[0], long[1])
	oldInter := newCert(t, "old-inter", 9, root, true, t0.AddDate(-3, 0, 0), t0.AddDate(-2, 0, 0))
	underOld := newCert(t, "under-old", 10, oldInter, false, long[0], long[1])

	crl := func(issuer *testCA, serials ...int64) *x509.RevocationList {
		tmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: t0.AddDate(0, -1, 0), NextUpdate: t0.AddDate(0, 1, 0)}
		for _, s := range serials {
			tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries, x509.RevocationListEntry{SerialNumber: big.NewInt(s), RevocationTime: t0.AddDate(0, 0, -1)})
		}
		der, err := x509.CreateRevocationList(rand.Reader, tmpl, issuer.cert, issuer.key)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := x509.ParseRevocationList(der)
		return l
	}
	raw := func(cs ...*testCA) [][]byte {
		var out [][]byte
		for _, c := range cs {
			out = append(out, c.cert.Raw)
		}
		return out
	}
	v := &ClientVerify{Roots: []*x509.Certificate{root.cert}}
	for _, tc := range []struct {
		name  string
		chain [][]byte
		crls  []*x509.RevocationList
		want  []VerifyError
	}{
		{"good", raw(good, inter), nil, nil},
		{"expired", raw(expired, inter), nil, []VerifyError{{0, ErrCertHasExpired}}},
		{"not yet valid", raw(future), nil, []VerifyError{{0, ErrCertNotYetValid}}},
		{"self-signed", raw(self), nil, []VerifyError{{0, ErrDepthZeroSelfSigned}}},
		{"untrusted root sent", raw(stranger, otherRoot), nil, []VerifyError{{1, ErrSelfSignedCertInChain}}},
		{"no issuer", raw(good), nil, []VerifyError{{0, ErrUnableToGetIssuerLocal}, {0, ErrUnableToVerifyLeafSig}}},
		{"expired CA", raw(underOld, oldInter), nil, []VerifyError{{1, ErrCertHasExpired}}},
		{"revoked", raw(good, inter), []*x509.RevocationList{crl(inter, 3), crl(root)}, []VerifyError{{0, ErrCertRevoked}}},
		{"no CRL for the CA", raw(good, inter), []*x509.RevocationList{crl(inter)}, []VerifyError{{1, ErrUnableToGetCRL}, {2, ErrUnableToGetCRL}}},
		// Revocation is checked before the dates, as OpenSSL does: the
		// last error is the date's.
		{"revoked and expired", raw(expired, inter), []*x509.RevocationList{crl(inter, 4), crl(root)},
			[]VerifyError{{0, ErrCertRevoked}, {0, ErrCertHasExpired}}},
	} {
		v.CRLs = tc.crls
		if got := v.Errors(tc.chain, t0); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// A trusted intermediate leads on to the trusted root, whose CRL
	// then covers the intermediate, as in set_ssl_crlfile.vtc.
	both := &ClientVerify{Roots: []*x509.Certificate{inter.cert, root.cert}}
	for _, tc := range []struct {
		name string
		crls []*x509.RevocationList
		want []VerifyError
	}{
		{"trusted intermediate", []*x509.RevocationList{crl(inter), crl(root)}, nil},
		{"trusted intermediate revoked", []*x509.RevocationList{crl(inter), crl(root, 2)}, []VerifyError{{1, ErrCertRevoked}}},
	} {
		both.CRLs = tc.crls
		if got := both.Errors(raw(good), t0); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	v.CRLs = nil
	vr, ce, ca, cd := v.Result(raw(underOld, oldInter), t0)
	if vr != ErrCertHasExpired || ce != 0 || ca != ErrCertHasExpired || cd != 1 {
		t.Errorf("Result = %d %d %d %d", vr, ce, ca, cd)
	}
	// Check runs at the present time: certificates valid around now.
	now := time.Now()
	nroot := newCert(t, "root", 1, nil, true, now.AddDate(-1, 0, 0), now.AddDate(1, 0, 0))
	nold := newCert(t, "old", 2, nroot, false, now.AddDate(-2, 0, 0), now.AddDate(-1, 0, 0))
	nv := &ClientVerify{Roots: []*x509.Certificate{nroot.cert}}
	if nv.Check(raw(nold), nil) == nil {
		t.Error("an expired client certificate was accepted")
	}
	nv.IgnoreCA = map[int]bool{ErrCertHasExpired: true}
	if nv.Check(raw(nold), nil) == nil {
		t.Error("ca-ignore-err let an error at depth 0 through")
	}
	nv.IgnoreCrt = map[int]bool{ErrCertHasExpired: true}
	if err := nv.Check(raw(nold), nil); err != nil {
		t.Errorf("crt-ignore-err 10: %v", err)
	}
	if err := (&ClientVerify{Roots: []*x509.Certificate{nroot.cert}, IgnoreCrtAll: true}).Check(raw(nold), nil); err != nil {
		t.Errorf("crt-ignore-err all: %v", err)
	}
	if err := nv.Check(nil, nil); err != nil {
		t.Errorf("no certificate: %v", err)
	}
}

func TestParseIgnoreErr(t *testing.T) {
	if all, _, err := ParseIgnoreErr("crt-ignore-err", "all"); !all || err != nil {
		t.Errorf("all: %v %v", all, err)
	}
	if _, set, err := ParseIgnoreErr("ca-ignore-err", "10,23"); err != nil || !set[10] || !set[23] || len(set) != 2 {
		t.Errorf("10,23: %v %v", set, err)
	}
	if _, set, err := ParseIgnoreErr("ca-ignore-err", "12x,+3"); err != nil || !set[12] || !set[3] {
		t.Errorf("12x,+3: %v %v", set, err)
	}
	_, _, err := ParseIgnoreErr("crt-ignore-err", "10,x")
	if err == nil || err.Error() != "'crt-ignore-err' : ID '0' out of range (1..94) in error IDs list '10,x'" {
		t.Errorf("10,x: %v", err)
	}
	for _, bad := range []string{"", "x", "10,", "95", "-1", "0"} {
		if _, _, err := ParseIgnoreErr("ca-ignore-err", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseIgnoreErr(f *testing.F) {
	for _, s := range []string{"all", "10", "10,23", "", ",", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		all, set, err := ParseIgnoreErr("crt-ignore-err", s)
		if err == nil && !all && len(set) == 0 {
			t.Errorf("%q: nothing and no error", s)
		}
	})
}

// A version 1 CRL signed with SHA-1, as HAProxy's test CAs make them.
func TestLoadCRLVersion1(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: t0.AddDate(-1, 0, 0), NotAfter: t0.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	ca, _ := x509.ParseCertificate(der)
	type revoked struct {
		Serial *big.Int
		When   time.Time
	}
	tbs, err := asn1.Marshal(struct {
		Sig        pkix.AlgorithmIdentifier
		Issuer     asn1.RawValue
		This, Next time.Time
		Revoked    []revoked
	}{pkix.AlgorithmIdentifier{Algorithm: oidSHA1WithRSA, Parameters: asn1.NullRawValue}, asn1.RawValue{FullBytes: ca.RawSubject},
		t0.AddDate(0, -1, 0).UTC(), t0.AddDate(0, 1, 0).UTC(), []revoked{{big.NewInt(3), t0.AddDate(0, 0, -1).UTC()}}})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(tbs)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA1, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	crlDER, err := asn1.Marshal(struct {
		TBS    asn1.RawValue
		SigAlg pkix.AlgorithmIdentifier
		Sig    asn1.BitString
	}{asn1.RawValue{FullBytes: tbs}, pkix.AlgorithmIdentifier{Algorithm: oidSHA1WithRSA, Parameters: asn1.NullRawValue}, asn1.BitString{Bytes: sig, BitLength: len(sig) * 8}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "crl.pem")
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: crlDER}), 0o600)
	crls, err := LoadCRLs(path)
	if err != nil {
		t.Fatal(err)
	}
	l := crls[0]
	if len(l.RevokedCertificateEntries) != 1 || l.RevokedCertificateEntries[0].SerialNumber.Int64() != 3 {
		t.Errorf("entries %v", l.RevokedCertificateEntries)
	}
	if !crlSignedBy(l, ca) {
		t.Error("signature not verified")
	}
	l.Signature = append([]byte(nil), l.Signature...)
	l.Signature[0] ^= 1
	if crlSignedBy(l, ca) {
		t.Error("a bad signature verified")
	}
}

func FuzzParseCRLv1(f *testing.F) {
	f.Add([]byte{0x30, 0x00})
	f.Add([]byte{0x30, 0x03, 0x30, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		parseCRLv1(b)
	})
}
