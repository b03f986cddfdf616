package stream

import (
	"encoding/binary"
	"net"
	"net/netip"

	"goha/core"
	"goha/core/pool"

	"golang.org/x/sys/unix"
)

// newDirectServer is the server of a backend that does not balance
// (dispatch, option transparent): outside the picker and the stats, with
// its own pool, whose connections stay private to their client session.
func (proc *Process) newDirectServer(p *proxy) (*server, error) {
	s := &server{Server: core.NewDirectServer(p.Proxy), be: p, idx: -1, direct: p.Direct()}
	if err := proc.initServerPool(s, pool.ReuseNever); err != nil {
		return nil, err
	}
	return s, nil
}

// private says whether s's connections belong to the client session that
// opened them: HAProxy never shares those of dispatch and transparent
// backends, nor any under http-reuse never, but a session's later requests
// reuse its own. A connection that began with a PROXY header is shared
// with the streams that would send the same header (connkey.go), as in
// HAProxy 2.6.
func (s *server) private() bool {
	return s.direct != core.DirectNone || s.be.HTTPReuse == "never"
}

// maxSessionSrvConns is how many private connections a client session
// keeps, HAProxy's max-session-srv-conns default.
const maxSessionSrvConns = 10

// privConn is what server connections a client session keeps for its next
// requests, one per server at most. It is the session's own (one goroutine
// at a time serves it), so it needs no lock.
type privConn struct {
	kept []privEntry
}

type privEntry struct {
	srv   *server
	dst   netip.AddrPort // a transparent server's destination
	entry *pool.Entry[*srvConn]
}

// privKey is what, beside the server, a private connection is kept for:
// a transparent backend's destination, which varies per request.
func privKey(s *server, client net.Conn) netip.AddrPort {
	if s.direct != core.DirectTransparent {
		return netip.AddrPort{}
	}
	ap, _ := originalDst(client)
	return ap
}

// dstOf is the client connection as the exchange's rules left its
// destination.
func (hc *hconn) dstOf(c net.Conn) net.Conn {
	if hc.addrs.dst != nil {
		return dstConn{c, hc.addrs.dst}
	}
	return c
}

// take returns the connection kept for srv, and forgets it; nil when there
// is none or the server's connections were flushed since it was kept.
func (p *privConn) take(srv *server, dst netip.AddrPort) *pool.Entry[*srvConn] {
	for i, k := range p.kept {
		if k.srv != srv || k.dst != dst {
			continue
		}
		p.kept = append(p.kept[:i], p.kept[i+1:]...)
		if !srv.pool.Resume(k.entry) {
			return nil
		}
		return k.entry
	}
	return nil
}

// keep holds e for the session's next request to srv; beyond
// maxSessionSrvConns it is closed, as HAProxy closes it.
func (p *privConn) keep(srv *server, dst netip.AddrPort, e *pool.Entry[*srvConn]) {
	if len(p.kept) >= maxSessionSrvConns {
		srv.pool.Done(e)
		return
	}
	p.kept = append(p.kept, privEntry{srv, dst, e})
}

// close closes the kept connections.
func (p *privConn) close() {
	for _, k := range p.kept {
		k.srv.pool.Done(k.entry)
	}
	p.kept = nil
}

// dstConn is a client connection whose destination a rule changed.
type dstConn struct {
	net.Conn
	dst net.Addr
}

func (c dstConn) LocalAddr() net.Addr { return c.dst }

// originalDst is where the client meant to go: the destination netfilter
// rewrote (SO_ORIGINAL_DST, on a redirected connection), else the local
// address (or the PROXY protocol's destination) of the client connection.
func originalDst(c net.Conn) (netip.AddrPort, bool) {
	if r, ok := c.(*rawConn); ok {
		c = r.Conn
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if ap, ok := soOriginalDst(tc); ok {
			return ap, true
		}
	}
	if ta, ok := c.LocalAddr().(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
	}
	return netip.AddrPort{}, false
}

// soOriginalDst reads SO_ORIGINAL_DST (IPv4 only, as HAProxy reads it);
// it fails on a connection that no NAT rule redirected.
func soOriginalDst(tc *net.TCPConn) (netip.AddrPort, bool) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, false
	}
	var ap netip.AddrPort
	ok := false
	rc.Control(func(fd uintptr) {
		// The kernel fills a sockaddr_in; IPv6Mreq is 20 bytes of room.
		m, err := unix.GetsockoptIPv6Mreq(int(fd), unix.IPPROTO_IP, unix.SO_ORIGINAL_DST)
		if err != nil {
			return
		}
		b := m.Multiaddr[:]
		if binary.NativeEndian.Uint16(b[0:2]) != unix.AF_INET {
			return
		}
		port := binary.BigEndian.Uint16(b[2:4])
		ap = netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
		ok = true
	})
	return ap, ok
}
