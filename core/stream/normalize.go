package stream

import (
	"bytes"
	"fmt"
	"slices"
)

// http-request normalize-uri: HAProxy 2.6's URI normalizers (an
// experimental action there, allowed by expose-experimental-directives),
// each a transcription of its uri_normalizer.c, quirks included.

const actNormalizeURI ruleAction = iota + 210

type normalizer uint8

const (
	normNone normalizer = iota
	normMergeSlashes
	normStripDot
	normStripDotdot
	normStripDotdotFull
	normQuerySort
	normPercentUpper
	normPercentUpperStrict
	normDecodeUnreserved
	normDecodeUnreservedStrict
	normFragmentStrip
	normFragmentEncode
)

// normalizers are the normalizer names, and what their optional word
// (full, strict) turns them into.
var normalizers = map[string][2]normalizer{
	"path-merge-slashes":        {normMergeSlashes},
	"path-strip-dot":            {normStripDot},
	"path-strip-dotdot":         {normStripDotdot, normStripDotdotFull},
	"query-sort-by-name":        {normQuerySort},
	"percent-to-uppercase":      {normPercentUpper, normPercentUpperStrict},
	"percent-decode-unreserved": {normDecodeUnreserved, normDecodeUnreservedStrict},
	"fragment-strip":            {normFragmentStrip},
	"fragment-encode":           {normFragmentEncode},
}

// compileNormalize reads <normalizer> [full|strict] with HAProxy's
// messages.
func compileNormalize(r *httpRule, args []string) error {
	r.act = actNormalizeURI
	if len(args) == 0 {
		return fmt.Errorf("missing argument <normalizer>")
	}
	n, ok := normalizers[args[0]]
	if !ok {
		return fmt.Errorf("unknown normalizer '%s'", args[0])
	}
	r.norm = n[0]
	if len(args) > 1 {
		word := "strict"
		if n[0] == normStripDotdot {
			word = "full"
		}
		if args[1] != word {
			return fmt.Errorf("unknown argument '%s' for '%s' normalizer", args[1], args[0])
		}
		r.norm = n[1]
	}
	return nil
}

// uriPath is where the path of a request target starts, as HAProxy's
// http_parse_path finds it: the whole of an origin form, what follows
// the authority of an absolute form; ok false when there is none (an
// asterisk, an authority form, an absolute form without a path).
func uriPath(u []byte) (start int, ok bool) {
	if len(u) == 0 || u[0] == '*' {
		return 0, false
	}
	if u[0] == '/' {
		return 0, true
	}
	// scheme "://"
	if !isAlpha(u[0]) {
		return 0, false
	}
	i := 1
	for i < len(u) && (isAlnum(u[i]) || u[i] == '+' || u[i] == '-' || u[i] == '.') {
		i++
	}
	if !bytes.HasPrefix(u[i:], []byte("://")) {
		return 0, false
	}
	i += 3
	j := bytes.IndexByte(u[i:], '/')
	if j < 0 {
		return 0, false
	}
	return i + j, true
}

// normalizeURI runs a normalize-uri rule on the request's target. It
// returns false when a strict normalizer found an invalid percent
// sequence: HAProxy then answers 400.
func (hc *hconn) normalizeURI(r *httpRule) bool {
	u := hc.req.URI()
	var out []byte
	var ok bool
	hc.scratch, out, ok = normalizeTarget(hc.scratch[:0], u, r.norm)
	if ok && !bytes.Equal(out, u) {
		hc.req.SetURI(out)
	}
	return ok
}

// normalizeTarget runs normalizer n on the request target u. out is the
// new target, built in buf, which is returned for reuse; ok false is an
// invalid percent sequence for a strict normalizer.
func normalizeTarget(buf, u []byte, n normalizer) (newBuf, out []byte, ok bool) {
	at, found := uriPath(u)
	if !found {
		return buf, u, true
	}
	path := u[at:]
	out = append(buf, u[:at]...)
	switch n {
	case normMergeSlashes, normStripDot, normStripDotdot, normStripDotdotFull:
		p := path
		if q := bytes.IndexByte(p, '?'); q >= 0 {
			p = p[:q]
		}
		switch n {
		case normMergeSlashes:
			out = mergeSlashes(out, p)
		case normStripDot:
			out = stripDot(out, p)
		default:
			out = stripDotdot(out, p, n == normStripDotdotFull)
		}
		out = append(out, path[len(p):]...)
	case normQuerySort:
		var query []byte
		if q := bytes.IndexByte(path, '?'); q >= 0 {
			query = path[q:]
		}
		buf = sortQuery(buf, query)
		start := len(buf)
		buf = appendReplacedQuery(buf, buf[:start], u)
		return buf, buf[start:], true
	case normPercentUpper, normPercentUpperStrict, normDecodeUnreserved, normDecodeUnreservedStrict:
		strict := n == normPercentUpperStrict || n == normDecodeUnreservedStrict
		out, ok = percentNormalize(out, path, n == normPercentUpper || n == normPercentUpperStrict, strict)
		if !ok {
			return out, nil, false
		}
	case normFragmentStrip:
		if f := bytes.IndexByte(path, '#'); f >= 0 {
			path = path[:f]
		}
		out = append(out, path...)
	case normFragmentEncode:
		for {
			f := bytes.IndexByte(path, '#')
			if f < 0 {
				break
			}
			out = append(append(out, path[:f]...), "%23"...)
			path = path[f+1:]
		}
		out = append(out, path...)
	}
	return out, out, true
}

