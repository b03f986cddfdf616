package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"goha/core"
	"goha/core/diag"
	"goha/core/sample"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"goha/core/pool"
)

// Run opens every listener and starts serving. It returns once everything
// listens, or with the first error (nothing is left open then).
func (proc *Process) Run() error {
	// The pools' descriptor watermarks are fractions of maxsock, which
	// HAProxy derives from maxconn (two sockets per connection).
	g := &proc.Conf.Global
	maxsock := 2 * proc.Conf.HardMaxConn()
	pools, err := pool.NewSet[*srvConn](pool.Options{
		Threads: proc.Threads,
		NoShare: g.IdlePoolNoShare,
		LowFDs:  maxsock * g.PoolLowFDRatio / 100,
		HighFDs: maxsock * g.PoolHighFDRatio / 100,
		UsedFDs: func() int { return int(2 * proc.curConns.Load()) },
	})
	if err != nil {
		return err
	}
	proc.pools = pools
	if !proc.prepared {
		// A process made by hand (tests, embedders) compiles here; goha
		// itself prepares first, so that `-c` reports the same problems.
		d := &diag.Collector{}
		proc.Prepare(d)
		if d.HasAlert() {
			return fmt.Errorf("configuration: %s", d.All()[0].Msg)
		}
	}
	for _, p := range proc.proxies {
		if p.IsBackend() {
			if err := proc.initBackend(p); err != nil {
				return fmt.Errorf("backend '%s': %v", p.Name, err)
			}
		}
	}
	pools.Start()
	proc.OnStop(pools.Stop)
	// Idle server connections go with the process: one process after
	// another in the same program (tests, fuzzing) must not pile them up.
	proc.OnStop(func() {
		for _, p := range proc.proxies {
			if p.rt == nil {
				continue
			}
			for _, s := range p.rt.servers() {
				if s.pool != nil {
					s.pool.Delete()
				}
			}
		}
	})
	proc.Conf.SetObserver(proc)
	proc.OnStop(func() { proc.Conf.SetObserver(nil) })
	proc.globalMax.Store(int64(proc.Conf.Global.MaxConn))
	proc.newStreamRegistry()
	// The parker exists before the first accept: streams read proc.idle
	// without a lock.
	if pk, err := newParker(); err == nil {
		proc.idle = pk
		proc.OnStop(pk.closeAll)
	}
	// Nothing is accepted before every bind is open, as in HAProxy: a
	// server that is one of the process's own UNIX binds must be there
	// for the first request a TCP bind takes.
	proc.holdAccepts()
	for _, p := range proc.proxies {
		if !p.IsFrontend() || p.Disabled {
			continue
		}
		for _, b := range p.Binds {
			for _, a := range b.Addrs {
				if err := proc.listen(p, b, a); err != nil {
					proc.releaseAccepts()
					proc.closeListeners()
					proc.closeUnadopted()
					return fmt.Errorf("Starting frontend %s: cannot bind socket (%v) [%s]", p.Name, err, b.Addr)
				}
			}
		}
	}
	proc.releaseAccepts()
	proc.OnStop(proc.closeListeners)
	// The peers' local sockets may be among the adopted ones too.
	err = proc.startPeers()
	proc.closeUnadopted()
	if err != nil {
		proc.closeListeners()
		return err
	}
	if err := startChecks(proc); err != nil {
		return err
	}
	return startLogging(proc)
}

// listener is one listening socket of a bind line, for one shard.
type listener struct {
	ln    net.Listener
	fe    *proxy
	bind  *core.Bind
	shard int // -1: connections are spread over the shards
	unix  string
	// inherited is set for a bind fd@N: the socket is the parent's too,
	// and is never paused.
	inherited bool
	reg       *streamRegistry // the process's, for the connections accepted here
	// bindResv counts the accepts waiting on the bind's listeners (one
	// per listener at most), shared by them: see acquire.
	bindResv *atomic.Int64
}

func reusePortControl(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}

// bindControl sets, before bind(2), the socket options a bind line asks for.
func bindControl(b *core.Bind) func(network, address string, c syscall.RawConn) error {
	dev := core.BindParam(b, "interface")
	v6only := -1
	if core.BindFlag(b, "v6only") {
		v6only = 1
	} else if core.BindFlag(b, "v4v6") {
		v6only = 0
	}
	return func(network, address string, c syscall.RawConn) error {
		if err := reusePortControl(network, address, c); err != nil {
			return err
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			if dev != "" {
				if serr = unix.SetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE, dev); serr != nil {
					serr = fmt.Errorf("cannot bind listener to device '%s' (%v)", dev, serr)
					return
				}
			}
			if v6only >= 0 && strings.HasSuffix(network, "6") {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v6only)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}
}

