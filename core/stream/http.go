package stream

import (
	"bytes"
	"context"
	"errors"
	"goha/core"
	"goha/core/sample"
	"goha/core/stick"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"goha/core/check"
	"goha/core/http1"
	"goha/core/lb"
	"goha/core/pool"
)

// The HTTP/1.1 stream: one goroutine per client connection reads requests,
// routes each to a backend and server, and relays the exchange. The parser
// works in place on the connection's buffer; a request stays in the buffer
// until its response head has arrived, so that a stale pooled server
// connection can be replaced and the request sent again.

// hconn is a client connection's reusable state.
type hconn struct {
	scratch         []byte        // evaluated rule values
	out             []byte        // responses built by return rules
	si              streamInfo    // the exchange being served
	dl              connDeadlines // client connection
	idleLeft        time.Duration // keep-alive time left when parking
	req, resp       http1.Head
	reqBody, rsBody http1.Body
	rwReq, rwResp   http1.Rewriter
	reqLine         []byte
	tSent           time.Time  // when the request went to the server (Tr counts from it)
	respRedir       *httpRule  // the http-response redirect that replaces the response
	respReply       *httpRule  // the http-response deny or return that replaces it
	cs              *connState // the connection served
	raw             rawConn    // the client socket with raw reads and writes
	sess            sessLink   // the exchange's place among its server's sessions

	// shutdown sessions: the exchange's server connection, and whether
	// an operator killed the exchange (see kill).
	srvc   atomic.Pointer[srvConn]
	killed atomic.Bool
	// abort is option abortonclose's state for the exchange (abortIdle,
	// abortDone, abortRespStarted): the client's close and the response's
	// head race for it, and the first one decides.
	abort atomic.Uint32

	// reqPending is what of the request being sent is still at the front
	// of the client buffer: it stays there until the response head
	// arrives, so that a stale pooled connection can be retried.
	reqPending int

	cache cacheTxn // the HTTP cache's state of the exchange

	// The two sides of a body being streamed, with their inactivity
	// timeouts re-armed as it moves.
	cliIO, srvIO activeConn

	proc *Process // for the soft stop, which closes after the response
	// ent is the connection's place in show sess, which each exchange
	// keeps up to date.
	ent *streamEntry
	// priv is the session's private server connection (see privConn),
	// kept in the connection's state so that it outlives parking.
	priv *privConn
	// vars are the session's variables (kept in the connection's state,
	// like priv); view is what rules and expressions read, kept here so
	// that its scratch space is reused; rs is the rules' scratch.
	vars *sample.Vars
	// track is the exchange's stick counters; its sess is the
	// connection's (connState.trk).
	track tracking
	// trackEnded: the exchange's tracking ended (endTracking), before
	// the last write when the reply goes out in one.
	trackEnded bool
	// stores are the keys stick store rules took, recorded with the
	// server once it answers.
	stores []pendingStore
	view   sample.Request
	rs     ruleScratch
	// addrs are the exchange's addresses as set-src and set-dst left
	// them; srvTimeout and tunTimeout are set-timeout's, 0 when unset.
	addrs                  connAddrs
	srvTimeout, tunTimeout time.Duration
	ss                     sampleStream // what sample fetches learn of the exchange
	caps                   captures     // the exchange's capture slots
	// uidBuf holds the exchange's unique id; uidReq is what its format's
	// expressions read, apart from view's scratch space.
	uidBuf []byte
	uidReq sample.Request
	hints  []byte // the 103 response early-hint rules are building
	bw     bodyWait
	// roomReq and roomResp count the messages' buffer space for
	// rewrites; room is the one of the rules running, nil outside them.
	roomReq, roomResp htxRoom
	room              *htxRoom
	comp              compState // the exchange's HTTP compression (comp.go)
}

// dropRequest drops the request being answered from the client buffer.
func (hc *hconn) dropRequest(cbuf *http1.Buffer) {
	if hc.reqPending > 0 {
		cbuf.Discard(hc.reqPending)
		hc.reqPending = 0
	}
}

// Close kills the exchange for "shutdown sessions server": as in HAProxy,
// the server side is cut, so that the client gets a 502 (or a cut
// response if one is under way) and its connection goes on. It runs on
// the operator's goroutine, under the session list's lock, so it cannot
// reach an exchange that has already left the list.
func (hc *hconn) Close() error {
	hc.killed.Store(true)
	if sc := hc.srvc.Swap(nil); sc != nil {
		sc.Conn.Close()
	}
	return nil
}

// keepServerConn says whether the exchange's server connection may go
// back to the pool: not when the exchange was killed, which closed it.
func (hc *hconn) keepServerConn() bool {
	return hc.srvc.Swap(nil) != nil
}

var hconnPool = newCountedPool("hconn", int(unsafe.Sizeof(hconn{})), func() *hconn { return &hconn{} })

// quietIdle is how long a pooled server connection may have been idle and
// still have its next request sent with deferWrite. A server that closed
// it meanwhile normally answers the request with a reset, which wakes the
// read; one that lingers (half-closed, reading and dropping what comes)
// would leave the read waiting for the server timeout, so a connection
// idle longer than servers close after is read first, which finds the
// close at once.
const quietIdle = 50 * time.Millisecond

type errStatus struct {
	status int
	term   [2]byte
}

// serveHTTP serves requests on a client connection. It returns true when
// the connection was parked idle (its state now belongs to the parker),
// false when it must be closed.
func (proc *Process) serveHTTP(cs *connState) bool {
	fe, c := cs.l.fe, cs.c
	hc := hconnPool.Get()
	defer hconnPool.Put(hc)
	// A TLS connection too goes through hc.raw (plain reads and
	// writes), which counts the bytes.
	hc.raw.Conn = c
	hc.proc = proc
	hc.raw.io.initRaw(c)
	c = &hc.raw
	hc.ent = &cs.ent
	hc.priv = &cs.priv
	hc.vars = &cs.vars
	hc.cs = cs
	hc.track.sess = &cs.trk
	cs.ent.setHTTP(hc)
	defer func() {
		// Off the registry before hc goes back to its pool: a kill
		// must not reach the connection hc serves next.
		cs.ent.setHTTP(nil)
		hc.ent, hc.priv, hc.vars, hc.cs = nil, nil, nil, nil
		hc.track = tracking{}
		hc.view.Clear() // its scratch space stays with the pooled hconn
		hc.ss = sampleStream{}
		hc.raw.takeBytes(&fe.FE)
		hc.raw.Conn, hc.raw.io.rc = nil, nil
		hc.cliIO, hc.srvIO = activeConn{}, activeConn{}
		hc.proc = nil
	}()
	hc.dl = connDeadlines{}
	cbuf := bufPool.Get()
	defer bufPool.Put(cbuf)
	cbuf.Reset()
	if len(cs.pending) > 0 {
		cbuf.Fill(bytes.NewReader(cs.pending))
		cs.pending = nil
	}
	hc.req.MaxSize = proc.Conf.Global.BufSize - proc.Conf.Global.MaxRewrite
	hc.resp.MaxSize = hc.req.MaxSize
	ctx := ctxStop(proc)
	var clientIP netip.Addr
	if ta, ok := cs.src.(*net.TCPAddr); ok {
		a, _ := netip.AddrFromSlice(ta.IP)
		clientIP = a.Unmap()
	}
	accepted := cs.start
	return hc.raw.io.runSession(func() bool {
		for {
			keep, park := proc.httpExchange(ctx, fe, c, cbuf, hc, cs.shard, !cs.notFirst, clientIP, accepted)
			hc.raw.takeBytes(&fe.FE)
			if park && proc.parkHTTP(cs, hc.idleLeft) {
				return true
			}
			// A response sent before the stop promised the client
			// another request: it is served, with a close (see
			// readRequest for how long it is waited for).
			if !keep {
				return false
			}
			cs.notFirst = true
			accepted = time.Now()
			cs.ent.setPhase(PhaseRequest, accepted)
		}
	})
}

