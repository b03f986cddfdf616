package pool

import (
	"sync/atomic"
	"time"
)

// Server is one server's idle-connection pool: a slot per shard plus the
// counters HAProxy keeps in struct server. It knows nothing else about
// the server; the caller keeps one next to its own server object.
type Server[C Conn] struct {
	set   *Set[C]
	st    Settings     // fixed at creation
	alive func(C) bool // optional liveness probe, see Set.NewServer

	// Counters, updated with atomics and read without locks.
	used         atomic.Int64  // curr_used_conns: handed out and not yet returned
	usedMax      atomic.Int64  // max_used_conns: peak of used since the last purge
	needEst      atomic.Int64  // est_need_conns: estimate of connections needed
	idle         atomic.Int64  // curr_idle_conns: idle + safe, all shards
	idleNb       atomic.Int64  // curr_idle_nb
	safeNb       atomic.Int64  // curr_safe_nb
	nextTakeover atomic.Int32  // next_takeover: where the next sibling scan starts
	gen          atomic.Uint32 // bumped by CloseAll
	deleted      atomic.Bool   // set by Delete; nothing is pooled afterwards
	armed        atomic.Bool   // queued for purge, or being purged

	// Statistics beyond HAProxy's gauges.
	reused, connects                  atomic.Uint64
	killPurge, killFlush, killRelease atomic.Uint64
	killDead, killFD                  atomic.Uint64

	// Guarded by set.mu.
	due  time.Time
	hidx int // index in set.queue, -1 when not queued

	shards []shard[C]
}

// Settings returns the server's pool settings.
func (s *Server[C]) Settings() Settings { return s.st }

// Gen returns the server's current generation. Read it before resolving
// the address to dial, and pass it to Track: if CloseAll runs between
// the two, the new connection is refused by Release instead of pooled.
func (s *Server[C]) Gen() uint32 { return s.gen.Load() }

// useConn is HAProxy's srv_use_conn: count one more connection in use and
// raise the peak and the estimate when exceeded.
func (s *Server[C]) useConn() {
	u := s.used.Add(1)
	raise(&s.usedMax, u)
	raise(&s.needEst, u)
}

