// Package comp holds HAProxy 2.6's HTTP compression decisions and its
// encoders: which algorithm a request's Accept-Encoding selects, which
// responses may be compressed (User-Agent, Cache-Control, ETag,
// Content-Type), and streaming encoders for identity, deflate (zlib's
// RFC 1950 format), raw-deflate (RFC 1951) and gzip (RFC 1952), written
// with Go's compress packages.
//
// It imports only the standard library.
package comp

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"sync"
)

// Algo is one of HAProxy's compression algorithms.
type Algo uint8

const (
	Identity Algo = iota
	Deflate
	RawDeflate
	Gzip
	numAlgos
)

var cfgNames = [numAlgos]string{"identity", "deflate", "raw-deflate", "gzip"}

// uaNames are the content-codings the algorithms answer to and announce:
// raw-deflate's output is labelled "deflate", as HAProxy labels it.
var uaNames = [numAlgos]string{"identity", "deflate", "deflate", "gzip"}

// Name is the algorithm's configuration name (res.comp_algo's value).
func (a Algo) Name() string { return cfgNames[a] }

// Coding is the content-coding the algorithm produces.
func (a Algo) Coding() string { return uaNames[a] }

// ParseAlgo reads an algorithm's configuration name, case-sensitively as
// HAProxy does.
func ParseAlgo(name string) (Algo, bool) {
	for i, n := range cfgNames {
		if n == name {
			return Algo(i), true
		}
	}
	return 0, false
}

// BadUserAgent says whether a User-Agent value is one of the old
// browsers HAProxy never compresses for: "Mozilla/4" agents other than
// MSIE 6 with XP SP2 ("SV1") and MSIE 7 and later.
func BadUserAgent(ua []byte) bool {
	if len(ua) < 9 || string(ua[:9]) != "Mozilla/4" {
		return false
	}
	if len(ua) < 31 || string(ua[25:30]) != "MSIE " || ua[30] < '6' {
		return true
	}
	return ua[30] == '6' && (len(ua) < 54 || string(ua[51:54]) != "SV1")
}

// Choice accumulates the algorithm a request's Accept-Encoding fields
// select among a proxy's: the one with the highest q-value, the first
// field element winning ties, "*" standing for the proxy's first
// algorithm. The zero Choice has chosen nothing.
type Choice struct {
	Algo  Algo
	Found bool
	best  int
}

// Field takes one Accept-Encoding field's value (its comma-separated
// elements) into the choice. algos is the proxy's list, in HAProxy's
// order.
func (c *Choice) Field(v []byte, algos []Algo) {
	for len(v) > 0 {
		var elem []byte
		elem, v = nextElement(v)
		c.element(elem, algos)
	}
}

// element is one element of an Accept-Encoding list, blanks trimmed.
func (c *Choice) element(e []byte, algos []Algo) {
	tok := 0
	for tok < len(e) && isToken(e[tok]) {
		tok++
	}
	q := qOf(e[tok:])
	if q <= c.best {
		return
	}
	for _, a := range algos {
		if (len(e) > 0 && e[0] == '*') || wordMatch(e[:tok], uaNames[a]) {
			c.Algo, c.Found, c.best = a, true, q
			return
		}
	}
}

// qOf reads the first "q=" parameter of an element's parameters (what
// follows its token), in thousandths; 1000 without one.
func qOf(p []byte) int {
	for {
		p = trimLeftLWS(p)
		if len(p) == 0 || p[0] != ';' {
			return 1000
		}
		p = trimLeftLWS(p[1:])
		if len(p) == 0 {
			return 1000
		}
		// A lone "q" at the end counts as the parameter, as in HAProxy,
		// with no digits after it.
		if p[0] == 'q' && (len(p) == 1 || p[1] == '=') {
			if len(p) < 2 {
				return 1000
			}
			return parseQValue(p[2:])
		}
		i := bytes.IndexByte(p, ';')
		if i < 0 {
			return 1000
		}
		p = p[i:]
	}
}

// parseQValue reads a q-value ("1", "0.5", "0.125") in thousandths, as
// far as it is well formed; 1000 when it does not start with a digit.
func parseQValue(p []byte) int {
	digit := func(i int) (int, bool) {
		if i < len(p) && p[i] >= '0' && p[i] <= '9' {
			return int(p[i] - '0'), true
		}
		return 0, false
	}
	d, ok := digit(0)
	if !ok {
		return 1000
	}
	q := d * 1000
	if len(p) > 1 && p[1] == '.' {
		for i, m := 2, 100; m > 0; i, m = i+1, m/10 {
			d, ok := digit(i)
			if !ok {
				break
			}
			q += d * m
		}
	}
	return min(q, 1000)
}

// nextElement splits the first comma-separated element off a field
// value, blanks trimmed; commas inside quoted strings do not split.
func nextElement(v []byte) (elem, rest []byte) {
	quoted := false
	i := 0
	for ; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\' && i+1 < len(v):
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			return trimLWS(v[:i]), v[i+1:]
		}
	}
	return trimLWS(v), nil
}