// parkHTTP hands an idle keep-alive connection to the parker. left is the
// keep-alive time still allowed.
func (proc *Process) parkHTTP(cs *connState, left time.Duration) bool {
	pk := proc.idle
	if pk == nil || proc.stoppingNow() {
		return false
	}
	var deadline time.Time
	if left > 0 {
		deadline = time.Now().Add(left)
	}
	return pk.park(cs.c, deadline, func() {
		cs.start = time.Now()
		proc.runHTTP(cs)
	}, func() { proc.endConn(cs) })
}

// readRequest reads and parses a request head. It returns false when the
// connection must close, after answering and logging if needed.
func (proc *Process) readRequest(fe *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, first bool, si *streamInfo) (n int, ok, park bool) {
	wait := fe.Timeouts.HTTPRequest
	if !first && cbuf.Len() == 0 && fe.Timeouts.HTTPKeepAlive > 0 {
		wait = fe.Timeouts.HTTPKeepAlive
	}
	if wait == 0 {
		wait = fe.Timeouts.Client
	}
	// Between requests, wait at most parkAfter here; a connection idle
	// longer than that is parked (see idle.go).
	// A stopping process waits that long too, then closes: the client of
	// a keep-alive response sent before the stop may have its next
	// request on the way.
	hot := !first && cbuf.Len() == 0 && (proc.idle != nil || proc.stoppingNow()) && (wait == 0 || wait > parkAfter)
	idleFrom := time.Now()
	if hot {
		// When to park is no timeout a client sees: a wide slack keeps
		// a busy connection from re-arming its timer on every request.
		hc.dl.read.armWithin(c.SetReadDeadline, idleFrom, parkAfter, parkAfter/2)
	} else {
		hc.dl.armRead(c, idleFrom, wait)
	}
	// A new message: forget any partial parse (the Head would resume it).
	hc.req.Reset()
	rearm := false
	for {
		if cbuf.Len() > 0 {
			n, err := hc.req.ParseRequest(cbuf.Bytes())
			if err != nil {
				var he *http1.Error
				st := 400
				if errors.As(err, &he) {
					st = he.Status()
				}
				proc.recordError(fe, nil, cbuf.Bytes(), he, si.client)
				fe.FE.Ereq.Add(1)
				si.status, si.term = st, [2]byte{'P', 'R'}
				si.headless = true
				proc.replyError(fe, c, st, http1.ConnClose, si)
				return 0, false, false
			}
			if n > 0 {
				return n, true, false
			}
		}
		if rearm {
			// The next request began: the rest of its head is under
			// http-request's timeout. Most heads arrive whole, so
			// this is done only when one has not.
			rearm = false
			to := fe.Timeouts.HTTPRequest
			if to == 0 {
				to = fe.Timeouts.Client
			}
			hc.dl.armRead(c, time.Now(), to)
		}
		_, err := cbuf.Fill(c)
		if err == nil && hot {
			hot, rearm = false, true
		}
		if err != nil {
			if hot && cbuf.Len() == 0 && isTimeout(err) {
				hc.idleLeft = 0
				if wait > 0 {
					// The park came up to the slack after parkAfter: the
					// keep-alive timeout counts from the wait's start.
					hc.idleLeft = max(wait-time.Since(idleFrom), time.Nanosecond)
				}
				return 0, false, true
			}
			if cbuf.Len() == 0 {
				// Closed or timed out between requests: nothing to log.
				return 0, false, false
			}
			if isTimeout(err) {
				fe.FE.Ereq.Add(1)
				si.status, si.term = 408, [2]byte{'c', 'R'}
				si.headless = true
				proc.replyError(fe, c, 408, http1.ConnClose, si)
				return 0, false, false
			}
			fe.FE.Ereq.Add(1)
			fe.FE.CliAbrt.Add(1)
			si.term = [2]byte{'C', 'R'}
			si.status = -1
			proc.logHTTP(si)
			return 0, false, false
		}
	}
}

