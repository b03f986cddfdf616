package sample

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"net/netip"
	"strings"

	"goha/core/http1"
	"goha/core/varint"
)

// Fetches of the HTTP message (HAProxy's section 7.3.6) beyond the request
// line and plain headers: URL parameters, cookies, whole header blocks,
// hashes of the URL, authorization, captures, bodies.

// TxnInfo is the running process's side of the fetches about the HTTP
// transaction that the message alone does not tell.
type TxnInfo interface {
	// FirstRequest says whether the request is the first of its
	// connection.
	FirstRequest() bool
	// RequestLine is the request line as received, before any rule
	// changed it, when the frontend logs it (HAProxy keeps it only
	// then); ok false otherwise.
	RequestLine() (line []byte, ok bool)
}

// BodyInfo is implemented by a Stream that has a message's body buffered
// when rules run (HAProxy's option http-buffer-request). Without it the
// body fetches give no sample.
type BodyInfo interface {
	// Body is the request's (res false) or the response's body as
	// buffered, without its transfer encoding; ok false when none is.
	Body(res bool) (b []byte, ok bool)
}

func init() {
	RegisterFetches(
		Fetch{Name: "url_param", Max: 2, Out: TStr, Need: NeedReqHdr, Fn: fetchURLParam},
		Fetch{Name: "urlp", Max: 2, Out: TStr, Need: NeedReqHdr, Fn: fetchURLParam},
		Fetch{Name: "urlp_val", Max: 2, Out: TSint, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if !fetchURLParam(r, a, s) {
				return false
			}
			s.setInt(strl2ic(s.B))
			return true
		}},
		Fetch{Name: "url_ip", Out: TIPv4, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			ip, _, ok := urlAddr(r)
			if !ok {
				return false
			}
			s.T, s.IP = TIPv4, ip
			return true
		}},
		Fetch{Name: "url_port", Out: TSint, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			_, port, ok := urlAddr(r)
			if !ok {
				return false
			}
			s.setInt(port)
			return true
		}},
		Fetch{Name: "baseq", Out: TStr, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			h := r.request()
			if h == nil {
				return false
			}
			host, _ := h.Get("host")
			p := pathq(h)
			if h.Path() == nil {
				p = nil
			}
			s.setStr(append(append(r.alloc(len(host)+len(p)), host...), p...))
			return true
		}},
		Fetch{Name: "base32", Out: TSint, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			h := r.request()
			if h == nil {
				return false
			}
			s.setInt(int64(urlHash(h, false)))
			return true
		}},
		Fetch{Name: "url32", Out: TSint, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			h := r.request()
			if h == nil {
				return false
			}
			s.setInt(int64(urlHash(h, true)))
			return true
		}},
		Fetch{Name: "base32+src", Out: TBin, Need: NeedReqHdr, Fn: hashSrc(false)},
		Fetch{Name: "url32+src", Out: TBin, Need: NeedReqHdr, Fn: hashSrc(true)},

		Fetch{Name: "req.hdrs", Out: TStr, Need: NeedReqHdr, Fn: fetchHdrs(dirReq)},
		Fetch{Name: "res.hdrs", Out: TStr, Need: NeedResHdr, Fn: fetchHdrs(dirRes)},
		Fetch{Name: "req.hdrs_bin", Out: TBin, Need: NeedReqHdr, Fn: fetchHdrsBin(dirReq)},
		Fetch{Name: "res.hdrs_bin", Out: TBin, Need: NeedResHdr, Fn: fetchHdrsBin(dirRes)},
		Fetch{Name: "req.hdr_names", Max: 1, Out: TStr, Need: NeedReqHdr, Fn: fetchHdrNames(dirReq)},
		Fetch{Name: "res.hdr_names", Max: 1, Out: TStr, Need: NeedResHdr, Fn: fetchHdrNames(dirRes)},

		Fetch{Name: "hdr_ip", Max: 2, Out: TIPv4, Need: NeedReqHdr, Check: hdrArgs, Fn: hdrIP(dirReq)},
		Fetch{Name: "req.hdr_ip", Max: 2, Out: TIPv4, Need: NeedReqHdr, Check: hdrArgs, Fn: hdrIP(dirReq)},
		Fetch{Name: "res.hdr_ip", Max: 2, Out: TIPv4, Need: NeedResHdr, Check: hdrArgs, Fn: hdrIP(dirRes)},
		Fetch{Name: "shdr_ip", Max: 2, Out: TIPv4, Need: NeedResHdr, Check: hdrArgs, Fn: hdrIP(dirRes)},
		Fetch{Name: "hdr_val", Max: 2, Out: TSint, Need: NeedReqHdr, Check: hdrArgs, Fn: hdrVal(dirReq)},
		Fetch{Name: "req.hdr_val", Max: 2, Out: TSint, Need: NeedReqHdr, Check: hdrArgs, Fn: hdrVal(dirReq)},
		Fetch{Name: "res.hdr_val", Max: 2, Out: TSint, Need: NeedResHdr, Check: hdrArgs, Fn: hdrVal(dirRes)},
		Fetch{Name: "shdr_val", Max: 2, Out: TSint, Need: NeedResHdr, Check: hdrArgs, Fn: hdrVal(dirRes)},

		Fetch{Name: "cook", Max: 1, Out: TStr, Need: NeedReqHdr, Fn: cookFetch(dirReq)},
		Fetch{Name: "req.cook", Max: 1, Out: TStr, Need: NeedReqHdr, Fn: cookFetch(dirReq)},
		Fetch{Name: "cookie", Max: 1, Out: TStr, Need: NeedHdr, Fn: cookFetch(dirCurrent)},
		Fetch{Name: "res.cook", Max: 1, Out: TStr, Need: NeedResHdr, Fn: cookFetch(dirRes)},
		Fetch{Name: "scook", Max: 1, Out: TStr, Need: NeedResHdr, Fn: cookFetch(dirRes)},
		Fetch{Name: "cook_cnt", Max: 1, Out: TSint, Need: NeedReqHdr, Fn: cookCount(dirReq)},
		Fetch{Name: "req.cook_cnt", Max: 1, Out: TSint, Need: NeedReqHdr, Fn: cookCount(dirReq)},
		Fetch{Name: "res.cook_cnt", Max: 1, Out: TSint, Need: NeedResHdr, Fn: cookCount(dirRes)},
		Fetch{Name: "scook_cnt", Max: 1, Out: TSint, Need: NeedResHdr, Fn: cookCount(dirRes)},
		Fetch{Name: "cook_val", Max: 1, Out: TSint, Need: NeedReqHdr, Fn: cookVal(dirReq)},
		Fetch{Name: "req.cook_val", Max: 1, Out: TSint, Need: NeedReqHdr, Fn: cookVal(dirReq)},
		Fetch{Name: "res.cook_val", Max: 1, Out: TSint, Need: NeedResHdr, Fn: cookVal(dirRes)},
		Fetch{Name: "scook_val", Max: 1, Out: TSint, Need: NeedResHdr, Fn: cookVal(dirRes)},

		Fetch{Name: "http_auth_type", Out: TStr, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			switch kind, _, _, _ := httpAuth(r); kind {
			case authBasic:
				s.setStr([]byte("Basic"))
			case authBearer:
				s.setStr([]byte("Bearer"))
			default:
				return false
			}
			return true
		}},
		Fetch{Name: "http_auth_user", Out: TStr, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			kind, user, _, _ := httpAuth(r)
			if kind != authBasic {
				return false
			}
			s.setStr(user)
			return true
		}},
		Fetch{Name: "http_auth_pass", Out: TStr, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			kind, _, pass, _ := httpAuth(r)
			if kind != authBasic {
				return false
			}
			s.setStr(pass)
			return true
		}},
		Fetch{Name: "http_auth_bearer", Max: 1, Out: TStr, Need: NeedReqHdr, Fn: fetchBearer},

		Fetch{Name: "http_first_req", Out: TBool, Need: NeedReq, Fn: func(r *Request, a []Arg, s *Sample) bool {
			ti, ok := r.Stream.(TxnInfo)
			if !ok {
				return false
			}
			s.setBool(ti.FirstRequest())
			return true
		}},
		Fetch{Name: "capture.req.method", Out: TStr, Need: NeedReq, Fn: func(r *Request, a []Arg, s *Sample) bool {
			line, ok := capturedLine(r)
			if !ok {
				return false
			}
			if i := bytes.IndexByte(line, ' '); i >= 0 {
				line = line[:i]
			}
			s.setStr(line)
			return true
		}},
		Fetch{Name: "capture.req.uri", Out: TStr, Need: NeedReq, Fn: func(r *Request, a []Arg, s *Sample) bool {
			line, ok := capturedLine(r)
			if !ok {
				return false
			}
			i := bytes.IndexByte(line, ' ')
			if i < 0 {
				return false
			}
			uri := line[i+1:]
			if j := bytes.IndexByte(uri, ' '); j >= 0 {
				uri = uri[:j]
			}
			p, ok := uriPath(uri)
			if !ok {
				return false
			}
			s.setStr(p)
			return true
		}},
		Fetch{Name: "capture.req.ver", Out: TStr, Need: NeedReq, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if h := r.request(); h != nil {
				return msgVersion(h, s)
			}
			// In a log line: the request line the stream kept.
			line, ok := capturedLine(r)
			if !ok {
				return false
			}
			if bytes.HasSuffix(line, ver11[:]) && len(line) > len(ver11) && line[len(line)-len(ver11)-1] == ' ' {
				s.setStr(ver11[:])
			} else {
				s.setStr(ver10[:])
			}
			return true
		}},
		Fetch{Name: "capture.res.ver", Out: TStr, Need: NeedRes, Fn: func(r *Request, a []Arg, s *Sample) bool {
			return msgVersion(r.response(), s)
		}},

		Fetch{Name: "req.body", Out: TBin, Need: NeedReqHdr, Fn: bodyFetch(false, bodyBytes)},
		Fetch{Name: "res.body", Out: TBin, Need: NeedResHdr, Fn: bodyFetch(true, bodyBytes)},
		Fetch{Name: "req.body_len", Out: TSint, Need: NeedReqHdr, Fn: bodyFetch(false, bodyLen)},
		Fetch{Name: "res.body_len", Out: TSint, Need: NeedResHdr, Fn: bodyFetch(true, bodyLen)},
		Fetch{Name: "req.body_size", Out: TSint, Need: NeedReqHdr, Fn: bodyFetch(false, bodySize)},
		Fetch{Name: "res.body_size", Out: TSint, Need: NeedResHdr, Fn: bodyFetch(true, bodySize)},
		Fetch{Name: "req.body_param", Max: 1, Out: TBin, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			bi, ok := r.Stream.(BodyInfo)
			if !ok {
				return false
			}
			b, ok := bi.Body(false)
			if !ok {
				return false
			}
			name := ""
			if len(a) > 0 {
				name = a[0].S
			}
			return paramFetch(b, name, '&', s)
		}},
	)
}

