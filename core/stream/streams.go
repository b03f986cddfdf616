package stream

import (
	"cmp"
	"context"
	"crypto/tls"
	"goha/core"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The runtime API's show sess and shutdown session see the data path
// through a registry of client streams: every client connection is listed
// from the moment it is served (after any PROXY header) to its close. In
// HAProxy a stream is a request; in goha it is the client connection, which
// carries its requests one after the other, so a keep-alive connection
// between requests is listed too, waiting for its next request.
//
// The registry is on the connection path, whose budget is counted in
// microseconds, so it costs what sessionSet (wire.go) costs: a connection
// is linked into its thread's shard under that shard's lock, with the links
// inside the connection's own state (no allocation); a request then only
// stores, with atomics, what show sess prints (backend, server, phase,
// calls). The rest show sess reads from the connection when asked.

// streamIDBase makes stream ids look like the heap pointers HAProxy prints,
// and keeps them apart from the CLI's session ids (runtime's
// cliSessionBase, 0x7f0000000000).
const streamIDBase = 0x560000000000

// StreamPhase is where a stream is, as show sess describes it.
type StreamPhase uint8

const (
	// PhaseRequest: an HTTP connection waits for, or reads, a request
	// head (between two requests too).
	PhaseRequest StreamPhase = iota
	// PhaseConnect: a server is being picked (queue included) or
	// connected to.
	PhaseConnect
	// PhaseResponse: the request went to the server, whose response head
	// has not come yet.
	PhaseResponse
	// PhaseBody: a response body is relayed to the client.
	PhaseBody
	// PhaseTunnel: bytes are relayed both ways, in a tcp stream or in an
	// HTTP one after an upgrade.
	PhaseTunnel
)

// streamRegistry lists a process's client streams, one shard per thread.
type streamRegistry struct {
	shards []streamShard
	seq    atomic.Uint64 // streams listed so far: their uniq ids
	// epoch is HAProxy's stream_epoch: show sess advances it, and a
	// stream keeps the value it had when the stream began, so that an
	// operator can tell which streams began after a given dump.
	epoch atomic.Uint32
}

// streamShard is one thread's streams.
type streamShard struct {
	mu   sync.Mutex // guards the list and, of every listed entry, the fields marked so
	head *streamEntry
	_    [48]byte // keeps shards on separate cache lines
}

// streamEntry is a client stream's place in the registry and what show
// sess prints about it. It lives in the connection's state (connState), so
// it outlives the goroutines of a connection parked while idle.
type streamEntry struct {
	// Set once, before the entry is listed.
	id, uniq uint64
	epoch    uint32
	start    time.Time
	l        *listener
	sock     net.Conn // as accepted, under any PROXY header or TLS layer
	src      net.Addr // the client, as a PROXY header may have told it

	// Stored by the stream as it moves on, read by show sess from
	// another goroutine.
	be    atomic.Pointer[proxy]
	srv   atomic.Pointer[server]
	calls atomic.Uint32
	// phase is the StreamPhase in the low byte and the milliseconds
	// from start to its beginning above: one store per change.
	phase atomic.Uint64
	// killed is set by shutdown session, so that a stream that was
	// opening a server connection when it was killed closes it itself.
	killed atomic.Bool

	// Guarded by sh.mu.
	sh         *streamShard // the shard it is listed in; nil when not listed
	prev, next *streamEntry
	hc         *hconn             // the HTTP state serving the connection; nil while parked
	tcpSrv     net.Conn           // a tcp stream's server connection, once connected
	cancel     context.CancelFunc // stops a tcp stream's server pick and connect
}

// newStreamRegistry makes proc's registry; Run calls it before the first
// listener opens. A listener keeps the pointer, so that a connection never
// looks it up.
func (proc *Process) newStreamRegistry() *streamRegistry {
	reg := &streamRegistry{shards: make([]streamShard, max(proc.Threads, 1))}
	proc.reg.Store(reg)
	return reg
}

// registry is the process's streams; nil before Run.
func (proc *Process) registry() *streamRegistry { return proc.reg.Load() }

// add lists e, a stream accepted by l on thread shard, which began at
// start. sock is the accepted connection, src the client's address.
func (reg *streamRegistry) add(e *streamEntry, l *listener, sock net.Conn, src net.Addr, shard int, start time.Time, phase StreamPhase) {
	e.uniq = reg.seq.Add(1) - 1
	e.id = streamIDBase + (e.uniq+1)<<4
	e.epoch = reg.epoch.Load()
	e.l, e.sock, e.src, e.start = l, sock, src, start
	e.calls.Store(1) // the accept
	e.phase.Store(uint64(phase))
	sh := &reg.shards[shard%len(reg.shards)]
	sh.mu.Lock()
	e.sh, e.prev, e.next = sh, nil, sh.head
	if sh.head != nil {
		sh.head.prev = e
	}
	sh.head = e
	sh.mu.Unlock()
}

// remove takes e off the registry, if it is listed. Only the goroutine
// that owns the connection calls it, once the stream has ended.
func (e *streamEntry) remove() {
	sh := e.sh
	if sh == nil {
		return
	}
	sh.mu.Lock()
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		sh.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.sh, e.prev, e.next, e.hc, e.tcpSrv, e.cancel = nil, nil, nil, nil, nil, nil
	sh.mu.Unlock()
}

// setHTTP records the HTTP state now serving the connection (nil when it
// leaves it): a kill must reach the exchange's server connection, and
// must never reach an hconn that went back to its pool and serves another
// connection, hence the lock.
func (e *streamEntry) setHTTP(hc *hconn) {
	if sh := e.sh; sh != nil {
		sh.mu.Lock()
		e.hc = hc
		sh.mu.Unlock()
	}
}

// setTCP records what a kill must stop in a tcp stream: its connect
// (cancel), then its server connection (sc). A kill that came first finds
// nothing to stop and is done here instead.
func (e *streamEntry) setTCP(cancel context.CancelFunc, sc net.Conn) {
	sh := e.sh
	if sh == nil {
		return
	}
	sh.mu.Lock()
	e.cancel, e.tcpSrv = cancel, sc
	if e.killed.Load() {
		e.stop()
	}
	sh.mu.Unlock()
}

// setPhase records that the stream entered p at t. A plain store: the
// stream is the only writer.
func (e *streamEntry) setPhase(p StreamPhase, t time.Time) {
	ms := max(t.Sub(e.start)/time.Millisecond, 0)
	e.phase.Store(uint64(ms)<<8 | uint64(p))
}

// kill ends the stream as shutdown session does: the client connection is
// shut down both ways (its readers and writers wake up with an end of
// file or a broken pipe, and the stream ends as if the client had gone),
// and so is what the stream is waiting on, on the server side. Shutting
// down rather than closing keeps the descriptor, which a parked
// connection's watcher still refers to by number, until the stream closes
// it itself. It runs under the shard's lock and does not wait.
func (e *streamEntry) kill() {
	e.killed.Store(true)
	shutdownConn(e.sock)
	e.stop()
}

// stop cuts the server side. Under the shard's lock.
func (e *streamEntry) stop() {
	if e.hc != nil {
		e.hc.Close()
	}
	if e.cancel != nil {
		e.cancel()
	}
	if e.tcpSrv != nil {
		shutdownConn(e.tcpSrv)
	}
}

// baseConn is the socket under c's TLS or PROXY layers.
func baseConn(c net.Conn) net.Conn {
	for {
		under, ok := innerConn(c)
		if !ok {
			return c
		}
		c = under
	}
}

// innerConn is the connection c's TLS, raw or PROXY layer wraps.
func innerConn(c net.Conn) (net.Conn, bool) {
	switch x := c.(type) {
	case *tls.Conn:
		return x.NetConn(), true
	case *rawConn:
		return x.Conn, true
	case *proxyConn:
		return x.Conn, true
	}
	return nil, false
}

// shutdownConn shuts c's socket down both ways, or closes c when it has no
// socket.
func shutdownConn(c net.Conn) {
	if sc, ok := baseConn(c).(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			if rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) }) == nil {
				return
			}
		}
	}
	c.Close()
}