// httpExchange serves one request. It returns whether the client
// connection may carry another one.
func (proc *Process) httpExchange(ctx context.Context, fe *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, shard int, first bool, clientIP netip.Addr, start time.Time) (keep, park bool) {
	hc.si = streamInfo{accept: start, client: hc.cs.src, fe: fe, term: [2]byte{'-', '-'}}
	hc.addrs = connAddrs{}
	if hc.cs.dstMoved {
		hc.addrs.dst = hc.cs.dst
	}
	hc.srvTimeout, hc.tunTimeout = 0, 0
	hc.cache = cacheTxn{}
	hc.respRedir, hc.respReply = nil, nil
	hc.killed.Store(false)
	hc.abort.Store(abortIdle)
	si := &hc.si
	// The stream's expressions, its log line's included, read view from
	// the start: a request refused before its head was parsed is logged
	// too.
	view := &hc.view
	view.Clear()
	hc.cs.view(view)
	view.Vars = hc.vars
	hc.ss = newSampleStream(proc, si, hc.ent, hc.raw.Conn, first, shard)
	hc.ss.trk = &hc.track
	hc.rs.tr, hc.rs.trackIn = &hc.track, &hc.track.strm
	hc.trackEnded = false
	view.Stream = &hc.ss
	si.view = view
	hlen, ok, park := proc.readRequest(fe, c, cbuf, hc, first, si)
	if !ok {
		// HAProxy's stream for a connection's first request exists
		// from the start: a request that never came whole (closed,
		// timed out, refused as malformed) counts in what the
		// connection tracks; the wait for a later one does not.
		if !park && (first || si.term[0] != '-') {
			hc.track.count(stick.HTTPReqCnt, stick.HTTPReqRate, 1)
			hc.endTracking(si)
		}
		return false, park
	}
	req := &hc.req
	if fe.BufferRequest && !proc.bufferBody(fe, c, cbuf, hc, hlen, si) {
		return false, false
	}
	hc.ent.calls.Add(1)
	proc.countStreamCall(shard)
	fe.FE.H1OpenStreams.Add(1)
	defer fe.FE.H1OpenStreams.Add(-1)
	// HAProxy counts a request as it enters, before any rule.
	si.bytesIn = int64(req.HTXSize())
	now := time.Now()
	si.trq = now.Sub(start)
	hc.reqLine = appendReqLine(hc.reqLine[:0], req)
	si.reqLine = hc.reqLine
	fe.FE.Request(now)
	// The request counts in what the connection tracks; entries its
	// rules track count it as they start.
	hc.track.count(stick.HTTPReqCnt, stick.HTTPReqRate, 1)
	defer hc.endTracking(si)
	view.Head = req
	// The frontend's header captures, before any rule changes the head.
	hc.caps.reset(fe)
	si.caps = &hc.caps
	if len(fe.ReqCaps) > 0 {
		hc.caps.headers(fe.ReqCaps, req, false)
	}
	si.host = req.Host()
	si.hc = hc
	// The transaction's variables end with it.
	defer hc.vars.Clear(sample.ScopeTxn, sample.ScopeReq, sample.ScopeRes)
	if len(fe.tcp.content) > 0 && !runTCPRules(fe.tcp.content, view, &hc.rs) {
		return proc.rejectRequest(fe, fe, si, true), false
	}

	hc.rwReq.Reset()
	g := &proc.Conf.Global
	hc.roomReq.start(req, bodyData(cbuf.Bytes(), req, hlen), g.BufSize, g.MaxRewrite)
	hc.room = &hc.roomReq
	// Frontend rules, then the backend's.
	if fe.MonitorURI != "" && isMonitorURI(fe.MonitorURI, req.URI()) {
		return proc.monitor(fe, c, cbuf, hc, hlen), false
	}
	if done, keep := proc.applyReqRules(fe, fe.reqRules, view, hc, c, cbuf, hlen, si); done {
		return keep, false
	}
	if done, keep := proc.restrictHdrNames(fe, view, hc, c, cbuf, hlen, si); done {
		return keep, false
	}
	// A cache hit ends the request's processing where its rule ran, as
	// HAProxy's applets do: a frontend's hit skips the stats page, the
	// redirect rules and the backend, whose rules never see the request.
	if hc.cache.hit == nil {
		// The stats page, once the proxy's http-request rules let the
		// request through, before its redirects, as in HAProxy.
		if fe.stats != nil && isStatsRequest(fe, req) {
			return proc.serveStats(fe, c, cbuf, hc, hlen), false
		}
		if done, keep := proc.applyReqRules(fe, fe.redirRules, view, hc, c, cbuf, hlen, si); done {
			return keep, false
		}
	}
	be := fe
	if hc.cache.hit == nil {
		be = proc.switchBackend(fe, hc)
	}
	if be == nil {
		si.status, si.term = 503, [2]byte{'S', 'C'}
		return proc.errorReply(fe, c, cbuf, hc, si, 503, hlen, req.Body == http1.BodyNone), false
	}
	si.be = be
	hc.ent.be.Store(be)
	hc.ent.setPhase(PhaseConnect, now)
	// The stream belongs to the backend from here, its rules included.
	be.BE.SessionStart(now)
	defer be.BE.SessionEnd()
	be.BE.Request(now)
	if be != fe {
		if be.BufferRequest && !fe.BufferRequest {
			if !proc.bufferBody(fe, c, cbuf, hc, hlen, si) {
				return false, false
			}
			si.host = req.Host()
		}
		if len(be.tcp.content) > 0 && !runTCPRules(be.tcp.content, view, &hc.rs) {
			return proc.rejectRequest(fe, be, si, true), false
		}
		if done, keep := proc.applyReqRules(be, be.reqRules, view, hc, c, cbuf, hlen, si); done {
			return keep, false
		}
		if done, keep := proc.restrictHdrNames(be, view, hc, c, cbuf, hlen, si); done {
			return keep, false
		}
		if hc.cache.hit == nil {
			if be.stats != nil && isStatsRequest(be, req) {
				return proc.serveStats(be, c, cbuf, hc, hlen), false
			}
			if done, keep := proc.applyReqRules(be, be.redirRules, view, hc, c, cbuf, hlen, si); done {
				return keep, false
			}
		}
	}

	hc.room = nil
	if hc.cache.hit != nil {
		return proc.serveCached(fe, be, c, cbuf, hc, hlen, si), false
	}

	// The persistence cookie, after the backend's rules, as HAProxy.
	var direct *server
	if be.CookiePersist != nil && be.Mode == core.ModeHTTP {
		direct = hc.clientCookies(be, req, now)
	}
	if direct == nil && len(be.useSrv) > 0 {
		direct = hc.useServer(be)
	}
	hc.stores = hc.stores[:0]
	if len(be.stickRules) > 0 {
		direct, hc.stores = stickRequest(be, view, &hc.rs.smp, direct, hc.stores)
	}

	// Outgoing request head.
	srvMode := http1.ConnNone
	switch {
	case req.Flags&http1.FlagCloseServer != 0:
		// Framing the server may read otherwise (see FlagCloseServer):
		// not kept alive, and never pooled (relayResponse).
		srvMode = http1.ConnForRequest(req, false)
	case fe.ConnMode != core.HTTPKeepAlive || be.ConnMode != core.HTTPKeepAlive:
		srvMode = http1.ConnClose
	case req.Flags&http1.FlagVer11 == 0:
		srvMode = http1.ConnKeepAlive
	}
	hc.rwReq.SetConnection(req, srvMode)
	hc.addUniqueID(proc, fe, view)
	if fe.ForwardFor || be.ForwardFor {
		if ap, ok := addrPortOf(si.client); ok {
			clientIP = ap.Addr()
		}
		forwardFor(fe, be, req, &hc.rwReq, clientIP)
	}
	if fe.OriginalTo || be.OriginalTo {
		originalTo(fe, be, &hc.rwReq, view.Local)
	}
	hc.compRequest(fe, be, req)

	key := lb.Key{Shard: shard}
	if be.rt.bal.NeedsKey() {
		key.Hash, key.HasHash = proc.hashKey(be, req, si.client)
	}
	hc.reqBody.Init(req)
	total, complete, err := http1.Complete(cbuf.Bytes(), hlen, &hc.reqBody)
	// The body data here so far; Forward adds the rest as it streams it.
	si.bytesIn += hc.reqBody.Data
	if err != nil {
		fe.FE.Ereq.Add(1)
		si.status, si.term = 400, [2]byte{'P', 'R'}
		proc.replyError(fe, c, 400, hc.replyConn(false), si)
		return false, false
	}
	retryable := complete
	if complete && be.AbortOnClose && proc.idle != nil {
		// The request is all here: a client that closes now gives up
		// waiting (queue, connect, response), as option abortonclose asks.
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		ctx = actx
		if id := proc.idle.watchClose(hc.raw.Conn, func() { hc.clientAborted(cancel) }); id != 0 {
			defer proc.idle.unwatch(id)
		}
	}

	var entry *pool.Entry[*srvConn]
	var srv *server
	// sessSrv is the server whose session this exchange opened.
	var sessSrv *server
	defer func() {
		if srv != nil {
			srv.releaseSlot()
		}
		if sessSrv != nil {
			sessSrv.Counters.SessionEnd()
			untrackSession(&hc.sess)
		}
	}()
	clientKeep := req.KeepAlive() && fe.ConnMode != core.HTTPClose && be.ConnMode != core.HTTPClose
	if direct != nil {
		s, qt, err := be.pickFor(ctx, key, nil, direct)
		si.tw = qt
		if err != nil {
			si.status, si.term = 503, [2]byte{'s', 'Q'}
			return proc.errorReply(fe, c, cbuf, hc, si, 503, total, complete), false
		}
		srv = s
	}
	for attempt := 0; ; attempt++ {
		if entry == nil {
			e, s, es := proc.httpConnect(ctx, be, key, srv, shard, first, c, si, hc.priv)
			if es != nil && hc.abort.Load() == abortDone {
				return proc.abortedExchange(fe, be, si.srv, c, si, es.term[1], start), false
			}
			if es != nil {
				// httpConnect gave back any slot it held.
				srv = nil
				si.status, si.term = es.status, es.term
				return proc.errorReply(fe, c, cbuf, hc, si, es.status, total, complete), false
			}
			hc.srvc.Store(e.Conn)
			if hc.ent.killed.Load() {
				// shutdown session came while the connection was being
				// opened: it found none to cut.
				hc.Close()
			}
			hc.ent.srv.Store(s)
			if s != direct {
				// Redispatched: the client is told of its new server.
				si.ck.direct = false
			}
			if sessSrv == nil {
				s.Counters.SessionStart(time.Now())
				s.sessions.track(shard, &hc.sess, hc)
				sessSrv = s
			}
			entry, srv = e, s
			si.srv = srv
		}
		sc := entry.Conn
		if sc.buf == nil {
			sc.buf = bufPool.Get()
			sc.buf.Reset()
		}
		// timeout server counts from the request's sending, not from
		// its arrival: the connect time is not the server's.
		sendAt := time.Now()
		sc.dl.armBoth(sc, sendAt, hc.serverTimeout(be))
		// Send the head and what of the body is here; stream the rest.
		if complete && sc.buf.Len() == 0 && (!entry.Reused() || now.Sub(sc.idleAt) < quietIdle) {
			// The whole request is here: it goes out with the read of
			// the response (the client buffer and the rewritten head
			// stay as they are until then).
			sc.io.deferWrite()
		}
		// Tr counts from here, as HAProxy's counts from the server
		// connection's establishment: an upload's time is in it.
		hc.tSent = sendAt
		hc.ent.setPhase(PhaseResponse, hc.tSent)
		_, werr := hc.rwReq.WriteTo(sc, req, cbuf.Bytes()[hlen:total])
		if !complete {
			if werr == nil && req.Flags&http1.FlagExpect100 == 0 {
				// The body is under the client timeout, not http-request's.
				hc.dl.armRead(c, time.Now(), fe.Timeouts.Client)
				cbuf.Discard(total)
				werr = hc.forwardReqBody(sc, cbuf, c)
				if werr != nil && !isServerErr(werr, sc) && !hc.killed.Load() {
					// The client went away mid-body.
					srv.pool.Done(entry)
					srv.Counters.CliAbrt.Add(1)
					fe.FE.CliAbrt.Add(1)
					be.BE.CliAbrt.Add(1)
					si.term = [2]byte{'C', 'D'}
					si.status = -1
					si.tt = time.Since(start)
					proc.logHTTP(si)
					return false, false
				}
				total = 0
			}
		}
		if werr == nil {
			hc.takeBytes(sc)
			hc.reqPending = total
			status, keepSrv, rerr := proc.relayResponse(ctx, fe, be, srv, entry, c, cbuf, hc, req, si, clientKeep)
			if rerr == nil {
				_ = status
				end := time.Now()
				if len(hc.stores) > 0 {
					hc.stores = commitStores(hc.stores, srv)
				}
				// A PROXY header with the stream's unique id belongs to
				// that stream: its connection serves no other.
				if keepSrv && srv.PPv2Opts&core.PPv2UniqueID == 0 && hc.keepServerConn() {
					sc.idleAt = end
					// An idle connection holds no buffer: the next
					// request takes a warm one from the pool.
					bufPool.Put(sc.buf)
					sc.buf = nil
					sc.takeBytes(sc.bec)
					if srv.private() {
						hc.priv.keep(srv, privKey(srv, hc.dstOf(c)), entry)
					} else {
						srv.pool.Release(shard, entry, entry.Uses() > 1)
					}
				} else {
					srv.pool.Done(entry)
				}
				if !si.logged {
					proc.exchangeDone(fe, be, srv, hc, end)
				}
				return clientKeep && si.keepClient, false
			}
			if rerr == errRespReply {
				// The server's response is dropped, its connection too.
				srv.pool.Done(entry)
				return proc.respReplyRule(c, hc, si, hc.replyConn(hc.reqBody.Done())), false
			}
			if rerr == errRespRedirect {
				// The server's response is dropped, its connection too.
				srv.pool.Done(entry)
				return proc.respRedirect(be, c, hc, si), false
			}
			if rerr == errRespRejected {
				// The client's connection ends without a response, which
				// HAProxy's log shows as none (-1) and no Tr.
				srv.pool.Done(entry)
				fe.FE.Dresp.Add(1)
				be.BE.Dresp.Add(1)
				srv.Counters.Dresp.Add(1)
				si.status, si.gotResp, si.term = -1, false, [2]byte{'P', 'D'}
				si.tt = time.Since(start)
				proc.logHTTP(si)
				return false, false
			}
			if rerr == errRespClosed {
				// As HAProxy logs it: no response from the server.
				si.gotResp = false
			}
			if si.logged {
				// Logged before its last write, which failed: the client
				// went away with the whole response sent to its socket.
				srv.pool.Done(entry)
				return false, false
			}
			if hc.killed.Load() {
				srv.pool.Done(entry)
				return proc.killedExchange(fe, be, srv, c, cbuf, hc, si, rerr, start)
			}
			if hc.abort.Load() == abortDone {
				srv.pool.Done(entry)
				return proc.abortedExchange(fe, be, srv, c, si, 'H', start), false
			}
			if rerr == errWaitBody {
				srv.pool.Done(entry)
				return proc.respWaitTimedOut(fe, c, cbuf, hc, si), false
			}
			if rerr == errRewriteFailed {
				srv.pool.Done(entry)
				return proc.respRewriteFailed(fe, c, cbuf, hc, si), false
			}
			if rerr == errStaleConn && entry.Reused() && retryable && attempt < 3 {
				srv.pool.Done(entry)
				entry = nil
				continue
			}
			srv.pool.Done(entry)
			if si.status > 0 && (rerr == errHeadersSent || rerr == errClientGone || rerr == errBodyTimeout || rerr == errClientTimeout) {
				return proc.responseCut(fe, be, srv, si, rerr, start), false
			}
			st := 502
			si.term = [2]byte{'S', 'H'}
			if isTimeout(rerr) {
				st = 504
				si.term = [2]byte{'s', 'H'}
			}
			if rerr == errClientGone {
				si.term = [2]byte{'C', 'D'}
				si.status = -1
				si.tt = time.Since(start)
				proc.logHTTP(si)
				return false, false
			}
			srv.Counters.Eresp.Add(1)
			be.BE.Eresp.Add(1)
			switch {
			case isTimeout(rerr):
				srv.observe(check.EventHTTPReadTimeout)
			case rerr == errStaleConn || isReset(rerr):
				srv.observe(check.EventHTTPBrokenPipe)
			default:
				var he *http1.Error
				if errors.As(rerr, &he) {
					srv.observe(check.EventHTTPRsp)
				} else {
					srv.observe(check.EventHTTPReadError)
				}
			}
			si.status = st
			return proc.errorReply(fe, c, cbuf, hc, si, st, hc.reqPending, hc.reqBody.Done()), false
		}
		// Writing to the server failed: a reused connection may have been
		// closed by the server meanwhile; retry on a fresh one.
		srv.pool.Done(entry)
		entry = nil
		if hc.killed.Load() {
			hc.reqPending = total
			return proc.killedExchange(fe, be, srv, c, cbuf, hc, si, werr, start)
		}
		if !(retryable && attempt < 3) {
			srv.Counters.Eresp.Add(1)
			be.BE.Eresp.Add(1)
			si.status, si.term = 502, [2]byte{'S', 'H'}
			return proc.errorReply(fe, c, cbuf, hc, si, 502, total, hc.reqBody.Done()), false
		}
	}
}

