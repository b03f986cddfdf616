package sample

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
)

// String and binary converters: case, hex, base64, URL and JSON
// escaping, fields and words, regsub, concatenation, trimming. They build
// their output in the Request's scratch space and leave their input
// untouched.

func init() {
	RegisterConvs(
		Conv{Name: "lower", In: TStr, Out: TStr, Fn: convCase('A', 'Z', 'a'-'A')},
		Conv{Name: "upper", In: TStr, Out: TStr, Fn: convCase('a', 'z', 'A'-'a')},
		Conv{Name: "length", In: TStr, Out: TSint, Fn: func(r *Request, a []Arg, s *Sample) bool { s.setInt(int64(len(s.B))); return true }},
		Conv{Name: "hex", In: TBin, Out: TStr, Fn: convHex},
		Conv{Name: "hex2i", In: TStr, Out: TSint, Fn: convHex2i},
		Conv{Name: "base64", In: TBin, Out: TStr, Fn: convB64Enc(false)},
		Conv{Name: "ub64enc", In: TBin, Out: TStr, Fn: convB64Enc(true)},
		Conv{Name: "b64dec", In: TStr, Out: TBin, Fn: convB64Dec(false)},
		Conv{Name: "ub64dec", In: TStr, Out: TBin, Fn: convB64Dec(true)},
		Conv{Name: "url_dec", Max: 1, In: TStr, Out: TStr, Check: typedArgs(0, []argKind{aInt}, nil), Fn: convURLDec},
		Conv{Name: "url_enc", Max: 1, In: TStr, Out: TStr, Check: urlEncArgs, Fn: convURLEnc},
		Conv{Name: "json", Max: 1, In: TStr, Out: TStr, Check: jsonArgs, Fn: convJSON},
		Conv{Name: "field", Max: 3, In: TStr, Out: TStr, Check: typedArgs(2, []argKind{aInt, aStr, aInt}, fieldArgs), Fn: convField},
		Conv{Name: "word", Max: 3, In: TStr, Out: TStr, Check: typedArgs(2, []argKind{aInt, aStr, aInt}, fieldArgs), Fn: convWord},
		Conv{Name: "regsub", Max: 3, In: TStr, Out: TStr, Check: typedArgs(2, []argKind{aStr, aStr, aStr}, regsubArgs), Fn: convRegsub},
		Conv{Name: "concat", Max: 3, In: TStr, Out: TStr, Check: func(env *Env, a []Arg) error { return optVar(env, a, 1) }, Fn: convConcat},
		Conv{Name: "add_item", Max: 3, In: TStr, Out: TStr, Check: typedArgs(2, []argKind{aStr, aStr, aStr}, addItemArgs), Fn: convAddItem},
		Conv{Name: "strcmp", Max: 1, In: TStr, Out: TSint, Check: mustVar, Fn: convStrcmp},
		Conv{Name: "iif", Max: 2, In: TBool, Out: TStr, Check: typedArgs(2, []argKind{aStr, aStr}, nil), Fn: convIif},
		Conv{Name: "bytes", Max: 2, In: TBin, Out: TBin, Check: typedArgs(1, []argKind{aInt, aInt}, nil), Fn: convBytes},
		Conv{Name: "be2dec", Max: 3, In: TBin, Out: TStr, Check: typedArgs(1, []argKind{aStr, aInt, aInt}, be2decArgs), Fn: convBe2dec},
		Conv{Name: "be2hex", Max: 3, In: TBin, Out: TStr, Check: typedArgs(0, []argKind{aStr, aInt, aInt}, be2hexArgs), Fn: convBe2hex},
		Conv{Name: "cut_crlf", In: TStr, Out: TStr, Fn: convCutCRLF},
		Conv{Name: "ltrim", Max: 1, In: TStr, Out: TStr, Fn: convTrim(true)},
		Conv{Name: "rtrim", Max: 1, In: TStr, Out: TStr, Fn: convTrim(false)},
		Conv{Name: "htonl", In: TSint, Out: TBin, Fn: convHtonl},
		Conv{Name: "language", Max: 2, In: TStr, Out: TStr, Fn: convLanguage},
		Conv{Name: "debug", Max: 2, In: TAny, Out: TAny, Check: debugArgs, Fn: func(r *Request, a []Arg, s *Sample) bool { return true }},
	)
}