// connFD is c's socket descriptor, or -1 when it has none or is closed.
func connFD(c net.Conn) int {
	fd := -1
	if sc, ok := baseConn(c).(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			rc.Control(func(f uintptr) { fd = int(f) })
		}
	}
	return fd
}

// SessionInfo is what show sess prints about one client stream.
type SessionInfo struct {
	ID     uint64 // unique and never 0; printed as a pointer
	UniqID uint64 // streams accepted before this one (HAProxy's id=)
	Epoch  uint32 // show sess dumps made before it began
	Start  time.Time
	Proto  string // tcpv4, tcpv6 or unix_stream: the listener's
	TLS    bool   // the listener speaks TLS

	Frontend *core.Proxy
	Bind     *core.Bind
	Src      net.Addr // the client (as a PROXY header told it)
	Dst      net.Addr // the address the client connected to
	FD       int      // the client socket's descriptor; -1 once closed

	// Backend is nil until the stream is routed, and for an HTTP
	// connection between requests; Server is nil until one is chosen.
	Backend   *core.Proxy
	Server    *core.Server
	SrvFD     int      // the server connection's descriptor, -1 for none
	SrvLocal  net.Addr // the server connection's addresses, nil for none
	SrvRemote net.Addr

	Phase      StreamPhase
	PhaseStart time.Time
	Calls      uint32 // the accept, each request, a tcp stream's connect
	Thread     int    // the thread (0-based) serving it
}