// forwardReqBody streams the rest of the request body from the client to
// sc, counting its data in the exchange's bytes in.
func (hc *hconn) forwardReqBody(sc *srvConn, cbuf *http1.Buffer, c net.Conn) error {
	seen := hc.reqBody.Data
	hc.cliIO = activeConn{c: c, dl: &hc.dl.read, to: hc.si.fe.Timeouts.Client, kind: armRead}
	hc.srvIO = activeConn{c: sc, dl: &sc.dl.both, to: hc.serverTimeout(hc.si.be), kind: armBoth}
	mode, _ := spliceModes(hc.si.fe, hc.si.be, hc.proc.splicing())
	_, err := forwardBody(&hc.srvIO, cbuf, &hc.cliIO, &hc.reqBody, mode, hc.req.MaxSize)
	hc.si.bytesIn += hc.reqBody.Data - seen
	return err
}

// exchangeDone counts and logs an exchange whose response has been
// relayed, or is about to go out in one write, at end.
func (proc *Process) exchangeDone(fe, be *proxy, srv *server, hc *hconn, end time.Time) {
	si := &hc.si
	si.tr -= hc.tSent.Sub(si.accept)
	si.ta = end.Sub(si.accept)
	si.tt = si.ta
	proc.accountHTTP(fe, be, srv, si)
	proc.logHTTP(si)
	si.logged = true
	hc.endTracking(si)
}

// takeBytes adds the bytes the exchange moved so far to the h1 byte
// counters of its frontend and backend.
func (hc *hconn) takeBytes(sc *srvConn) {
	hc.raw.takeBytes(&hc.si.fe.FE)
	sc.takeBytes(sc.bec)
}

// replyConn is the Connection header HAProxy's H1 layer puts on a reply
// that a stream sends. It follows the request: "close" when the request
// asked for it (or, in HTTP/1.0, did not ask for keep-alive) or when the
// reply leaves its body unread, or when the process is stopping;
// "keep-alive" for an HTTP/1.0 request that asked for it; none otherwise.
func (hc *hconn) replyConn(bodyRead bool) http1.ConnValue {
	req := &hc.req
	switch {
	case !req.KeepAlive() || (req.Body != http1.BodyNone && !bodyRead) || hc.proc.stoppingNow():
		return http1.ConnClose
	case req.Flags&http1.FlagVer11 == 0:
		return http1.ConnKeepAlive
	}
	return http1.ConnNone
}

// responseCut ends an exchange whose response was cut after its head
// went to the client, counted and logged as HAProxy does: the status
// counts among the responses, a server's close or reset is SD (a response
// error and a server abort), its silence sD (a server abort only), the
// client's going away CD and its not reading cD (a client abort).
func (proc *Process) responseCut(fe, be *proxy, srv *server, si *streamInfo, err error, start time.Time) bool {
	switch err {
	case errClientGone, errClientTimeout:
		si.term = [2]byte{'C', 'D'}
		if err == errClientTimeout {
			si.term[0] = 'c'
		}
		srv.Counters.CliAbrt.Add(1)
		fe.FE.CliAbrt.Add(1)
		be.BE.CliAbrt.Add(1)
	case errBodyTimeout:
		si.term = [2]byte{'s', 'D'}
		srv.Counters.SrvAbrt.Add(1)
		be.BE.SrvAbrt.Add(1)
		srv.observe(check.EventHTTPReadTimeout)
	default:
		si.term = [2]byte{'S', 'D'}
		srv.Counters.Eresp.Add(1)
		be.BE.Eresp.Add(1)
		srv.Counters.SrvAbrt.Add(1)
		be.BE.SrvAbrt.Add(1)
		srv.observe(check.EventHTTPReadError)
	}
	si.tt = time.Since(start)
	si.ta = si.tt
	proc.accountHTTP(fe, be, srv, si)
	proc.logHTTP(si)
	return false
}