func convCase(lo, hi byte, delta int) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		out := r.alloc(len(s.B))[:len(s.B)]
		for i, c := range s.B {
			if c >= lo && c <= hi {
				c = byte(int(c) + delta)
			}
			out[i] = c
		}
		s.setStr(out)
		return true
	}
}

const hexDigits = "0123456789ABCDEF"

func convHex(r *Request, a []Arg, s *Sample) bool {
	out := r.alloc(2 * len(s.B))
	for _, c := range s.B {
		out = append(out, hexDigits[c>>4], hexDigits[c&15])
	}
	s.setStr(out)
	return true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func convHex2i(r *Request, a []Arg, s *Sample) bool {
	var n int64
	for _, c := range s.B {
		d := unhex(c)
		if d < 0 {
			return false
		}
		n = n<<4 + int64(d)
	}
	s.setInt(n)
	return true
}

const (
	b64Std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
)

var b64StdRev, b64URLRev = b64Rev(b64Std), b64URLRevTable()

// b64URLRevTable is HAProxy's: its table reads '=' as '_' (63), which
// ub64dec and the JWT converters inherit.
func b64URLRevTable() [256]int8 {
	t := b64Rev(b64URL)
	t['='] = 63
	return t
}

func b64Rev(alpha string) (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(alpha); i++ {
		t[alpha[i]] = int8(i)
	}
	return t
}

// b64Encode appends in in base64; the URL alphabet has no padding.
func b64Encode(dst, in []byte, url bool) []byte {
	alpha := b64Std
	if url {
		alpha = b64URL
	}
	for len(in) >= 3 {
		v := uint(in[0])<<16 | uint(in[1])<<8 | uint(in[2])
		dst = append(dst, alpha[v>>18], alpha[v>>12&63], alpha[v>>6&63], alpha[v&63])
		in = in[3:]
	}
	switch len(in) {
	case 1:
		v := uint(in[0]) << 16
		dst = append(dst, alpha[v>>18], alpha[v>>12&63])
		if !url {
			dst = append(dst, '=', '=')
		}
	case 2:
		v := uint(in[0])<<16 | uint(in[1])<<8
		dst = append(dst, alpha[v>>18], alpha[v>>12&63], alpha[v>>6&63])
		if !url {
			dst = append(dst, '=')
		}
	}
	return dst
}

// b64Decode appends the decoded in as HAProxy's base64dec: groups of four,
// '=' only at the end of a group and never for more than two; with url,
// the URL alphabet, no '=', and a short last group.
func b64Decode(dst, in []byte, url bool) ([]byte, bool) {
	rev := &b64StdRev
	if url {
		rev = &b64URLRev
		switch len(in) % 4 {
		case 1:
			return dst, false
		}
	} else if len(in)%4 != 0 {
		return dst, false
	}
	var q [4]byte
	n, pad := 0, 0
	flush := func() {
		v := uint(q[0])<<18 | uint(q[1])<<12 | uint(q[2])<<6 | uint(q[3])
		out := [3]byte{byte(v >> 16), byte(v >> 8), byte(v)}
		dst = append(dst, out[:3-pad]...)
	}
	for _, c := range in {
		if !url && c == '=' {
			if n < 2 {
				return dst, false
			}
			pad++
			q[n] = 0
			n++
		} else {
			d := rev[c]
			if d < 0 || pad > 0 {
				return dst, false
			}
			q[n] = byte(d)
			n++
		}
		if n == 4 {
			flush()
			n, pad = 0, 0
		}
	}
	if n > 0 { // url only: 2 or 3 characters left
		pad = 4 - n
		for ; n < 4; n++ {
			q[n] = 0
		}
		flush()
	}
	return dst, true
}

func convB64Enc(url bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		s.setStr(b64Encode(r.alloc((len(s.B)+2)/3*4), s.B, url))
		return true
	}
}

