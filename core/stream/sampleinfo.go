package stream

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"goha/core"
	"goha/core/diag"
	"goha/core/sample"
)

// sampleStream is what sample fetches learn of a stream from the running
// process (sample.Stream and its optional interfaces): names and ids, the
// figures of proxies and servers, the client socket and its TLS state.
// A stream fills one and hands it in the sample.Request of its rules;
// every field is read-only while rules run.
type sampleStream struct {
	proc  *Process
	si    *streamInfo
	ent   *streamEntry // the stream's entry: listener and raw socket; nil if unknown
	conn  net.Conn     // the client connection as served, TLS layer included
	first bool         // the first request of its connection
	shard int
	insp  *inspection // the client's bytes under tcp-request content inspection; nil if none
	trk   *tracking   // the stick counters the stream updates; nil if none
	// srvConn is a tcp stream's server connection once connected.
	srvConn net.Conn
	// resInsp is the server's bytes under tcp-response content
	// inspection; nil if none.
	resInsp *inspection
	// The request's body read by option http-buffer-request or
	// wait-for-body (bodyOK), the response's by wait-for-body.
	body, resBody     []byte
	bodyOK, resBodyOK bool
	comp              *compState // the exchange's compression; nil before the request selects
}

// newSampleStream describes the stream si of proc, served on conn.
func newSampleStream(proc *Process, si *streamInfo, ent *streamEntry, conn net.Conn, first bool, shard int) sampleStream {
	return sampleStream{proc: proc, si: si, ent: ent, conn: conn, first: first, shard: shard}
}

var (
	_ sample.Stream           = (*sampleStream)(nil)
	_ sample.ProxyInfo        = (*sampleStream)(nil)
	_ sample.TxnInfo          = (*sampleStream)(nil)
	_ sample.ConnInfo         = (*sampleStream)(nil)
	_ sample.TLSInfo          = (*sampleStream)(nil)
	_ sample.FrontCertInfo    = (*sampleStream)(nil)
	_ sample.BackTLSInfo      = (*sampleStream)(nil)
	_ sample.ClientVerifyInfo = (*sampleStream)(nil)
	_ sample.Streamless       = (*sampleStream)(nil)
	_ sample.CaptureInfo      = (*sampleStream)(nil)
	_ sample.UniqueIDInfo     = (*sampleStream)(nil)
	_ sample.StickCounters    = (*sampleStream)(nil)
	_ sample.FrontendInfo     = (*sampleStream)(nil)
	_ sample.RuleInfo         = (*sampleStream)(nil)
	_ sample.CompInfo         = (*sampleStream)(nil)
)

func (ss *sampleStream) LastRule() (string, int, bool) {
	if ss.si.lastRule == nil {
		return "", 0, false
	}
	return ss.si.lastRule.File, ss.si.lastRule.Line, true
}

// decided records rule pos as the one that decided for the stream v runs
// rules for.
func decided(v *sample.Request, pos *diag.Pos) {
	if ss, ok := v.Stream.(*sampleStream); ok {
		ss.si.lastRule = pos
	}
}

func (ss *sampleStream) Frontend() (string, int) {
	if ss.si.fe == nil {
		return "", 0
	}
	return ss.si.fe.Name, ss.si.fe.ID
}

func (ss *sampleStream) Backend() (string, int, bool) {
	if ss.si.be == nil {
		return "", 0, false
	}
	return ss.si.be.Name, ss.si.be.ID, true
}

// Captured reads the stream's capture slots.
func (ss *sampleStream) Captured(res bool, id int) ([]byte, bool) {
	return ss.si.caps.get(res, id)
}

// Streamless: an HTTP request that ended before its head was parsed is
// logged by HAProxy from its connection, without a stream or a backend.
func (ss *sampleStream) Streamless() bool {
	return ss.si.fe != nil && ss.si.fe.Mode == core.ModeHTTP && len(ss.si.reqLine) == 0
}

func (ss *sampleStream) Server() (string, int, bool) {
	if ss.si.srv == nil {
		return "", 0, false
	}
	return ss.si.srv.Name, ss.si.srv.ID, true
}

// Listener is the bind line the connection came through; its id is its
// place among the frontend's bind lines, from 1, as HAProxy numbers a
// frontend's listeners when each bind line has one address.
// DefaultBackend is the frontend's default_backend (fe_defbe).
func (ss *sampleStream) DefaultBackend() (string, bool) {
	if fe := ss.si.fe; fe != nil && fe.defBE != nil {
		return fe.defBE.Name, true
	}
	return "", false
}

// ListenerConns is the client's listener's current connections (dst_conn).
func (ss *sampleStream) ListenerConns() (int64, bool) {
	if ss.ent == nil || ss.ent.l == nil || ss.ent.l.bind == nil {
		return 0, false
	}
	return ss.ent.l.bind.Counters.Scur.Load(), true
}