// killedExchange ends an exchange that "shutdown sessions server" killed,
// as HAProxy does: a 502 logged KH when no response had begun, the
// client's connection going on if its request was read whole; a response
// under way is cut and logged KD.
func (proc *Process) killedExchange(fe, be *proxy, srv *server, c net.Conn, cbuf *http1.Buffer, hc *hconn, si *streamInfo, err error, start time.Time) (keep, park bool) {
	srv.Counters.Eresp.Add(1)
	be.BE.Eresp.Add(1)
	if err == errHeadersSent || err == errClientGone {
		si.term = [2]byte{'K', 'D'}
		si.tt = time.Since(start)
		proc.logHTTP(si)
		return false, false
	}
	si.status, si.term = 502, [2]byte{'K', 'H'}
	return proc.errorReply(fe, c, cbuf, hc, si, 502, hc.reqPending, hc.reqBody.Done()), false
}

// option abortonclose's states of an exchange (hconn.abort).
const (
	abortIdle        = iota // no close seen, no response yet
	abortDone               // the client closed first: the exchange is abandoned
	abortRespStarted        // the response came first: a close no longer aborts
)

// clientAborted runs when the client closes while its request waits: it
// stops the wait (cancel) and cuts the server connection, so that the
// server sees the abort as HAProxy's servers do; it does nothing once the
// response has begun.
func (hc *hconn) clientAborted(cancel context.CancelFunc) {
	if !hc.abort.CompareAndSwap(abortIdle, abortDone) {
		return
	}
	cancel()
	if sc := hc.srvc.Swap(nil); sc != nil {
		sc.Conn.Close()
	}
}

// abortedExchange ends an exchange that the client abandoned under option
// abortonclose, with HAProxy's termination state: C then the phase it was
// in (Q queue, C connect, H waiting for the response head). Like HAProxy,
// it answers an abort in H with a 400 (the client may still read).
func (proc *Process) abortedExchange(fe, be *proxy, srv *server, c net.Conn, si *streamInfo, phase byte, start time.Time) bool {
	fe.FE.CliAbrt.Add(1)
	be.BE.CliAbrt.Add(1)
	if srv != nil {
		srv.Counters.CliAbrt.Add(1)
	}
	si.term = [2]byte{'C', phase}
	if phase == 'H' {
		si.status = 400
		proc.replyError(fe, c, 400, http1.ConnClose, si)
		return false
	}
	si.status = -1
	si.ta = time.Since(start)
	si.tt = si.ta
	proc.logHTTP(si)
	return false
}

// errorReply answers with an error page and says whether the client's
// connection goes on, as HAProxy's does after its own replies: when the
// request was read whole (bodyRead) and asked for no close. pending is
// what of the request is still at the front of the client buffer, dropped
// when the connection goes on.
func (proc *Process) errorReply(fe *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, si *streamInfo, status, pending int, bodyRead bool) bool {
	mode := hc.replyConn(bodyRead)
	keep := bodyRead && mode != http1.ConnClose
	if keep && pending > 0 {
		cbuf.Discard(pending)
	}
	proc.replyError(fe, c, status, mode, si)
	return keep
}

var (
	errStaleConn  = errors.New("core: server closed an idle connection")
	errClientGone = errors.New("core: client closed")
	// errRespRedirect is a response an http-response redirect replaces.
	errRespRedirect = errors.New("core: response redirected")
	errRespReply    = errors.New("core: response replaced by a rule's reply")
	// errRespClosed is a response whose server side a tcp-response
	// content close shut.
	errRespClosed = errors.New("core: response closed")
	// errRespRejected is a response a tcp-response content rule rejected.
	errRespRejected = errors.New("core: response rejected")
	errHeadersSent  = errors.New("core: response aborted after its head was sent")
	errBodyTimeout  = errors.New("core: server timed out after the response head was sent")
	// The client read nothing for timeout client while a response streamed.
	errClientTimeout = errors.New("core: client timed out")
)

func isServerErr(err error, sc net.Conn) bool {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op == "write"
	}
	return false
}

// httpConnect assigns a server and gets a connection to it: an idle one
// from the pool, else a new one.
func (proc *Process) httpConnect(ctx context.Context, be *proxy, key lb.Key, prev *server, shard int, first bool, c net.Conn, si *streamInfo, priv *privConn) (*pool.Entry[*srvConn], *server, *errStatus) {
	srv := prev
	if srv == nil {
		s, qt, err := be.pick(ctx, key, nil)
		si.tw = qt
		if err != nil {
			if err == errQueueTimeout {
				return nil, nil, &errStatus{503, [2]byte{'s', 'Q'}}
			}
			if ctx.Err() != nil {
				// Stopped while waiting for a server slot.
				return nil, nil, &errStatus{503, [2]byte{'S', 'Q'}}
			}
			return nil, nil, &errStatus{503, [2]byte{'S', 'C'}}
		}
		srv = s
		if srv.direct == core.DirectNone {
			srv.Counters.LbTot.Add(1)
			be.BE.LbTot.Add(1)
		}
	}
	var fl pool.Flags
	if !first {
		fl |= pool.NotFirst
	}
	client := c
	if hc := si.hc; hc != nil && hc.addrs.dst != nil {
		// set-dst and set-dst-port move a transparent backend's
		// destination, as in HAProxy.
		client = dstConn{c, hc.addrs.dst}
	}
	ckey, sni := proc.connKey(srv, si, client)
	if srv.private() {
		if e := priv.take(srv, privKey(srv, client)); e != nil {
			srv.Counters.Reuse.Add(1)
			be.BE.Reuse.Add(1)
			si.connected = true
			return e, srv, nil
		}
	} else if e := srv.pool.GetKey(shard, fl, ckey); e != nil {
		srv.Counters.Reuse.Add(1)
		be.BE.Reuse.Add(1)
		si.connected = true
		return e, srv, nil
	}
	for attempt := 0; ; attempt++ {
		gen := srv.pool.Gen()
		t0 := time.Now()
		countAttempt(be, srv)
		nc, _, err := srv.dialServer(ctx, client, si.client, si.view.Local, proc.ppv2TLVs(nil, srv, si, client), be.connectTimeout(), sni)
		si.tc = time.Since(t0)
		if err == nil {
			srv.observe(check.EventL4OK)
			sc := &srvConn{rawConn: rawConn{Conn: nc}, bec: &be.BE}
			sc.io.initRaw(nc)
			sc.peek.init(nc)
			si.connected = true
			e := srv.pool.Track(sc, gen)
			e.SetKey(ckey)
			return e, srv, nil
		}
		srv.observe(check.EventL4Err)
		countFailedAttempt(srv, time.Now())
		if attempt >= be.Retries {
			srv.Counters.Econ.Add(1)
			be.BE.Econ.Add(1)
			si.srv = srv
			srv.releaseSlot()
			return nil, nil, &errStatus{503, [2]byte{'S', 'C'}}
		}
		si.retries++
		srv.Counters.Wretr.Add(1)
		be.BE.Wretr.Add(1)
		if be.Redispatch && attempt == be.Retries-1 {
			srv.releaseSlot()
			s, _, err := be.pick(ctx, key, srv)
			if err != nil {
				return nil, nil, &errStatus{503, [2]byte{'S', 'C'}}
			}
			srv = s
			si.redisp = true
			be.BE.Wredis.Add(1)
			srv.Counters.Wredis.Add(1)
			continue
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			si.srv = srv
			srv.releaseSlot()
			return nil, nil, &errStatus{503, [2]byte{'S', 'C'}}
		}
	}
}

