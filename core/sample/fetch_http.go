package sample

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"goha/core/http1"
)

// Fetches of the HTTP message and of the connection, and the constants.

func init() {
	RegisterFetches(
		Fetch{Name: "always_true", Out: TBool, Fn: func(r *Request, a []Arg, s *Sample) bool { s.setBool(true); return true }},
		Fetch{Name: "always_false", Out: TBool, Fn: func(r *Request, a []Arg, s *Sample) bool { s.setBool(false); return true }},
		Fetch{Name: "str", Min: 1, Max: 1, Out: TStr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			// Copied into the scratch space: a conversion would allocate.
			s.setStr(append(r.alloc(len(a[0].S)), a[0].S...))
			return true
		}},
		Fetch{Name: "int", Min: 1, Max: 1, Out: TSint, Check: argInt, Fn: func(r *Request, a []Arg, s *Sample) bool { s.setInt(a[0].I); return true }},
		Fetch{Name: "bool", Min: 1, Max: 1, Out: TBool, Check: argBool, Fn: func(r *Request, a []Arg, s *Sample) bool { s.setBool(a[0].I != 0); return true }},
		Fetch{Name: "ipv4", Min: 1, Max: 1, Out: TIPv4, Check: argAddr(true), Fn: fetchArgAddr},
		Fetch{Name: "ipv6", Min: 1, Max: 1, Out: TIPv6, Check: argAddr(false), Fn: fetchArgAddr},
		Fetch{Name: "meth", Min: 1, Max: 1, Out: TMeth, Fn: func(r *Request, a []Arg, s *Sample) bool { s.T, s.B = TMeth, []byte(a[0].S); return true }},

		Fetch{Name: "src", Out: TIPv4, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.Client, s, false) }},
		Fetch{Name: "src_port", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.Client, s, true) }},
		Fetch{Name: "dst", Out: TIPv4, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.Local, s, false) }},
		Fetch{Name: "dst_port", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.Local, s, true) }},

		Fetch{Name: "method", Out: TMeth, Need: NeedReq, Fn: fetchMethod},
		Fetch{Name: "path", Out: TStr, Need: NeedReqHdr, Fn: reqPart(func(h *http1.Head) []byte { return h.Path() })},
		Fetch{Name: "pathq", Out: TStr, Need: NeedReqHdr, Fn: reqPart(pathq)},
		Fetch{Name: "url", Out: TStr, Need: NeedReqHdr, Fn: reqPart(func(h *http1.Head) []byte { return h.URI() })},
		Fetch{Name: "query", Out: TStr, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			h := r.request()
			if h == nil {
				return false
			}
			u := h.URI()
			i := bytes.IndexByte(u, '?')
			if i < 0 {
				return false
			}
			s.setStr(u[i+1:])
			return true
		}},
		Fetch{Name: "base", Out: TStr, Need: NeedReqHdr, Fn: func(r *Request, a []Arg, s *Sample) bool {
			h := r.request()
			if h == nil {
				return false
			}
			host, ok := h.Get("host")
			if !ok || len(host) == 0 {
				s.setStr(h.Path())
				return true
			}
			s.setStr(append(append(r.alloc(len(host)+len(h.Path())), host...), h.Path()...))
			return true
		}},
		Fetch{Name: "req.ver", Out: TStr, Need: NeedReqHdr, Fn: reqPart(version)},
		Fetch{Name: "req_ver", Out: TStr, Need: NeedReqHdr, Fn: reqPart(version)},
		Fetch{Name: "res.ver", Out: TStr, Need: NeedResHdr, Fn: resPart(version)},
		Fetch{Name: "resp_ver", Out: TStr, Need: NeedResHdr, Fn: resPart(version)},
		Fetch{Name: "req.proto_http", Out: TBool, Need: NeedReq, Fn: protoHTTP},
		Fetch{Name: "req_proto_http", Out: TBool, Need: NeedReq, Fn: protoHTTP},
		// The connections' HTTP encodings: goha speaks HTTP/1 on both
		// sides, and tcp streams have none.
		Fetch{Name: "fc_http_major", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.request() == nil {
				return false
			}
			s.setInt(1)
			return true
		}},
		// The connections' error codes: 0 ("Success") on the
		// established ones rules and logs read. goha does not log the
		// connections that fail before a stream begins.
		Fetch{Name: "fc_err", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.Client == nil {
				return false
			}
			s.setInt(0)
			return true
		}},
		Fetch{Name: "fc_err_str", Out: TStr, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.Client == nil {
				return false
			}
			s.setStr(successText)
			return true
		}},
		Fetch{Name: "bc_err", Out: TSint, Need: NeedServerConn, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if !serverUp(r) {
				return false
			}
			s.setInt(0)
			return true
		}},
		Fetch{Name: "bc_err_str", Out: TStr, Need: NeedServerConn, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if !serverUp(r) {
				return false
			}
			s.setStr(successText)
			return true
		}},
		Fetch{Name: "bc_http_major", Out: TSint, Need: NeedServerConn, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.request() == nil || !serverUp(r) {
				return false
			}
			s.setInt(1)
			return true
		}},
		Fetch{Name: "status", Out: TSint, Need: NeedRes, Fn: func(r *Request, a []Arg, s *Sample) bool {
			// Status is the response's, as set-status left it.
			if r.Status > 0 {
				s.setInt(int64(r.Status))
				return true
			}
			if h := r.response(); h != nil {
				n, _ := strconv.Atoi(string(h.StatusBytes()))
				s.setInt(int64(n))
				return true
			}
			return false
		}},

		Fetch{Name: "hdr", Max: 2, Out: TStr, Need: NeedHdr, Check: hdrArgs, Fn: hdrFetch(dirCurrent, false)},
		Fetch{Name: "req.hdr", Max: 2, Out: TStr, Need: NeedReqHdr, Check: hdrArgs, Fn: hdrFetch(dirReq, false)},
		Fetch{Name: "res.hdr", Max: 2, Out: TStr, Need: NeedResHdr, Check: hdrArgs, Fn: hdrFetch(dirRes, false)},
		Fetch{Name: "shdr", Max: 2, Out: TStr, Need: NeedResHdr, Check: hdrArgs, Fn: hdrFetch(dirRes, false)},
		Fetch{Name: "req.fhdr", Min: 1, Max: 2, Out: TStr, Need: NeedReqHdr, Check: hdrArgs, Fn: hdrFetch(dirReq, true)},
		Fetch{Name: "res.fhdr", Min: 1, Max: 2, Out: TStr, Need: NeedResHdr, Check: hdrArgs, Fn: hdrFetch(dirRes, true)},
		Fetch{Name: "hdr_cnt", Max: 1, Out: TSint, Need: NeedReqHdr, Fn: hdrCount(dirCurrent, false)},
		Fetch{Name: "req.hdr_cnt", Max: 1, Out: TSint, Need: NeedReqHdr, Fn: hdrCount(dirReq, false)},
		Fetch{Name: "res.hdr_cnt", Max: 1, Out: TSint, Need: NeedResHdr, Fn: hdrCount(dirRes, false)},
		Fetch{Name: "shdr_cnt", Max: 1, Out: TSint, Need: NeedResHdr, Fn: hdrCount(dirRes, false)},
		Fetch{Name: "req.fhdr_cnt", Max: 1, Out: TSint, Need: NeedReqHdr, Fn: hdrCount(dirReq, true)},
		Fetch{Name: "res.fhdr_cnt", Max: 1, Out: TSint, Need: NeedResHdr, Fn: hdrCount(dirRes, true)},
	)
}

