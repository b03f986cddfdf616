package sample

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Tokens of HAProxy's reg-test jwt/jws_verify.vtc: HS256 signed with
// "hmac key hs256", HS512 with "hmac key hs512" (then with three bytes
// too many in the signature), and PS512 and unknown algorithms.
const (
	tokHS256    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.hhj1mbYgezxFoYwinThsZQbckYHt4jJlRoQ7W8ksrFM"
	tokHS512    = "eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.K4Yze5N7jeJrDbJymphaH1YsFlYph5F-U75HzBRKDybrN7WBO494EgNG77mAQj4CVci_xbTD_IsqY2umO0f47A"
	tokHS512Bad = tokHS512 + "AAA"
	tokPS512    = "eyJhbGciOiJQUzUxMiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.MIGHAkEEPEgIrFKIDofBpFKX_mtya55QboGr09P6--v8uO85DwQWR0iKgMNSzYkL3K1lwyExG0Vtwfnife0lNe7Fn5TigAJCAY95NShiTn3tvleXVGCkkD0-HcribnMhd34QPGRc4rlwTkUg9umIUhxnEhPR--OohlmhJyIYGHuH8Ksm5f"
	tokUnknown  = "eyJhbGciOiJVTktOT1dOX0FMRyIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.MIGHAkEEPEgIrFKIDofBpFKX_mtya55QboGr09P6--v8uO85DwQWR0iKgMNSzYkL3K1lwyExG0Vtwfnife0lNe7Fn5TigAJCAY95NShiTn3tvleXVGCkkD0-HcribnMhd34QPGRc4rlwTkUg9umIUhxnEhPR--OohlmhJyIYGHuH8Ksm5f"
	jwtClaims   = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
)

var b64url = base64.RawURLEncoding.EncodeToString

// jwtSign makes a token for alg signed with key (an ES signature is R
// then S, each the curve's size, as RFC 7518 says; der: in DER).
func jwtSign(t *testing.T, alg string, key crypto.Signer, der bool) string {
	signed := b64url([]byte(`{"alg":"`+alg+`","typ":"JWT"}`)) + "." + jwtClaims
	h := map[byte]crypto.Hash{'2': crypto.SHA256, '3': crypto.SHA384, '5': crypto.SHA512}[alg[2]]
	d := h.New()
	d.Write([]byte(signed))
	digest := d.Sum(nil)
	var sig []byte
	var err error
	switch k := key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, h, digest)
	case *ecdsa.PrivateKey:
		if der {
			sig, err = ecdsa.SignASN1(rand.Reader, k, digest)
			break
		}
		r, s, e := ecdsa.Sign(rand.Reader, k, digest)
		n := (k.Curve.Params().BitSize + 7) / 8
		sig, err = append(r.FillBytes(make([]byte, n)), s.FillBytes(make([]byte, n))...), e
	}
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + b64url(sig)
}