// relayResponse reads the server's response and forwards it to the client.
// It returns whether the server connection may be pooled.
func (proc *Process) relayResponse(ctx context.Context, fe, be *proxy, srv *server, entry *pool.Entry[*srvConn], c net.Conn, cbuf *http1.Buffer, hc *hconn, req *http1.Head, si *streamInfo, clientKeep bool) (int, bool, error) {
	sc := entry.Conn
	sbuf := sc.buf
	resp := &hc.resp
	gotAny := false
	var hlen int
	for {
		// Read one response head.
		resp.Reset()
		for {
			if sbuf.Len() > 0 {
				n, err := resp.ParseResponse(sbuf.Bytes(), req.Method)
				if err != nil {
					var he *http1.Error
					errors.As(err, &he)
					proc.recordError(be, srv, sbuf.Bytes(), he, si.client)
					return 0, false, err
				}
				if n > 0 {
					hlen = n
					break
				}
			}
			_, err := sbuf.Fill(sc)
			if err != nil {
				if !gotAny && sbuf.Len() == 0 && (err == io.EOF || isReset(err)) {
					return 0, false, errStaleConn
				}
				return 0, false, err
			}
			gotAny = true
		}
		if !hc.abort.CompareAndSwap(abortIdle, abortRespStarted) && hc.abort.Load() == abortDone {
			return 0, false, errClientGone
		}
		si.tr, si.gotResp = time.Since(si.accept), true
		if resp.IsInterim() {
			// 100-continue and other interim responses go to the client
			// as they are, less their framing fields; the final
			// response follows.
			// Counted as it came, framing fields included.
			si.bytesOut += int64(resp.HTXSize())
			resp.DropBodilessFraming()
			hc.rwResp.Reset()
			if _, err := hc.rwResp.WriteTo(c, resp, nil); err != nil {
				return 0, false, errClientGone
			}
			sbuf.Discard(hlen)
			if req.Flags&http1.FlagExpect100 != 0 && !hc.reqBody.Done() {
				hc.dropRequest(cbuf)
				if err := hc.forwardReqBody(sc, cbuf, c); err != nil {
					return 0, false, errClientGone
				}
			}
			continue
		}
		break
	}
	if len(be.tcp.resp) > 0 {
		// HTTP streams have no payload to wait for: the rules run once,
		// on the response head, as final.
		view := &hc.view
		view.Head, view.Req, view.Status = resp, req, resp.Status
		switch runContentRules(be.tcp.resp, view, &hc.rs) {
		case verdictReject:
			return 0, false, errRespRejected
		case verdictClose:
			// The server's side is shut: the response is lost, a 502.
			return 0, false, errRespClosed
		}
	}
	// The request is answered: drop it from the client buffer.
	hc.dropRequest(cbuf)
	si.status = resp.Status
	// Counted as it came, before the response rules.
	respSize := int64(resp.HTXSize())
	if st := resp.Status; st >= 500 && st != 501 && st != 505 {
		srv.observe(check.EventHTTPStatus)
	} else {
		srv.observe(check.EventHTTPOK)
	}
	view := &hc.view
	view.Head, view.Req, view.Status = resp, req, resp.Status
	if len(fe.RspCaps) > 0 {
		hc.caps.headers(fe.RspCaps, resp, true)
	}
	hc.compResponse(proc, fe, be, req, resp)
	hc.rwResp.Reset()
	hc.bw = bodyWait{sc: sc, hlen: hlen, size: respSize}
	g := &proc.Conf.Global
	hc.roomResp.start(resp, bodyData(sbuf.Bytes(), resp, hlen), g.BufSize, g.MaxRewrite)
	hc.room = &hc.roomResp
	defer func() { hc.bw.sc, hc.room = nil, nil }()
	pxs := []*proxy{be, fe}
	if fe == be {
		// A listen section's rules run once, as in HAProxy.
		pxs = pxs[:1]
	}
	for _, px := range pxs {
		denied, st := hc.runRespRules(px.respRules, view, resp)
		if st != 0 {
			si.status = st
		}
		if denied && hc.bw.timedOut {
			return 0, false, errWaitBody
		}
		if denied && hc.roomResp.failed {
			return 0, false, errRewriteFailed
		}
		if hc.respRedir != nil {
			// Counted with the reply that replaces it, as HAProxy does.
			si.bytesOut += respSize + bodyData(sbuf.Bytes(), resp, hlen)
			return 0, false, errRespRedirect
		}
		if denied && hc.respReply != nil {
			if hc.respReply.act == actDeny {
				srv.Counters.Dresp.Add(1)
			}
			si.bytesOut += respSize + bodyData(sbuf.Bytes(), resp, hlen)
			return 0, false, errRespReply
		}
		if denied {
			be.BE.Dresp.Add(1)
			srv.Counters.Dresp.Add(1)
			return 0, false, errors.New("core: response denied")
		}
	}
	if len(be.stickRules) > 0 {
		hc.stores = stickResponse(be, view, &hc.rs.smp, hc.stores)
	}
	if st := hc.afterResponse(fe, be, resp, view); st != 0 {
		si.status = st
	}
	if be.CookiePersist != nil && be.Mode == core.ModeHTTP {
		hc.serverCookies(be, srv, req, resp, time.Now())
	}
	if hc.comp.active {
		return proc.relayCompressed(fe, be, srv, sc, c, hc, req, resp, si, clientKeep, hlen, respSize)
	}
	resp.DropBodilessFraming()
	// A 2xx answer to CONNECT opens a tunnel as a 101 does.
	upgrade := (resp.Status == 101 && req.IsUpgrade()) || (req.Method == http1.MethodCONNECT && resp.Body == http1.BodyTunnel)
	// A server's own "Connection: close" closes only the server side: the
	// client keeps its connection unless the response's framing needs the
	// close (HAProxy 2.6 behaves so). A stopping process closes after the
	// response, and says so in it.
	keepClient := clientKeep && http1.KeepClient(req, resp) && !upgrade && hc.reqBody.Done() && !proc.stoppingNow()
	si.keepClient = keepClient
	hc.rwResp.SetConnection(resp, http1.ConnForResponse(resp, req, keepClient))
	hc.rsBody.Init(resp)
	defer func() {
		if !si.logged {
			si.bytesOut += respSize + hc.rsBody.HTXData()
		}
	}()
	total, complete, err := http1.Complete(sbuf.Bytes(), hlen, &hc.rsBody)
	if err != nil {
		return 0, false, err
	}
	if complete && !upgrade {
		// The whole response is here and goes out in one write: the
		// exchange is counted and logged first, so that its log line
		// precedes anything the client does once it has the response,
		// as with HAProxy's single thread (a client that reacts by
		// sending another request is logged after it).
		si.bytesOut += respSize + hc.rsBody.HTXData()
		proc.exchangeDone(fe, be, srv, hc, time.Now())
		// Stored before the client has it too: a client that asks again
		// at once finds it, as with HAProxy's single thread.
		if hc.cache.st != nil {
			hc.cacheBody(sbuf.Bytes()[hlen:total])
			hc.cacheDone()
		}
	}
	// A small response fits in the socket buffer: only a streamed body
	// can block on a client that does not read, so only it gets the
	// client timeout on writes.
	if !complete && fe.Timeouts.Client > 0 {
		hc.dl.write.arm(c.SetWriteDeadline, time.Now(), fe.Timeouts.Client)
	}
	if _, err := hc.rwResp.WriteTo(c, resp, sbuf.Bytes()[hlen:total]); err != nil {
		return resp.Status, false, errClientGone
	}
	if hc.cache.st != nil {
		hc.cacheBody(sbuf.Bytes()[hlen:total])
	}
	sbuf.Discard(total)
	if upgrade {
		hc.ent.setPhase(PhaseTunnel, time.Now())
		proc.tunnel(fe, be, c, cbuf, sc, si)
		return resp.Status, false, nil
	}
	if !complete {
		// The h1 byte counters show a long response's head at once, as
		// HAProxy's count each read and write.
		hc.takeBytes(sc)
		hc.ent.setPhase(PhaseBody, si.accept.Add(si.tr))
		defer hc.dl.write.arm(c.SetWriteDeadline, time.Time{}, 0)
		hc.cliIO = activeConn{c: c, dl: &hc.dl.write, to: fe.Timeouts.Client, kind: armWrite}
		hc.srvIO = activeConn{c: sc, dl: &sc.dl.both, to: hc.serverTimeout(be), kind: armBoth}
		hc.cacheTee(&hc.cliIO)
		_, mode := spliceModes(fe, be, proc.splicing())
		if _, err := forwardBody(&hc.cliIO, sbuf, &hc.srvIO, &hc.rsBody, mode, hc.req.MaxSize); err != nil {
			var oe *net.OpError
			switch {
			case errors.As(err, &oe) && oe.Op == "write" && oe.Timeout():
				return resp.Status, false, errClientTimeout
			case errors.As(err, &oe) && oe.Op == "write":
				return resp.Status, false, errClientGone
			case isTimeout(err):
				return resp.Status, false, errBodyTimeout
			}
			return resp.Status, false, errHeadersSent
		}
	}
	hc.cacheDone()
	keepSrv := resp.KeepAlive() && sbuf.Len() == 0 && req.Flags&http1.FlagCloseServer == 0 && fe.ConnMode == core.HTTPKeepAlive && be.ConnMode == core.HTTPKeepAlive && hc.reqBody.Done()
	return resp.Status, keepSrv, nil
}