// strl2ic reads an integer as HAProxy's strl2ic does: an optional '-',
// then digits up to the first character above '9'. Characters below '0'
// are not rejected but added with their (negative) offset from '0', and
// the value wraps at 32 bits, both as in HAProxy.
func strl2ic(b []byte) int64 {
	var i int32
	if len(b) == 0 {
		return 0
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	for _, c := range b {
		j := int32(c) - '0'
		if j > 9 {
			break
		}
		if neg {
			i = i*10 - j
		} else {
			i = i*10 + j
		}
	}
	return int64(i)
}

// isParamDelim says whether c ends a URL parameter: '&', ';' or the
// delimiter given.
func isParamDelim(c, delim byte) bool { return c == '&' || c == ';' || c == delim }

// nextParam finds, in q from offset from, the next parameter named name
// (any parameter with name ""), and returns its value's bounds.
func nextParam(q []byte, from int, name string, delim byte) (vs, ve int, ok bool) {
	p := from
	if name == "" {
		// The value after the next '=', wherever it is.
		i := bytes.IndexByte(q[p:], '=')
		if i < 0 {
			return 0, 0, false
		}
		vs = p + i + 1
	} else {
		found := false
		for p < len(q) {
			eq := p + len(name)
			if eq >= len(q) {
				return 0, 0, false
			}
			if q[eq] == '=' {
				if string(q[p:eq]) == name {
					found = true
					break
				}
				p = eq + 1
			}
			for p < len(q) && !isParamDelim(q[p], delim) {
				p++
			}
			if p >= len(q) {
				return 0, 0, false
			}
			p++
		}
		if !found {
			return 0, 0, false
		}
		vs = p + len(name) + 1
	}
	ve = vs
	for ve < len(q) && !isParamDelim(q[ve], delim) {
		ve++
	}
	return vs, ve, true
}

// paramFetch is the first value of a parameter in q, or for an ACL each
// one in turn.
func paramFetch(q []byte, name string, delim byte, s *Sample) bool {
	vs, ve, ok := nextParam(q, s.pos, name, delim)
	if !ok {
		return false
	}
	s.setStr(q[vs:ve])
	if s.iter {
		s.pos = ve
		s.more = ve < len(q)
	}
	return true
}

func fetchURLParam(r *Request, a []Arg, s *Sample) bool {
	h := r.request()
	if h == nil {
		return false
	}
	name := ""
	if len(a) > 0 {
		name = a[0].S
	}
	delim := byte('?')
	if len(a) > 1 {
		delim = 0
		if a[1].S != "" {
			delim = a[1].S[0]
		}
	}
	u := h.URI()
	i := bytes.IndexByte(u, delim)
	if i < 0 {
		return false
	}
	return paramFetch(u[i+1:], name, delim, s)
}

// urlAddr is the IPv4 address and port of an absolute http or https URL
// whose host is an IPv4 address (HAProxy resolves no name at run time).
func urlAddr(r *Request) (netip.Addr, int64, bool) {
	h := r.request()
	if h == nil {
		return netip.Addr{}, 0, false
	}
	u := h.URI()
	i := bytes.Index(u, []byte("://"))
	if i < 0 {
		return netip.Addr{}, 0, false
	}
	port := int64(0)
	switch scheme := string(u[:i]); {
	case strings.EqualFold(scheme, "http"):
		port = 80
	case strings.EqualFold(scheme, "https"):
		port = 443
	default:
		return netip.Addr{}, 0, false
	}
	rest := u[i+3:]
	ip, n, ok := url2ipv4(rest)
	if !ok {
		return netip.Addr{}, 0, false
	}
	rest = rest[n:]
	if len(rest) > 0 && rest[0] == ':' {
		port = 0
		for _, c := range rest[1:] {
			if c < '0' || c > '9' {
				break
			}
			port = port*10 + int64(c-'0')
			if port > 1<<32 {
				break
			}
		}
		port &= 0xffff
	}
	return ip, port, true
}

// url2ipv4 reads a dotted IPv4 address at the start of b, as HAProxy's
// url2ipv4: four decimal octets, each up to 255, and returns its length.
func url2ipv4(b []byte) (netip.Addr, int, bool) {
	var a [4]byte
	octets, n := 0, 0
	saw := false
	cur := 0
	for n < len(b) {
		c := b[n]
		if c >= '0' && c <= '9' {
			cur = cur*10 + int(c-'0')
			if cur > 255 {
				return netip.Addr{}, 0, false
			}
			if !saw {
				octets++
				if octets > 4 {
					return netip.Addr{}, 0, false
				}
				saw = true
			}
			a[octets-1] = byte(cur)
		} else if c == '.' {
			if !saw || octets == 4 {
				return netip.Addr{}, 0, false
			}
			saw, cur = false, 0
		} else {
			break
		}
		n++
	}
	if octets < 4 {
		return netip.Addr{}, 0, false
	}
	return netip.AddrFrom4(a), n, true
}

// uriPath is the path of a request target with its query (HAProxy's
// http_parse_path): the target itself in origin-form, what follows the
// authority in absolute-form; ok false in authority-form.
func uriPath(u []byte) ([]byte, bool) {
	if len(u) == 0 {
		return nil, false
	}
	if u[0] == '/' || u[0] == '*' {
		return u, true
	}
	i := bytes.Index(u, []byte("://"))
	if i < 0 {
		return nil, false
	}
	rest := u[i+3:]
	j := bytes.IndexByte(rest, '/')
	if j < 0 {
		return nil, true
	}
	return rest[j:], true
}

// hashStep is HAProxy's string hash step (sdbm), over signed chars.
func hashStep(h uint32, b []byte) uint32 {
	for _, c := range b {
		h = uint32(int32(int8(c))) + (h << 6) + (h << 16) - h
	}
	return h
}

// urlHash is base32 (the Host header and the path without its query) or
// url32 (with it).
func urlHash(h *http1.Head, query bool) uint32 {
	var hash uint32
	if host, ok := h.Get("host"); ok {
		hash = hashStep(hash, host)
	}
	if p, ok := uriPath(h.URI()); ok && len(p) > 0 && p[0] == '/' {
		if !query {
			if i := bytes.IndexByte(p, '?'); i >= 0 {
				p = p[:i]
			}
		}
		hash = hashStep(hash, p)
	}
	return fullHash(hash)
}

// hashSrc is base32+src and url32+src: the hash, big-endian, followed by
// the client's address bytes.
func hashSrc(query bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := r.request()
		if h == nil {
			return false
		}
		var src Sample
		if !addrOf(r.Client, &src, false) {
			return false
		}
		b := r.alloc(20)[:4]
		binary.BigEndian.PutUint32(b, urlHash(h, query))
		if src.IP.Is4() {
			a4 := src.IP.As4()
			b = append(b, a4[:]...)
		} else {
			a16 := src.IP.As16()
			b = append(b, a16[:]...)
		}
		s.T, s.B = TBin, b
		return true
	}
}