// raise stores v into a if v is larger, tolerating concurrent raisers.
func raise(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Track registers a connection the caller has just dialled for one
// request and counts it as used. gen is the value Gen returned before
// the address was resolved.
func (s *Server[C]) Track(c C, gen uint32) *Entry[C] {
	s.useConn()
	s.connects.Add(1)
	return &Entry[C]{Conn: c, srv: s, gen: gen, uses: 1, where: inUse}
}

// Flags qualify a Get.
type Flags uint8

const (
	// NotFirst says the request is not the first of its client session
	// (HAProxy's TX_NOT_FIRST), or that it may be retried safely. It
	// selects the second column of the http-reuse table.
	NotFirst Flags = 1 << iota
	// FDShort says file descriptors run short: a takeover is tried even
	// below pool-low-conn. The set's LowFDs watermark has the same effect.
	FDShort
)

// Get returns an idle connection for a request on shard thread, marked
// used, or nil when the caller must dial (then Track the new one).
//
// Which lists it may take from follows http-reuse (HAProxy's table;
// "1st" is a first request, "2nd" one with NotFirst; numbers are the
// order of preference):
//
//	          never   safe      aggressive   always
//	          1st 2nd 1st 2nd   1st 2nd      1st 2nd
//	safe       -   -   -   2     1   2        1   2
//	idle       -   -   -   1     -   1        2   1
//
// It looks at its own shard first. Only if that fails, and only while
// the server has at least pool-low-conn idle connections (or descriptors
// run short), it takes one over from a sibling, scanning the siblings
// from the rotating start (Options.Scan); each success counts one
// fd_takeover for shard thread.
//
// thread must be in [0, Threads).
func (s *Server[C]) Get(thread int, f Flags) *Entry[C] {
	return s.GetKey(thread, f, 0)
}

// GetKey is Get for a request whose connection must match key: what,
// beside the server, makes a connection fit only some requests (HAProxy's
// connection hash: a name sent as SNI, a destination taken from the
// request, a PROXY header). A connection matches when it was given the
// same key (SetKey); 0 is the key of a connection with none of these.
func (s *Server[C]) GetKey(thread int, f Flags, key uint64) *Entry[C] {
	if s.idle.Load() <= 0 {
		return nil
	}
	// HAProxy's order (connect_server): a later request of a session takes
	// an idle connection, else a safe one; a first request takes a safe
	// one in aggressive and always modes, and in always mode falls back to
	// an idle one.
	fdShort := f&FDShort != 0
	var e *Entry[C]
	switch {
	case s.st.Mode == ReuseNever:
		return nil
	case f&NotFirst != 0:
		e = s.find(thread, false, fdShort, key)
	case s.st.Mode >= ReuseAggressive:
		if s.safeNb.Load() > 0 {
			e = s.find(thread, true, fdShort, key)
		}
		if e == nil && s.st.Mode == ReuseAlways && s.idleNb.Load() > 0 {
			e = s.find(thread, false, fdShort, key)
		}
	}
	if e == nil {
		return nil
	}
	s.useConn()
	s.reused.Add(1)
	e.uses++
	return e
}

// find takes a connection of the wanted kind from the thread's own lists,
// else from a sibling's.
func (s *Server[C]) find(thread int, wantSafe, fdShort bool, key uint64) *Entry[C] {
	if e := s.getOwn(thread, wantSafe, key); e != nil {
		return e
	}
	return s.takeover(thread, wantSafe, fdShort, key)
}

// popForLocked takes the warmest candidate with key from sh: the wanted
// list, then the safe one when an idle connection was wanted and safe
// ones exist. sh.mu must be held.
func (s *Server[C]) popForLocked(sh *shard[C], wantSafe bool, key uint64) *Entry[C] {
	var e *Entry[C]
	if wantSafe {
		e = sh.safe.warmest(key)
	} else {
		e = sh.idle.warmest(key)
		if e == nil && s.safeNb.Load() > 0 {
			e = sh.safe.warmest(key)
		}
	}
	if e != nil {
		s.unlistLocked(sh, e)
	}
	return e
}

// unlistLocked removes e from sh and updates every idle counter. sh.mu
// must be held.
func (s *Server[C]) unlistLocked(sh *shard[C], e *Entry[C]) {
	if e.where == onSafe {
		sh.safe.remove(e)
		sh.nSafe.Add(-1)
		s.safeNb.Add(-1)
	} else {
		sh.idle.remove(e)
		sh.nIdle.Add(-1)
		s.idleNb.Add(-1)
	}
	e.where = inUse
	s.idle.Add(-1)
	if s.set.opts.MaxIdle > 0 {
		s.set.idle.Add(-1)
	}
}

// usable reports whether a connection just taken off a list may carry a
// request; a stale or dead one is closed here, outside any lock.
func (s *Server[C]) usable(e *Entry[C]) bool {
	if e.gen != s.gen.Load() {
		s.killFlush.Add(1)
	} else if s.st.IdleTimeout > 0 && monoNow()-e.idleSince > int64(s.st.IdleTimeout) {
		s.killDead.Add(1)
	} else if s.alive != nil && !s.alive(e.Conn) {
		s.killDead.Add(1)
	} else if q, ok := any(e.Conn).(Quieter); ok && !q.Quiet() {
		s.killDead.Add(1)
	} else {
		return true
	}
	e.where = gone
	_ = e.Conn.Close()
	return false
}

func (s *Server[C]) getOwn(thread int, wantSafe bool, key uint64) *Entry[C] {
	sh := &s.shards[thread]
	for {
		sh.mu.Lock()
		e := s.popForLocked(sh, wantSafe, key)
		sh.mu.Unlock()
		if e == nil || s.usable(e) {
			if e != nil {
				// HAProxy also moves the rotating start after a local hit.
				s.setNextTakeover(s.next(thread))
			}
			return e
		}
	}
}

// setNextTakeover stores the scan start, skipping the write when it is
// unchanged: every local hit lands here, and a write would pull the
// counters' cache line away from the other threads for nothing.
func (s *Server[C]) setNextTakeover(i int) {
	if s.nextTakeover.Load() != int32(i) {
		s.nextTakeover.Store(int32(i))
	}
}

func (s *Server[C]) next(i int) int {
	if i++; i == s.set.threads {
		return 0
	}
	return i
}

func (s *Server[C]) takeover(thread int, wantSafe, fdShort bool, key uint64) *Entry[C] {
	p := s.set
	if p.opts.NoShare || p.threads == 1 {
		return nil
	}
	if s.idle.Load() < int64(s.st.LowConn) && !fdShort && !p.fdsLow() {
		return nil
	}
	stop := 0
	if p.opts.Scan == ScanRoundRobin {
		stop = int(s.nextTakeover.Load())
		if stop < 0 || stop >= p.threads {
			stop = 0
		}
	}
	i := stop
	for {
		if i != thread && s.shards[i].count() > 0 {
			sh := &s.shards[i]
			sh.mu.Lock()
			e := s.popForLocked(sh, wantSafe, key)
			sh.mu.Unlock()
			if e != nil {
				if !s.usable(e) {
					continue // look at the same sibling again
				}
				s.setNextTakeover(s.next(i))
				p.takeover[thread].v.Add(1)
				return e
			}
		}
		if i = s.next(i); i == stop {
			return nil
		}
	}
}

// Release hands back a connection whose request completed and which
// could carry another one (response fully framed, nothing left over).
// safe says the connection has now proven reusable (HAProxy passes "not
// the first request on it" for HTTP/1). The pool keeps it on shard
// thread's safe or idle list, or closes it, by the rules below, and
// reports whether it kept it. Either way the caller must not use the
// entry again.
//
// It is closed when any of these holds: the server was flushed since the
// connection was dialled (CloseAll) or deleted; http-reuse is never;
// pool-purge-delay is 0; pool-max-conn is 0 or reached; the set's idle
// cap is reached; descriptors are at the high watermark; max-reuse is
// used up. Otherwise it is kept if shard thread has no connection of
// that kind for the server yet (no safe one, and no idle one unless
// this one is safe), or if descriptors are below the low watermark and
// used+idle <= max(used, need_est) + pool-low-conn, with used still
// counting this connection.
func (s *Server[C]) Release(thread int, e *Entry[C], safe bool) bool {
	s.check(e)
	if s.flushedSince(e) {
		return false
	}
	keep := s.mayKeep(thread, e, safe)
	if !keep && s.reapClosed() > 0 {
		keep = s.mayKeep(thread, e, safe)
	}
	if !keep || !s.reserve() {
		s.used.Add(-1)
		s.killRelease.Add(1)
		e.where = gone
		_ = e.Conn.Close()
		return false
	}
	s.used.Add(-1)

	sh := &s.shards[thread]
	sh.mu.Lock()
	// The generation is checked under the lock CloseAll takes, after
	// CloseAll has bumped it: either this insert happens first and the
	// flush removes it, or the flush happened and this sees the new value.
	if e.gen != s.gen.Load() || s.deleted.Load() {
		sh.mu.Unlock()
		s.unreserve()
		s.killFlush.Add(1)
		e.where = gone
		_ = e.Conn.Close()
		return false
	}
	if s.st.IdleTimeout > 0 {
		e.idleSince = monoNow()
	}
	if safe {
		e.where = onSafe
		sh.safe.pushTail(e)
		sh.nSafe.Add(1)
		s.safeNb.Add(1)
	} else {
		e.where = onIdle
		sh.idle.pushTail(e)
		sh.nIdle.Add(1)
		s.idleNb.Add(1)
	}
	sh.mu.Unlock()

	if !s.armed.Load() {
		s.set.arm(s)
	}
	return true
}

// mayKeep applies the keep-or-close rule, except the caps that reserve
// enforces race-free.
// reapClosed closes the pooled connections whose server has closed them
// or spoken since (Quieter) and returns how many. HAProxy watches its idle
// connections and forgets one as soon as the server closes it; a
// connection found dead only when next handed out would meanwhile count
// against the idle limits, and turn away a live one that Release offers.
func (s *Server[C]) reapClosed() int {
	var dead []*Entry[C]
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.count() == 0 {
			continue
		}
		sh.mu.Lock()
		for _, l := range []*list[C]{&sh.idle, &sh.safe} {
			for e := l.head; e != nil; {
				next := e.next
				if q, ok := any(e.Conn).(Quieter); ok && !q.Quiet() {
					s.unlistLocked(sh, e)
					e.where = gone
					dead = append(dead, e)
				}
				e = next
			}
		}
		sh.mu.Unlock()
	}
	for _, e := range dead {
		s.killDead.Add(1)
		_ = e.Conn.Close()
	}
	return len(dead)
}

