package pool

// PurgeOnce runs one purge step on the server, as HAProxy's purge task
// does every pool-purge-delay, and returns how many connections it
// closed. The purge task calls it; tests call it directly.
//
// With used, idle, max_used and need_est read at the start:
//
//	exceed   = used + idle - max(max_used, need_est)
//	to_kill  = ceil(exceed / 2)
//	need_est = max((need_est + max_used) / 2, max_used)
//	max_used = used
//
// then, when exceed > 0, each shard t closes up to
// to_kill*idle_thr[t]/idle + 1 connections, coldest first, from its idle
// list and then its safe list. With no idle connection at all nothing
// changes, not even the estimate.
func (s *Server[C]) PurgeOnce() int {
	idle := s.idle.Load()
	if idle <= 0 {
		return 0
	}
	used := s.used.Load()
	maxUsed := s.usedMax.Load()
	est := s.needEst.Load()
	exceed := used + idle - max(maxUsed, est)
	half := exceed/2 + exceed&1

	newEst := (est + maxUsed) / 2
	if newEst < maxUsed {
		newEst = maxUsed
	}
	s.needEst.Store(newEst)
	s.usedMax.Store(used)

	if exceed <= 0 {
		return 0
	}
	killed := 0
	for t := range s.shards {
		sh := &s.shards[t]
		quota := half*int64(sh.count())/idle + 1
		var doomed *Entry[C]
		sh.mu.Lock()
		for ; quota > 0; quota-- {
			e := sh.idle.head
			if e == nil {
				e = sh.safe.head
			}
			if e == nil {
				break
			}
			s.unlistLocked(sh, e)
			e.where = gone
			e.next = doomed
			doomed = e
		}
		sh.mu.Unlock()
		killed += closeChain(doomed)
	}
	s.killPurge.Add(uint64(killed))
	return killed
}

// closeChain closes a chain of entries linked through next, outside any
// lock, and returns how many it closed.
func closeChain[C Conn](e *Entry[C]) int {
	n := 0
	for e != nil {
		next := e.next
		e.next = nil
		_ = e.Conn.Close()
		e = next
		n++
	}
	return n
}

// purgeDue is the purge task's visit: purge, then requeue while idle
// connections remain. armed is cleared before idle is read, so that a
// Release that adds a connection concurrently either sees armed false and
// arms the server itself, or is seen here.
func (s *Server[C]) purgeDue() {
	s.PurgeOnce()
	s.armed.Store(false)
	if s.idle.Load() > 0 {
		s.set.arm(s)
	}
}

// CloseAll closes every idle connection of the server on every shard at
// once, and makes sure no connection dialled before the call is pooled
// afterwards: `set server addr`, `set server state maint` and `del
// server` call it so that a pooled connection never carries a request to
// an old address. Connections in use keep working; Release closes them.
// It returns how many idle connections it closed.
func (s *Server[C]) CloseAll() int {
	s.gen.Add(1)
	killed := 0
	for t := range s.shards {
		sh := &s.shards[t]
		var doomed *Entry[C]
		sh.mu.Lock()
		for _, l := range [...]*list[C]{&sh.idle, &sh.safe} {
			for e := l.head; e != nil; e = l.head {
				s.unlistLocked(sh, e)
				e.where = gone
				e.next = doomed
				doomed = e
			}
		}
		sh.mu.Unlock()
		killed += closeChain(doomed)
	}
	s.killFlush.Add(uint64(killed))
	return killed
}

// Delete retires the server (`del server`): it closes every idle
// connection, refuses every later Release and leaves the purge queue.
// Connections still in use are closed as they are released.
func (s *Server[C]) Delete() int {
	s.deleted.Store(true)
	s.set.dequeue(s)
	return s.CloseAll()
}

// KillOne closes one idle connection to make room for a new one when
// descriptors are above the high watermark (HAProxy does this in
// connect_server before dialling): the coldest of shard thread's idle
// list, else the first found on a sibling, from thread+1 onwards, idle
// list before safe list. It reports whether it closed one.
func (s *Server[C]) KillOne(thread int) bool {
	if s.idle.Load() <= 0 {
		return false
	}
	i := thread
	for {
		sh := &s.shards[i]
		var e *Entry[C]
		if sh.count() > 0 {
			sh.mu.Lock()
			e = sh.idle.head
			if e == nil && i != thread {
				e = sh.safe.head
			}
			if e != nil {
				s.unlistLocked(sh, e)
				e.where = gone
			}
			sh.mu.Unlock()
		}
		if e != nil {
			_ = e.Conn.Close()
			s.killFD.Add(1)
			return true
		}
		if i = s.next(i); i == thread {
			return false
		}
	}
}
