package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"goha/core"
	"goha/core/check"
	"goha/core/http1"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"goha/core/lb"
	"goha/core/pool"
)

// Errors of server assignment, mapped to statuses and log flags by the
// streams that meet them.
var (
	errNoServer     = errors.New("core: no server available")
	errQueueTimeout = errors.New("core: queue timeout")
	errConnect      = errors.New("core: cannot connect to server")
	errStopping     = errors.New("core: process stopping")
)

// backendRT is a backend's run-time machinery: its picker and its queue.
type backendRT struct {
	bal    lb.Balance
	hash   lb.HashType
	picker lb.Picker
	pools  *pool.Set[*srvConn]
	global *core.Global
	// direct, when set, takes every stream: the backend dispatches or is
	// transparent instead of balancing over its servers.
	direct *server

	// byIdx maps picker indices to servers. Indices never move: a deleted
	// server leaves a nil, an added one takes the next index. Replaced as
	// a whole (copy on write) under idxMu.
	idxMu sync.Mutex
	byIdx atomic.Pointer[[]*server]

	// qmu guards waiters, the backend queue: streams waiting for a server
	// slot, woken in order when a server releases a connection.
	qmu     sync.Mutex
	waiters []chan struct{}
	nwait   atomic.Int32 // len(waiters), read without qmu by releases
}

// server returns the server at picker index i, or nil.
func (rt *backendRT) server(i int) *server {
	l := *rt.byIdx.Load()
	if i >= 0 && i < len(l) {
		return l[i]
	}
	return nil
}