func (s *Server[C]) mayKeep(thread int, e *Entry[C], safe bool) bool {
	st := &s.st
	p := s.set
	if st.Mode == ReuseNever || st.PurgeDelay <= 0 || st.MaxConn == 0 {
		return false
	}
	if st.MaxReuse >= 0 && int(e.uses) > st.MaxReuse {
		return false
	}
	fds := p.usedFDs()
	if p.opts.HighFDs > 0 && fds >= p.opts.HighFDs {
		return false
	}
	if st.MaxConn > 0 && s.idle.Load() >= int64(st.MaxConn) {
		return false
	}
	sh := &s.shards[thread]
	if sh.nSafe.Load() == 0 && (safe || sh.nIdle.Load() == 0) {
		return true
	}
	if p.opts.LowFDs > 0 && fds >= p.opts.LowFDs {
		return false
	}
	used, idle := s.used.Load(), s.idle.Load()
	return used+idle <= max(used, s.needEst.Load())+int64(st.LowConn)
}

// reserve counts one more idle connection unless that passes
// pool-max-conn or the set's cap; it is the add-then-undo that makes the
// caps exact under concurrency.
func (s *Server[C]) reserve() bool {
	n := s.idle.Add(1)
	if s.st.MaxConn > 0 && n > int64(s.st.MaxConn) {
		s.idle.Add(-1)
		return false
	}
	if m := s.set.opts.MaxIdle; m > 0 {
		if s.set.idle.Add(1) > int64(m) {
			s.set.idle.Add(-1)
			s.idle.Add(-1)
			return false
		}
	}
	return true
}