// NoTransform says whether a Cache-Control value has the no-transform
// directive.
func NoTransform(v []byte) bool {
	for len(v) > 0 {
		var e []byte
		e, v = nextElement(v)
		if wordMatch(e, "no-transform") {
			return true
		}
	}
	return false
}

// ETag kinds.
const (
	ETagInvalid = iota
	ETagStrong
	ETagWeak
)

// ETagKind classifies an ETag value as HAProxy does: a quoted string
// (strong), W/ then a quoted string (weak), or invalid.
func ETagKind(v []byte) int {
	if len(v) < 2 || v[len(v)-1] != '"' {
		return ETagInvalid
	}
	if v[0] == '"' {
		return ETagStrong
	}
	if len(v) >= 3 && string(v[:3]) == `W/"` {
		return ETagWeak
	}
	return ETagInvalid
}

// WeakETag appends to dst the ETag a compressed response carries for v:
// a strong one made weak, anything else as it is.
func WeakETag(dst, v []byte) []byte {
	if len(v) > 0 && v[0] == '"' {
		dst = append(dst, "W/"...)
	}
	return append(dst, v...)
}

// TypeAllowed says whether a response with Content-Type ct (has says
// whether there is one) may be compressed given a proxy's type list: not
// multipart, and starting with one of the listed types when there are
// any; a response without a type only when no list is given.
func TypeAllowed(ct []byte, has bool, types []string) bool {
	if !has {
		return len(types) == 0
	}
	if hasPrefixFold(ct, "multipart") {
		return false
	}
	if len(types) == 0 {
		return true
	}
	for _, t := range types {
		if hasPrefixFold(ct, t) {
			return true
		}
	}
	return false
}

// hasPrefixFold says whether b starts with s, ASCII case ignored.
func hasPrefixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// wordMatch says whether s is word (any case) followed only by blanks.
func wordMatch(s []byte, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if c := s[i] ^ word[i]; c != 0 && c != 'A'^'a' {
			return false
		}
	}
	for _, c := range s[len(word):] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

func isLWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func trimLeftLWS(b []byte) []byte {
	for len(b) > 0 && isLWS(b[0]) {
		b = b[1:]
	}
	return b
}

func trimLWS(b []byte) []byte {
	b = trimLeftLWS(b)
	for len(b) > 0 && isLWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// isToken is RFC 7230's tchar.
func isToken(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// Encoder compresses one response body as it streams: Write takes
// payload, Flush and Close append what is ready to the caller's buffer.
// Encoders are pooled by algorithm and level (Get, Put); one belongs to one
// response at a time.
type Encoder struct {
	algo  Algo
	level int
	out   outBuf
	w     io.WriteCloser
	flush func() error
}

// outBuf is where the compressor writes, handed to the caller in turns.
type outBuf struct{ b []byte }

func (o *outBuf) Write(p []byte) (int, error) {
	o.b = append(o.b, p...)
	return len(p), nil
}

var pools [numAlgos][10]sync.Pool

// Get returns an encoder for algo at level (1 to 9), ready for a new
// body.
func Get(algo Algo, level int) *Encoder {
	level = max(1, min(level, 9))
	if e, ok := pools[algo][level].Get().(*Encoder); ok {
		e.reset()
		return e
	}
	e := &Encoder{algo: algo, level: level}
	switch algo {
	case Deflate:
		w, _ := zlib.NewWriterLevel(&e.out, level)
		e.w, e.flush = w, w.Flush
	case RawDeflate:
		w, _ := flate.NewWriter(&e.out, level)
		e.w, e.flush = w, w.Flush
	case Gzip:
		w, _ := gzip.NewWriterLevel(&e.out, level)
		e.w, e.flush = w, w.Flush
	}
	return e
}

// Put gives an encoder back to its pool.
func Put(e *Encoder) {
	if e == nil {
		return
	}
	e.out.b = e.out.b[:0]
	pools[e.algo][e.level].Put(e)
}

func (e *Encoder) reset() {
	e.out.b = e.out.b[:0]
	switch w := e.w.(type) {
	case *zlib.Writer:
		w.Reset(&e.out)
	case *flate.Writer:
		w.Reset(&e.out)
	case *gzip.Writer:
		w.Reset(&e.out)
	}
}

// Algo is the encoder's algorithm.
func (e *Encoder) Algo() Algo { return e.algo }

// Write compresses p. Nothing is output until Flush or Close.
func (e *Encoder) Write(p []byte) {
	if e.w == nil {
		e.out.b = append(e.out.b, p...)
		return
	}
	e.w.Write(p)
}

// Flush appends to dst all the output that the input so far allows,
// ending on a byte boundary (a sync flush) as HAProxy's does each time it
// passes data on, and returns dst.
func (e *Encoder) Flush(dst []byte) []byte {
	if e.flush != nil {
		e.flush()
	}
	return e.take(dst)
}

// Close ends the stream (final block, trailer) and appends the rest of
// the output to dst.
func (e *Encoder) Close(dst []byte) []byte {
	if e.w != nil {
		e.w.Close()
	}
	return e.take(dst)
}

func (e *Encoder) take(dst []byte) []byte {
	dst = append(dst, e.out.b...)
	e.out.b = e.out.b[:0]
	return dst
}