func writePubKey(t *testing.T, path string, pub any) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestJWTVerify: the answers are HAProxy 2.6.12's for the same tokens and
// keys (as checked on haproxy with keys and tokens made the same way).
func TestJWTVerify(t *testing.T) {
	dir := t.TempDir()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ek521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	rsaPem, es256Pem, es512Pem := filepath.Join(dir, "rsa.pem"), filepath.Join(dir, "es256.pem"), filepath.Join(dir, "es512.pem")
	writePubKey(t, rsaPem, &rk.PublicKey)
	writePubKey(t, es256Pem, &ek256.PublicKey)
	writePubKey(t, es512Pem, &ek521.PublicKey)
	// A certificate is not a public key for HAProxy 2.6.
	certPem := filepath.Join(dir, "cert.pem")
	os.WriteFile(certPem, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}}), 0o600)

	rs256, rs512 := jwtSign(t, "RS256", rk, false), jwtSign(t, "RS512", rk, false)
	es256, es512 := jwtSign(t, "ES256", ek256, false), jwtSign(t, "ES512", ek521, false)
	es256der := jwtSign(t, "ES256", ek256, true)
	// A DER signature read as R then S: odd-sized (-3), or wrong (0).
	derWant := 0
	if sig, _ := base64.RawURLEncoding.DecodeString(es256der[strings.LastIndexByte(es256der, '.')+1:]); len(sig)%2 == 1 {
		derWant = -3
	}
	rs256ec := jwtSign(t, "RS256", ek256, true)
	none := b64url([]byte(`{"alg":"none"}`)) + "." + jwtClaims

	env := &Env{JWTKeys: &JWTKeys{}}
	r := convRequest(t)
	set := func(name, v string) {
		n, _ := ParseVarName(name)
		r.Vars.Set(n, &Sample{T: TStr, B: []byte(v)})
	}
	set("txn.rsa", rsaPem)
	set("txn.secret", "hmac key hs512")
	for _, tc := range []struct {
		token, args string
		want        int
	}{
		{tokHS256, "HS256,'hmac key hs256'", 1},
		{tokHS256, "HS256,'hmac key hs25'", 0},
		{tokHS256, "HS384,'hmac key hs256'", 0},
		{tokHS512, "HS512,'hmac key hs512'", 1},
		{tokHS512, "HS512,txn.secret", 1},
		{tokHS512Bad, "HS512,'hmac key hs512'", -3},
		{tokPS512, "txn.alg,'" + rsaPem + "'", -2},
		{tokUnknown, "txn.alg,'" + rsaPem + "'", -1},
		{tokHS256[:len(tokHS256)-44], "HS256,x", -3},
		{tokHS256 + ".extra", "HS256,x", -3},
		{tokHS256[:len(tokHS256)-43], "HS256,x", -3},
		{rs256, "RS256,'" + rsaPem + "'", 1},
		{rs256, "txn.alg,txn.rsa", 1},
		{rs512, "txn.alg,'" + rsaPem + "'", 1},
		{rs512, "RS256,'" + rsaPem + "'", 0},
		{rs256, "RS256,'" + filepath.Join(dir, "none.pem") + "'", -5},
		{rs256, "RS256,'" + certPem + "'", -5},
		{es256, "ES256,'" + es256Pem + "'", 1},
		{es512, "txn.alg,'" + es512Pem + "'", 1},
		{es512, "ES512,'" + es256Pem + "'", 0},
		{es256der, "ES256,'" + es256Pem + "'", derWant},
		{es256[:len(es256)-1], "ES256,'" + es256Pem + "'", -3},
		{es256, "ES256,'" + rsaPem + "'", 0},
		{rs256ec, "RS256,'" + es256Pem + "'", 1},
		{none, "none,x", 1},
		{none + ".", "none,x", 1},
		{none + ".AAAA", "none,x", 0},
		{"e30", "none,x", -3},
	} {
		alg, _ := evalText(t, r, "str("+tc.token+"),jwt_header_query('$.alg')")
		set("txn.alg", alg)
		e, err := CompileExpr(env, "str("+tc.token+"),jwt_verify("+tc.args+")")
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		var s Sample
		got := "<none>"
		if e.Eval(r, &s) {
			got = strconv.FormatInt(s.I, 10)
		}
		if got != strconv.Itoa(tc.want) {
			t.Errorf("%.30s... jwt_verify(%s) = %s, want %d", tc.token, tc.args, got, tc.want)
		}
	}
}

func TestJWTQuery(t *testing.T) {
	checkExprs(t, &Request{}, []exprCase{
		{"str(" + tokHS256 + "),jwt_header_query('$.alg')", "HS256"},
		{"str(" + tokHS256 + "),jwt_header_query('$.typ')", "JWT"},
		{"str(" + tokHS256 + "),jwt_payload_query('$.name')", "John Doe"},
		{"str(" + tokHS256 + "),jwt_payload_query('$.iat',int)", "1516239022"},
		{"str(" + tokHS256 + "),jwt_payload_query('$.iat')", "1.51624e+09"},
		{"str(" + tokHS256 + "),jwt_header_query", "<none>"},
		{"str(" + tokHS256 + "),jwt_payload_query()", "<none>"},
		{"str(" + tokHS256 + "),jwt_header_query(,int)", "<none>"},
		{"str(e30),jwt_payload_query('$.a')", "<none>"},
		{"str(eyJhIjoxfQ),jwt_header_query('$.a',int)", "1"},
		{"str(.eyJhIjoxfQ),jwt_payload_query('$.a',int)", "1"},
		{"str(x.eyJhIjoxfQ.y.z),jwt_payload_query('$.a',int)", "1"},
		{"str(eyJhIjoxfQ=),jwt_header_query('$.a',int)", "1"},
		{"str(eyJhIjoxfQ==),jwt_header_query('$.a',int)", "1"},
	})
}

func FuzzJWT(f *testing.F) {
	for _, tok := range []string{tokHS256, tokHS512Bad, tokPS512, "e30.e30.", "a.b.c.d", "=.=.="} {
		f.Add(tok, "HS256")
	}
	f.Fuzz(func(t *testing.T, token, alg string) {
		r := &Request{}
		keys := &JWTKeys{}
		if got := jwtVerify(r, []byte(token), jwtAlg([]byte(alg)), []byte("k"), keys); got < -5 || got > 1 {
			t.Fatalf("answer %d", got)
		}
		a := []Arg{{S: "$.alg", V: []jsonStep{{key: "alg", isKey: true}}}}
		for _, fn := range []func(*Request, []Arg, *Sample) bool{convJWTHeaderQuery, convJWTPayloadQuery} {
			s := Sample{T: TBin, B: []byte(token)}
			fn(r, a, &s)
		}
	})
}