// liveFields calls fn with each header field as HAProxy's HTX holds it:
// deleted ones and Connection fields left out (its H1 layer turns those
// into flags), names in lower case.
func liveFields(h *http1.Head, fn func(name, value []byte)) {
	for i := 0; i < h.NumFields(); i++ {
		if h.Deleted(i) {
			continue
		}
		name, value := h.Field(i)
		if len(name) == len("connection") && strings.EqualFold(string(name), "connection") {
			continue
		}
		fn(name, value)
	}
}

func appendLower(b, s []byte) []byte {
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// fetchHdrs is the header block as HAProxy rebuilds it: "name: value"
// lines, names in lower case, and the empty line.
func fetchHdrs(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := d.head(r)
		if h == nil {
			return false
		}
		n := 2
		liveFields(h, func(name, value []byte) { n += len(name) + len(value) + 4 })
		b := r.alloc(n)
		liveFields(h, func(name, value []byte) {
			b = appendLower(b, name)
			b = append(b, ": "...)
			b = append(b, value...)
			b = append(b, "\r\n"...)
		})
		s.setStr(append(b, "\r\n"...))
		return true
	}
}

// appendVarint is the SPOE's variable-length integer encoding.
func appendVarint(b []byte, v uint64) []byte { return varint.Append(b, v) }