// argBool reads bool()'s argument: true, false or an integer, as HAProxy.
func argBool(env *Env, a []Arg) error {
	switch a[0].S {
	case "true":
		a[0].I = 1
		return nil
	case "false":
		a[0].I = 0
		return nil
	}
	return argInt(env, a)
}

func argAddr(v4 bool) func(env *Env, a []Arg) error {
	return func(env *Env, a []Arg) error {
		ip, err := netip.ParseAddr(a[0].S)
		if err != nil || v4 && !ip.Is4() {
			kind := "ipv6"
			if v4 {
				kind = "ipv4"
			}
			return fmt.Errorf("failed to parse '%s' as type '%s' at position 1", a[0].S, kind)
		}
		if !v4 {
			ip = netip.AddrFrom16(ip.As16())
		}
		a[0].IP = netip.PrefixFrom(ip, ip.BitLen())
		return nil
	}
}

func fetchArgAddr(r *Request, a []Arg, s *Sample) bool {
	s.IP = a[0].IP.Addr()
	s.T = TIPv6
	if s.IP.Is4() {
		s.T = TIPv4
	}
	return true
}

// addrOf is an address's IP (as ipv4 when it is one, mapped or not) or its
// port.
// serverUp says whether the stream has its server connection.
func serverUp(r *Request) bool {
	ci, ok := r.Stream.(ConnInfo)
	if !ok {
		return false
	}
	_, _, up := ci.ServerAddrs()
	return up
}

// successText is HAProxy's text for a connection without error; read
// only.
var successText = []byte("Success")

func protoHTTP(r *Request, a []Arg, s *Sample) bool {
	if r.request() == nil && partial(r, false) {
		// A tcp stream's request may be on its way: no answer yet.
		return false
	}
	s.setBool(r.request() != nil)
	return true
}