func (ss *sampleStream) Listener() (string, int, bool) {
	if ss.ent == nil || ss.ent.l == nil || ss.ent.l.bind == nil {
		return "", 0, false
	}
	b := ss.ent.l.bind
	id := 0
	if fe := ss.si.fe; fe != nil {
		for i, x := range fe.Binds {
			if x == b {
				id = i + 1
				break
			}
		}
	}
	return b.Name, id, true
}

func (ss *sampleStream) Stopping() bool { return ss.proc.stoppingNow() }
func (ss *sampleStream) Thread() int    { return max(ss.shard, 0) }

func (ss *sampleStream) FirstRequest() bool { return ss.first }

func (ss *sampleStream) RequestLine() ([]byte, bool) {
	return ss.si.reqLine, ss.si.reqLine != nil
}

// proxyNamed finds a proxy by name with one of the capabilities in cap;
// "" is the stream's backend, or its frontend before one is chosen.
func (ss *sampleStream) proxyNamed(name string, cap core.Cap) *proxy {
	if name == "" {
		if ss.si.be != nil && cap&core.CapBE != 0 {
			return ss.si.be
		}
		return ss.si.fe
	}
	for _, px := range ss.proc.proxies {
		if px.Name == name && px.Cap&cap != 0 {
			return px
		}
	}
	return nil
}

func msOf(d time.Duration) int64 { return d.Milliseconds() }

// usable lists a backend's servers the load balancer may pick.
func usable(px *proxy) []*server {
	if px.rt == nil {
		return nil
	}
	var out []*server
	for _, s := range px.rt.servers() {
		if s.LBUsable() {
			out = append(out, s)
		}
	}
	return out
}

func (ss *sampleStream) ProxyStat(name string, st sample.ProxyStat) (int64, bool) {
	now := time.Now()
	switch st {
	case sample.FeConn, sample.FeSessRate, sample.FeReqRate, sample.FeClientTmo:
		px := ss.proxyNamed(name, core.CapFE)
		if name == "" {
			px = ss.si.fe
		}
		if px == nil {
			return 0, false
		}
		switch st {
		case sample.FeConn:
			return px.FE.Scur.Load(), true
		case sample.FeSessRate:
			return px.FE.SessRate.Rate(now), true
		case sample.FeReqRate:
			return px.FE.ReqRate.Rate(now), true
		default:
			return msOf(px.Timeouts.Client), true
		}
	}
	px := ss.proxyNamed(name, core.CapBE)
	if px == nil {
		return 0, false
	}
	switch st {
	case sample.BeConn:
		return px.BE.Scur.Load(), true
	case sample.BeSessRate:
		return px.BE.SessRate.Rate(now), true
	case sample.BeQueue:
		return px.BE.Qcur.Load(), true
	case sample.BeNbSrv:
		return int64(len(usable(px))), true
	case sample.BeAvgQueue:
		n := int64(len(usable(px)))
		q := px.BE.Qcur.Load()
		if n > 0 {
			return (q + n - 1) / n, true
		}
		return 2 * q, true
	case sample.BeConnFree:
		free := int64(0)
		for _, s := range usable(px) {
			mc := int64(s.MaxConnLive())
			if mc == 0 {
				free = -1
				continue
			}
			if cur := s.Counters.Scur.Load(); mc > cur && free >= 0 {
				free += mc - cur
			}
		}
		return free, true
	case sample.BeConnSlots:
		slots := int64(0)
		if px.rt != nil {
			for _, s := range px.rt.servers() {
				if s.OpState() == core.OpStopped {
					continue
				}
				if s.MaxConnLive() == 0 || s.MaxQueue == 0 {
					return -1, true
				}
				slots += int64(s.MaxConnLive()) - s.Counters.Scur.Load() + int64(s.MaxQueue) - s.Counters.Qcur.Load()
			}
		}
		return slots, true
	case sample.BeServerTmo:
		return msOf(px.Timeouts.Server), true
	case sample.BeTunnelTmo:
		return msOf(px.Timeouts.Tunnel), true
	}
	return 0, false
}

func (ss *sampleStream) ServerStat(be, name string, st sample.ServerStat) (int64, bool) {
	px := ss.proxyNamed(be, core.CapBE)
	if px == nil || px.rt == nil {
		return 0, false
	}
	var s *server
	for _, x := range px.rt.servers() {
		if x.Name == name {
			s = x
			break
		}
	}
	if s == nil {
		return 0, false
	}
	switch st {
	case sample.SrvIsUp:
		if s.AdminState()&core.AdminMaint == 0 && s.OpState() == core.OpRunning {
			return 1, true
		}
		return 0, true
	case sample.SrvConn:
		return s.Counters.Scur.Load(), true
	case sample.SrvConnFree:
		mc, cur := int64(s.MaxConnLive()), s.Counters.Scur.Load()
		if mc == 0 {
			return -1, true
		}
		return max(mc-cur, 0), true
	case sample.SrvQueue:
		return s.Counters.Qcur.Load(), true
	case sample.SrvSessRate:
		return s.Counters.SessRate.Rate(time.Now()), true
	case sample.SrvWeight:
		return int64(s.EWeight()), true
	case sample.SrvIWeight:
		return int64(s.IWeight), true
	case sample.SrvUWeight:
		return int64(s.UWeight()), true
	}
	return 0, false
}

