package sample

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"sync"
)

// JSON Web Token converters, as in HAProxy 2.6: jwt_header_query and
// jwt_payload_query run a json_query on a decoded part of the token (with
// no JSON path they give no sample, as 2.6 does); jwt_verify checks a JWS
// in compact form with HMAC, RSASSA-PKCS1-v1_5 or ECDSA and answers with
// HAProxy's codes. The public keys are read from PEM files when the
// configuration is loaded.

func init() {
	RegisterConvs(
		Conv{Name: "jwt_header_query", Max: 2, In: TBin, Out: TAny, Check: jwtQueryArgs, Fn: convJWTHeaderQuery},
		Conv{Name: "jwt_payload_query", Max: 2, In: TBin, Out: TAny, Check: jwtQueryArgs, Fn: convJWTPayloadQuery},
		Conv{Name: "jwt_verify", Max: 2, In: TBin, Out: TSint, Check: typedArgs(2, []argKind{aStr, aStr}, jwtVerifyArgs), Fn: convJWTVerify},
	)
}

// jwt_verify's answers.
const (
	jwtKO           = 0
	jwtOK           = 1
	jwtUnknownAlg   = -1
	jwtUnmanagedAlg = -2
	jwtInvalidToken = -3
	jwtUnknownCert  = -5
	jwtAlgNone      = 1 + iota // algorithms, after the answers
	jwtHS256
	jwtHS384
	jwtHS512
	jwtRS256
	jwtRS384
	jwtRS512
	jwtES256
	jwtES384
	jwtES512
	jwtPS256
	jwtPS384
	jwtPS512
)

// jwtAlg reads an algorithm's name as HAProxy's jwt_parse_alg: "none", or
// one of the nine others compared as C strings (a NUL after the name
// ends it); 0 when unknown.
func jwtAlg(b []byte) int {
	if len(b) < 5 {
		if string(b) == "none" {
			return jwtAlgNone
		}
		return 0
	}
	if len(b) > 5 && b[5] != 0 {
		return 0
	}
	base := 0
	switch b[0] {
	case 'H':
		base = jwtHS256
	case 'R':
		base = jwtRS256
	case 'E':
		base = jwtES256
	case 'P':
		base = jwtPS256
	default:
		return 0
	}
	switch string(b[1:5]) {
	case "S256":
		return base
	case "S384":
		return base + 1
	case "S512":
		return base + 2
	}
	return 0
}

// JWTKeys are the public keys jwt_verify arguments name, by file path,
// read when the configuration is compiled; a key given in a variable is
// looked up here.
type JWTKeys struct {
	mu   sync.RWMutex
	keys map[string]crypto.PublicKey
}

// load reads the file's first PEM "PUBLIC KEY" block once; a file that
// cannot be read or holds no such key is left out, as in HAProxy.
func (k *JWTKeys) load(path string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.keys[path]; ok {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for {
		var blk *pem.Block
		if blk, data = pem.Decode(data); blk == nil {
			return
		}
		if blk.Type != "PUBLIC KEY" {
			continue
		}
		pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return
		}
		if k.keys == nil {
			k.keys = map[string]crypto.PublicKey{}
		}
		k.keys[path] = pub
		return
	}
}

func (k *JWTKeys) get(path []byte) crypto.PublicKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys[string(path)]
}

// jwtKeys is the Env's key set, or a new private one.
func (e *Env) jwtKeys() *JWTKeys {
	if e == nil || e.JWTKeys == nil {
		return &JWTKeys{}
	}
	return e.JWTKeys
}

func jwtQueryArgs(env *Env, a []Arg) error {
	if t := arg(a, 1).S; t != "" && t != "int" {
		return fmt.Errorf("output_type only supports \"int\" as argument")
	}
	if len(a) == 0 {
		return nil
	}
	a[0].V = false
	if a[0].S != "" {
		if steps, ok := parseJSONPath(a[0].S); ok {
			a[0].V = steps
		}
	}
	if len(a) > 1 && a[1].S == "int" {
		a[1].I = 1
	}
	return nil
}

func convJWTHeaderQuery(r *Request, a []Arg, s *Sample) bool  { return jwtQuery(r, a, s, 0) }
func convJWTPayloadQuery(r *Request, a []Arg, s *Sample) bool { return jwtQuery(r, a, s, 1) }

// jwtQuery decodes the token's part (0 the JOSE header, 1 the claims)
// and queries it.
func jwtQuery(r *Request, a []Arg, s *Sample, part int) bool {
	if len(a) == 0 {
		return false
	}
	b := s.B
	for i := 0; i < part; i++ {
		dot := bytes.IndexByte(b, '.')
		if dot < 0 {
			return false
		}
		b = b[dot+1:]
	}
	if dot := bytes.IndexByte(b, '.'); dot >= 0 {
		b = b[:dot]
	}
	dec, ok := b64Decode(r.alloc(len(b)*3/4+3), b, true)
	if !ok {
		return false
	}
	s.T, s.B = TStr, dec
	return convJSONQuery(r, a, s)
}

// jwtVerifyConf is what jwt_verify's arguments compile to: an algorithm
// and a key, each given or read from a variable.
type jwtVerifyConf struct {
	alg            int
	algVar, keyVar VarName
	algIsVar       bool
	keyIsVar       bool
	key            []byte // when given
	keys           *JWTKeys
}

