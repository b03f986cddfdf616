package runtime

import (
	"encoding/asn1"
	"strings"
	"testing"
)

// FuzzOCSPText: printing any response that parses never panics, and
// never leaves an empty line that would end the reply early.
func FuzzOCSPText(f *testing.F) {
	f.Add([]byte{0x30, 3, 0x0a, 1, 0})
	f.Add([]byte{0x30, 3, 0x0a, 1, 6})
	// A basic response skeleton: status, type, and an empty body.
	inner, _ := asn1.Marshal(struct {
		Type asn1.ObjectIdentifier
		Resp []byte
	}{asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 48, 1, 1}, []byte{0x30, 0}})
	outer, _ := asn1.Marshal(struct {
		Status asn1.Enumerated
		Bytes  asn1.RawValue
	}{0, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: inner}})
	f.Add(outer)
	f.Fuzz(func(t *testing.T, der []byte) {
		if s := ocspText(der); strings.Contains(s, "\n\n") {
			t.Errorf("empty line in %q", s)
		}
	})
}

func TestOCSPTextStatus(t *testing.T) {
	if got := spaceEmptyLines("a\n\n\nb"); got != "a\n \n \nb" {
		t.Errorf("empty lines: %q", got)
	}
	got := ocspText([]byte{0x30, 3, 0x0a, 1, 6})
	if want := "OCSP Response Data:\n    OCSP Response Status: unauthorized (0x6)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