// ClientTCPInfo reads TCP_INFO from the accepted socket, under any TLS
// layer or PROXY header.
func (ss *sampleStream) ClientTCPInfo(ti *sample.TCPInfo) bool {
	if ss.ent == nil || ss.ent.sock == nil {
		return false
	}
	sc, ok := ss.ent.sock.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var info *unix.TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) {
		info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || serr != nil {
		return false
	}
	*ti = sample.TCPInfo{
		RTT: info.Rtt, RTTVar: info.Rttvar,
		Unacked: info.Unacked, Sacked: info.Sacked, Lost: info.Lost, Retrans: info.Retrans,
		Fackets: info.Fackets, Reordering: info.Reordering,
	}
	return true
}

// ServerAddrs is not known to the stream's record: the bc_* fetches give
// no sample.
// ServerAddrs are the server connection's addresses: a tcp stream's, or
// an HTTP exchange's while it has one.
func (ss *sampleStream) ServerAddrs() (net.Addr, net.Addr, bool) {
	c := ss.srvConn
	if c == nil && ss.si.hc != nil {
		if sc := ss.si.hc.srvc.Load(); sc != nil {
			c = sc.Conn
		}
	}
	if c == nil {
		return nil, nil, false
	}
	return c.LocalAddr(), c.RemoteAddr(), true
}

// TLSState is the client connection's handshake, when it is TLS.
func (ss *sampleStream) TLSState() *tls.ConnectionState {
	return connTLSState(ss.conn)
}

// tlsConnOf finds the TLS layer of a connection under goha's wrappers.
func tlsConnOf(c net.Conn) *tls.Conn {
	for c != nil {
		switch x := c.(type) {
		case *tls.Conn:
			return x
		case *srvConn:
			c = x.Conn
		default:
			var ok bool
			if c, ok = innerConn(c); !ok {
				return nil
			}
		}
	}
	return nil
}

// BackendTLSState is the server connection's handshake, when it is TLS.
func (ss *sampleStream) BackendTLSState() *tls.ConnectionState {
	c := ss.srvConn
	if c == nil && ss.si.hc != nil {
		if sc := ss.si.hc.srvc.Load(); sc != nil {
			c = sc.Conn
		}
	}
	return connTLSState(c)
}

func (ss *sampleStream) bind() *core.Bind {
	if ss.ent == nil || ss.ent.l == nil {
		return nil
	}
	return ss.ent.l.bind
}

// FrontCertificate is the certificate the bind presented to the client:
// crypto/tls does not tell, so the bind's choice is made again from the
// client's SNI.
func (ss *sampleStream) FrontCertificate() *x509.Certificate {
	cs := ss.TLSState()
	b := ss.bind()
	if cs == nil || b == nil {
		return nil
	}
	// The store's certificates carry their parsed leaf.
	if crt := b.Certificate(cs.ServerName); crt != nil {
		return crt.Leaf
	}
	return nil
}

// ClientVerify verifies the client's chain again, as the handshake did
// (with the crt-list line's own options when the line has some), for
// the figures the handshake does not keep.
func (ss *sampleStream) ClientVerify() (verify, crtErr, caErr, caDepth int) {
	cs := ss.TLSState()
	b := ss.bind()
	if cs == nil || b == nil || len(cs.PeerCertificates) == 0 {
		return 0, 0, 0, 0
	}
	cv := b.ClientVerifyFor(cs.ServerName)
	if cv == nil {
		return 0, 0, 0, 0
	}
	raw := make([][]byte, len(cs.PeerCertificates))
	for i, c := range cs.PeerCertificates {
		raw[i] = c.Raw
	}
	return cv.Result(raw, time.Now())
}

// Timeouts are the stream's timeouts, set-timeout's included.
func (ss *sampleStream) Timeouts() (feClient, beServer, beTunnel, curServer, curTunnel time.Duration, ok bool) {
	feClient = ss.si.fe.Timeouts.Client
	be := ss.si.be
	if be == nil && ss.si.fe.IsBackend() {
		// A listen section is its own backend from the start.
		be = ss.si.fe
	}
	if be == nil {
		return feClient, 0, 0, 0, 0, false
	}
	beServer, beTunnel = be.Timeouts.Server, be.Timeouts.Tunnel
	curServer, curTunnel = beServer, beTunnel
	if hc := ss.si.hc; hc != nil {
		if hc.srvTimeout > 0 {
			curServer = hc.srvTimeout
		}
		if hc.tunTimeout > 0 {
			curTunnel = hc.tunTimeout
		}
	}
	return feClient, beServer, beTunnel, curServer, curTunnel, true
}

// ProxyHeader is what the client connection's PROXY protocol header
// said, when it began with one.
func (ss *sampleStream) ProxyHeader() (rcvd bool, authority, uniqueID []byte) {
	return connProxyHeader(ss.conn)
}