// Sessions lists the client streams in flight, oldest first.
func (proc *Process) Sessions() []SessionInfo {
	reg := proc.registry()
	if reg == nil {
		return nil
	}
	var out []SessionInfo
	for i := range reg.shards {
		sh := &reg.shards[i]
		sh.mu.Lock()
		for e := sh.head; e != nil; e = e.next {
			si := e.info()
			si.Thread = i
			out = append(out, si)
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return cmp.Compare(a.UniqID, b.UniqID) })
	return out
}

// info reads e for show sess. Under the shard's lock, which keeps e.hc
// and e.tcpSrv where they are.
func (e *streamEntry) info() SessionInfo {
	ph := e.phase.Load()
	si := SessionInfo{
		ID: e.id, UniqID: e.uniq, Epoch: e.epoch, Start: e.start,
		Frontend: e.l.fe.Proxy, Bind: e.l.bind, TLS: e.l.bind.TLS() != nil,
		Src: e.src, Dst: e.sock.LocalAddr(), FD: connFD(e.sock),
		SrvFD: -1, Phase: StreamPhase(ph & 0xff),
		PhaseStart: e.start.Add(time.Duration(ph>>8) * time.Millisecond),
		Calls:      e.calls.Load(),
	}
	switch a := si.Dst.(type) {
	case *net.TCPAddr:
		si.Proto = "tcpv6"
		if a.IP.To4() != nil {
			si.Proto = "tcpv4"
		}
	default:
		si.Proto = "unix_stream"
	}
	if si.Phase == PhaseRequest {
		// Between requests the connection belongs to no backend.
		return si
	}
	if be := e.be.Load(); be != nil {
		si.Backend = be.Proxy
	}
	if s := e.srv.Load(); s != nil {
		si.Server = s.Server
	}
	var sc net.Conn
	if e.hc != nil {
		if c := e.hc.srvc.Load(); c != nil {
			sc = c.Conn
		}
	} else {
		sc = e.tcpSrv
	}
	if sc != nil {
		si.SrvFD, si.SrvLocal, si.SrvRemote = connFD(sc), sc.LocalAddr(), sc.RemoteAddr()
	}
	return si
}

// NextSessEpoch advances the stream epoch for a show sess dump and
// returns the one the dump belongs to.
func (proc *Process) NextSessEpoch() uint32 {
	if reg := proc.registry(); reg != nil {
		return reg.epoch.Add(1) - 1
	}
	return 0
}

// ShutdownSession kills the client stream whose id is id, as shutdown
// session does (see kill); false when there is none. It does not wait for
// the stream to end.
func (proc *Process) ShutdownSession(id uint64) bool {
	reg := proc.registry()
	if reg == nil || id == 0 {
		return false
	}
	for i := range reg.shards {
		sh := &reg.shards[i]
		sh.mu.Lock()
		for e := sh.head; e != nil; e = e.next {
			if e.id == id {
				e.kill()
				sh.mu.Unlock()
				return true
			}
		}
		sh.mu.Unlock()
	}
	return false
}
