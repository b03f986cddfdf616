// Package crypt verifies passwords against the hashes crypt(3) produces on
// Linux (libxcrypt): SHA-512-crypt ($6$), SHA-256-crypt ($5$), both as
// Ulrich Drepper's "Unix crypt using SHA-256 and SHA-512" specifies them,
// and MD5-crypt ($1$). Other schemes are named, so that a configuration
// using one can be refused with a clear message, rather than accepted with
// a user who can never log in.
//
// The package imports only the standard library.
package crypt

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"hash"
	"strconv"
	"strings"
)

// Scheme is how a stored hash is computed.
type Scheme int

const (
	// Invalid is a string crypt(3) refuses as a setting ("*", "!", "",
	// a malformed salt): it returns a failure token, which never equals
	// the stored string, so no password matches. Locked accounts use it.
	Invalid Scheme = iota
	SHA512
	SHA256
	MD5
	// Unsupported is a scheme libxcrypt knows and this package does not
	// compute (bcrypt, yescrypt, scrypt, DES, ...): see Name.
	Unsupported
)

// Hash is a parsed stored hash.
type Hash struct {
	Scheme Scheme
	// Name names the scheme, for messages ("bcrypt", "yescrypt", ...).
	Name string

	stored string // the whole string, compared with what crypt produces
	salt   string
	rounds int
	custom bool // rounds= was written, and is written back
}

const (
	roundsDefault = 5000
	roundsMin     = 1000
	roundsMax     = 999999999
	shaSaltMax    = 16
	md5SaltMax    = 8
)

// prefixes of the schemes libxcrypt computes and this package does not.
var others = []struct{ prefix, name string }{
	{"$2a$", "bcrypt"}, {"$2b$", "bcrypt"}, {"$2x$", "bcrypt"}, {"$2y$", "bcrypt"},
	{"$y$", "yescrypt"}, {"$gy$", "gost-yescrypt"}, {"$7$", "scrypt"},
	{"$sha1$", "sha1crypt"}, {"$md5", "sunmd5"}, {"$3$", "NT-hash"},
}

// Parse reads a stored hash as crypt(3) reads it as a setting.
func Parse(s string) Hash {
	h := Hash{stored: s, Name: "invalid"}
	// libxcrypt refuses a setting with a control, blank or non-ASCII
	// character, or one of *:;\! anywhere.
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || strings.IndexByte("*:;\\!", c) >= 0 {
			return h
		}
	}
	var rest string
	switch {
	case strings.HasPrefix(s, "$6$"):
		h.Scheme, h.Name, rest = SHA512, "sha512crypt", s[3:]
	case strings.HasPrefix(s, "$5$"):
		h.Scheme, h.Name, rest = SHA256, "sha256crypt", s[3:]
	case strings.HasPrefix(s, "$1$"):
		h.Scheme, h.Name, rest = MD5, "md5crypt", s[3:]
	default:
		for _, o := range others {
			if strings.HasPrefix(s, o.prefix) {
				h.Scheme, h.Name = Unsupported, o.name
				return h
			}
		}
		switch {
		case len(s) > 0 && s[0] == '_':
			h.Scheme, h.Name = Unsupported, "bsdicrypt"
		case len(s) >= 2 && saltChar(s[0]) && saltChar(s[1]):
			h.Scheme, h.Name = Unsupported, "descrypt"
		}
		return h
	}
	h.rounds = roundsDefault
	if h.Scheme != MD5 && strings.HasPrefix(rest, "rounds=") {
		num := rest[len("rounds="):]
		end := strings.IndexByte(num, '$')
		// Neither zero, a leading zero, nor a count out of range.
		if end <= 0 || num[0] < '1' || num[0] > '9' {
			return Hash{stored: s, Name: "invalid"}
		}
		n, err := strconv.Atoi(num[:end])
		if err != nil || n < roundsMin || n > roundsMax {
			return Hash{stored: s, Name: "invalid"}
		}
		h.rounds, h.custom, rest = n, true, num[end+1:]
	}
	max := shaSaltMax
	if h.Scheme == MD5 {
		max = md5SaltMax
	}
	salt := rest
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	h.salt = salt[:min(len(salt), max)]
	return h
}

