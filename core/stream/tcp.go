package stream

import (
	"context"
	"errors"
	"goha/core"
	"goha/core/sample"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"goha/core/check"
	"goha/core/lb"
)

// copyBufs recycles the buffers of TCP tunnels.
var copyBufs = newCountedPool("tunnel_buf", 16384, func() *[]byte { b := make([]byte, 16384); return &b })

// connectServer assigns a server and opens a connection to it, with
// retries and redispatch as the backend's settings say.
func (proc *Process) connectServer(ctx context.Context, be *proxy, key lb.Key, want *server, client net.Conn, si *streamInfo) (net.Conn, *server, error) {
	var avoid *server
	tries := be.Retries
	for attempt := 0; ; attempt++ {
		srv, qt, err := be.pickFor(ctx, key, avoid, want)
		si.tw += qt
		if err != nil {
			return nil, nil, err
		}
		if srv.direct == core.DirectNone {
			srv.Counters.LbTot.Add(1)
			be.BE.LbTot.Add(1)
		}
		t0 := time.Now()
		countAttempt(be, srv)
		c, _, err := srv.dialServer(ctx, client, si.client, si.view.Local, proc.ppv2TLVs(nil, srv, si, client), be.connectTimeout(), "")
		si.tc = time.Since(t0)
		if err == nil {
			srv.observe(check.EventL4OK)
			si.connected = true
			return c, srv, nil
		}
		if ctx.Err() != nil {
			// Stopped or killed (shutdown session) while connecting:
			// not the server's failure.
			srv.releaseSlot()
			return nil, nil, ctx.Err()
		}
		srv.observe(check.EventL4Err)
		srv.releaseSlot()
		countFailedAttempt(srv, time.Now())
		if attempt >= tries {
			srv.Counters.Econ.Add(1)
			be.BE.Econ.Add(1)
			si.srv = srv
			return nil, srv, errConnect
		}
		si.retries++
		srv.Counters.Wretr.Add(1)
		be.BE.Wretr.Add(1)
		// HAProxy redispatches on the last retry when option redispatch
		// is set; otherwise it insists on the same server.
		if be.Redispatch && attempt == tries-1 {
			avoid, want = srv, nil
			si.redisp = true
			be.BE.Wredis.Add(1)
			srv.Counters.Wredis.Add(1)
		} else {
			avoid = nil
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// countAttempt counts a connection attempt to srv as HAProxy does: each
// attempt, retries included, is a connect whatever its outcome.
func countAttempt(be *proxy, srv *server) {
	srv.Counters.Connect.Add(1)
	be.BE.Connect.Add(1)
}

// countFailedAttempt counts the session a failed attempt gave srv: HAProxy
// counts one in the server's stot per attempt, and a connection error
// (econ) only once the stream gives up, not per attempt.
func countFailedAttempt(srv *server, now time.Time) {
	srv.Counters.SessionStart(now)
	srv.Counters.SessionEnd()
}

func (p *proxy) connectTimeout() time.Duration {
	if p.Timeouts.Connect > 0 {
		return p.Timeouts.Connect
	}
	return 5 * time.Second
}

// serveTCP forwards a tcp-mode connection to a server of the default
// backend, both ways, with half-close. ent is the stream's place in show
// sess.
//
// It returns true when the stream becomes HTTP instead: a content rule's
// switch-mode http, or a backend in HTTP mode (HAProxy's implicit
// upgrade); the bytes read so far are in cs.pending, and the connection
// is the caller's to serve.
func (proc *Process) serveTCP(fe *proxy, c net.Conn, shard int, now time.Time, cs *connState) (upgraded bool) {
	defer func() {
		if !upgraded {
			c.Close()
		}
	}()
	ent := &cs.ent
	si := &streamInfo{accept: now, client: cs.src, fe: fe, term: [2]byte{'-', '-'}}
	be := fe.defBE
	ss := newSampleStream(proc, si, ent, c, true, shard)
	tr := tracking{sess: &cs.trk}
	ss.trk = &tr
	defer func() { tr.endStream(si.bytesIn, si.bytesOut) }()
	view := &sample.Request{Vars: &cs.vars, Stream: &ss}
	cs.view(view)
	si.view = view
	rs := ruleScratch{tr: &tr, trackIn: &tr.strm}
	in := &inspection{}
	ss.insp = in
	if len(fe.tcp.content) > 0 && !proc.inspect(c, in, fe.tcp.content, fe.InspectDelay, view, &rs) {
		fe.FE.Dreq.Add(1)
		si.term = [2]byte{'P', 'R'}
		proc.logTCP(si)
		return
	}
	for _, r := range fe.useBE {
		if r.cond.Eval(view) {
			be = r.be
			break
		}
	}
	if rs.switchHTTP || (be != nil && be.Mode == core.ModeHTTP) {
		cs.pending = append(cs.pending[:0], in.buf...)
		return true
	}
	if be != nil && be != fe && len(be.tcp.content) > 0 && !proc.inspect(c, in, be.tcp.content, be.InspectDelay, view, &rs) {
		be.BE.Dreq.Add(1)
		si.be = be
		si.term = [2]byte{'P', 'R'}
		proc.logTCP(si)
		return
	}
	if be == nil {
		// HAProxy's TLS layer completes the handshake before the stream
		// finds it has nowhere to go: a client (a server's ssl-hello-chk
		// or check-ssl) gets its answer.
		if tc := tlsConnOf(c); tc != nil {
			tc.SetDeadline(time.Now().Add(max(fe.Timeouts.Client, time.Second)))
			tc.Handshake()
		}
		// The client sees a FIN, not a reset for the bytes it sent that
		// nobody read: what comes before it closes too is discarded.
		lingerClose(baseConn(c), max(min(fe.Timeouts.Client, time.Second), time.Millisecond))
		si.term = [2]byte{'P', 'R'}
		proc.logTCP(si)
		return
	}
	si.be = be
	ent.be.Store(be)
	be.BE.SessionStart(now)
	defer func() {
		if !si.left {
			be.BE.SessionEnd()
		}
	}()
	key := lb.Key{Shard: shard}
	if be.rt.bal.NeedsKey() {
		key.Hash, key.HasHash = sourceHash(si.client, be.rt.hash), true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(ctxStop(proc), cancel)
	defer stop()
	ent.setTCP(cancel, nil)
	var want *server
	var stores []pendingStore
	if len(be.stickRules) > 0 {
		want, stores = stickRequest(be, view, &rs.smp, nil, nil)
	}
	client := c
	if cs.dstMoved || view.Local != cs.dst {
		// set-dst rules move a transparent backend's destination.
		client = dstConn{c, view.Local}
	}
	sc, srv, err := proc.connectServer(ctx, be, key, want, client, si)
	if err == nil && len(stores) > 0 {
		// A tcp stream has no response to wait for: its server is
		// recorded once connected.
		commitStores(stores, srv)
	}
	if err != nil {
		// What the client sent counts as received, as HAProxy's request
		// channel counts it (dontlognull looks at it).
		si.bytesIn = int64(len(in.buf)) + drainPending(c)
		si.term = [2]byte{'S', 'C'}
		if err == errQueueTimeout {
			si.term = [2]byte{'s', 'Q'}
		}
		if ent.killed.Load() {
			si.term = [2]byte{'K', 'C'}
		}
		si.tt = time.Since(now)
		proc.logTCP(si)
		return
	}
	si.srv = srv
	ss.srvConn = sc
	connected := time.Now()
	srv.Counters.SessionStart(connected)
	ent.srv.Store(srv)
	ent.calls.Add(1)
	proc.countStreamCall(shard)
	ent.setPhase(PhaseTunnel, connected)
	ent.setTCP(cancel, sc)
	var sess sessLink
	srv.sessions.track(shard, &sess, c)
	// As in HAProxy, a new backend connection raises the server's peak
	// and estimate of connections needed (need_conn_est), then, being
	// the stream's own, leaves the used count at once, as HAProxy's
	// private connections do.
	if srv.pool != nil {
		srv.pool.CountPrivate()
	}
	// The stream leaves its server and backend before it is logged, as in
	// HAProxy, so that a client that waits for the log line and connects
	// again is never counted twice. The deferred calls cover the panics.
	leave := func() {
		if si.left {
			return
		}
		si.left = true
		sc.Close()
		srv.releaseSlot()
		untrackSession(&sess)
		srv.Counters.SessionEnd()
		be.BE.SessionEnd()
	}
	defer leave()

	sent, werr := forwardInspected(in, sc)
	rc, rsc := asRaw(c), asRaw(sc)
	upMode, downMode := spliceModes(fe, be, proc.splicing())
	var ri *resInspect
	if len(be.tcp.resp) > 0 {
		ri = &resInspect{proc: proc, rules: be.tcp.resp, delay: be.ResInspectDelay, v: view, rs: &rs}
		ss.resInsp = &ri.in
	}
	up, down, upErr, downErr, abort := relay(rc, rsc, tunnelTimeouts(fe, be), upMode, downMode, ri)
	if werr != nil && abort == 0 {
		abort = 'S'
	}
	up += sent
	proc.countSpliced(rc, rsc)
	si.bytesIn, si.bytesOut = up, down
	fe.FE.Bin.Add(up)
	fe.FE.Bout.Add(down)
	be.BE.Bin.Add(up)
	be.BE.Bout.Add(down)
	srv.Counters.Bin.Add(up)
	srv.Counters.Bout.Add(down)
	switch {
	case abort == 'P':
		// A tcp-response content rule rejected the response.
		si.term = [2]byte{'P', 'D'}
		fe.FE.Dresp.Add(1)
		be.BE.Dresp.Add(1)
		srv.Counters.Dresp.Add(1)
		killConn(sc)
	case abort == 'c':
		killConn(sc)
	case abort == 'C':
		si.term = [2]byte{'C', 'D'}
		fe.FE.CliAbrt.Add(1)
		be.BE.CliAbrt.Add(1)
		srv.Counters.CliAbrt.Add(1)
	case abort == 'S':
		si.term = [2]byte{'S', 'D'}
		be.BE.Eresp.Add(1)
		srv.Counters.Eresp.Add(1)
		be.BE.SrvAbrt.Add(1)
		srv.Counters.SrvAbrt.Add(1)
	case isTimeout(upErr):
		si.term = [2]byte{'c', 'D'}
	case isTimeout(downErr):
		si.term = [2]byte{'s', 'D'}
	}
	if ent.killed.Load() {
		// shutdown session: both sides saw an end of file.
		si.term = [2]byte{'K', 'D'}
	}
	si.tt = time.Since(now)
	leave()
	proc.logTCP(si)
	return false
}

// tunnelTO are the inactivity timeouts of a stream's two sides once it
// is a tunnel: a tcp stream, or an http one after an upgrade.
type tunnelTO struct {
	client, server       time.Duration // both ways open
	clientFin, serverFin time.Duration // after the other side has closed; 0: unchanged
}

// tunnelTimeouts: timeout tunnel replaces the client and server timeouts;
// client-fin and server-fin replace them on a side once the other side
// has closed, as in HAProxy.
func tunnelTimeouts(fe, be *proxy) tunnelTO {
	to := tunnelTO{client: fe.Timeouts.Client, server: be.Timeouts.Server,
		clientFin: fe.Timeouts.ClientFin, serverFin: be.Timeouts.ServerFin}
	if be.Timeouts.Tunnel > 0 {
		to.client, to.server = be.Timeouts.Tunnel, be.Timeouts.Tunnel
	}
	return to
}

// relay copies c to sc and sc to c until both directions have ended. A
// direction ends on EOF, an error or its side's inactivity timeout; its
// end is passed on as a half-close, and the other side's timeout becomes
// its fin timeout (server-fin once the client has closed, client-fin once
// the server has). A side that fails (a reset, not a close or a timeout)
// ends the whole stream at once, as in HAProxy: abort is then 'C' for the
// client, 'S' for the server, and the other direction's error, its cut
// wait, is dropped.
//
// upMode and downMode say whether each direction splices. ri, when set,
// runs tcp-response content rules on the server's first bytes before
// they go to the client: a reject ends the stream with abort 'P', a close
// with abort 'c', once the bytes read are sent.
func relay(c, sc net.Conn, to tunnelTO, upMode, downMode spliceMode, ri *resInspect) (up, down int64, upErr, downErr error, abort byte) {
	var cliIdle, srvIdle atomic.Int64
	cliIdle.Store(int64(to.client))
	srvIdle.Store(int64(to.server))
	var stop atomic.Bool
	var who atomic.Int32 // the failed side, then 'u' or 'd' for its direction
	// fail records the first side to fail and wakes the other direction;
	// it reports whether the stream is aborted.
	fail := func(side, dir byte, err error) bool {
		if err == nil || isTimeout(err) || !stop.CompareAndSwap(false, true) {
			return stop.Load()
		}
		who.Store(int32(side)<<8 | int32(dir))
		past := time.Unix(1, 0)
		c.SetReadDeadline(past)
		sc.SetReadDeadline(past)
		return true
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var wrote bool
		up, upErr, wrote = pipe(sc, c, &cliIdle, &stop, upMode)
		// A read error is the client's, a write error the server's.
		side := byte('C')
		if wrote {
			side = 'S'
		}
		if fail(side, 'u', upErr) {
			return
		}
		closeWrite(sc)
		finTimeout(sc, &srvIdle, to.serverFin)
	}()
	var wrote bool
	vd := verdictAccept
	if ri != nil {
		vd, down, downErr, wrote = ri.run(c, sc, &stop)
	}
	switch vd {
	case verdictAccept:
		if downErr == nil && !ri.ended() {
			var n int64
			n, downErr, wrote = pipe(c, sc, &srvIdle, &stop, downMode)
			down += n
		}
	case verdictReject, verdictClose:
		// The rule ends the stream: the client's direction too.
		code := int32('P')
		if vd == verdictClose {
			code = 'c'
		}
		if stop.CompareAndSwap(false, true) {
			who.Store(code<<8 | 'd')
			past := time.Unix(1, 0)
			c.SetReadDeadline(past)
			sc.SetReadDeadline(past)
		}
		if vd == verdictReject {
			wg.Wait()
			return up, down, nil, nil, 'P'
		}
	}
	side := byte('S')
	if wrote {
		side = 'C'
	}
	// Aborted or not, the client gets a close, not a reset.
	closeWrite(c)
	if !fail(side, 'd', downErr) {
		finTimeout(c, &cliIdle, to.clientFin)
	}
	wg.Wait()
	if w := who.Load(); w != 0 {
		abort = byte(w >> 8)
		// The other direction's error is only its cut wait.
		if abort == 'c' {
			upErr, downErr = nil, nil
		} else if byte(w) == 'u' {
			downErr = nil
		} else {
			upErr = nil
		}
	}
	return up, down, upErr, downErr, abort
}

// finTimeout gives src's reads the inactivity timeout fin from now on,
// including the read in progress.
func finTimeout(src net.Conn, idle *atomic.Int64, fin time.Duration) {
	if fin <= 0 {
		return
	}
	idle.Store(int64(fin))
	src.SetReadDeadline(time.Now().Add(fin))
}

// pipe copies src to dst until EOF, an error, or stop. idle is the
// inactivity timeout of src's reads; another goroutine may change it
// (finTimeout). wrote says that the error came from writing to dst. mode
// says whether the copy splices: from the start, or once the reads show a
// fast stream (spliceAuto).
func pipe(dst, src net.Conn, idle *atomic.Int64, stop *atomic.Bool, mode spliceMode) (n int64, err error, wrote bool) {
	var dl deadline
	// arm sets src's read deadline, and says whether to go on.
	arm := func() bool {
		// Re-check after arming: a finTimeout that ran meanwhile set
		// the deadline first, and this arm may have overwritten it.
		for {
			to := time.Duration(idle.Load())
			dl.arm(src.SetReadDeadline, time.Now(), to)
			if time.Duration(idle.Load()) == to {
				break
			}
		}
		// Checked after arming: relay's wake-up deadline, set after
		// stop, may have been overwritten by this arm.
		return !stop.Load()
	}
	rdst, rsrc := rawOf(dst), rawOf(src)
	if !canSplice(rdst, rsrc) {
		mode = spliceOff
	}
	if mode == spliceOn {
		if _, out, err, ok := spliceCopy(rdst, rsrc, -1, arm, nil); ok {
			err, wrote = spliceEnd(err)
			return out, err, wrote
		}
	}
	bp := copyBufs.Get()
	defer copyBufs.Put(bp)
	buf := *bp
	large := 0
	for {
		if !arm() {
			return n, nil, false
		}
		r, rerr := src.Read(buf)
		if r > 0 {
			w, werr := dst.Write(buf[:r])
			n += int64(w)
			if werr != nil {
				return n, werr, true
			}
		}
		if rerr != nil {
			if rerr == io.EOF {
				return n, nil, false
			}
			return n, rerr, false
		}
		if mode != spliceAuto {
			continue
		}
		// HAProxy's fast streamer: reads that fill all but a
		// maxrewrite's worth of the buffer.
		if r >= len(buf)-len(buf)/16 {
			large++
		} else {
			large = 0
		}
		if large >= fastReads {
			mode = spliceOff
			if _, out, err, ok := spliceCopy(rdst, rsrc, -1, arm, nil); ok {
				err, wrote = spliceEnd(err)
				return n + out, err, wrote
			}
		}
	}
}

// spliceEnd turns the error that ended spliceCopy into pipe's results.
func spliceEnd(err error) (error, bool) {
	if err == nil || err == io.EOF {
		return nil, false
	}
	var oe *net.OpError
	return err, errors.As(err, &oe) && oe.Op == "write"
}

// drainPending reads and drops what the peer sent that nobody read, so
// that closing c sends a FIN, as HAProxy's close does: Linux answers the
// close of a socket with unread data with a reset.
func drainPending(c net.Conn) (drained int64) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	bp := copyBufs.Get()
	defer copyBufs.Put(bp)
	rc.Read(func(fd uintptr) bool {
		// Bounded: a peer that keeps sending gets its reset.
		for i := 0; i < 64; i++ {
			n, err := syscall.Read(int(fd), *bp)
			if n <= 0 || err != nil {
				break
			}
			drained += int64(n)
		}
		return true
	})
	return drained
}

// killConn closes c with a reset, as HAProxy kills a connection a rule
// ends.
func killConn(c net.Conn) {
	resetOnClose(c)
	c.Close()
}

// resetOnClose makes c's close a reset. A client connection's request
// loop runs inside a read of its socket (see readSession), where closing
// would wait for that very read: the loop resets the socket this way and
// lets its caller close it.
func resetOnClose(c net.Conn) {
	type lingerer interface{ SetLinger(int) error }
	if raw := rawOf(c); raw != nil {
		c = raw.Conn
	}
	if x, ok := c.(lingerer); ok {
		x.SetLinger(0)
	}
}

func closeWrite(c net.Conn) {
	type cw interface{ CloseWrite() error }
	if x, ok := c.(cw); ok {
		x.CloseWrite()
	} else {
		c.Close()
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func clientPort(c net.Conn) int {
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

func sourceHash(a net.Addr, ht lb.HashType) uint32 {
	if ta, ok := a.(*net.TCPAddr); ok {
		ip := ta.IP
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		return lb.SourceHash(ip, ht)
	}
	return 0
}

// ctxStop is a context cancelled when the process stops.
func ctxStop(proc *Process) context.Context {
	proc.ctxOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		proc.ctx = ctx
		go func() { <-proc.stopping; cancel() }()
	})
	return proc.ctx
}

// lingerClose shuts c's sending side and reads until the peer closes or
// for at most d.
func lingerClose(c net.Conn, d time.Duration) {
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(d))
	io.Copy(io.Discard, c)
}
