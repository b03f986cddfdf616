package sample

import (
	"fmt"
	"net"
	"net/netip"
)

// Fetches of the connection (HAProxy's sections 7.3.3 and 7.3.5): its
// addresses, the kernel's view of the client socket, and the raw bytes a
// TCP stream has buffered (payloads, a TLS ClientHello, an RDP cookie).

// TCPInfo is what the kernel tells of a TCP socket (Linux's TCP_INFO):
// times in microseconds, the rest in segments.
type TCPInfo struct {
	RTT, RTTVar                    uint32
	Unacked, Sacked, Lost, Retrans uint32
	Fackets, Reordering            uint32
}

// ConnInfo is the running process's side of the connection fetches.
type ConnInfo interface {
	// ClientTCPInfo fills ti from the client socket; false when the
	// connection is not a TCP socket.
	ClientTCPInfo(ti *TCPInfo) bool
	// ServerAddrs are the server connection's local and remote
	// addresses, once it is established.
	ServerAddrs() (local, remote net.Addr, ok bool)
}

// ProxyHeaderInfo is implemented by a Stream whose client connection may
// have begun with a PROXY protocol header (accept-proxy).
type ProxyHeaderInfo interface {
	// ProxyHeader reports whether one was received, and its version 2
	// AUTHORITY and UNIQUE_ID TLVs (nil when absent).
	ProxyHeader() (rcvd bool, authority, uniqueID []byte)
}

// PayloadInfo is implemented by a Stream that holds a TCP stream's
// buffered bytes when rules run (tcp-request content inspection). On HTTP
// streams HAProxy gives these fetches no sample, but req.len and res.len.
type PayloadInfo interface {
	Payload(res bool) (b []byte, ok bool)
}

