package stream

import (
	"goha/core"
	"goha/core/pool"
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
		// The expression passed the server line's parsing.
		_ = proc.compileSNI(s)
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
		s.sessions.kill()
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