func addrOf(a net.Addr, s *Sample, port bool) bool {
	var ap netip.AddrPort
	switch x := a.(type) {
	case *net.TCPAddr:
		ap = x.AddrPort()
	case *net.UDPAddr:
		ap = x.AddrPort()
	default:
		return false
	}
	if port {
		s.setInt(int64(ap.Port()))
		return true
	}
	ip := ap.Addr().Unmap()
	s.IP, s.T = ip, TIPv6
	if ip.Is4() {
		s.T = TIPv4
	}
	return true
}

func reqPart(part func(h *http1.Head) []byte) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := r.request()
		if h == nil {
			return false
		}
		s.setStr(part(h))
		return true
	}
}

func resPart(part func(h *http1.Head) []byte) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := r.response()
		if h == nil {
			return false
		}
		s.setStr(part(h))
		return true
	}
}

func pathq(h *http1.Head) []byte {
	p := h.Path()
	if q := h.Query(); q != nil {
		// The path and its query are contiguous in the request line.
		u := h.URI()
		if i := bytes.Index(u, p); i >= 0 {
			return u[i:]
		}
	}
	return p
}

// version is the message's HTTP version without "HTTP/".
func version(h *http1.Head) []byte {
	v := h.Version()
	if len(v) > 5 {
		return v[5:]
	}
	return v
}

type hdrDir uint8

const (
	dirCurrent hdrDir = iota
	dirReq
	dirRes
)

func (d hdrDir) head(r *Request) *http1.Head {
	switch d {
	case dirReq:
		return r.request()
	case dirRes:
		return r.response()
	}
	return r.Head
}

// hdrArgs reads <name>[,<occurrence>].
func hdrArgs(env *Env, a []Arg) error {
	if len(a) > 0 {
		a[0].S = strings.ToLower(a[0].S)
	}
	if len(a) > 1 {
		n, ok := parseSint([]byte(a[1].S))
		if !ok {
			return fmt.Errorf("failed to parse '%s' as type 'integer' at position 2", a[1].S)
		}
		a[1].I = n
	}
	return nil
}

// hdrValues walks a header's values: with full, each field's whole value;
// otherwise each comma-separated element, trimmed, as HAProxy's hdr()
// sees them. With name "", every field counts.
func hdrValues(h *http1.Head, name string, full bool, fn func(v []byte) bool) {
	for i := 0; i < h.NumFields(); i++ {
		if name != "" {
			if i = h.Index(name, i); i < 0 {
				return
			}
		} else if h.Deleted(i) {
			continue
		}
		v := h.Value(i)
		if full {
			// A value a rule set may end in blanks, which HAProxy's
			// header lookup leaves out.
			if fn(bytes.Trim(v, " \t\r\n")) {
				return
			}
			continue
		}
		for {
			j := bytes.IndexByte(v, ',')
			el := v
			if j >= 0 {
				el = v[:j]
			}
			if fn(bytes.TrimSpace(el)) {
				return
			}
			if j < 0 {
				break
			}
			v = v[j+1:]
		}
	}
}

// hdrFetch is hdr() and its kin: the occurrence asked for (negative from
// the end; the last by default), or, for an ACL, every occurrence in turn.
func hdrFetch(d hdrDir, full bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := d.head(r)
		if h == nil {
			return false
		}
		name := ""
		if len(a) > 0 {
			name = a[0].S
		}
		occ := int64(-1)
		if len(a) > 1 {
			occ = a[1].I
		}
		if s.iter && len(a) < 2 {
			// The pos-th occurrence, and whether another follows.
			k, want := 0, s.pos
			found := false
			hdrValues(h, name, full, func(v []byte) bool {
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
		if occ < 0 {
			total := int64(0)
			hdrValues(h, name, full, func([]byte) bool { total++; return false })
			occ = total + occ + 1
			if occ <= 0 {
				return false
			}
		}
		if occ == 0 {
			return false
		}
		k := int64(0)
		found := false
		hdrValues(h, name, full, func(v []byte) bool {
			k++
			if k == occ {
				s.setStr(v)
				found = true
				return true
			}
			return false
		})
		return found
	}
}

func hdrCount(d hdrDir, full bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		h := d.head(r)
		if h == nil {
			return false
		}
		name := ""
		if len(a) > 0 {
			name = strings.ToLower(a[0].S)
		}
		n := int64(0)
		hdrValues(h, name, full, func([]byte) bool { n++; return false })
		s.setInt(n)
		return true
	}
}

// fetchMethod is the request's method; once the request head is gone (in
// a log line) the request line the stream kept tells it, as HAProxy keeps
// the method with the transaction.
func fetchMethod(r *Request, a []Arg, s *Sample) bool {
	if h := r.request(); h != nil {
		s.setStr(h.ReceivedMethod())
		return true
	}
	line, ok := capturedLine(r)
	if !ok {
		return false
	}
	if i := bytes.IndexByte(line, ' '); i >= 0 {
		line = line[:i]
	}
	s.setStr(line)
	return true
}