// tunnel relays bytes both ways after a protocol upgrade.
func (proc *Process) tunnel(fe, be *proxy, c net.Conn, cbuf *http1.Buffer, sc *srvConn, si *streamInfo) {
	// The client is read from another goroutine below.
	if rc, ok := c.(*rawConn); ok {
		rc.io.leaveSession()
	}
	if cbuf.Len() > 0 {
		sc.Write(cbuf.Bytes())
		cbuf.Reset()
	}
	if sc.buf.Len() > 0 {
		c.Write(sc.buf.Bytes())
		sc.buf.Reset()
	}
	c.SetDeadline(time.Time{})
	sc.SetDeadline(time.Time{})
	sc.dl = connDeadlines{}
	upMode, downMode := spliceModes(fe, be, proc.splicing())
	to := tunnelTimeouts(fe, be)
	if hc := si.hc; hc != nil && hc.tunTimeout > 0 {
		to.client, to.server = hc.tunTimeout, hc.tunTimeout
	}
	up, down, _, _, _ := relay(c, &sc.rawConn, to, upMode, downMode, nil)
	si.bytesIn += up
	si.bytesOut += down
}

// isReset says whether err is the peer resetting or closing, as a server
// does with an idle connection it has given up on.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF)
}

// applyReqRules runs http-request rules. done means the request was
// answered by a rule; keep then says whether the connection goes on.
func (proc *Process) applyReqRules(px *proxy, rules []*httpRule, view *sample.Request, hc *hconn, c net.Conn, cbuf *http1.Buffer, hlen int, si *streamInfo) (bool, bool) {
	for _, r := range rules {
		if !r.cond.Eval(view) {
			continue
		}
		switch r.act {
		case actAllow:
			si.lastRule = &r.pos
			return false, false
		case actReject:
			// Counted and logged as a tcp-request content reject, and
			// the client's connection reset, as HAProxy kills it.
			si.lastRule = &r.pos
			proc.rejectRequest(si.fe, px, si, false)
			resetOnClose(c)
			return true, false
		case actCacheUse:
			hc.cacheUse(px, r)
		case actSetHeader, actAddHeader, actDelHeader:
			hc.headerAction(r, view, &hc.req, &hc.rwReq)
			if hc.roomReq.failed {
				proc.rewriteFailed(px, c, si)
				return true, false
			}
		case actWaitBody:
			if !proc.waitReqBody(px, r, c, cbuf, hc, hlen, si) {
				return true, false
			}
		case actNormalizeURI:
			if !hc.normalizeURI(r) {
				proc.badRuleRequest(px, c, si)
				return true, false
			}
		case actRedirect:
			si.lastRule = &r.pos
			si.term = [2]byte{'L', 'R'}
			si.status = r.redir.code
			whole, reqLen := hc.wholeRequest(cbuf, hlen)
			mode := hc.replyConn(whole)
			keep := mode != http1.ConnClose
			if keep {
				cbuf.Discard(reqLen)
			}
			proc.sendRedirect(px, c, hc, r, view, mode, si)
			return true, keep
		case actDeny, actReturn, actTarpit, actAuth:
			si.lastRule = &r.pos
			if r.act == actTarpit {
				// The client waits timeout tarpit (timeout connect when
				// unset) for its error, as in HAProxy.
				t := px.Timeouts.Tarpit
				if t == 0 {
					t = px.Timeouts.Connect
				}
				select {
				case <-time.After(t):
				case <-proc.stopping:
				}
			}
			if r.act == actDeny || r.act == actTarpit {
				si.fe.FE.Dreq.Add(1)
				if px != si.fe {
					px.BE.Dreq.Add(1)
				}
				si.term = [2]byte{'P', 'R'}
				if r.act == actTarpit {
					si.term = [2]byte{'P', 'T'}
				}
			} else if r.act == actAuth {
				si.term = [2]byte{'L', 'R'}
				// HAProxy counts the challenges of the frontend's rules.
				if px == si.fe {
					px.FE.Intercepted.Add(1)
				}
			} else {
				si.term = [2]byte{'L', 'R'}
				// Counted where the rule is, as in HAProxy.
				if px == si.fe {
					px.FE.Intercepted.Add(1)
				} else {
					px.BE.Intercepted.Add(1)
				}
			}
			si.status = r.status
			// A request whose body is not all in is not read further:
			// close after replying. A whole one, or one without a body,
			// lets the connection go on, after a deny too (HAProxy 2.6
			// keeps it).
			whole, reqLen := hc.wholeRequest(cbuf, hlen)
			mode := hc.replyConn(whole)
			keep := mode != http1.ConnClose
			if keep {
				cbuf.Discard(reqLen)
			}
			b, n, force := proc.ruleReply(px, hc, r, mode)
			si.bytesOut = n
			b = hc.afterLocal(si.fe, px, b, si)
			proc.sendLocal(c, hc, si, b, r.status)
			return true, keep && !force
		default:
			hc.applyReqAction(r, view)
		}
	}
	return false, false
}

// replyError answers with the proxy's error page for status, with the
// Connection header that mode says (see replyConn), and logs.
func (proc *Process) replyError(px *proxy, c net.Conn, status int, mode http1.ConnValue, si *streamInfo) {
	var b []byte
	switch {
	case si.headless && px.errReply[status] == nil:
		// HAProxy's H1 layer answers these itself, with its built-in
		// message as written, outside any stream: the log counts 0.
		b = http1.RawError(status)
	case si.headless || si.hc == nil:
		r := px.errReply[status]
		if r == nil {
			r = http1.ErrorReply(status)
		}
		if r != nil {
			b = r.Bytes(mode)
			if !si.headless {
				si.bytesOut = int64(r.LogSize)
			}
		}
	default:
		var n int64
		b, n, _ = proc.errorReplyBytes(px, si.hc, status, mode)
		// After what already went to the client (interim responses,
		// early hints) or came from the server into the response.
		si.bytesOut += n
	}
	if b != nil && si.hc != nil {
		b = si.hc.afterLocal(si.fe, si.be, b, si)
	}
	if si.hc != nil {
		si.hc.endTracking(si)
	}
	if b != nil {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write(b)
		c.SetWriteDeadline(time.Time{})
	}
	proc.endLocal(si, status)
}

// countLocalReply counts a reply the proxy made itself in the frontend's
// counters, and the backend's once the stream has one (a listen section's
// own backend side included), bytes included.
// respRedirect answers with the redirect of an http-response rule in
// place of the server's response, logged as HAProxy does: LH, no Tr. It
// says whether the client's connection goes on.
func (proc *Process) respRedirect(be *proxy, c net.Conn, hc *hconn, si *streamInfo) bool {
	r := hc.respRedir
	hc.respRedir = nil
	si.term = [2]byte{'L', 'H'}
	si.status, si.gotResp = r.redir.code, false
	mode := hc.replyConn(hc.reqBody.Done())
	proc.sendRedirect(be, c, hc, r, &hc.view, mode, si)
	return mode != http1.ConnClose
}