func (s *Server[C]) unreserve() {
	s.idle.Add(-1)
	if s.set.opts.MaxIdle > 0 {
		s.set.idle.Add(-1)
	}
}

// check panics when e is not an in-use entry of s: releasing twice or to
// the wrong server would corrupt the lists.
func (s *Server[C]) check(e *Entry[C]) {
	if e == nil || e.srv != s || e.where != inUse {
		panic("pool: internal error: release of an entry that is not in use on this server")
	}
}

// Resume counts the reuse of a connection that a client session kept for
// itself (HAProxy's private connections, never in the pool). It returns
// false, having closed the connection, when the server's connections were
// flushed (or the server deleted) since.
func (s *Server[C]) Resume(e *Entry[C]) bool {
	s.check(e)
	if s.flushedSince(e) {
		return false
	}
	s.reused.Add(1)
	e.uses++
	return true
}

// flushedSince closes e, no longer counted as used, when the server's
// connections were flushed (or the server deleted) since it was dialled.
func (s *Server[C]) flushedSince(e *Entry[C]) bool {
	if e.gen == s.gen.Load() && !s.deleted.Load() {
		return false
	}
	s.used.Add(-1)
	s.killFlush.Add(1)
	e.where = gone
	_ = e.Conn.Close()
	return true
}

// Done closes a connection that failed or must not be reused (error,
// unframed response, "Connection: close") and stops counting it as used.
func (s *Server[C]) Done(e *Entry[C]) {
	s.check(e)
	s.used.Add(-1)
	e.where = gone
	_ = e.Conn.Close()
}

// CountPrivate counts a new connection that never enters the pool (a
// tcp-mode stream's own, HAProxy's private connections): it raises the
// peak and the estimate of connections needed as srv_use_conn does, and
// leaves the used count as it was.
func (s *Server[C]) CountPrivate() {
	s.useConn()
	s.connects.Add(1)
	s.used.Add(-1)
}

// Detach stops counting a connection as used without closing it, and
// returns it: for a connection that became private to its client session
// (HAProxy's CO_FL_PRIVATE, e.g. NTLM), which never enters the pool. The
// caller closes it when the session ends.
func (s *Server[C]) Detach(e *Entry[C]) C {
	s.check(e)
	s.used.Add(-1)
	e.where = gone
	return e.Conn
}