func init() {
	RegisterFetches(
		Fetch{Name: "fc_src", Out: TIPv4, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.connClient(), s, false) }},
		Fetch{Name: "fc_src_port", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.connClient(), s, true) }},
		Fetch{Name: "fc_dst", Out: TIPv4, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.connLocal(), s, false) }},
		Fetch{Name: "fc_dst_port", Out: TSint, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool { return addrOf(r.connLocal(), s, true) }},
		Fetch{Name: "src_is_local", Out: TBool, Need: NeedL4, Fn: isLocal(false, false)},
		Fetch{Name: "fc_src_is_local", Out: TBool, Need: NeedL4, Fn: isLocal(false, true)},
		Fetch{Name: "dst_is_local", Out: TBool, Need: NeedL4, Fn: isLocal(true, false)},
		Fetch{Name: "fc_dst_is_local", Out: TBool, Need: NeedL4, Fn: isLocal(true, true)},
		Fetch{Name: "fc_rcvd_proxy", Out: TBool, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			pi, ok := r.Stream.(ProxyHeaderInfo)
			if !ok {
				return false
			}
			rcvd, _, _ := pi.ProxyHeader()
			s.setBool(rcvd)
			return true
		}},
		Fetch{Name: "fc_pp_authority", Out: TStr, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			return ppTLV(r, s, false)
		}},
		Fetch{Name: "fc_pp_unique_id", Out: TStr, Need: NeedL4, Fn: func(r *Request, a []Arg, s *Sample) bool {
			return ppTLV(r, s, true)
		}},
		Fetch{Name: "bc_src", Out: TIPv4, Need: NeedServerConn, Fn: serverAddr(false, false)},
		Fetch{Name: "bc_src_port", Out: TSint, Need: NeedServerConn, Fn: serverAddr(false, true)},
		Fetch{Name: "bc_dst", Out: TIPv4, Need: NeedServerConn, Fn: serverAddr(true, false)},
		Fetch{Name: "bc_dst_port", Out: TSint, Need: NeedServerConn, Fn: serverAddr(true, true)},

		tcpInfoFetch("fc_rtt", timeUnitArg, func(ti *TCPInfo) uint32 { return ti.RTT }),
		tcpInfoFetch("fc_rttvar", timeUnitArg, func(ti *TCPInfo) uint32 { return ti.RTTVar }),
		tcpInfoFetch("fc_unacked", nil, func(ti *TCPInfo) uint32 { return ti.Unacked }),
		tcpInfoFetch("fc_sacked", nil, func(ti *TCPInfo) uint32 { return ti.Sacked }),
		tcpInfoFetch("fc_retrans", nil, func(ti *TCPInfo) uint32 { return ti.Retrans }),
		tcpInfoFetch("fc_fackets", nil, func(ti *TCPInfo) uint32 { return ti.Fackets }),
		tcpInfoFetch("fc_lost", nil, func(ti *TCPInfo) uint32 { return ti.Lost }),
		tcpInfoFetch("fc_reordering", nil, func(ti *TCPInfo) uint32 { return ti.Reordering }),

		Fetch{Name: "wait_end", Out: TBool, Fn: func(r *Request, a []Arg, s *Sample) bool {
			// True once inspection is over; no sample before (the
			// rules then wait), as in HAProxy.
			if partial(r, false) || partial(r, true) {
				return false
			}
			s.setBool(true)
			return true
		}},
		payloadLen("req.len", false), payloadLen("req_len", false), payloadLen("res.len", true),
		payloadAt("req.payload", false), payloadAt("res.payload", true),
		payloadLV("req.payload_lv", false), payloadLV("res.payload_lv", true),
		helloFetch("req.ssl_hello_type", false, TSint, func(h *clientHello, s *Sample) bool { s.setInt(int64(h.hsType)); return true }),
		helloFetch("req_ssl_hello_type", false, TSint, func(h *clientHello, s *Sample) bool { s.setInt(int64(h.hsType)); return true }),
		helloFetch("res.ssl_hello_type", true, TSint, func(h *clientHello, s *Sample) bool { s.setInt(int64(h.hsType)); return true }),
		helloFetch("rep_ssl_hello_type", true, TSint, func(h *clientHello, s *Sample) bool { s.setInt(int64(h.hsType)); return true }),
		helloFetch("req.ssl_ver", false, TSint, helloVersion),
		helloFetch("req_ssl_ver", false, TSint, helloVersion),
		helloFetch("req.ssl_sni", false, TStr, helloSNI),
		helloFetch("req_ssl_sni", false, TStr, helloSNI),
		helloFetch("req.ssl_alpn", false, TStr, helloALPN),
		helloFetch("req.ssl_ec_ext", false, TBool, func(h *clientHello, s *Sample) bool {
			if !h.full {
				return false
			}
			s.setBool(h.ecExt)
			return true
		}),
		helloFetch("req.ssl_st_ext", false, TSint, func(h *clientHello, s *Sample) bool {
			if !h.full {
				return false
			}
			s.setInt(int64(h.stExt))
			return true
		}),
		Fetch{Name: "req.rdp_cookie", Max: 1, Out: TStr, Need: NeedReqBuf, Fn: fetchRDPCookie},
		Fetch{Name: "req_rdp_cookie", Max: 1, Out: TStr, Need: NeedReqBuf, Fn: fetchRDPCookie},
		Fetch{Name: "rdp_cookie", Max: 1, Out: TStr, Need: NeedReqBuf, Fn: fetchRDPCookie},
		Fetch{Name: "req.rdp_cookie_cnt", Max: 1, Out: TSint, Need: NeedReqBuf, Fn: rdpCookieCount},
		Fetch{Name: "req_rdp_cookie_cnt", Max: 1, Out: TSint, Need: NeedReqBuf, Fn: rdpCookieCount},
		Fetch{Name: "rdp_cookie_cnt", Max: 1, Out: TSint, Need: NeedReqBuf, Fn: rdpCookieCount},
	)
}

// isLocal says whether the client's (or the local) address belongs to
// this host, as HAProxy finds out: by binding a socket to it.
func isLocal(dst, fc bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		addr := r.Client
		switch {
		case dst && fc:
			addr = r.connLocal()
		case dst:
			addr = r.Local
		case fc:
			addr = r.connClient()
		}
		var ip Sample
		if !addrOf(addr, &ip, false) {
			return false
		}
		s.setBool(addrIsLocal(ip.IP))
		return true
	}
}