// respReplyRule answers with the reply of the http-response deny or
// return rule that replaced the response, counted and logged as HAProxy
// does: a deny is a denied response (PH), a return a local reply (LH).
// It says whether the client's connection goes on.
func (proc *Process) respReplyRule(c net.Conn, hc *hconn, si *streamInfo, mode http1.ConnValue) bool {
	r := hc.respReply
	hc.respReply = nil
	si.status, si.gotResp = r.status, false
	be := si.be
	if be == nil {
		be = si.fe
	}
	if r.act == actDeny {
		si.fe.FE.Dresp.Add(1)
		be.BE.Dresp.Add(1)
	}
	// A cache hit is already LR, which HAProxy keeps.
	if si.term[0] == '-' {
		si.term = [2]byte{'L', 'H'}
		if r.act == actDeny {
			si.term[0] = 'P'
		}
	}
	// The error page is the backend's, else the frontend's, as HAProxy's
	// http_error_message chooses. The log counts it after the response it
	// replaces.
	b, n, force := proc.ruleReply(si.fe, hc, r, mode)
	si.bytesOut += n
	b = hc.afterLocal(si.fe, be, b, si)
	proc.sendLocal(c, hc, si, b, r.status)
	return mode != http1.ConnClose && !force
}

// sendLocal writes a reply the proxy made itself and ends its exchange.
func (proc *Process) sendLocal(c net.Conn, hc *hconn, si *streamInfo, b []byte, status int) {
	hc.endTracking(si)
	c.Write(b)
	proc.endLocal(si, status)
}

// endLocal ends the exchange of a reply the proxy made once it is sent:
// its timers, counters and log line.
func (proc *Process) endLocal(si *streamInfo, status int) {
	si.tt = time.Since(si.accept)
	si.ta = si.tt
	si.countLocalReply(status)
	proc.logHTTP(si)
}

// replySize is the size HAProxy's byte counters give a reply the proxy
// made: its head's HTX size and its payload.
func replySize(b []byte, method http1.Method) int64 {
	var h http1.Head
	n, err := h.ParseResponse(b, method)
	if err != nil || n <= 0 {
		return int64(len(b))
	}
	return int64(h.HTXSize() + len(b) - n)
}

// sendRedirect sends the reply of redirect rule r of px, then counts and
// logs the exchange.
func (proc *Process) sendRedirect(px *proxy, c net.Conn, hc *hconn, r *httpRule, v *sample.Request, mode http1.ConnValue, si *streamInfo) {
	b := hc.redirectReply(r.redir, v, mode)
	si.bytesOut += replySize(b, hc.req.Method)
	b = hc.afterLocal(si.fe, px, b, si)
	proc.sendLocal(c, hc, si, b, si.status)
}

func (si *streamInfo) countLocalReply(status int) {
	cl := core.HrspClass(status)
	si.fe.FE.Hrsp[cl].Add(1)
	si.fe.FE.Bin.Add(si.bytesIn)
	si.fe.FE.Bout.Add(si.bytesOut)
	if be := si.be; be != nil {
		be.BE.Hrsp[cl].Add(1)
		be.BE.Bin.Add(si.bytesIn)
		be.BE.Bout.Add(si.bytesOut)
	}
}

func (proc *Process) accountHTTP(fe, be *proxy, srv *server, si *streamInfo) {
	cl := core.HrspClass(si.status)
	fe.FE.Hrsp[cl].Add(1)
	fe.FE.Bin.Add(si.bytesIn)
	fe.FE.Bout.Add(si.bytesOut)
	be.BE.Hrsp[cl].Add(1)
	be.BE.Bin.Add(si.bytesIn)
	be.BE.Bout.Add(si.bytesOut)
	srv.Counters.Hrsp[cl].Add(1)
	srv.Counters.Bin.Add(si.bytesIn)
	srv.Counters.Bout.Add(si.bytesOut)
	srv.Counters.ReqTot.Add(1)
	for _, c := range []*core.Counters{&be.BE, &srv.Counters} {
		c.Qtime.Add(ms(si.tw))
		c.Ctime.Add(ms(si.tc))
		c.Rtime.Add(ms(si.tr))
		c.Ttime.Add(ms(si.tt))
		core.StoreMax(&c.QtimeMax, ms(si.tw))
		core.StoreMax(&c.CtimeMax, ms(si.tc))
		core.StoreMax(&c.RtimeMax, ms(si.tr))
		core.StoreMax(&c.TtimeMax, ms(si.tt))
	}
}

// hashKey computes the balance key of a hashing backend.
func (proc *Process) hashKey(be *proxy, req *http1.Head, client net.Addr) (uint32, bool) {
	rt := be.rt
	switch rt.bal.Algo {
	case lb.Source:
		return sourceHash(client, rt.hash), true
	case lb.URI:
		k := lb.URIKey(req.URI(), &rt.bal)
		return rt.hash.Sum(k), true
	case lb.URLParam:
		if v, ok := lb.FindURLParam(req.URI(), rt.bal.Param); ok {
			return rt.hash.Sum(v), true
		}
	case lb.Hdr:
		if v, ok := req.Get(rt.bal.Header); ok && len(v) > 0 {
			if rt.bal.DomainOnly {
				v = lb.HostDomain(v)
			}
			return rt.hash.Sum(v), true
		}
	}
	return 0, false
}

func appendReqLine(b []byte, h *http1.Head) []byte {
	b = append(b, h.MethodBytes()...)
	b = append(b, ' ')
	b = append(b, h.URI()...)
	b = append(b, ' ')
	return append(b, h.Version()...)
}

// endLocalHead ends the head of a reply the proxy makes itself with the
// Connection field mode asks for, and the empty line.
func endLocalHead(b []byte, mode http1.ConnValue) []byte {
	switch mode {
	case http1.ConnClose:
		b = append(b, "connection: close\r\n"...)
	case http1.ConnKeepAlive:
		b = append(b, "connection: keep-alive\r\n"...)
	}
	return append(b, "\r\n"...)
}

// dynamicReturn builds the response of a return rule whose headers or body
// are log-format expressions, and returns it with the size HAProxy logs
// for it.
func (hc *hconn) dynamicReturn(r *httpRule, v *sample.Request, mode http1.ConnValue) ([]byte, int64) {
	hc.scratch = r.body.AppendTo(hc.scratch[:0], v)
	b, fields := r.appendReturnHead(hc.out[:0], len(hc.scratch), v, true)
	b = endLocalHead(b, mode)
	b = append(b, hc.scratch...)
	hc.out = b
	// The status line's words: "HTTP/1.1", a 3-digit code, the reason.
	return b, int64(http1.HTXSize(len("HTTP/1.1")+3+len(reasonPhrase(r.status)), fields, len(hc.scratch)))
}

// forwardFor adds option forwardfor's header as HAProxy does: the
// backend's header name first; not when the request already has one and
// every proxy that set the option said if-none; not for a client in
// either proxy's except network.
func forwardFor(fe, be *proxy, req *http1.Head, rw *http1.Rewriter, client netip.Addr) {
	name := be.ForwardForHeader
	if name == "" {
		name = fe.ForwardForHeader
	}
	if name == "" {
		name = "X-Forwarded-For"
	}
	always := (fe.ForwardFor && !fe.ForwardForIfNone) || (be.ForwardFor && !be.ForwardForIfNone)
	if !always && rw.Has(req, name) {
		return
	}
	if !client.IsValid() || fe.ForwardForExcept.Contains(client) || be.ForwardForExcept.Contains(client) {
		return
	}
	rw.AddForwardedFor(name, client)
}

// originalTo adds the address the client connected to (option
// originalto), unless it is in an except network, under the backend's
// header name, else the frontend's, else X-Original-To, as HAProxy does.
// The header is added whatever the request carries.
func originalTo(fe, be *proxy, rw *http1.Rewriter, dst net.Addr) {
	ta, ok := dst.(*net.TCPAddr)
	if !ok {
		return
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return
	}
	ip = ip.Unmap()
	if fe.OriginalToExcept.Contains(ip) || be.OriginalToExcept.Contains(ip) {
		return
	}
	name := be.OriginalToHeader
	if name == "" {
		name = fe.OriginalToHeader
	}
	if name == "" {
		name = "X-Original-To"
	}
	rw.AddForwardedFor(name, ip)
}