// unixBindPerms gives a unix socket the mode and owner its bind line asks
// for, as HAProxy does after creating it. parseBind has checked the mode
// and names; uid and gid are read as HAProxy reads them, leading digits.
func unixBindPerms(b *core.Bind, path string) error {
	if m := core.BindParam(b, "mode"); m != "" {
		mode, err := strconv.ParseUint(m, 8, 32)
		if err != nil {
			return fmt.Errorf("invalid mode '%s'", m)
		}
		if err := os.Chmod(path, os.FileMode(mode)); err != nil {
			return err
		}
	}
	uid, gid := -1, -1
	if v := core.BindParam(b, "uid"); v != "" {
		uid = core.AtoiPrefix(v)
	}
	if v := core.BindParam(b, "user"); v != "" {
		u, err := user.Lookup(v)
		if err != nil {
			return fmt.Errorf("unknown user '%s'", v)
		}
		uid, _ = strconv.Atoi(u.Uid)
	}
	if v := core.BindParam(b, "gid"); v != "" {
		gid = core.AtoiPrefix(v)
	}
	if v := core.BindParam(b, "group"); v != "" {
		g, err := user.LookupGroup(v)
		if err != nil {
			return fmt.Errorf("unknown group '%s'", v)
		}
		gid, _ = strconv.Atoi(g.Gid)
	}
	if uid >= 0 || gid >= 0 {
		return os.Chown(path, uid, gid)
	}
	return nil
}

func (proc *Process) listen(fe *proxy, b *core.Bind, addr string) error {
	kind, rest, _ := strings.Cut(addr, ":")
	switch kind {
	case "fd":
		n, _ := strconv.Atoi(rest)
		f := os.NewFile(uintptr(n), "fd@"+rest)
		if f == nil {
			return fmt.Errorf("invalid file descriptor %d", n)
		}
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return err
		}
		proc.addListener(&listener{ln: ln, fe: fe, bind: b, shard: -1, inherited: true})
	case "unix":
		if ok, err := proc.adoptListeners(fe, b, kind, rest); ok || err != nil {
			return err
		}
		if fi, err := os.Lstat(rest); err == nil && fi.Mode()&os.ModeSocket != 0 {
			os.Remove(rest)
		}
		ln, err := net.Listen("unix", rest)
		if err == nil {
			// closeListeners removes the file, unless another process
			// has taken the socket.
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			err = setBacklog(ln, proc.backlog(fe, b))
		}
		if err == nil {
			if err = unixBindPerms(b, rest); err != nil {
				ln.Close()
			}
		}
		if err != nil {
			return err
		}
		proc.addListener(&listener{ln: ln, fe: fe, bind: b, shard: -1, unix: rest})
	default:
		if ok, err := proc.adoptListeners(fe, b, kind, rest); ok || err != nil {
			return err
		}
		lc := net.ListenConfig{Control: bindControl(b)}
		for sh := 0; sh < proc.Threads; sh++ {
			ln, err := lc.Listen(context.Background(), "tcp", rest)
			if err == nil {
				err = setBacklog(ln, proc.backlog(fe, b))
			}
			if err != nil {
				return err
			}
			proc.addListener(&listener{ln: ln, fe: fe, bind: b, shard: sh})
		}
	}
	return nil
}

// backlog is the listen queue length HAProxy gives a bind: its own
// `backlog`, else the frontend's, else the bind's maxconn, else the
// frontend's, else the process's. The kernel caps it at
// net.core.somaxconn.
func (proc *Process) backlog(fe *proxy, b *core.Bind) int {
	for _, v := range []int{b.Backlog, fe.Backlog, b.MaxConn, fe.MaxConn} {
		if v > 0 {
			return v
		}
	}
	return proc.Conf.HardMaxConn()
}

// setBacklog sets a listening socket's queue length. Go's listener takes
// none (it asks for somaxconn); on Linux, listen(2) on a socket that is
// already listening changes the length in place.
func setBacklog(ln net.Listener, n int) error {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), n) }); err != nil {
		return err
	}
	if lerr != nil {
		ln.Close()
	}
	return lerr
}

