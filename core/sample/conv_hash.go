package sample

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"math/bits"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Hashes and digests. The 32-bit hashes are HAProxy's (hash.c), with its
// optional avalanche (full_hash) when the argument is non-zero; xxh3,
// xxh32 and xxh64 take a seed. The digests are OpenSSL's in HAProxy, Go's here.

func init() {
	RegisterConvs(
		Conv{Name: "crc32", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: hash32(func(b []byte) uint32 { return crc32.ChecksumIEEE(b) })},
		Conv{Name: "crc32c", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: hash32(func(b []byte) uint32 { return crc32.Checksum(b, castagnoli) })},
		Conv{Name: "djb2", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: hash32(djb2)},
		Conv{Name: "sdbm", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: hash32(sdbm)},
		Conv{Name: "wt6", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: hash32(wt6)},
		Conv{Name: "xxh32", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.setInt(int64(xxh32(s.B, uint32(arg(a, 0).I))))
			return true
		}},
		Conv{Name: "xxh3", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.setInt(int64(xxh3(s.B, uint64(arg(a, 0).I))))
			return true
		}},
		Conv{Name: "xxh64", Max: 1, In: TBin, Out: TSint, Check: typedArgs(0, []argKind{aInt}, nil), Fn: func(r *Request, a []Arg, s *Sample) bool {
			seed := uint64(arg(a, 0).I)
			var h uint64
			if seed == 0 {
				h = xxhash.Sum64(s.B)
			} else {
				d := xxhash.NewWithSeed(seed)
				d.Write(s.B)
				h = d.Sum64()
			}
			s.setInt(int64(h))
			return true
		}},
		Conv{Name: "sha1", In: TBin, Out: TBin, Fn: func(r *Request, a []Arg, s *Sample) bool {
			sum := sha1.Sum(s.B)
			s.T, s.B = TBin, append(r.alloc(len(sum)), sum[:]...)
			return true
		}},
		Conv{Name: "sha2", Max: 1, In: TBin, Out: TBin, Check: typedArgs(0, []argKind{aInt}, sha2Args), Fn: convSha2},
		Conv{Name: "digest", Max: 1, In: TBin, Out: TBin, Check: typedArgs(1, []argKind{aStr}, digestArgs), Fn: convDigest},
		Conv{Name: "hmac", Max: 2, In: TBin, Out: TBin, Check: typedArgs(2, []argKind{aStr, aStr}, hmacArgs), Fn: convHmac},
		Conv{Name: "secure_memcmp", Max: 1, In: TBin, Out: TBool, Check: mustVar, Fn: convSecureMemcmp},
		Conv{Name: "aes_gcm_dec", Max: 4, In: TBin, Out: TBin, Check: typedArgs(4, []argKind{aInt, aStr, aStr, aStr}, aesArgs), Fn: convAESGCMDec},
	)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func hash32(f func([]byte) uint32) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := f(s.B)
		if arg(a, 0).I != 0 {
			h = fullHash(h)
		}
		s.setInt(int64(h))
		return true
	}
}

func djb2(b []byte) uint32 {
	h := uint32(5381)
	for _, c := range b {
		h = h<<5 + h + uint32(c)
	}
	return h
}

func sdbm(b []byte) uint32 {
	var h uint32
	for _, c := range b {
		h = uint32(c) + h<<6 + h<<16 - h
	}
	return h
}

// wt6 mixes two 32-bit lanes with rotations that the data chooses.
func wt6(b []byte) uint32 {
	h0, h1 := uint32(0xa53c965a), uint32(0x5ca6953a)
	s0, s1 := 6, 18
	for _, c := range b {
		t := uint32(c)
		h0 = ^(h0 ^ t)
		h1 = ^(h1 + t)
		t = bits.RotateLeft32(h1, s0)
		h1 = bits.RotateLeft32(h0, s1)
		h0 = t
		t = (h0>>16 ^ h1) & 0xffff
		s0, s1 = int(t&0x1f), int(t>>11)
	}
	return h0 ^ h1
}

// fullHash is Bob Jenkins' integer avalanche times a large prime.
func fullHash(a uint32) uint32 {
	a = a + 0x7ed55d16 + a<<12
	a = a ^ 0xc761c23c ^ a>>19
	a = a + 0x165667b1 + a<<5
	a = (a + 0xd3a2646c) ^ a<<9
	a = a + 0xfd7046c5 + a<<3
	a = a ^ 0xb55a4f09 ^ a>>16
	return a * 3221225473
}

const (
	xp1 uint32 = 2654435761
	xp2 uint32 = 2246822519
	xp3 uint32 = 3266489917
	xp4 uint32 = 668265263
	xp5 uint32 = 374761393
)

// xxh32 is the 32-bit xxHash.
func xxh32(b []byte, seed uint32) uint32 {
	n := len(b)
	var h uint32
	if n >= 16 {
		v1, v2, v3, v4 := seed+xp1+xp2, seed+xp2, seed, seed-xp1
		round := func(v uint32, in []byte) uint32 {
			return bits.RotateLeft32(v+binary.LittleEndian.Uint32(in)*xp2, 13) * xp1
		}
		for len(b) >= 16 {
			v1, v2, v3, v4 = round(v1, b), round(v2, b[4:]), round(v3, b[8:]), round(v4, b[12:])
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + xp5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*xp3, 17) * xp4
		b = b[4:]
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*xp5, 11) * xp1
	}
	h ^= h >> 15
	h *= xp2
	h ^= h >> 13
	h *= xp3
	h ^= h >> 16
	return h
}

