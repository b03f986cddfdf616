package core

import (
	"goha/core/pool"
	"io"
	"sync"
)

// Run-time changes made through the runtime API (core/admin.go) reach the
// data path here: the picker sees new weights and states before the next
// pick, and idle connections to an old address or to a server leaving
// service are closed on every thread at once, so that a pooled connection
// never carries a request to an old address.
func init() {
	AddServerHook(applyServerChange)
	AddProxyHook(applyProxyChange)
}

// running maps proxies to the process serving them, for proxy hooks.
var running sync.Map // *Proxy -> *Process

func applyProxyChange(p *Proxy, ev ProxyEvent) {
	v, ok := running.Load(p)
	if !ok {
		return
	}
	proc := v.(*Process)
	switch ev {
	case PxEvShutdown:
		proc.closeFrontendListeners(p)
	case PxEvEnable, PxEvMaxConn:
		// Accept loops waiting on the frontend's state look again.
		select {
		case proc.connFreed <- struct{}{}:
		default:
		}
	}
}

func applyServerChange(s *Server, ev ServerEvent) {
	p := s.Proxy
	rt := p.rt
	if rt == nil {
		return // not running: the picker is built from the state at start
	}
	switch ev {
	case SrvEvState, SrvEvWeight, SrvEvMaxConn:
		p.lbUpdate(s)
		if s.admin.Load()&AdminMaint != 0 && s.pool != nil {
			s.pool.CloseAll()
		}
	case SrvEvSSL:
		if s.pool != nil {
			s.pool.CloseAll()
		}
		s.refreshTLS(p.rt.global)
	case SrvEvAddr:
		if s.pool != nil {
			s.pool.CloseAll()
		}
		p.lbUpdate(s)
	case SrvEvAdded:
		// AddServer fires this hook with p.lbMu held: rt.idxMu orders
		// changes of the index table instead.
		rt.idxMu.Lock()
		old := *rt.byIdx.Load()
		s.idx = len(old)
		idx := append(append([]*Server(nil), old...), s)
		if s.pool == nil {
			reuse, err := pool.ParseMode(p.HTTPReuse)
			if err != nil {
				reuse = pool.ReuseSafe
			}
			if ps := poolSetOf(p); ps != nil {
				st := pool.DefaultSettings()
				st.LowConn, st.MaxConn, st.PurgeDelay, st.MaxReuse, st.Mode = s.PoolLowConn, s.PoolMaxConn, s.PoolPurgeDelay, s.MaxReuse, reuse
				s.pool, _ = ps.NewServer(st, nil)
			}
		}
		s.refreshTLS(rt.global)
		s.sessions.init(rt.pools.Threads())
		rt.picker.Add(s.idx, lbServer(s))
		rt.byIdx.Store(&idx)
		rt.idxMu.Unlock()
	case SrvEvShutdownSessions:
		s.killSessions()
	case SrvEvDeleted:
		rt.idxMu.Lock()
		old := *rt.byIdx.Load()
		idx := append([]*Server(nil), old...)
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

// poolSetOf finds the pool set of the process running p.
func poolSetOf(p *Proxy) *pool.Set[*srvConn] { return p.rt.pools }

// PoolStats reports the server's idle-connection pool; ok is false before
// the process runs.
func (s *Server) PoolStats() (st pool.Stats, ok bool) {
	if s.pool == nil {
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
func (s *Server) trackSession(shard int, l *sessLink, c io.Closer) {
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
func (s *Server) killSessions() {
	for i := range s.sessions.shards {
		sh := &s.sessions.shards[i]
		sh.mu.Lock()
		for l := sh.head; l != nil; l = l.next {
			l.c.Close()
		}
		sh.mu.Unlock()
	}
}