// servers lists the backend's servers, in picker order.
func (rt *backendRT) servers() []*server {
	l := *rt.byIdx.Load()
	out := make([]*server, 0, len(l))
	for _, s := range l {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// find returns the process's view of the model's server cs, or nil.
func (rt *backendRT) find(cs *core.Server) *server {
	for _, s := range *rt.byIdx.Load() {
		if s != nil && s.Server == cs {
			return s
		}
	}
	return nil
}

// lbServer describes s to the load balancer.
func lbServer(s *server) lb.Server {
	return lb.Server{ID: s.ID, Weight: s.UWeight(), Backup: s.Backup, Usable: s.Usable(), MaxConn: s.MaxConnLive()}
}

// initBackend builds p's picker and server pools. Called once at start.
func (proc *Process) initBackend(p *proxy) error {
	bal, err := lb.ParseBalance(p.Balance)
	if err != nil {
		return err
	}
	var ht lb.HashType
	if len(p.HashType) > 0 {
		ht, err = lb.ParseHashType(p.HashType, core.ExtraHashes)
		if err != nil {
			return err
		}
	} else {
		ht, _ = lb.ParseHashType([]string{"map-based"}, nil)
	}
	rt := &backendRT{bal: bal, hash: ht, pools: proc.pools, global: &proc.Conf.Global}
	model := p.ServerList()
	list := make([]*server, len(model))
	srvs := make([]lb.Server, len(model))
	for i, cs := range model {
		list[i] = &server{Server: cs, be: p, idx: i}
		if err := proc.compileSNI(list[i]); err != nil {
			return err
		}
		srvs[i] = lbServer(list[i])
	}
	// The picker may ask for served counts while it is built.
	byIdx := list
	rt.byIdx.Store(&byIdx)
	rt.picker, err = lb.New(lb.Config{
		Balance: bal, Hash: ht, AllBackups: p.AllBackups, Shards: proc.Threads, Servers: srvs,
		Served: func(i int) int {
			if s := rt.server(i); s != nil {
				return s.Served()
			}
			return 0
		},
	})
	if err != nil {
		return err
	}
	p.rt = rt
	if p.Direct() != core.DirectNone {
		if rt.direct, err = proc.newDirectServer(p); err != nil {
			return err
		}
	}
	reuse, err := pool.ParseMode(p.HTTPReuse)
	if err != nil {
		reuse = pool.ReuseSafe
	}
	for _, s := range list {
		if err := proc.initServerPool(s, reuse); err != nil {
			return err
		}
		if err := s.RefreshTLS(&proc.Conf.Global); err != nil {
			return fmt.Errorf("server '%s': %v", s.Name, err)
		}
	}
	return nil
}

func (proc *Process) initServerPool(s *server, reuse pool.Mode) error {
	s.sessions.init(proc.Threads)
	st := pool.DefaultSettings()
	st.LowConn = s.PoolLowConn
	st.MaxConn = s.PoolMaxConn
	st.PurgeDelay = s.PoolPurgeDelay
	st.MaxReuse = s.MaxReuse
	st.Mode = reuse
	ps, err := proc.pools.NewServer(st, nil)
	if err != nil {
		return err
	}
	s.pool = ps
	return nil
}

// lbUpdate tells the picker that s changed (weight, state, maxconn).
func (p *proxy) lbUpdate(s *server) {
	if p.rt != nil {
		p.rt.picker.Update(s.idx, lbServer(s))
	}
	p.wakeQueue()
}

// pick chooses a server for a new stream, waiting in the backend queue
// when every usable server is full, until `timeout queue` (or connect when
// unset, as HAProxy does).
func (p *proxy) pick(ctx context.Context, key lb.Key, avoid *server) (*server, time.Duration, error) {
	return p.pickFor(ctx, key, avoid, nil)
}

// pickFor is pick, or, when want is set, a wait for a slot on that server
// (a persistence cookie chose it), in the backend queue.
func (p *proxy) pickFor(ctx context.Context, key lb.Key, avoid, want *server) (*server, time.Duration, error) {
	rt := p.rt
	if rt.direct != nil {
		rt.direct.TakeSlot()
		return rt.direct, 0, nil
	}
	av := -1
	if avoid != nil {
		av = avoid.idx
	}
	start := time.Now()
	var deadline <-chan time.Time
	queued := false
	defer func() {
		if queued {
			p.BE.Qcur.Add(-1)
		}
	}()
	// w is this stream's place in the queue once it has one. A stream
	// queues first and picks again before it sleeps, so that a slot freed
	// in between (whose release saw an empty queue) is not missed.
	var w chan struct{}
	for {
		i := -1
		if want != nil {
			i = want.idx
		} else {
			i = rt.picker.Pick(key, av)
		}
		if i >= 0 {
			if s := rt.server(i); s != nil {
				// The picker skips full servers, but two streams may race
				// for the last slot: the loser queues.
				if s.TakeSlot() {
					if w != nil {
						p.dropWaiter(w)
					}
					rt.picker.Take(i)
					return s, time.Since(start), nil
				}
			}
		} else if !p.anyUsableFull() {
			if w != nil {
				p.dropWaiter(w)
			}
			// HAProxy counts a backend without a usable server as a
			// connection error of the backend's own.
			p.BE.Econ.Add(1)
			return nil, time.Since(start), errNoServer
		}
		if deadline == nil {
			t := p.Timeouts.Queue
			if t == 0 {
				t = p.Timeouts.Connect
			}
			if t == 0 {
				t = 5 * time.Second
			}
			deadline = time.After(t)
			queued = true
			core.StoreMax(&p.BE.Qmax, p.BE.Qcur.Add(1))
		}
		if w == nil {
			w = make(chan struct{})
			rt.qmu.Lock()
			rt.waiters = append(rt.waiters, w)
			rt.nwait.Add(1)
			rt.qmu.Unlock()
			continue
		}
		select {
		case <-w:
			w = nil // the waker took it off the queue
		case <-deadline:
			p.dropWaiter(w)
			return nil, time.Since(start), errQueueTimeout
		case <-ctx.Done():
			p.dropWaiter(w)
			return nil, time.Since(start), ctx.Err()
		}
	}
}

func (p *proxy) dropWaiter(w chan struct{}) {
	rt := p.rt
	rt.qmu.Lock()
	for i, x := range rt.waiters {
		if x == w {
			rt.waiters = append(rt.waiters[:i], rt.waiters[i+1:]...)
			rt.nwait.Add(-1)
			break
		}
	}
	rt.qmu.Unlock()
}

// wakeQueue lets the oldest queued stream try again.
func (p *proxy) wakeQueue() {
	rt := p.rt
	if rt == nil || rt.nwait.Load() == 0 {
		// Nobody queues (the common case): no lock on the release path.
		return
	}
	rt.qmu.Lock()
	if len(rt.waiters) > 0 {
		w := rt.waiters[0]
		rt.waiters = rt.waiters[1:]
		rt.nwait.Add(-1)
		close(w)
	}
	rt.qmu.Unlock()
}

// anyUsableFull says whether waiting can help: some usable server is only
// full, not down.
func (p *proxy) anyUsableFull() bool {
	for _, s := range p.ServerList() {
		if s.Usable() && s.MaxConnLive() > 0 {
			return true
		}
	}
	return false
}

// releaseSlot undoes TakeSlot and lets a queued stream in.
func (s *server) releaseSlot() {
	s.ReleaseSlot()
	if rt := s.be.rt; rt != nil && s.idx >= 0 {
		rt.picker.Drop(s.idx)
	}
	s.be.wakeQueue()
}

// dialServer opens a new connection to s for the stream of client
// connection client (a server without port takes the client's
// destination port; a transparent backend's, its destination). src and
// dst are the stream's addresses, which a send-proxy server gets first,
// with tlvs in a version 2 header.
func (s *server) dialServer(ctx context.Context, client net.Conn, src, dst net.Addr, tlvs []byte, timeout time.Duration, sni string) (net.Conn, uint32, error) {
	a := s.Addr()
	if s.direct == core.DirectTransparent {
		dst, ok := originalDst(client)
		if !ok {
			return nil, 0, errConnect
		}
		a = &core.ServerAddr{IP: dst.Addr(), Port: int(dst.Port())}
	}
	gen := uint32(0)
	if s.pool != nil {
		gen = s.pool.Gen()
	}
	d := net.Dialer{Timeout: timeout}
	var c net.Conn
	var err error
	if a.Unix != "" {
		c, err = d.DialContext(ctx, "unix", a.Unix)
	} else {
		if !a.IP.IsValid() || a.IP.IsUnspecified() {
			return nil, gen, errConnect
		}
		port := a.Port
		if port == 0 {
			port = clientPort(client)
		}
		if s.Socks4 != "" {
			c, err = dialSocks4(ctx, &d, s.Socks4, netip.AddrPortFrom(a.IP, uint16(port)), timeout)
		} else {
			c, err = d.DialContext(ctx, "tcp", net.JoinHostPort(a.IP.String(), strconv.Itoa(port)))
		}
	}
	if err != nil {
		return nil, gen, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if s.SendProxy || s.SendProxyV2 {
		// Before TLS, as in HAProxy; it goes with the first bytes.
		var hdr [64]byte
		if _, err := c.Write(appendProxyHeader(hdr[:0], s.SendProxyV2, src, dst, tlvs)); err != nil {
			c.Close()
			return nil, gen, err
		}
	}
	// TLS runs over a UNIX socket as over TCP.
	if tcfg := s.TLSConfig(); tcfg != nil {
		c, err = tlsHandshake(c, tcfg, timeout, sni)
	}
	return c, gen, err
}

// dialSocks4 reaches dst through the SOCKS4 proxy of a "socks4" server;
// the handshake shares the connect timeout, as in HAProxy where it is
// part of establishing the connection.
func dialSocks4(ctx context.Context, d *net.Dialer, proxy string, dst netip.AddrPort, timeout time.Duration) (net.Conn, error) {
	start := time.Now()
	c, err := d.DialContext(ctx, "tcp", proxy)
	if err != nil {
		return nil, err
	}
	if timeout > 0 {
		c.SetDeadline(start.Add(timeout))
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	err = check.Socks4Connect(c, dst)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// tlsHandshake runs a client handshake on a new server connection.
func tlsHandshake(nc net.Conn, c *tls.Config, timeout time.Duration, sni string) (net.Conn, error) {
	if sni != "" && c.ServerName != sni {
		c = c.Clone()
		c.ServerName = sni
	}
	tc := tls.Client(nc, c)
	tc.SetDeadline(time.Now().Add(timeout))
	if err := tc.Handshake(); err != nil {
		nc.Close()
		return nil, err
	}
	tc.SetDeadline(time.Time{})
	return tc, nil
}

// srvConn is a connection to a server with its read buffer.
type srvConn struct {
	rawConn
	bec    *core.Counters // the backend's, for the bytes moved (takeBytes)
	buf    *http1.Buffer
	dl     connDeadlines
	idleAt time.Time // when it last went back to the pool
	peek   peeker    // whether bytes came while idle (Quiet)
}

func (c *srvConn) Close() error {
	c.takeBytes(c.bec)
	err := c.Conn.Close()
	if c.buf != nil {
		bufPool.Put(c.buf)
		c.buf = nil
	}
	return err
}

// Quiet implements pool.Quieter: a server connection that received bytes
// while idle (an unsolicited response, the rest of a response longer
// than announced) or that its server closed is not handed to another
// request; its read buffer was emptied when it went idle.
func (c *srvConn) Quiet() bool { return c.peek.quiet() }