func (proc *Process) addListener(l *listener) {
	l.reg = proc.registry()
	proc.lmu.Lock()
	if proc.bindResv == nil {
		proc.bindResv = map[*core.Bind]*atomic.Int64{}
	}
	if l.bindResv = proc.bindResv[l.bind]; l.bindResv == nil {
		l.bindResv = new(atomic.Int64)
		proc.bindResv[l.bind] = l.bindResv
	}
	proc.listeners = append(proc.listeners, l)
	hold := proc.holding
	if hold {
		proc.held = append(proc.held, l)
	}
	proc.lmu.Unlock()
	proc.active.Add(1)
	if !hold {
		go proc.acceptLoop(l)
	}
}

// holdAccepts makes the accept loops of the listeners opened from now on
// wait for releaseAccepts.
func (proc *Process) holdAccepts() {
	proc.lmu.Lock()
	proc.holding = true
	proc.lmu.Unlock()
}

// releaseAccepts starts the accept loops holdAccepts held.
func (proc *Process) releaseAccepts() {
	proc.lmu.Lock()
	held := proc.held
	proc.held, proc.holding = nil, false
	proc.lmu.Unlock()
	for _, l := range held {
		go proc.acceptLoop(l)
	}
}

func (proc *Process) closeListeners() {
	proc.lmu.Lock()
	ls := proc.listeners
	proc.listeners = nil
	handedOver := proc.handedOver
	proc.lmu.Unlock()
	for _, l := range ls {
		l.ln.Close()
		if l.unix != "" && !handedOver {
			os.Remove(l.unix)
		}
	}
}

// Listeners returns the addresses goha listens on for frontend fe, in
// bind order (tests and the demo use it to find ports chosen by the system).
func (proc *Process) Listeners(fe *core.Proxy) []net.Addr {
	proc.lmu.Lock()
	defer proc.lmu.Unlock()
	var out []net.Addr
	for _, l := range proc.listeners {
		if l.fe.Proxy == fe {
			out = append(out, l.ln.Addr())
		}
	}
	return out
}

// connSlot counts connections against global, frontend and bind maxconn;
// accept waits while any is reached, as HAProxy pauses its listeners.
func (proc *Process) acquire(l *listener) bool {
	// Each limit counts the connections being served and the accepts
	// reserved by accept loops waiting in accept(2), this one's included:
	// several loops (one per thread and bind address) may wait on the same
	// frontend at once, and each may take a connection. A reservation is
	// not a session, so the counters the stats show stay exact.
	within := func(limit int64, cur, resv *atomic.Int64) bool {
		return limit <= 0 || cur.Load()+resv.Load() <= limit
	}
	for {
		// A shut frontend's loop ends here when it was not waiting in
		// accept(2) as its listener closed.
		if proc.stoppingNow() || l.fe.FrontendShut() {
			return false
		}
		if !l.fe.FrontendStopped() {
			proc.acceptResv.Add(1)
			l.fe.acceptResv.Add(1)
			l.bindResv.Add(1)
			if within(proc.globalLimit(), &proc.curConns, &proc.acceptResv) &&
				within(l.fe.MaxConnLimit(), &l.fe.FE.Scur, &l.fe.acceptResv) &&
				within(int64(l.bind.MaxConn), &l.bind.Counters.Scur, l.bindResv) {
				return true
			}
			proc.unreserve(l)
		}
		select {
		case <-proc.connFreed:
		case <-time.After(100 * time.Millisecond):
		case <-proc.stopping:
			return false
		}
	}
}

// holdWhileDisabled keeps a connection accepted just before `disable
// frontend` waiting, as the kernel's backlog keeps those of a paused
// HAProxy listener, until the frontend is enabled again. It returns false
// when the frontend is shut down or the process stops meanwhile.
func (proc *Process) holdWhileDisabled(l *listener) bool {
	for l.fe.FrontendStopped() {
		if l.fe.FrontendShut() || proc.stoppingNow() {
			return false
		}
		select {
		case <-proc.connFreed:
		case <-time.After(100 * time.Millisecond):
		case <-proc.stopping:
			return false
		}
	}
	return true
}

// wakeAcceptLoops lets accept loops waiting for room look again.
func (proc *Process) wakeAcceptLoops() {
	select {
	case proc.connFreed <- struct{}{}:
	default:
	}
}

// unreserve gives back an accept that acquire reserved.
func (proc *Process) unreserve(l *listener) {
	proc.acceptResv.Add(-1)
	l.fe.acceptResv.Add(-1)
	l.bindResv.Add(-1)
}