// fetchHdrsBin is the header block as SPOE length-value pairs, ended by
// two empty ones.
func fetchHdrsBin(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := d.head(r)
		if h == nil {
			return false
		}
		n := 2
		liveFields(h, func(name, value []byte) { n += len(name) + len(value) + 20 })
		b := r.alloc(n)
		liveFields(h, func(name, value []byte) {
			b = appendVarint(b, uint64(len(name)))
			b = appendLower(b, name)
			b = appendVarint(b, uint64(len(value)))
			b = append(b, value...)
		})
		s.T, s.B = TBin, append(b, 0, 0)
		return true
	}
}

// fetchHdrNames is the header names, in lower case, joined by the
// argument's first character (a comma by default).
func fetchHdrNames(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := d.head(r)
		if h == nil {
			return false
		}
		del := byte(',')
		if len(a) > 0 && a[0].S != "" {
			del = a[0].S[0]
		}
		n := 0
		liveFields(h, func(name, value []byte) { n += len(name) + 1 })
		b := r.alloc(n)
		liveFields(h, func(name, value []byte) {
			if len(b) > 0 {
				b = append(b, del)
			}
			b = appendLower(b, name)
		})
		s.setStr(b)
		return true
	}
}

// hdrIP is a header's value as an address: an IPv4 one, possibly followed
// by ":port", or an IPv6 one. The last occurrence, or the one asked; for
// an ACL, each occurrence that is an address.
func hdrIP(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	hdr := hdrFetch(d, false)
	return func(r *Request, a []Arg, s *Sample) bool {
		for {
			if !hdr(r, a, s) {
				return false
			}
			if ip, ok := parseHdrIP(s.B); ok {
				s.IP, s.T = ip, TIPv4
				if !ip.Is4() {
					s.T = TIPv6
				}
				return true
			}
			if !s.iter || !s.more {
				return false
			}
			s.more = false
		}
	}
}