func sha2Args(env *Env, a []Arg) error {
	switch b := arg(a, 0).I; b {
	case 0, 224, 256, 384, 512:
		return nil
	default:
		return fmt.Errorf("Unsupported number of bits: '%d'", b)
	}
}

func convSha2(r *Request, a []Arg, s *Sample) bool {
	var out []byte
	switch arg(a, 0).I {
	case 224:
		sum := sha256.Sum224(s.B)
		out = append(r.alloc(len(sum)), sum[:]...)
	case 0, 256:
		sum := sha256.Sum256(s.B)
		out = append(r.alloc(len(sum)), sum[:]...)
	case 384:
		sum := sha512.Sum384(s.B)
		out = append(r.alloc(len(sum)), sum[:]...)
	case 512:
		sum := sha512.Sum512(s.B)
		out = append(r.alloc(len(sum)), sum[:]...)
	}
	s.T, s.B = TBin, out
	return true
}

// digests are the OpenSSL digest names goha knows, lower case.
var digests = map[string]func() hash.Hash{
	"md5":        md5.New,
	"sha1":       sha1.New,
	"sha224":     sha256.New224,
	"sha256":     sha256.New,
	"sha384":     sha512.New384,
	"sha512":     sha512.New,
	"sha512-224": sha512.New512_224,
	"sha512-256": sha512.New512_256,
	"sha3-224":   func() hash.Hash { return sha3.New224() },
	"sha3-256":   func() hash.Hash { return sha3.New256() },
	"sha3-384":   func() hash.Hash { return sha3.New384() },
	"sha3-512":   func() hash.Hash { return sha3.New512() },
}

func digestArgs(env *Env, a []Arg) error {
	f, ok := digests[strings.ToLower(arg(a, 0).S)]
	if !ok {
		return fmt.Errorf("algorithm must be a valid OpenSSL message digest name.")
	}
	a[0].V = f
	return nil
}

func convDigest(r *Request, a []Arg, s *Sample) bool {
	h := a[0].V.(func() hash.Hash)()
	h.Write(s.B)
	s.T, s.B = TBin, h.Sum(r.alloc(h.Size()))
	return true
}

func hmacArgs(env *Env, a []Arg) error {
	if err := digestArgs(env, a); err != nil {
		return err
	}
	if err := varOrBase64(env, &a[1]); err != nil {
		return fmt.Errorf("failed to parse key : %v", err)
	}
	return nil
}

func convHmac(r *Request, a []Arg, s *Sample) bool {
	key, ok := keyOperand(r, &a[1])
	if !ok {
		return false
	}
	m := hmac.New(a[0].V.(func() hash.Hash), key)
	m.Write(s.B)
	s.T, s.B = TBin, m.Sum(r.alloc(m.Size()))
	return true
}

// convSecureMemcmp compares with the variable in constant time.
func convSecureMemcmp(r *Request, a []Arg, s *Sample) bool {
	var t Sample
	if !readVar(r, a[0].V.(VarName), TBin, &t) {
		return false
	}
	s.setBool(len(s.B) == len(t.B) && subtle.ConstantTimeCompare(s.B, t.B) == 1)
	return true
}

func aesArgs(env *Env, a []Arg) error {
	switch a[0].I {
	case 128, 192, 256:
	default:
		return fmt.Errorf("key size must be 128, 192 or 256 (bits).")
	}
	for i, what := range []string{"nonce", "key", "aead_tag"} {
		if err := varOrBase64(env, &a[i+1]); err != nil {
			return fmt.Errorf("failed to parse %s : %v", what, err)
		}
	}
	return nil
}

// convAESGCMDec decrypts and authenticates the input with AES-GCM; the
// nonce, key and tag are base64 (in a variable or on the line).
func convAESGCMDec(r *Request, a []Arg, s *Sample) bool {
	nonce, ok1 := keyOperand(r, &a[1])
	key, ok2 := keyOperand(r, &a[2])
	tag, ok3 := keyOperand(r, &a[3])
	if !ok1 || !ok2 || !ok3 || len(key) != int(a[0].I/8) || len(nonce) == 0 || len(tag) < 12 || len(tag) > 16 {
		return false
	}
	blk, err := aes.NewCipher(key)
	if err != nil {
		return false
	}
	g, err := cipher.NewGCMWithNonceSize(blk, len(nonce))
	if err != nil {
		return false
	}
	if len(tag) != g.Overhead() {
		if g, err = cipher.NewGCMWithTagSize(blk, len(tag)); err != nil || len(nonce) != g.NonceSize() {
			return false
		}
	}
	ct := append(append(r.alloc(len(s.B)+len(tag)), s.B...), tag...)
	out, err := g.Open(r.alloc(len(s.B)), nonce, ct, nil)
	if err != nil {
		return false
	}
	s.T, s.B = TBin, out
	return true
}