func convB64Dec(url bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		out, ok := b64Decode(r.alloc(len(s.B)/4*3+3), s.B, url)
		if !ok {
			return false
		}
		s.T, s.B = TBin, out
		return true
	}
}

// convURLDec is HAProxy's url_decode: %XX escapes (a bad one fails the
// conversion), '+' a space in a form (the argument, or after a '?'), the
// input read up to a NUL as a C string.
func convURLDec(r *Request, a []Arg, s *Sample) bool {
	in := s.B
	if i := bytes.IndexByte(in, 0); i >= 0 {
		in = in[:i]
	}
	form := arg(a, 0).I != 0
	out := r.alloc(len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch c {
		case '+':
			if form {
				c = ' '
			}
		case '%':
			if i+2 >= len(in) || unhex(in[i+1]) < 0 || unhex(in[i+2]) < 0 {
				return false
			}
			c = byte(unhex(in[i+1])<<4 | unhex(in[i+2]))
			i += 2
		case '?':
			form = true
		}
		out = append(out, c)
	}
	s.setStr(out)
	return true
}

func urlEncArgs(env *Env, a []Arg) error {
	if x := arg(a, 0).S; x != "" && x != "query" {
		return fmt.Errorf("Unexpected encode type. Allowed value is 'query'")
	}
	return nil
}