func parseHdrIP(v []byte) (netip.Addr, bool) {
	if ip, n, ok := url2ipv4(v); ok {
		if n == len(v) {
			return ip, true
		}
		if v[n] == ':' && validPort(v[n+1:]) {
			return ip, true
		}
	}
	if bytes.IndexByte(v, ':') >= 0 {
		var ip netip.Addr
		if err := ip.UnmarshalText(v); err == nil && ip.Is6() && ip.Zone() == "" {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

func validPort(b []byte) bool {
	if len(b) == 0 || len(b) > 5 {
		return false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// hdrVal is a header's value as an integer (strl2ic).
func hdrVal(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	hdr := hdrFetch(d, false)
	return func(r *Request, a []Arg, s *Sample) bool {
		if !hdr(r, a, s) {
			return false
		}
		s.setInt(strl2ic(s.B))
		return true
	}
}

// cookieValue finds, in a Cookie (list) or Set-Cookie header value from
// offset from, the next cookie named name (any with name ""), as
// HAProxy's http_extract_cookie_value: names compared exactly, values
// trimmed, quotes respected, '$' attributes and cookies without '=' left
// out; a Set-Cookie value only has its first pair looked at. It returns
// the value's bounds and where to go on from.
func cookieValue(v []byte, from int, name string, list bool) (vs, ve, next int, ok bool) {
	isSP := func(c byte) bool { return c == ' ' || c == '\t' }
	for ab := from; ab+len(name)+1 < len(v); ab = next + 1 {
		for ab < len(v) && isSP(v[ab]) {
			ab++
		}
		eq, ae := ab, ab
		for eq < len(v) {
			c := v[eq]
			if c == '=' || c == ';' || list && c == ',' {
				break
			}
			eq++
			if !isSP(c) {
				ae = eq
			}
		}
		if eq < len(v) && v[eq] == '=' {
			vs = eq + 1
			for vs < len(v) && isSP(v[vs]) {
				vs++
			}
			next = cookieValueEnd(v, vs)
			ve = next
			for ve > vs && isSP(v[ve-1]) {
				ve--
			}
		} else {
			vs, ve, next = eq, eq, eq
		}
		if ab < len(v) && v[ab] == '$' {
			continue
		}
		if eq == next {
			continue
		}
		if name == "" || string(v[ab:ae]) == name {
			return vs, ve, next + 1, true
		}
		if !list {
			break
		}
	}
	return 0, 0, 0, false
}

// cookieValueEnd is where a cookie value starting at i ends: the first
// ',' or ';' outside quotes.
func cookieValueEnd(v []byte, i int) int {
	quoted, pair := false, false
	for ; i < len(v); i++ {
		c := v[i]
		switch {
		case pair:
			pair = false
		case quoted:
			if c == '\\' {
				pair = true
			} else if c == '"' {
				quoted = false
			}
		case c == '"':
			quoted = true
		case c == ',' || c == ';':
			return i
		}
	}
	return i
}

// cookieHeader is the header cookies are read from: Cookie in a request,
// Set-Cookie in a response.
func cookieHeader(h *http1.Head) string {
	if h.IsResponse() {
		return "set-cookie"
	}
	return "cookie"
}

// eachCookie calls fn with every value of cookie name in h's cookie
// headers (their comma-separated elements, as HAProxy finds them), until
// fn returns true. Like HAProxy, a Cookie header is read as a list only
// in request rules.
func eachCookie(r *Request, h *http1.Head, name string, fn func(v []byte) bool) {
	list := r.response() == nil
	hdrValues(h, cookieHeader(h), false, func(v []byte) bool {
		if len(v) < len(name)+1 {
			return false
		}
		for from := 0; ; {
			vs, ve, next, ok := cookieValue(v, from, name, list)
			if !ok {
				return false
			}
			if fn(v[vs:ve]) {
				return true
			}
			from = next
		}
	})
}

// cookFetch is a cookie's value: the last one with a name, the first
// cookie's without; for an ACL, each in turn.
func cookFetch(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := d.head(r)
		if h == nil {
			return false
		}
		name := ""
		if len(a) > 0 {
			name = a[0].S
		}
		found := false
		if s.iter {
			k, want := 0, s.pos
			eachCookie(r, h, name, func(v []byte) bool {
				if k == want {
					s.setStr(v)
					found = true
				} else if k > want {
					s.more = true
					return true
				}
				k++
				return false
			})
			s.pos = want + 1
			return found
		}
		eachCookie(r, h, name, func(v []byte) bool {
			s.setStr(v)
			found = true
			return name == ""
		})
		return found
	}
}

func cookCount(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := d.head(r)
		if h == nil {
			return false
		}
		name := ""
		if len(a) > 0 {
			name = a[0].S
		}
		n := int64(0)
		eachCookie(r, h, name, func([]byte) bool { n++; return false })
		s.setInt(n)
		return true
	}
}

func cookVal(d hdrDir) func(r *Request, a []Arg, s *Sample) bool {
	f := cookFetch(d)
	return func(r *Request, a []Arg, s *Sample) bool {
		if !f(r, a, s) {
			return false
		}
		s.setInt(strl2ic(s.B))
		return true
	}
}

type authKind uint8

const (
	authNone authKind = iota
	authBasic
	authBearer
)

// httpAuth reads the Authorization header as HAProxy's get_http_auth: the
// scheme before the first space (compared as a prefix of "Basic" or
// "Bearer", without case, as HAProxy compares it), then for Basic the
// base64 of "user:password". User and password end at a NUL byte.
func httpAuth(r *Request) (kind authKind, user, pass, data []byte) {
	h := r.request()
	if h == nil {
		return authNone, nil, nil, nil
	}
	var v []byte
	hdrValues(h, "authorization", false, func(x []byte) bool { v = x; return true })
	if v == nil {
		return authNone, nil, nil, nil
	}
	sp := bytes.IndexByte(v, ' ')
	if sp <= 0 {
		return authNone, nil, nil, nil
	}
	scheme := string(v[:sp])
	data = bytes.TrimLeft(v[sp:], " ")
	switch {
	case len(scheme) <= 5 && strings.EqualFold(scheme, "Basic"[:len(scheme)]):
		if len(data)%4 != 0 {
			return authNone, nil, nil, nil
		}
		dec := r.alloc(base64.StdEncoding.DecodedLen(len(data)))
		dec = dec[:cap(dec)]
		n, err := base64.StdEncoding.Decode(dec, data)
		if err != nil {
			return authNone, nil, nil, nil
		}
		dec = dec[:n]
		if z := bytes.IndexByte(dec, 0); z >= 0 {
			dec = dec[:z]
		}
		c := bytes.IndexByte(dec, ':')
		if c < 0 {
			return authNone, nil, nil, nil
		}
		return authBasic, dec[:c], dec[c+1:], data
	case len(scheme) <= 6 && strings.EqualFold(scheme, "Bearer"[:len(scheme)]):
		return authBearer, nil, nil, data
	}
	return authNone, nil, nil, nil
}

// fetchBearer is the token of a Bearer authorization: from the header
// named in the argument, or Authorization.
func fetchBearer(r *Request, a []Arg, s *Sample) bool {
	if len(a) == 0 || a[0].S == "" {
		kind, _, _, data := httpAuth(r)
		if kind != authBearer {
			return false
		}
		s.setStr(data)
		return true
	}
	h := r.request()
	if h == nil {
		return false
	}
	var v []byte
	hdrValues(h, strings.ToLower(a[0].S), false, func(x []byte) bool { v = x; return true })
	s.setStr(nil)
	if v == nil {
		return true
	}
	scheme, rest, _ := bytes.Cut(v, []byte{' '})
	rest = bytes.TrimLeft(rest, " ")
	if strings.EqualFold(string(scheme), "Bearer") && len(rest) > 0 {
		s.setStr(rest)
	}
	return true
}

// The versions capture.req.ver gives, kept in arrays so that a sample of
// them costs no allocation.
var (
	ver11 = [8]byte{'H', 'T', 'T', 'P', '/', '1', '.', '1'}
	ver10 = [8]byte{'H', 'T', 'T', 'P', '/', '1', '.', '0'}
)

func capturedLine(r *Request) ([]byte, bool) {
	ti, ok := r.Stream.(TxnInfo)
	if !ok {
		return nil, false
	}
	return ti.RequestLine()
}

// msgVersion is "HTTP/1.1" for a 1.1 message, "HTTP/1.0" otherwise, as
// HAProxy's capture.req.ver and capture.res.ver say.
func msgVersion(h *http1.Head, s *Sample) bool {
	if h == nil {
		return false
	}
	if string(h.Version()) == "HTTP/1.1" {
		s.setStr([]byte("HTTP/1.1"))
	} else {
		s.setStr([]byte("HTTP/1.0"))
	}
	return true
}

type bodyPart uint8

const (
	bodyBytes bodyPart = iota
	bodyLen
	bodySize
)

func bodyFetch(res bool, part bodyPart) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		bi, ok := r.Stream.(BodyInfo)
		if !ok {
			return false
		}
		h := r.request()
		if res {
			h = r.response()
		}
		if h == nil {
			return false
		}
		b, ok := bi.Body(res)
		if !ok {
			return false
		}
		switch part {
		case bodyBytes:
			s.T, s.B = TBin, b
		case bodyLen:
			s.setInt(int64(len(b)))
		case bodySize:
			n := int64(len(b))
			if h.Flags&http1.FlagContentLength != 0 {
				n = h.ContentLength
			}
			s.setInt(n)
		}
		return true
	}
}