func jwtVerifyArgs(env *Env, a []Arg) error {
	c := &jwtVerifyConf{keys: env.jwtKeys(), key: []byte(a[1].S)}
	if n, err := checkVarName(env, a[0].S); err == nil {
		c.algVar, c.algIsVar = n, true
	} else {
		switch c.alg = jwtAlg([]byte(a[0].S)); {
		case c.alg == 0:
			return fmt.Errorf("unknown JWT algorithm: %s", a[0].S)
		case c.alg >= jwtPS256:
			return fmt.Errorf("RSASSA-PSS JWS signing not managed yet")
		}
	}
	if n, err := checkVarName(env, a[1].S); err == nil {
		c.keyVar, c.keyIsVar = n, true
	} else {
		c.keys.load(a[1].S)
	}
	a[0].V = c
	return nil
}

func convJWTVerify(r *Request, a []Arg, s *Sample) bool {
	c := a[0].V.(*jwtVerifyConf)
	alg := c.alg
	if c.algIsVar {
		name, ok := varText(r, c.algVar)
		if !ok {
			return false
		}
		alg = jwtAlg(name)
	}
	key := c.key
	if c.keyIsVar {
		var ok bool
		if key, ok = varText(r, c.keyVar); !ok {
			return false
		}
	}
	s.setInt(int64(jwtVerify(r, s.B, alg, key, c.keys)))
	return true
}

// jwtVerify checks the token's signature with the algorithm and the key
// (a secret, or a key file's path), in HAProxy's order of checks.
func jwtVerify(r *Request, token []byte, alg int, key []byte, keys *JWTKeys) int {
	if alg == 0 {
		return jwtUnknownAlg
	}
	first := bytes.IndexByte(token, '.')
	if first < 0 {
		// One part only: not even the claims.
		return jwtInvalidToken
	}
	second := bytes.IndexByte(token[first+1:], '.')
	if second < 0 {
		if alg == jwtAlgNone {
			return jwtOK
		}
		return jwtInvalidToken
	}
	second += first + 1
	sig := token[second+1:]
	if bytes.IndexByte(sig, '.') >= 0 {
		return jwtInvalidToken
	}
	signed := token[:second]
	if alg == jwtAlgNone {
		if len(sig) == 0 {
			return jwtOK
		}
		return jwtKO
	}
	if len(sig) == 0 {
		return jwtInvalidToken
	}
	dec, ok := b64Decode(r.alloc(len(sig)*3/4+3), sig, true)
	if !ok {
		return jwtInvalidToken
	}
	switch {
	case alg >= jwtHS256 && alg <= jwtHS512:
		if subtle.ConstantTimeCompare(jwtHMAC(r, alg-jwtHS256, key, signed), dec) == 1 {
			return jwtOK
		}
		return jwtKO
	case alg >= jwtRS256 && alg <= jwtES512:
		pub := keys.get(key)
		if pub == nil {
			return jwtUnknownCert
		}
		return jwtVerifyKey(alg, pub, signed, dec)
	}
	return jwtUnmanagedAlg
}

// jwtHMAC computes HMAC-SHA256, -384 or -512 (size 0, 1, 2) in the
// Request's scratch space.
func jwtHMAC(r *Request, size int, key, msg []byte) []byte {
	block := 64
	if size > 0 {
		block = 128
	}
	if len(key) > block {
		key = jwtDigest(r, size, key)
	}
	pad := func(x byte, tail []byte) []byte {
		b := r.alloc(block + len(tail))[:block]
		for i := range b {
			b[i] = x
			if i < len(key) {
				b[i] ^= key[i]
			}
		}
		return append(b, tail...)
	}
	inner := jwtDigest(r, size, pad(0x36, msg))
	return jwtDigest(r, size, pad(0x5c, inner))
}

func jwtDigest(r *Request, size int, b []byte) []byte {
	switch size {
	case 0:
		sum := sha256.Sum256(b)
		return append(r.alloc(len(sum)), sum[:]...)
	case 1:
		sum := sha512.Sum384(b)
		return append(r.alloc(len(sum)), sum[:]...)
	}
	sum := sha512.Sum512(b)
	return append(r.alloc(len(sum)), sum[:]...)
}

// jwtVerifyKey checks an RSA or ECDSA signature. As with OpenSSL's
// EVP_DigestVerify in HAProxy, the key decides the scheme: an ES
// signature (R then S) is re-encoded in DER first, so that an RS
// algorithm with an EC key takes a DER signature.
func jwtVerifyKey(alg int, pub crypto.PublicKey, signed, sig []byte) int {
	h := [...]crypto.Hash{crypto.SHA256, crypto.SHA384, crypto.SHA512}[(alg-jwtRS256)%3]
	d := h.New()
	d.Write(signed)
	digest := d.Sum(nil)
	ecdsaSig := alg >= jwtES256
	if ecdsaSig && len(sig)%2 != 0 {
		return jwtInvalidToken
	}
	ok := false
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if ecdsaSig {
			sig = jwtDER(sig)
		}
		ok = rsa.VerifyPKCS1v15(k, h, digest, sig) == nil
	case *ecdsa.PublicKey:
		if ecdsaSig {
			n := len(sig) / 2
			ok = ecdsa.Verify(k, digest, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:]))
		} else {
			ok = ecdsa.VerifyASN1(k, digest, sig)
		}
	}
	if ok {
		return jwtOK
	}
	return jwtKO
}

// jwtDER encodes R and S (the two halves of sig) as an ECDSA-Sig-Value.
func jwtDER(sig []byte) []byte {
	n := len(sig) / 2
	integer := func(b []byte) []byte {
		b = bytes.TrimLeft(b, "\x00")
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return append(derLen([]byte{0x02}, len(b)), b...)
	}
	body := append(integer(sig[:n]), integer(sig[n:])...)
	return append(derLen([]byte{0x30}, len(body)), body...)
}

func derLen(b []byte, n int) []byte {
	switch {
	case n < 0x80:
		return append(b, byte(n))
	case n < 0x100:
		return append(b, 0x81, byte(n))
	}
	return append(b, 0x82, byte(n>>8), byte(n))
}