func (proc *Process) release() {
	proc.curConns.Add(-1)
	select {
	case proc.connFreed <- struct{}{}:
	default:
	}
}

func (proc *Process) acceptLoop(l *listener) {
	defer proc.active.Done()
	var rr atomic.Uint32
	for {
		if !proc.acquire(l) {
			return
		}
		c, err := l.ln.Accept()
		if err != nil {
			proc.unreserve(l)
			proc.wakeAcceptLoops()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// EMFILE and friends: back off rather than spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		// The session is counted before the reservation is given back, so
		// that no other loop sees room in between.
		now := time.Now()
		proc.curConns.Add(1)
		l.fe.FE.SessionStart(now)
		l.bind.Counters.SessionStart(now)
		proc.unreserve(l)
		if !proc.holdWhileDisabled(l) {
			// shutdown frontend or a stop while the connection waited: it
			// goes as one still in the backlog would.
			c.Close()
			l.fe.FE.SessionEnd()
			l.bind.Counters.SessionEnd()
			proc.release()
			continue
		}
		shard := l.shard
		if shard < 0 {
			shard = int(rr.Add(1)) % proc.Threads
		}
		proc.CountAccepted(shard)
		proc.streams.Add(1)
		go proc.serveConn(l, c, shard, now)
	}
}

// connState is a client connection's bookkeeping, which outlives the
// goroutines serving it when the connection is parked while idle.
type connState struct {
	l     *listener
	c     net.Conn
	shard int
	start time.Time
	// http keeps the parsed-request limits and the first-request flag
	// across parking.
	notFirst bool
	ent      streamEntry // the stream's place in show sess
	priv     privConn    // the session's private server connection
	vars     sample.Vars // the session's variables
	// pending is what a tcp stream read before it became HTTP, served
	// first (see serveTCP).
	pending []byte
	// src and dst are the session's addresses (a PROXY header's, or
	// what tcp-request connection and session rules set); fcSrc and
	// fcDst the connection's (what tcp-request connection rules set).
	src, dst     net.Addr
	fcSrc, fcDst net.Addr
	dstMoved     bool        // a rule changed dst: a transparent backend goes there
	trk          stkCounters // what the session tracks (tcp-request connection and session rules)
}

// view starts the sample view of a stream of the session.
func (cs *connState) view(v *sample.Request) {
	v.Client, v.Local, v.ConnClient, v.ConnLocal = cs.src, cs.dst, cs.fcSrc, cs.fcDst
}

func (proc *Process) serveConn(l *listener, c net.Conn, shard int, now time.Time) {
	fe := l.fe
	fe.FE.Conn(now)
	proc.global.Conn(now)
	proc.global.SessionStart(now)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	sock := c
	vars := sample.Vars{Proc: proc.procVars}
	// The connection's addresses, as its rules may change them.
	fcSrc, fcDst := c.RemoteAddr(), c.LocalAddr()
	dstMoved, expectProxy := false, false
	var trk stkCounters
	if len(fe.tcp.conn) > 0 {
		// Before any handshake (PROXY header, TLS), as in HAProxy.
		v := &sample.Request{Client: fcSrc, Local: fcDst, Vars: &vars}
		sc := ruleScratch{tr: &tracking{sess: &trk}, trackIn: &trk}
		if !runTCPRules(fe.tcp.conn, v, &sc) {
			fe.FE.Dcon.Add(1)
			proc.endConn(&connState{l: l, c: c, shard: shard, start: now, trk: trk})
			return
		}
		dstMoved = v.Local != fcDst
		fcSrc, fcDst = v.Client, v.Local
		expectProxy = sc.expectProxy
	}
	src, dst := fcSrc, fcDst
	if expectProxy || core.BindFlag(l.bind, "accept-proxy") {
		// The header comes before anything else, TLS included, and must
		// arrive within the client timeout.
		if t := fe.Timeouts.Client; t > 0 {
			c.SetReadDeadline(now.Add(t))
		}
		pc, err := readProxyHeader(c)
		if err != nil {
			proc.endConn(&connState{l: l, c: c, shard: shard, start: now, trk: trk})
			return
		}
		c.SetReadDeadline(time.Time{})
		c = pc
		// The header gives the session's addresses, as in HAProxy 2.6:
		// fc_src and fc_dst stay the connection's.
		if p, ok := pc.(*proxyConn); ok {
			if p.src != nil {
				src = p.src
			}
			if p.dst != nil {
				dst = p.dst
			}
		}
	}
	if l.bind.TLS() != nil {
		c = tls.Server(c, l.bind.TLS())
	}
	cs := &connState{l: l, c: c, shard: shard, start: now, vars: vars, src: src, dst: dst, fcSrc: fcSrc, fcDst: fcDst, dstMoved: dstMoved, trk: trk}
	if len(fe.tcp.sess) > 0 {
		v := &sample.Request{Vars: &cs.vars}
		cs.view(v)
		sc := ruleScratch{tr: &tracking{sess: &cs.trk}, trackIn: &cs.trk}
		if !runTCPRules(fe.tcp.sess, v, &sc) {
			fe.FE.Dses.Add(1)
			proc.endConn(cs)
			return
		}
		cs.dstMoved = cs.dstMoved || v.Local != cs.dst
		cs.src, cs.dst = v.Client, v.Local
	}
	cs.trk.countSession()
	// Listed once any PROXY header is read, as HAProxy's stream begins
	// after it; an HTTP connection first waits for a request, a tcp
	// stream goes to its server at once.
	phase := PhaseConnect
	if fe.Mode == core.ModeHTTP {
		phase = PhaseRequest
	}
	if l.reg != nil {
		l.reg.add(&cs.ent, l, sock, cs.src, shard, now, phase)
	}
	if fe.Mode == core.ModeHTTP {
		proc.runHTTP(cs)
		return
	}
	if proc.serveTCP(fe, c, shard, now, cs) {
		proc.runHTTP(cs)
		return
	}
	proc.endConn(cs)
}

// runHTTP serves a client connection until it closes or is parked.
func (proc *Process) runHTTP(cs *connState) {
	if proc.serveHTTP(cs) {
		return // parked: a later goroutine carries on
	}
	proc.endConn(cs)
}

// endConn releases what serveConn counted.
func (proc *Process) endConn(cs *connState) {
	cs.trk.release()
	cs.ent.remove()
	cs.priv.close()
	cs.c.Close()
	cs.l.fe.FE.SessionEnd()
	cs.l.bind.Counters.SessionEnd()
	proc.global.SessionEnd()
	proc.release()
	proc.streams.Done()
}

// peersHandOffTimeout bounds the teaching of the stick tables to a new
// process: HAProxy's new process waits as long for its old one.
const peersHandOffTimeout = 5 * time.Second

// SoftStop stops accepting, then waits for the streams in flight and for
// the new process to learn the stick tables (at most grace, when set)
// before returning.
func (proc *Process) SoftStop(grace time.Duration) {
	proc.softStopping.Store(true)
	proc.closeListeners()
	if proc.idle != nil {
		proc.idle.closeAll()
	}
	proc.lmu.Lock()
	handedOver := proc.handedOver
	proc.lmu.Unlock()
	taught := make(chan struct{})
	go func() {
		// The process that took the sockets over learns the stick
		// tables from this one before it leaves, as HAProxy's does.
		if handedOver {
			proc.handOffPeers(peersHandOffTimeout)
		}
		close(taught)
	}()
	done := make(chan struct{})
	go func() {
		// The accept loops end first (closed listeners, a stopping
		// process): a connection one of them accepted last is counted
		// before the wait for the streams begins, as WaitGroup requires.
		proc.active.Wait()
		proc.streams.Wait()
		<-taught
		close(done)
	}()
	if grace > 0 {
		select {
		case <-done:
		case <-time.After(grace):
		}
		return
	}
	<-done
}

func (proc *Process) stoppingNow() bool {
	select {
	case <-proc.stopping:
		return true
	default:
		return proc.softStopping.Load()
	}
}

// globalLimit is the process maxconn in force: set at run time (set
// maxconn global) or configured; 0 means no limit.
func (proc *Process) globalLimit() int64 {
	if v := proc.Conf.LiveMaxConn(); v > 0 {
		return v
	}
	return proc.globalMax.Load()
}

// closeFrontendListeners stops a frontend for good (shutdown frontend).
func (proc *Process) closeFrontendListeners(fe *proxy) {
	proc.lmu.Lock()
	keep := proc.listeners[:0]
	var gone []*listener
	for _, l := range proc.listeners {
		if l.fe == fe {
			gone = append(gone, l)
		} else {
			keep = append(keep, l)
		}
	}
	proc.listeners = keep
	proc.lmu.Unlock()
	for _, l := range gone {
		l.ln.Close()
		if l.unix != "" {
			os.Remove(l.unix)
		}
	}
}