func addrIsLocal(ip netip.Addr) bool {
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func serverAddr(remote, port bool) func(r *Request, a []Arg, s *Sample) bool {
	return func(r *Request, a []Arg, s *Sample) bool {
		ci, ok := r.Stream.(ConnInfo)
		if !ok {
			return false
		}
		local, rem, ok := ci.ServerAddrs()
		if !ok {
			return false
		}
		if remote {
			return addrOf(rem, s, port)
		}
		return addrOf(local, s, port)
	}
}

// timeUnitArg reads fc_rtt's unit: ms (the default) or us.
func timeUnitArg(env *Env, a []Arg) error {
	if len(a) == 0 {
		return nil
	}
	switch a[0].S {
	case "ms":
		a[0].I = 1000
	case "us":
		a[0].I = 1
	default:
		return fmt.Errorf("expects 'us' or 'ms', got '%s'", a[0].S)
	}
	return nil
}

func tcpInfoFetch(name string, check func(*Env, []Arg) error, field func(*TCPInfo) uint32) Fetch {
	return Fetch{Name: name, Max: 1, Out: TSint, Need: NeedL4, Check: check, Fn: func(r *Request, a []Arg, s *Sample) bool {
		ci, ok := r.Stream.(ConnInfo)
		if !ok {
			return false
		}
		var ti TCPInfo
		if !ci.ClientTCPInfo(&ti) {
			return false
		}
		v := int64(field(&ti))
		if check != nil {
			div := int64(1000)
			if len(a) > 0 {
				div = a[0].I
			}
			v /= div
		}
		s.setInt(v)
		return true
	}}
}

// ppTLV is the PROXY header's AUTHORITY (uid false) or UNIQUE_ID TLV.
func ppTLV(r *Request, s *Sample, uid bool) bool {
	pi, ok := r.Stream.(ProxyHeaderInfo)
	if !ok {
		return false
	}
	_, auth, id := pi.ProxyHeader()
	if uid {
		auth = id
	}
	if auth == nil {
		return false
	}
	s.setStr(auth)
	return true
}

func payloadOf(r *Request, res bool) ([]byte, bool) {
	pi, ok := r.Stream.(PayloadInfo)
	if !ok {
		return nil, false
	}
	return pi.Payload(res)
}

// bufNeed is what a fetch of the received bytes needs.
func bufNeed(res bool) Need {
	if res {
		return NeedResBuf
	}
	return NeedReqBuf
}

func payloadLen(name string, res bool) Fetch {
	return Fetch{Name: name, Out: TSint, Need: bufNeed(res), Fn: func(r *Request, a []Arg, s *Sample) bool {
		b, ok := payloadOf(r, res)
		if ok {
			s.setInt(int64(len(b)))
			return true
		}
		// On an HTTP stream HAProxy counts the message's HTX form, which
		// rules see after the head (its body is not counted here).
		if r.Head != nil && r.Head.IsResponse() == res {
			s.setInt(int64(r.Head.HTXSize()))
			return true
		}
		return false
	}}
}

// payloadArgs reads <offset>,<length>, both non-negative integers.
func payloadArgs(env *Env, a []Arg) error {
	for i := 0; i < 2 && i < len(a); i++ {
		n, ok := parseSint([]byte(a[i].S))
		if !ok || n < 0 {
			return fmt.Errorf("failed to parse '%s' as type 'integer' at position %d", a[i].S, i+1)
		}
		a[i].I = n
	}
	return nil
}

// payloadAt is <length> bytes at <offset> (all that follows with length
// 0); no sample until that many are buffered.
func payloadAt(name string, res bool) Fetch {
	return Fetch{Name: name, Min: 2, Max: 2, Out: TBin, Need: bufNeed(res), Check: payloadArgs, Fn: func(r *Request, a []Arg, s *Sample) bool {
		b, ok := payloadOf(r, res)
		if !ok {
			return false
		}
		off, n := a[0].I, a[1].I
		if n == 0 {
			n = int64(len(b)) - off
		}
		if n <= 0 || off+n > int64(len(b)) {
			return false
		}
		s.T, s.B = TBin, b[off:off+n]
		return true
	}}
}

// payloadLV reads a length of <length> bytes (big-endian) at <offset1>,
// and returns that many bytes from <offset2>: absolute, or relative to
// the end of the length with a sign; right after it by default.
func payloadLV(name string, res bool) Fetch {
	check := func(env *Env, a []Arg) error {
		if err := payloadArgs(env, a); err != nil {
			return err
		}
		if a[1].I == 0 || a[1].I > 4 {
			return fmt.Errorf("payload length must be > 0 and <= 4 (got %d)", a[1].I)
		}
		if len(a) > 2 {
			n, ok := parseSint([]byte(a[2].S))
			if !ok {
				return fmt.Errorf("failed to parse '%s' as type 'integer' at position 3", a[2].S)
			}
			a[2].I = n
		}
		return nil
	}
	return Fetch{Name: name, Min: 2, Max: 3, Out: TBin, Need: bufNeed(res), Check: check, Fn: func(r *Request, a []Arg, s *Sample) bool {
		b, ok := payloadOf(r, res)
		if !ok {
			return false
		}
		off, ln := a[0].I, a[1].I
		if off+ln > int64(len(b)) {
			return false
		}
		var size int64
		for _, c := range b[off : off+ln] {
			size = size<<8 | int64(c)
		}
		start := off + ln
		if len(a) > 2 {
			if c := a[2].S[0]; c == '+' || c == '-' {
				start += a[2].I
			} else {
				start = a[2].I
			}
		}
		if start < 0 || size == 0 || start+size > int64(len(b)) {
			return false
		}
		s.T, s.B = TBin, b[start:start+size]
		return true
	}}
}

// clientHello is what the hello fetches read of a TLS handshake record.
type clientHello struct {
	hsType  byte
	version int64 // of the client hello: major<<16 | minor
	full    bool  // a client hello parsed to its extensions
	sni     []byte
	alpn    []byte // the protocol name list
	ecExt   bool
	stExt   int
}

// parseHello reads a TLS (SSLv3 or later) handshake record at the start
// of b; ok false when b does not hold a complete one.
func parseHello(b []byte) (h clientHello, ok bool) {
	if len(b) < 5+4 || b[0] != 0x16 || b[1] < 3 {
		return h, false
	}
	rlen := int(b[3])<<8 | int(b[4])
	if rlen < 4 || len(b) < 5+rlen {
		return h, false
	}
	rec := b[5 : 5+rlen]
	h.hsType = rec[0]
	hlen := int(rec[1])<<16 | int(rec[2])<<8 | int(rec[3])
	if hlen > len(rec)-4 {
		return h, false
	}
	m := rec[4 : 4+hlen]
	if h.hsType != 1 {
		return h, true
	}
	if len(m) < 2+32+1 {
		return h, false
	}
	h.version = int64(m[0])<<16 | int64(m[1])
	p := 34
	sid := int(m[p])
	if sid > 32 || p+1+sid > len(m) {
		return h, false
	}
	p += 1 + sid
	if p+2 > len(m) {
		return h, false
	}
	cs := int(m[p])<<8 | int(m[p+1])
	if cs < 2 || p+2+cs > len(m) {
		return h, false
	}
	p += 2 + cs
	if p+1 > len(m) || m[p] < 1 || p+1+int(m[p]) > len(m) {
		return h, false
	}
	p += 1 + int(m[p])
	if p+2 > len(m) {
		return h, true // no extensions
	}
	el := int(m[p])<<8 | int(m[p+1])
	p += 2
	if p+el > len(m) {
		return h, false
	}
	ext := m[p : p+el]
	for len(ext) >= 4 {
		t := int(ext[0])<<8 | int(ext[1])
		n := int(ext[2])<<8 | int(ext[3])
		if n > len(ext)-4 {
			return h, false
		}
		d := ext[4 : 4+n]
		switch t {
		case 0: // server_name: list length, type 0 (host_name), name length, name
			if len(d) >= 5 && d[2] == 0 {
				nl := int(d[3])<<8 | int(d[4])
				if 5+nl <= len(d) {
					h.sni = d[5 : 5+nl]
				}
			}
		case 10: // supported groups (elliptic curves)
			h.ecExt = true
		case 16: // ALPN: list length, then length-prefixed names
			if len(d) >= 3 {
				h.alpn = d[2:]
			}
		case 35: // session ticket
			h.stExt = 1
			if n > 0 {
				h.stExt = 2
			}
		}
		ext = ext[4+n:]
	}
	h.full = true
	return h, true
}

func helloFetch(name string, res bool, out Type, fn func(h *clientHello, s *Sample) bool) Fetch {
	return Fetch{Name: name, Out: out, Need: bufNeed(res), Fn: func(r *Request, a []Arg, s *Sample) bool {
		b, ok := payloadOf(r, res)
		if !ok {
			return false
		}
		h, ok := parseHello(b)
		if !ok {
			return false
		}
		return fn(&h, s)
	}}
}

func helloVersion(h *clientHello, s *Sample) bool {
	if h.hsType != 1 || h.version < 0x30000 {
		return false
	}
	s.setInt(h.version)
	return true
}

func helloSNI(h *clientHello, s *Sample) bool {
	if !h.full || h.sni == nil {
		return false
	}
	s.setStr(h.sni)
	return true
}

// helloALPN is the first protocol the client offers, or for an ACL each
// in turn.
func helloALPN(h *clientHello, s *Sample) bool {
	if !h.full || h.alpn == nil {
		return false
	}
	l := h.alpn
	p := 0
	if s.iter {
		p = s.pos
	}
	if p >= len(l) {
		return false
	}
	n := int(l[p])
	if p+1+n > len(l) {
		return false
	}
	s.setStr(l[p+1 : p+1+n])
	if s.iter {
		s.pos = p + 1 + n
		s.more = s.pos < len(l)
	}
	return true
}

// rdpCookie reads the cookie of an RDP connection request: after the 11
// bytes of its TPKT and X.224 headers, "Cookie: <name>=<value>\r\n".
func rdpCookie(b []byte, name string) ([]byte, bool) {
	if len(b) <= 11 {
		return nil, false
	}
	b = b[11:]
	if len(b) <= 7 || !eqFoldASCII(b[:7], "Cookie:") {
		return nil, false
	}
	b = b[7:]
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	if name != "" {
		if len(b) <= len(name) || b[len(name)] != '=' || !eqFoldASCII(b[:len(name)], name) {
			return nil, false
		}
		b = b[len(name)+1:]
	} else {
		i := 0
		for i < len(b) && b[i] != '=' {
			if b[i] == '\r' || b[i] == '\n' {
				return nil, false
			}
			i++
		}
		if i >= len(b) {
			return nil, false
		}
		b = b[i+1:]
	}
	i := 0
	for i < len(b) && b[i] != '\r' {
		i++
	}
	if i+2 > len(b) || b[i+1] != '\n' {
		return nil, false
	}
	return b[:i], true
}

func eqFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func fetchRDPCookie(r *Request, a []Arg, s *Sample) bool {
	b, ok := payloadOf(r, false)
	if !ok {
		return false
	}
	name := ""
	if len(a) > 0 {
		name = a[0].S
	}
	v, ok := rdpCookie(b, name)
	if !ok {
		return false
	}
	s.setStr(v)
	return true
}

func rdpCookieCount(r *Request, a []Arg, s *Sample) bool {
	b, ok := payloadOf(r, false)
	if !ok {
		return false
	}
	name := ""
	if len(a) > 0 {
		name = a[0].S
	}
	_, found := rdpCookie(b, name)
	s.setInt(0)
	if found {
		s.setInt(1)
	}
	return true
}
