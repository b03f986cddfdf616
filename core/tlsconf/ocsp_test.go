package tlsconf

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"testing"
	"time"
)

// testOCSP builds a signed-looking basic OCSP response (the signature is
// not checked by the parser).
func testOCSP(t testing.TB, status asn1.RawValue, next time.Time) []byte {
	t.Helper()
	nameHash := sha1.Sum([]byte("issuer name"))
	keyHash := sha1.Sum([]byte("issuer key"))
	id := certIDASN{
		HashAlg:  pkixAlg(asn1.ObjectIdentifier{1, 3, 14, 3, 2, 26}),
		NameHash: nameHash[:], KeyHash: keyHash[:],
		Serial: asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagInteger, Bytes: []byte{0x10, 0x0f}},
	}
	idDER, err := asn1.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	this := time.Date(2021, 6, 10, 8, 55, 4, 0, time.UTC)
	single := ocspSingleASN{CertID: asn1.RawValue{FullBytes: idDER}, Status: status, This: this, Next: next}
	rid, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 2, IsCompound: true, Bytes: mustMarshal(t, keyHash[:])})
	basic := ocspBasicASN{
		TBS:    ocspDataASN{Responder: asn1.RawValue{FullBytes: rid}, Produced: this, Responses: []ocspSingleASN{single}},
		SigAlg: pkixAlg(asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}),
		Sig:    asn1.BitString{Bytes: make([]byte, 8), BitLength: 64},
	}
	rand.Read(basic.Sig.Bytes)
	bDER := mustMarshal(t, basic)
	return mustMarshal(t, ocspRespASN{Bytes: ocspBytesASN{Type: oidOCSPBasic, Response: bDER}})
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseOCSP(t *testing.T) {
	next := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	good := testOCSP(t, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0}, next)
	r, err := ParseOCSP(good)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Basic || len(r.Single) != 1 || r.ByKey == nil || r.ByName != nil {
		t.Fatalf("decoded %+v", r)
	}
	s := r.Single[0]
	if s.CertStatus != OCSPGood || !s.Next.Equal(next) || hex.EncodeToString(s.Serial) != "100f" || s.SerialInt().Int64() != 0x100f {
		t.Errorf("single %+v", s)
	}
	if err := r.Check(time.Now()); err != nil {
		t.Errorf("check: %v", err)
	}
	if err := r.Check(next.Add(time.Hour)); err == nil {
		t.Error("an expired response passed the check")
	}
	revTime := time.Date(2021, 6, 10, 8, 57, 36, 0, time.UTC)
	rev := testOCSP(t, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 1, IsCompound: true,
		Bytes: append(mustMarshal(t, revTime), 0xa0, 3, 0x0a, 1, 1)}, next)
	r, err = ParseOCSP(rev)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Single[0]; s.CertStatus != OCSPRevoked || !s.RevTime.Equal(revTime) || s.Reason != 1 {
		t.Errorf("revoked %+v", s)
	}
	if _, err := ParseOCSP(good[:len(good)-1]); err == nil {
		t.Error("a truncated response parsed")
	}
	if r, err := ParseOCSP([]byte{0x30, 3, 0x0a, 1, 6}); err != nil || r.Status != 6 || r.Basic {
		t.Errorf("unauthorized response: %+v %v", r, err)
	}
}

func FuzzParseOCSP(f *testing.F) {
	next := time.Date(2035, 2, 17, 8, 55, 4, 0, time.UTC)
	f.Add(testOCSP(f, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0}, next))
	f.Add(testOCSP(f, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 2}, time.Time{}))
	f.Add([]byte{0x30, 3, 0x0a, 1, 1})
	f.Fuzz(func(t *testing.T, der []byte) {
		r, err := ParseOCSP(der)
		if err != nil {
			return
		}
		r.Check(next)
		for i := range r.Single {
			r.Single[i].SerialInt()
		}
	})
}

func pkixAlg(oid asn1.ObjectIdentifier) pkix.AlgorithmIdentifier {
	return pkix.AlgorithmIdentifier{Algorithm: oid, Parameters: asn1.NullRawValue}
}