// mergeSlashes appends p with each run of slashes made one.
func mergeSlashes(dst, p []byte) []byte {
	for i := 0; i < len(p); i++ {
		dst = append(dst, p[i])
		if p[i] == '/' {
			for i+1 < len(p) && p[i+1] == '/' {
				i++
			}
		}
	}
	return dst
}

// stripDot appends p without its "." segments.
func stripDot(dst, p []byte) []byte {
	for len(p) > 0 {
		seg, rest, found := bytes.Cut(p, []byte("/"))
		if string(seg) != "." {
			dst = append(dst, seg...)
			if found {
				dst = append(dst, '/')
			}
		}
		p = rest
	}
	return dst
}

// stripDotdot appends p with each "/.." merged with the segment before
// it, walking from the end as HAProxy does; the "/.." left over stay at
// the front unless full.
func stripDotdot(dst, p []byte, full bool) []byte {
	start := len(dst)
	// Built backwards, then turned around.
	off := len(p) - 1
	up := 0
	if off >= 2 && bytes.HasPrefix(p[off-2:], []byte("/..")) {
		up++
		off -= 2
	}
	for off >= 0 {
		if off >= 3 && bytes.HasPrefix(p[off-3:], []byte("/../")) {
			up++
			off -= 3
			continue
		}
		if up > 0 {
			off--
			if off >= 0 {
				up--
				for off >= 0 && p[off] != '/' {
					off--
				}
			}
			continue
		}
		dst = append(dst, p[off])
		off--
		for off >= 0 && p[off] != '/' {
			dst = append(dst, p[off])
			off--
		}
	}
	if up > 0 {
		dst = append(dst, '/')
		if !full {
			for ; up > 0; up-- {
				dst = append(dst, '.', '.', '/')
			}
		}
	}
	slices.Reverse(dst[start:])
	return dst
}

// sortQuery appends query (with its '?', or empty) with its parameters
// sorted by name, stably. As in HAProxy, an empty query comes out as
// one NUL byte, which appendReplacedQuery then drops, and a trailing '&' goes.
func sortQuery(dst, query []byte) []byte {
	if len(query) == 0 {
		return append(dst, 0)
	}
	dst = append(dst, query[0])
	var arr [32][]byte
	params := arr[:0]
	for rest := query[1:]; len(rest) > 0; {
		var p []byte
		p, rest, _ = bytes.Cut(rest, []byte("&"))
		params = append(params, p)
	}
	slices.SortStableFunc(params, func(a, b []byte) int {
		return bytes.Compare(paramName(a), paramName(b))
	})
	for i, p := range params {
		if i > 0 {
			dst = append(dst, '&')
		}
		dst = append(dst, p...)
	}
	return dst
}

func paramName(p []byte) []byte {
	if i := bytes.IndexByte(p, '='); i >= 0 {
		return p[:i]
	}
	return p
}

// appendReplacedQuery appends the request target u with query for its
// query, as HAProxy's http_replace_req_query: from u's first '?' on,
// wherever it is; when u has none, query is appended whole unless it is
// one byte long.
func appendReplacedQuery(dst, query, u []byte) []byte {
	q := bytes.IndexByte(u, '?')
	off := 1
	if q < 0 {
		q = len(u)
		if len(query) > 1 {
			off = 0
		}
	} else {
		q++
	}
	dst = append(dst, u[:q]...)
	return append(dst, query[off:]...)
}

// percentNormalize appends p with its percent-encoded bytes in upper
// case (upper) or, when they are unreserved characters, decoded. A '%'
// not followed by two hexadecimal digits stays as it is, or makes ok
// false when strict.
func percentNormalize(dst, p []byte, upper, strict bool) (out []byte, ok bool) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		if i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]) {
			h1, h2 := p[i+1], p[i+2]
			i += 2
			if upper {
				dst = append(dst, '%', toUpper(h1), toUpper(h2))
				continue
			}
			if d := unhex(h1)<<4 | unhex(h2); unreserved(d) {
				dst = append(dst, d)
			} else {
				dst = append(dst, '%', h1, h2)
			}
			continue
		}
		if strict {
			return dst, false
		}
		dst = append(dst, c)
	}
	return dst, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

func toUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// unreserved is RFC 3986's unreserved set.
func unreserved(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~'
}
