package pool

// Bridges to pool internals for tests.

// SetCountersForTest puts the purge inputs in a state that the normal
// path cannot reach on its own (est below max_used), to check the
// arithmetic on HAProxy's worked example.
func (s *Server[C]) SetCountersForTest(used, maxUsed, est int64) {
	s.used.Store(used)
	s.usedMax.Store(maxUsed)
	s.needEst.Store(est)
}

// ListedGensForTest returns the generation of every pooled entry, read
// under the shard locks, and checks the per-shard counts against the
// lists.
func (s *Server[C]) ListedGensForTest() (gens []uint32, consistent bool) {
	consistent = true
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		ni, ns := 0, 0
		for e := sh.idle.head; e != nil; e = e.next {
			gens = append(gens, e.gen)
			ni++
			consistent = consistent && e.where == onIdle
		}
		for e := sh.safe.head; e != nil; e = e.next {
			gens = append(gens, e.gen)
			ns++
			consistent = consistent && e.where == onSafe
		}
		consistent = consistent && int32(ni) == sh.nIdle.Load() && int32(ns) == sh.nSafe.Load()
		sh.mu.Unlock()
	}
	return gens, consistent
}

// NextTakeoverForTest returns where the next sibling scan starts.
func (s *Server[C]) NextTakeoverForTest() int { return int(s.nextTakeover.Load()) }

// ArmedForTest reports whether the server is in the purge queue.
func (s *Server[C]) ArmedForTest() bool {
	s.set.mu.Lock()
	defer s.set.mu.Unlock()
	return s.hidx >= 0
}
