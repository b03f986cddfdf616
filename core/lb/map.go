package lb

import (
	"sync"
	"sync/atomic"
)

// mapTable is one generation of the static map: tot slots in HAProxy's
// order. It is immutable once published.
type mapTable struct {
	srv     []int32 // slot -> server index
	maxconn []int32 // server index -> its limit, for skipping full servers
}

// staticMap is "balance static-rr" and map-based hashing (lb_map.c): a table
// of total-weight slots (weights divided by their GCD) in which each server
// appears as often as its weight, interleaved. The table is rebuilt on every
// change, off the pick path, and swapped atomically.
//
// Cost: static-rr O(1) per pick (plus one step per full server skipped), with
// one CAS on the shared cursor; hashing O(1), lock-free. A rebuild costs
// O(total weight x servers), as in HAProxy.
type staticMap struct {
	name    string
	hashing bool
	served  func(int) int
	cursor  atomic.Int64 // HAProxy's rr_idx: the next slot to try
	tab     atomic.Pointer[mapTable]

	mu         sync.Mutex // guards following fields (updates only)
	servers    []Server   // as last given
	iweight    []int
	wmult      int
	allBackups bool
}

func newMap(c Config) *staticMap {
	m := &staticMap{
		name:       c.Balance.Algo.String(),
		hashing:    c.Balance.Algo != StaticRR,
		served:     c.Served,
		servers:    append([]Server(nil), c.Servers...),
		allBackups: c.AllBackups,
	}
	// The GCD of the non-zero weights, fixed at start as in HAProxy.
	m.wmult = 1
	first := true
	for _, s := range m.servers {
		m.iweight = append(m.iweight, s.Weight)
		if s.Weight == 0 {
			continue
		}
		if first {
			m.wmult, first = s.Weight, false
		} else {
			m.wmult = gcd(m.wmult, s.Weight)
		}
	}
	m.rebuild()
	return m
}

func (m *staticMap) Name() string  { return m.name }
func (m *staticMap) Dynamic() bool { return false }
func (m *staticMap) Take(int)      {}
func (m *staticMap) Drop(int)      {}

func (m *staticMap) eweight(s *Server) int {
	return (s.Weight + m.wmult - 1) / m.wmult
}

// rebuild is recount_servers + update_backend_weight + recalc_server_map.
// m.mu must be held (or m not yet shared).
func (m *staticMap) rebuild() {
	ss := m.servers
	srvAct, fbck := 0, -1
	totAct, totBck, srvBck := 0, 0, 0
	usable := func(s *Server) bool { return s.Weight > 0 && s.Usable }
	for i := range ss {
		s := &ss[i]
		if !usable(s) {
			continue
		}
		if s.Backup {
			if srvBck == 0 && !m.allBackups {
				fbck = i
			}
			srvBck++
			totBck += m.eweight(s)
		} else {
			srvAct++
			totAct += m.eweight(s)
		}
	}
	var tot int
	switch {
	case srvAct > 0:
		tot = totAct
	case fbck >= 0:
		tot = m.eweight(&ss[fbck])
	default:
		tot = totBck
	}
	t := &mapTable{srv: make([]int32, tot), maxconn: make([]int32, len(ss))}
	for i := range ss {
		t.maxconn[i] = int32(ss[i].MaxConn)
	}
	backup := srvAct == 0
	// Each slot goes to the first server with the highest score, the
	// score being its accumulated weight quantised by the total; so the
	// first server comes first and declaration order breaks ties.
	wscore := make([]int, len(ss))
	for o := 0; o < tot; o++ {
		best, max := -1, 0
		for i := range ss {
			s := &ss[i]
			if s.Backup != backup || !usable(s) {
				continue
			}
			if tot == 1 {
				best = i
				break
			}
			wscore[i] += m.eweight(s)
			v := (wscore[i] + tot) / tot
			if best < 0 || v > max {
				max, best = v, i
			}
		}
		t.srv[o] = int32(best)
		if best >= 0 {
			wscore[best] -= tot
		}
	}
	m.tab.Store(t)
}

func (m *staticMap) Pick(k Key, avoid int) int {
	t := m.tab.Load()
	if len(t.srv) == 0 {
		return -1
	}
	if m.hashing && k.HasHash {
		return int(t.srv[k.Hash%uint32(len(t.srv))])
	}
	return m.pickRR(t, avoid)
}

// pickRR is map_get_server_rr: the next slot whose server is not full and
// not avoid, or avoid itself when nothing else fits.
func (m *staticMap) pickRR(t *mapTable, avoid int) int {
	tot := int64(len(t.srv))
	for {
		cur := m.cursor.Load()
		start := cur
		if start < 0 || start >= tot {
			start = 0
		}
		idx := start
		avoided, avoidIdx := -1, int64(0)
		for {
			s := int(t.srv[idx])
			idx++
			if !full(int(t.maxconn[s]), m.served(s)) {
				avoided, avoidIdx = s, idx
				if s != avoid {
					if m.cursor.CompareAndSwap(cur, idx) {
						return s
					}
					break
				}
			}
			if idx == tot {
				idx = 0
			}
			if idx == start {
				if avoided < 0 || m.cursor.CompareAndSwap(cur, avoidIdx) {
					return avoided
				}
				break
			}
		}
	}
}

func (m *staticMap) Update(i int, s Server) error {
	if err := checkServer(&s, i); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 || i >= len(m.servers) {
		return ErrIndex
	}
	if s.Weight != 0 && s.Weight != m.iweight[i] {
		return ErrStaticWeight
	}
	s.Ramp = 0
	m.servers[i] = s
	m.rebuild()
	return nil
}

func (m *staticMap) Add(int, Server) error { return ErrNotDynamic }
func (m *staticMap) Remove(int) error      { return ErrNotDynamic }