// urlKeep are the characters RFC 3986 leaves unreserved in a query.
func urlKeep(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func convURLEnc(r *Request, a []Arg, s *Sample) bool {
	out := r.alloc(3 * len(s.B))
	for _, c := range s.B {
		if urlKeep(c) {
			out = append(out, c)
		} else {
			out = append(out, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	s.setStr(out)
	return true
}

const (
	jsonASCII = iota
	jsonUTF8
	jsonUTF8S
	jsonUTF8P
	jsonUTF8PS
)

func jsonArgs(env *Env, a []Arg) error {
	k := -1
	switch arg(a, 0).S {
	case "", "ascii":
		k = jsonASCII
	case "utf8":
		k = jsonUTF8
	case "utf8s":
		k = jsonUTF8S
	case "utf8p":
		k = jsonUTF8P
	case "utf8ps":
		k = jsonUTF8PS
	}
	if k < 0 {
		return fmt.Errorf("Unexpected input code type. Allowed value are 'ascii', 'utf8', 'utf8s', 'utf8p' and 'utf8ps'")
	}
	if len(a) > 0 {
		a[0].I = int64(k)
	}
	return nil
}

const (
	utf8BadSeq = 1 << iota
	utf8Overlong
	utf8InvRange
)

// utf8Next decodes one character as HAProxy's utf8_next: what it is,
// how many bytes it used, and what is wrong with it (bad sequence, over-
// long encoding, surrogate or non-character).
func utf8Next(b []byte) (c rune, n int, code int) {
	p := b[0]
	var dec int
	switch {
	case p < 0x80:
		return rune(p), 1, 0
	case p < 0xc0:
		return rune(p), 1, utf8BadSeq
	case p < 0xe0:
		c, dec = rune(p&0x1f), 1
	case p < 0xf0:
		c, dec = rune(p&0x0f), 2
	case p < 0xf8:
		c, dec = rune(p&0x07), 3
	case p < 0xfc:
		c, dec = rune(p&0x03), 4
	case p < 0xfe:
		c, dec = rune(p&0x01), 5
	default:
		return rune(p), 1, utf8BadSeq
	}
	if len(b) < dec+1 {
		return rune(p), 1, utf8BadSeq
	}
	n = 1
	for ; dec > 0; dec-- {
		if b[n]&0xc0 != 0x80 {
			return c, n, utf8BadSeq
		}
		c = c<<6 | rune(b[n]&0x3f)
		n++
	}
	if c <= 0x7f && n > 1 || c >= 0x80 && c <= 0x7ff && n > 2 ||
		c >= 0x800 && c <= 0xffff && n > 3 || c >= 0x10000 && c <= 0x1fffff && n > 4 {
		code |= utf8Overlong
	}
	if c >= 0xd800 && c <= 0xdfff || c >= 0xfffe && c <= 0xffff {
		code |= utf8InvRange
	}
	return c, n, code
}

func convJSON(r *Request, a []Arg, s *Sample) bool {
	mode := arg(a, 0).I
	out := r.alloc(len(s.B) + 16)
	for p := 0; p < len(s.B); {
		var c rune
		if mode == jsonASCII {
			c = rune(s.B[p])
			p++
		} else {
			var n, code int
			c, n, code = utf8Next(s.B[p:])
			p += n
			switch mode {
			case jsonUTF8:
				if code != 0 {
					return false
				}
			case jsonUTF8S:
				if code != 0 {
					continue
				}
			case jsonUTF8P:
				if code&(utf8InvRange|utf8BadSeq) != 0 {
					return false
				}
			case jsonUTF8PS:
				if code&(utf8InvRange|utf8BadSeq) != 0 {
					continue
				}
			}
			if c > 0xffff {
				if mode == jsonUTF8 || mode == jsonUTF8P {
					return false
				}
				continue
			}
		}
		switch c {
		case '"':
			out = append(out, '\\', '"')
		case '\\':
			out = append(out, '\\', '\\')
		case '/':
			out = append(out, '\\', '/')
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\r':
			out = append(out, '\\', 'r')
		case '\n':
			out = append(out, '\\', 'n')
		case '\t':
			out = append(out, '\\', 't')
		default:
			if c > 0xff || c < 0x20 || c >= 0x7f {
				const lx = "0123456789abcdef"
				out = append(out, '\\', 'u', lx[c>>12&15], lx[c>>8&15], lx[c>>4&15], lx[c&15])
			} else {
				out = append(out, byte(c))
			}
		}
	}
	s.setStr(out)
	return true
}

func fieldArgs(env *Env, a []Arg) error {
	if a[0].I == 0 {
		return fmt.Errorf("Unexpected value 0 for index")
	}
	if a[1].S == "" {
		return fmt.Errorf("Empty separators list")
	}
	return nil
}

// fieldCount is field's and word's third argument: how many fields to
// return (1 when absent; 0 or less: all those that remain).
func fieldCount(a []Arg) int64 {
	if len(a) > 2 {
		return a[2].I
	}
	return 1
}

func isSep(c byte, seps string) bool {
	for i := 0; i < len(seps); i++ {
		if seps[i] == c {
			return true
		}
	}
	return false
}

// convField returns the index-th field (from the end when negative),
// separators taken one by one: empty fields count.
func convField(r *Request, a []Arg, s *Sample) bool {
	idx, seps, count := a[0].I, a[1].S, fieldCount(a)
	b := s.B
	var start, end int
	if idx < 0 {
		field := int64(-1)
		end, start = len(b), len(b)
		for ; start > 0; start-- {
			if isSep(b[start-1], seps) {
				if field == idx {
					if count == 1 {
						goto found
					} else if count > 1 {
						count--
					}
				} else {
					end = start - 1
					field--
				}
			}
		}
		if field != idx {
			return false
		}
	} else {
		field := int64(1)
		for ; end < len(b); end++ {
			if isSep(b[end], seps) {
				if field == idx {
					if count == 1 {
						goto found
					} else if count > 1 {
						count--
					}
				} else {
					start = end + 1
					field++
				}
			}
		}
		if field != idx {
			return false
		}
	}
found:
	s.setStr(b[start:end])
	return true
}

// convWord returns the index-th word: runs of separators count as one,
// and leading or trailing ones are ignored. A missing word is an empty
// string, not an absent sample (as HAProxy).
func convWord(r *Request, a []Arg, s *Sample) bool {
	idx, seps, count := a[0].I, a[1].S, fieldCount(a)
	b := s.B
	var start, end int
	word := int64(0)
	inword := false
	if idx < 0 {
		end, start = len(b), len(b)
		for ; start > 0; start-- {
			sep := isSep(b[start-1], seps)
			if !inword {
				if !sep {
					if word != idx {
						word--
						end = start
					}
					inword = true
				}
			} else if sep {
				if word == idx {
					if count == 1 {
						goto found
					} else if count > 1 {
						count--
					}
				}
				inword = false
			}
		}
	} else {
		for ; end < len(b); end++ {
			sep := isSep(b[end], seps)
			if !inword {
				if !sep {
					if word != idx {
						word++
						start = end
					}
					inword = true
				}
			} else if sep {
				if word == idx {
					if count == 1 {
						goto found
					} else if count > 1 {
						count--
					}
				}
				inword = false
			}
		}
	}
	if word != idx {
		s.setStr(b[:0])
		return true
	}
found:
	s.setStr(b[start:end])
	return true
}

// regsubArgs compiles the regex with the flags of the third argument: i
// (ignore case), g (replace every match).
func regsubArgs(env *Env, a []Arg) error {
	ci := false
	global := int64(0)
	for _, f := range []byte(arg(a, 2).S) {
		switch f {
		case 'i':
			ci = true
		case 'g':
			global = 1
		default:
			return fmt.Errorf("invalid regex flag '%c', only 'i' and 'g' are supported", f)
		}
	}
	expr := a[0].S
	if ci {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return fmt.Errorf("regex '%s' is invalid", a[0].S)
	}
	a[0].Re, a[0].I = re, global
	return nil
}

// convRegsub replaces the first match (every one with g) by the
// replacement, in which \N is the N-th group and \xHH a byte.
func convRegsub(r *Request, a []Arg, s *Sample) bool {
	n := 1
	if a[0].I != 0 {
		n = -1
	}
	ms := a[0].Re.FindAllSubmatchIndex(s.B, n)
	if ms == nil {
		return true
	}
	out := r.alloc(len(s.B) + 2*len(a[1].S))
	prev := 0
	for _, m := range ms {
		out = append(out, s.B[prev:m[0]]...)
		out = expReplace(out, s.B, a[1].S, m)
		prev = m[1]
	}
	out = append(out, s.B[prev:]...)
	s.setStr(out)
	return true
}

func expReplace(out, src []byte, repl string, m []int) []byte {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(repl) {
			return out
		}
		c = repl[i]
		switch {
		case c >= '0' && c <= '9':
			g := int(c - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				out = append(out, src[m[2*g]:m[2*g+1]]...)
			}
		case c == 'x' && i+2 < len(repl):
			h1, h2 := unhex(repl[i+1]), unhex(repl[i+2])
			out = append(out, byte(h1<<4|h2))
			i += 2
		default:
			out = append(out, c)
		}
	}
	return out
}

func convConcat(r *Request, a []Arg, s *Sample) bool {
	pre, post := arg(a, 0).S, arg(a, 2).S
	var mid []byte
	if n, ok := argVar(arg(a, 1)); ok {
		mid, _ = varText(r, n)
	}
	out := r.alloc(len(s.B) + len(pre) + len(mid) + len(post))
	out = append(append(append(append(out, s.B...), pre...), mid...), post...)
	s.setStr(out)
	return true
}

func addItemArgs(env *Env, a []Arg) error {
	if err := optVar(env, a, 1); err != nil {
		return err
	}
	if arg(a, 1).S == "" && arg(a, 2).S == "" {
		return fmt.Errorf("one of the optional arguments has to be nonempty")
	}
	return nil
}

// convAddItem appends the delimiter (only after a non-empty input, and only
// when something follows), the variable and the suffix.
func convAddItem(r *Request, a []Arg, s *Sample) bool {
	delim, suffix := a[0].S, arg(a, 2).S
	var v []byte
	if n, ok := argVar(arg(a, 1)); ok {
		v, _ = varText(r, n)
	}
	out := r.alloc(len(s.B) + len(delim) + len(v) + len(suffix))
	out = append(out, s.B...)
	if len(s.B) > 0 && (len(v) > 0 || suffix != "") {
		out = append(out, delim...)
	}
	out = append(append(out, v...), suffix...)
	s.setStr(out)
	return true
}

func convStrcmp(r *Request, a []Arg, s *Sample) bool {
	var t Sample
	if !readVar(r, a[0].V.(VarName), TStr, &t) {
		return false
	}
	// strncmp's difference of the first differing bytes, then the
	// shorter is less.
	c := 0
	n := min(len(s.B), len(t.B))
	for i := 0; i < n && c == 0; i++ {
		c = int(s.B[i]) - int(t.B[i])
	}
	if c == 0 && len(s.B) != len(t.B) {
		c = 1
		if len(s.B) < len(t.B) {
			c = -1
		}
	}
	s.setInt(int64(c))
	return true
}

func convIif(r *Request, a []Arg, s *Sample) bool {
	if s.I != 0 {
		s.setStr([]byte(a[0].S))
	} else {
		s.setStr([]byte(a[1].S))
	}
	return true
}

// convBytes is the part of the input from the offset, of the length if
// given.
func convBytes(r *Request, a []Arg, s *Sample) bool {
	off := a[0].I
	if int64(len(s.B)) <= off {
		s.B = s.B[:0]
		return true
	}
	if off > 0 {
		s.B = s.B[off:]
	}
	if len(a) > 1 && a[1].I < int64(len(s.B)) && a[1].I >= 0 {
		s.B = s.B[:a[1].I]
	}
	return true
}

func be2decArgs(env *Env, a []Arg) error {
	size := arg(a, 1).I
	if size <= 0 || size > 8 {
		return fmt.Errorf("chunk_size out of [1..8] range (%d)", size)
	}
	if t := arg(a, 2).I; t != 0 && t != 1 {
		return fmt.Errorf("Unsupported truncate value (%d)", t)
	}
	return nil
}

// convBe2dec writes each chunk of chunk_size bytes as a big-endian
// unsigned number, separated; with truncate, a short last chunk is
// dropped.
func convBe2dec(r *Request, a []Arg, s *Sample) bool {
	sep, size, trunc := arg(a, 0).S, int(arg(a, 1).I), arg(a, 2).I != 0
	b := s.B
	last := len(b)
	if trunc {
		last = len(b) - size + 1
	}
	out := r.alloc(len(b)/size*(20+len(sep)) + 20)
	for p := 0; p < last; {
		if p > 0 {
			out = append(out, sep...)
		}
		var n uint64
		for i := 0; i < size && p < len(b); i++ {
			n = n<<8 | uint64(b[p])
			p++
		}
		out = strconv.AppendUint(out, n, 10)
	}
	s.setStr(out)
	return true
}

func be2hexArgs(env *Env, a []Arg) error {
	if size := arg(a, 1).I; size <= 0 && (arg(a, 0).S != "" || arg(a, 2).I != 0) {
		return fmt.Errorf("chunk_size needs to be positive (%d)", size)
	}
	if t := arg(a, 2).I; t != 0 && t != 1 {
		return fmt.Errorf("Unsupported truncate value (%d)", t)
	}
	return nil
}

func convBe2hex(r *Request, a []Arg, s *Sample) bool {
	sep, size, trunc := arg(a, 0).S, int(arg(a, 1).I), arg(a, 2).I != 0
	b := s.B
	last := len(b)
	if trunc {
		last = len(b) - size + 1
	}
	if sep == "" && !trunc {
		size = len(b)
	}
	out := r.alloc(2*len(b) + len(b)*len(sep))
	for p := 0; p < last; {
		if p > 0 {
			out = append(out, sep...)
		}
		for i := 0; i < size && p < len(b); i++ {
			out = append(out, hexDigits[b[p]>>4], hexDigits[b[p]&15])
			p++
		}
	}
	s.setStr(out)
	return true
}

func convCutCRLF(r *Request, a []Arg, s *Sample) bool {
	if i := bytes.IndexAny(s.B, "\r\n"); i >= 0 {
		s.B = s.B[:i]
	}
	return true
}

func convTrim(left bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		set := arg(a, 0).S
		if left {
			for len(s.B) > 0 && isSep(s.B[0], set) {
				s.B = s.B[1:]
			}
		} else {
			for len(s.B) > 0 && isSep(s.B[len(s.B)-1], set) {
				s.B = s.B[:len(s.B)-1]
			}
		}
		return true
	}
}

func convHtonl(r *Request, a []Arg, s *Sample) bool {
	b := r.alloc(4)[:4]
	binary.BigEndian.PutUint32(b, uint32(s.I))
	s.T, s.B = TBin, b
	return true
}

// convLanguage picks, from an Accept-Language value, the language of the
// semicolon-separated list with the best q-value; the default (second
// argument) when none matches.
func convLanguage(r *Request, a []Arg, s *Sample) bool {
	list := arg(a, 0).S
	al := s.B
	var best string
	bestQ := 0
	i := 0
	isSpace := func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
	for {
		for i < len(al) && isSpace(al[i]) {
			i++
		}
		if i >= len(al) {
			break
		}
		tok := i
		for i < len(al) && al[i] != ';' && al[i] != ',' && !isSpace(al[i]) {
			i++
		}
		var lang string
		matched := false
		if i > tok {
			w := 0
			for j := 0; j <= len(list); j++ {
				if j == len(list) || list[j] == ';' {
					if langRangeMatch(al[tok:i], list[w:j]) {
						lang, matched = list[w:j], true
						break
					}
					w = j + 1
				}
			}
		}
		if matched {
			q := 1000
			for i < len(al) && isSpace(al[i]) {
				i++
			}
			if i < len(al) && al[i] == ';' {
				i++
				for i < len(al) && isSpace(al[i]) {
					i++
				}
				if i < len(al) && al[i] == 'q' {
					i++
					for i < len(al) && isSpace(al[i]) {
						i++
					}
					if i < len(al) && al[i] == '=' {
						i++
						for i < len(al) && isSpace(al[i]) {
							i++
						}
						q, i = parseQvalue(al, i)
					}
				}
			}
			if q > bestQ {
				best = lang
				if q >= 1000 {
					break
				}
				bestQ = q
			}
		}
		for i < len(al) && al[i] != ',' {
			i++
		}
		if i >= len(al) {
			break
		}
		i++
	}
	if best == "" && len(a) > 1 {
		best = a[1].S
	}
	if best == "" {
		return false
	}
	s.setStr([]byte(best))
	return true
}

// langRangeMatch says whether the language range of the header names
// the tag: the same, or the tag followed by a '-' subtag (case counts,
// as in HAProxy).
func langRangeMatch(rng []byte, tag string) bool {
	for i, c := range rng {
		if c == '-' && i == len(tag) {
			return true
		}
		if i == len(tag) || c != tag[i] {
			return false
		}
	}
	return len(rng) == len(tag)
}

// parseQvalue reads a q-value (0 to 1 with up to three decimals) in
// thousandths; malformed ones count as 1.
func parseQvalue(b []byte, i int) (int, int) {
	digit := func() bool { return i < len(b) && b[i] >= '0' && b[i] <= '9' }
	q := 1000
	if !digit() {
		return q, i
	}
	q = int(b[i]-'0') * 1000
	i++
	if i >= len(b) || b[i] != '.' {
		i++
		return min(q, 1000), i
	}
	i++
	for _, m := range []int{100, 10, 1} {
		if !digit() {
			break
		}
		q += int(b[i]-'0') * m
		i++
	}
	return min(q, 1000), i
}

// debugArgs accepts HAProxy's debug converter arguments; goha has only the
// default ring, "buf0", and the converter passes its input on.
func debugArgs(env *Env, a []Arg) error {
	if name := arg(a, 1).S; name != "" && name != "buf0" {
		return fmt.Errorf("No such sink '%s'", name)
	}
	return nil
}