func saltChar(c byte) bool {
	return c == '.' || c == '/' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// Verify says whether password gives the stored hash, as HAProxy's
// check_user compares crypt(password, stored) with stored. Unsupported
// and invalid hashes match nothing.
func (h *Hash) Verify(password []byte) bool {
	out, ok := h.crypt(password)
	return ok && subtle.ConstantTimeCompare(out, []byte(h.stored)) == 1
}

// Crypt returns what crypt(3) returns for password and setting, and false
// where it would fail or this package does not compute the scheme.
func Crypt(password, setting string) (string, bool) {
	h := Parse(setting)
	out, ok := h.crypt([]byte(password))
	return string(out), ok
}

func (h *Hash) crypt(pw []byte) ([]byte, bool) {
	switch h.Scheme {
	case SHA512:
		return shaCrypt(sha512.New, "$6$", sha512Order, pw, h.salt, h.rounds, h.custom), true
	case SHA256:
		return shaCrypt(sha256.New, "$5$", sha256Order, pw, h.salt, h.rounds, h.custom), true
	case MD5:
		return md5Crypt(pw, h.salt), true
	}
	return nil, false
}

const b64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// b64From24 appends n characters encoding the 24 bits b2 b1 b0, least
// significant six bits first.
func b64From24(out []byte, b2, b1, b0 byte, n int) []byte {
	w := uint32(b2)<<16 | uint32(b1)<<8 | uint32(b0)
	for ; n > 0; n-- {
		out = append(out, b64[w&0x3f])
		w >>= 6
	}
	return out
}

// The order in which the specification takes the digest's bytes, three
// at a time; the last group is shorter.
var (
	sha512Order = [][3]int{
		{0, 21, 42}, {22, 43, 1}, {44, 2, 23}, {3, 24, 45}, {25, 46, 4}, {47, 5, 26}, {6, 27, 48},
		{28, 49, 7}, {50, 8, 29}, {9, 30, 51}, {31, 52, 10}, {53, 11, 32}, {12, 33, 54}, {34, 55, 13},
		{56, 14, 35}, {15, 36, 57}, {37, 58, 16}, {59, 17, 38}, {18, 39, 60}, {40, 61, 19}, {62, 20, 41},
	}
	sha256Order = [][3]int{
		{0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14},
		{15, 25, 5}, {6, 16, 26}, {27, 7, 17}, {18, 28, 8}, {9, 19, 29},
	}
)

// shaCrypt is the algorithm of the specification, steps 1 to 22.
func shaCrypt(newHash func() hash.Hash, prefix string, order [][3]int, key []byte, salt string, rounds int, custom bool) []byte {
	s := []byte(salt)
	hb := newHash()
	size := hb.Size()

	// Digest B: key, salt, key.
	hb.Write(key)
	hb.Write(s)
	hb.Write(key)
	b := hb.Sum(nil)

	// Digest A: key, salt, B for each byte of the key, then B or the key
	// for each bit of the key's length.
	ha := newHash()
	ha.Write(key)
	ha.Write(s)
	n := len(key)
	for ; n > size; n -= size {
		ha.Write(b)
	}
	ha.Write(b[:n])
	for n = len(key); n > 0; n >>= 1 {
		if n&1 != 0 {
			ha.Write(b)
		} else {
			ha.Write(key)
		}
	}
	a := ha.Sum(nil)

	// P: the key repeated as many times as it has bytes, hashed,
	// stretched to the key's length.
	hp := newHash()
	for range key {
		hp.Write(key)
	}
	p := stretch(hp.Sum(nil), len(key))

	// S: the salt repeated 16 + A[0] times, hashed, stretched to the
	// salt's length.
	hs := newHash()
	for i := 0; i < 16+int(a[0]); i++ {
		hs.Write(s)
	}
	ss := stretch(hs.Sum(nil), len(s))

	c := a
	hc := newHash()
	for i := 0; i < rounds; i++ {
		hc.Reset()
		if i&1 != 0 {
			hc.Write(p)
		} else {
			hc.Write(c)
		}
		if i%3 != 0 {
			hc.Write(ss)
		}
		if i%7 != 0 {
			hc.Write(p)
		}
		if i&1 != 0 {
			hc.Write(c)
		} else {
			hc.Write(p)
		}
		c = hc.Sum(c[:0])
	}

	out := make([]byte, 0, len(prefix)+len("rounds=999999999$")+len(s)+1+(size*4+2)/3)
	out = append(out, prefix...)
	if custom {
		out = append(out, "rounds="...)
		out = strconv.AppendInt(out, int64(rounds), 10)
		out = append(out, '$')
	}
	out = append(out, s...)
	out = append(out, '$')
	for _, t := range order {
		out = b64From24(out, c[t[0]], c[t[1]], c[t[2]], 4)
	}
	if size == 64 {
		out = b64From24(out, 0, 0, c[63], 2)
	} else {
		out = b64From24(out, 0, c[31], c[30], 3)
	}
	return out
}

// stretch repeats d up to n bytes.
func stretch(d []byte, n int) []byte {
	out := make([]byte, n)
	for i := 0; i < n; i += len(d) {
		copy(out[i:], d)
	}
	return out
}

// md5Crypt is Poul-Henning Kamp's MD5-based crypt, as libxcrypt computes it.
func md5Crypt(pw []byte, salt string) []byte {
	s := []byte(salt)
	h := md5.New()
	h.Write(pw)
	h.Write(s)
	h.Write(pw)
	final := h.Sum(nil)

	h = md5.New()
	h.Write(pw)
	h.Write([]byte("$1$"))
	h.Write(s)
	for n := len(pw); n > 0; n -= 16 {
		h.Write(final[:min(n, 16)])
	}
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 != 0 {
			h.Write([]byte{0})
		} else {
			h.Write(pw[:1])
		}
	}
	final = h.Sum(nil)

	for i := 0; i < 1000; i++ {
		h.Reset()
		if i&1 != 0 {
			h.Write(pw)
		} else {
			h.Write(final)
		}
		if i%3 != 0 {
			h.Write(s)
		}
		if i%7 != 0 {
			h.Write(pw)
		}
		if i&1 != 0 {
			h.Write(final)
		} else {
			h.Write(pw)
		}
		final = h.Sum(final[:0])
	}

	out := make([]byte, 0, 3+len(s)+1+22)
	out = append(out, "$1$"...)
	out = append(out, s...)
	out = append(out, '$')
	for _, t := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		out = b64From24(out, final[t[0]], final[t[1]], final[t[2]], 4)
	}
	return b64From24(out, 0, 0, final[11], 2)
}
