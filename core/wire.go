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

type sessShard struct {
	mu    sync.Mutex // guards conns
	conns map[io.Closer]struct{}
	_     [40]byte // keeps shards on separate cache lines
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

func (s *Server) trackSession(shard int, c io.Closer) {
	sh := s.sessions.shard(shard)
	if sh == nil {
		return
	}
	sh.mu.Lock()
	if sh.conns == nil {
		sh.conns = map[io.Closer]struct{}{}
	}
	sh.conns[c] = struct{}{}
	sh.mu.Unlock()
}

func (s *Server) untrackSession(shard int, c io.Closer) {
	sh := s.sessions.shard(shard)
	if sh == nil {
		return
	}
	sh.mu.Lock()
	delete(sh.conns, c)
	sh.mu.Unlock()
}

// killSessions closes the client connections of every stream s serves;
// closing is done outside the locks.
func (s *Server) killSessions() {
	var list []io.Closer
	for i := range s.sessions.shards {
		sh := &s.sessions.shards[i]
		sh.mu.Lock()
		for c := range sh.conns {
			list = append(list, c)
		}
		sh.mu.Unlock()
	}
	for _, c := range list {
		c.Close()
	}
}
