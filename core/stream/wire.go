package stream

import (
	"goha/core"
	"goha/core/pool"
	"io"
	"sync"
)

// Run-time changes made through the runtime API (core/admin.go) reach the
// data path here: the picker sees new weights and states before the next
// pick, and idle connections to an old address or to a server leaving
// service are closed on every thread at once, so that a pooled connection
// never carries a request to an old address. The process is the
// configuration's core.Observer from Run on.

// ProxyChanged applies a run-time change of a proxy.
func (proc *Process) ProxyChanged(cp *core.Proxy, ev core.ProxyEvent) {
	p := proc.proxyOf(cp)
	if p == nil {
		return
	}
	switch ev {
	case core.PxEvShutdown:
		proc.closeFrontendListeners(p)
	case core.PxEvEnable, core.PxEvMaxConn:
		// Accept loops waiting on the frontend's state look again.
		select {
		case proc.connFreed <- struct{}{}:
		default:
		}
	}
}

// ServerChanged applies a run-time change of a server: first to its checks,
// then to the load balancer and the pools.
func (proc *Process) ServerChanged(cs *core.Server, ev core.ServerEvent) {
	p := proc.proxyOf(cs.Proxy)
	if p == nil || p.rt == nil {
		return // not running: the picker is built from the state at start
	}
	rt := p.rt
	var s *server
	if ev == core.SrvEvAdded {
		s = &server{Server: cs, be: p}
		proc.prepareDynamicChecks(s)
	} else if s = rt.find(cs); s == nil {
		return
	}
	proc.checkSettingsChanged(s, ev)
	switch ev {
	case core.SrvEvState, core.SrvEvWeight, core.SrvEvMaxConn:
		p.lbUpdate(s)
		if s.AdminState()&core.AdminMaint != 0 && s.pool != nil {
			s.pool.CloseAll()
		}
	case core.SrvEvSSL:
		if s.pool != nil {
			s.pool.CloseAll()
		}
		s.RefreshTLS(rt.global)
	case core.SrvEvAddr:
		if s.pool != nil {
			s.pool.CloseAll()
		}
		p.lbUpdate(s)
	case core.SrvEvAdded:
		// AddServer tells with p's server list lock held: rt.idxMu orders
		// changes of the index table instead.
		rt.idxMu.Lock()
		old := *rt.byIdx.Load()
		s.idx = len(old)
		idx := append(append([]*server(nil), old...), s)
		reuse, err := pool.ParseMode(p.HTTPReuse)
		if err != nil {
			reuse = pool.ReuseSafe
		}
		st := pool.DefaultSettings()
		st.LowConn, st.MaxConn, st.PurgeDelay, st.MaxReuse, st.Mode = s.PoolLowConn, s.PoolMaxConn, s.PoolPurgeDelay, s.MaxReuse, reuse
		s.pool, _ = rt.pools.NewServer(st, nil)
		s.RefreshTLS(rt.global)
		s.sessions.init(rt.pools.Threads())
		rt.picker.Add(s.idx, lbServer(s))
		rt.byIdx.Store(&idx)
		rt.idxMu.Unlock()
	case core.SrvEvShutdownSessions:
		s.killSessions()
	case core.SrvEvDeleted:
		rt.idxMu.Lock()
		old := *rt.byIdx.Load()
		idx := append([]*server(nil), old...)
		if s.idx < len(idx) && idx[s.idx] == s {
			idx[s.idx] = nil
			rt.picker.Remove(s.idx)
		}
		rt.byIdx.Store(&idx)
		rt.idxMu.Unlock()
		if s.pool != nil {
			s.pool.Delete()
		}
	}
}

// ServerPool reports a server's idle-connection pool; ok is false when the
// process does not serve it.
func (proc *Process) ServerPool(cs *core.Server) (st pool.Stats, ok bool) {
	s := proc.serverOf(cs)
	if s == nil || s.pool == nil {
		return st, false
	}
	return s.pool.Stats(), true
}

// FDTakeover returns the per-thread counts of idle connections taken over
// from sibling threads (show activity's fd_takeover).
func (proc *Process) FDTakeover() []uint32 {
	if proc.pools == nil {
		return make([]uint32, proc.Threads)
	}
	return proc.pools.FDTakeover(nil)
}

// ClearFDTakeover resets the takeover counters (clear counters all).
func (proc *Process) ClearFDTakeover() {
	if proc.pools != nil {
		proc.pools.ClearFDTakeover()
	}
}

// Totals are process-wide counters for show info.
func (proc *Process) CurConns() int64 { return proc.curConns.Load() }

// Sessions of a server, so that `shutdown sessions server` can end them.
// One set per shard, each with its own lock, so that requests of different
// threads never contend here.
type sessionSet struct {
	shards []sessShard // sized once, before the process serves
}

// sessShard lists one thread's streams on a server. The list is
// intrusive (the links live in the stream's connection state) so that a
// request adds and removes its stream without hashing or allocating.
type sessShard struct {
	mu   sync.Mutex // guards the list and every listed link's prev and next
	head *sessLink
	_    [48]byte // keeps shards on separate cache lines
}

// sessLink is a stream's place in its server's session list.
type sessLink struct {
	c          io.Closer
	sh         *sessShard // the list it is on; nil when on none
	prev, next *sessLink
}

func (ss *sessionSet) init(threads int) {
	if len(ss.shards) == 0 {
		ss.shards = make([]sessShard, threads)
	}
}

func (ss *sessionSet) shard(n int) *sessShard {
	if len(ss.shards) == 0 {
		return nil
	}
	return &ss.shards[n%len(ss.shards)]
}

// trackSession lists l among s's streams; c is what killSessions closes
// to kill the stream (see hconn.Close for an HTTP exchange).
func (s *server) trackSession(shard int, l *sessLink, c io.Closer) {
	sh := s.sessions.shard(shard)
	if sh == nil {
		return
	}
	l.c, l.sh, l.prev = c, sh, nil
	sh.mu.Lock()
	l.next = sh.head
	if sh.head != nil {
		sh.head.prev = l
	}
	sh.head = l
	sh.mu.Unlock()
}

// untrackSession takes l off the list it is on, if any.
func untrackSession(l *sessLink) {
	sh := l.sh
	if sh == nil {
		return
	}
	sh.mu.Lock()
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		sh.head = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	}
	sh.mu.Unlock()
	l.c, l.sh, l.prev, l.next = nil, nil, nil, nil
}

// killSessions kills every stream s serves: a tcp stream's client
// connection is closed, an http exchange is cut on its server side (see
// hconn.Close). The kills run under the list's lock: a stream leaves the
// list before its connection state serves anything else, so a kill never
// reaches the next exchange on the same client connection. Neither kind
// of close waits.
func (s *server) killSessions() {
	for i := range s.sessions.shards {
		sh := &s.sessions.shards[i]
		sh.mu.Lock()
		for l := sh.head; l != nil; l = l.next {
			l.c.Close()
		}
		sh.mu.Unlock()
	}
}
