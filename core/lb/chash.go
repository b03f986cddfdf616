package lb

import (
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// ring is one group's consistent-hash ring: sorted point keys and the server
// owning each. A server with ID p owns points FullHash(p*4096+j) for j below
// its effective weight; FullHash is a bijection, so keys are unique except
// for servers added at run time without an id (see allocNodes).
type ring struct {
	keys []uint32
	srv  []int32
}

// chashView is one immutable generation of a consistent-hash backend.
type chashView struct {
	act, bck  ring
	fbck      int      // first usable backup without allbackups, else -1
	ew        []uint32 // server index -> effective weight (0: not usable)
	cum       []uint32 // server index -> weight of the usable servers before it in its group
	maxconn   []int32
	totWeight uint32 // HAProxy's tot_weight
}

func (v *chashView) root() (*ring, int) {
	switch {
	case len(v.act.keys) > 0:
		return &v.act, -1
	case v.fbck >= 0:
		return nil, v.fbck
	case len(v.bck.keys) > 0:
		return &v.bck, -1
	}
	return nil, -1
}

// chash is consistent hashing (lb_chash.c), used by the hashing algorithms
// with "hash-type consistent" and by "balance random". Each server owns
// 16 x weight points on a 32-bit ring; a key goes to the nearest point, so a
// weight change or a server coming and going moves only that server's keys.
//
// Cost: O(log p) per pick for p points (random: draws x O(log p)), lock-free
// on an atomically swapped snapshot. A change costs O(p). The round-robin
// fallback (hashing algorithms without a key) walks the ring under a mutex,
// as HAProxy does under its lbprm lock.
type chash struct {
	name    string
	random  bool
	draws   int
	factor  int // hash-balance-factor
	served  func(int) int
	inUse   atomic.Int64 // connections served by the backend, from Take/Drop
	view    atomic.Pointer[chashView]
	mu      sync.Mutex // guards following fields
	ss      servers
	ew      []uint32   // committed effective weights (nodes on the ring)
	nodes   [][]uint32 // server index -> its point keys, HAProxy's lb_nodes
	lastKey uint32     // round-robin fallback: the last point used
	hasLast bool
}

func newCHash(c Config) *chash {
	h := &chash{
		name:   c.Balance.Algo.String(),
		random: c.Balance.Algo == Random,
		draws:  c.Balance.Draws,
		factor: c.HashBalanceFactor,
		served: c.Served,
	}
	if h.draws < 1 {
		h.draws = 2
	}
	h.ss.init(&c)
	h.ew = make([]uint32, len(h.ss.list))
	h.nodes = make([][]uint32, len(h.ss.list))
	v := &chashView{}
	for i := range h.ss.list {
		h.allocNodes(i, h.ss.list[i].ID)
		if h.ss.usable(i) {
			h.ew[i] = dynEWeight(&h.ss.list[i])
		}
	}
	h.publish(v, -1)
	return h
}

func (h *chash) Name() string  { return h.name }
func (h *chash) Dynamic() bool { return true }
func (h *chash) Take(int)      { h.inUse.Add(1) }
func (h *chash) Drop(int)      { h.inUse.Add(-1) }

// allocNodes is srv_alloc_lb: server i gets 16 points per unit of its
// weight, seeded with id. HAProxy 2.6 allocates a server added at run time
// before giving it its id, so such a server's points are seeded with 0
// unless its "id" was set.
func (h *chash) allocNodes(i, id int) {
	for len(h.nodes) <= i {
		h.nodes = append(h.nodes, nil)
	}
	n := h.ss.list[i].Weight * WeightScale
	ks := make([]uint32, n)
	for j := range ks {
		ks[j] = FullHash(uint32(id)*eweightSpan + uint32(j))
	}
	h.nodes[i] = ks
}

// points returns server i's first n point keys, sorted. Points beyond the
// allocated ones (a weight raised above the initial one) are seeded with
// the server's ID, as HAProxy's chash_queue_dequeue_srv does.
func (h *chash) points(i int, n uint32) []uint32 {
	for j := uint32(len(h.nodes[i])); j < n; j++ {
		h.nodes[i] = append(h.nodes[i], FullHash(uint32(h.ss.list[i].ID)*eweightSpan+j))
	}
	ks := slices.Clone(h.nodes[i][:n])
	slices.Sort(ks)
	return ks
}

// publish derives a new view from old, where only server changed (-1: build
// every ring from scratch), and swaps it in. h.mu must be held.
func (h *chash) publish(old *chashView, changed int) {
	v := &chashView{fbck: -1}
	n := len(h.ss.list)
	v.ew = make([]uint32, n)
	v.cum = make([]uint32, n)
	v.maxconn = make([]int32, n)
	var totAct, totBck uint32
	for i := range h.ss.list {
		v.maxconn[i] = int32(h.ss.list[i].MaxConn)
		if !h.ss.usable(i) {
			continue
		}
		v.ew[i] = h.ew[i]
		if h.ss.list[i].Backup {
			if totBck == 0 && !h.ss.allBackups {
				v.fbck = i
			}
			v.cum[i] = totBck
			totBck += h.ew[i]
		} else {
			v.cum[i] = totAct
			totAct += h.ew[i]
		}
	}
	switch {
	case totAct > 0:
		v.totWeight = totAct
	case v.fbck >= 0:
		v.totWeight = v.ew[v.fbck]
	default:
		v.totWeight = totBck
	}
	if changed < 0 {
		for _, g := range []bool{false, true} {
			var keys []uint32
			var srv []int32
			for i := range h.ss.list {
				if v.ew[i] == 0 || h.ss.list[i].Backup != g {
					continue
				}
				for _, k := range h.points(i, v.ew[i]) {
					keys = append(keys, k)
					srv = append(srv, int32(i))
				}
			}
			r := ring{keys: keys, srv: srv}
			sortRing(&r)
			if g {
				v.bck = r
			} else {
				v.act = r
			}
		}
	} else {
		v.act, v.bck = old.act, old.bck
		oldBackup := changed < len(old.ew) && old.ew[changed] > 0 && inRing(&old.bck, changed)
		if changed < len(old.ew) && old.ew[changed] > 0 {
			if oldBackup {
				v.bck = without(&old.bck, changed)
			} else {
				v.act = without(&old.act, changed)
			}
		}
		if v.ew[changed] > 0 {
			ks := h.points(changed, v.ew[changed])
			if h.ss.list[changed].Backup {
				v.bck = merged(&v.bck, ks, changed)
			} else {
				v.act = merged(&v.act, ks, changed)
			}
		}
	}
	h.view.Store(v)
}

func sortRing(r *ring) {
	sort.Stable(ringSort{r})
}

type ringSort struct{ r *ring }

func (s ringSort) Len() int           { return len(s.r.keys) }
func (s ringSort) Less(a, b int) bool { return s.r.keys[a] < s.r.keys[b] }
func (s ringSort) Swap(a, b int) {
	s.r.keys[a], s.r.keys[b] = s.r.keys[b], s.r.keys[a]
	s.r.srv[a], s.r.srv[b] = s.r.srv[b], s.r.srv[a]
}

func inRing(r *ring, i int) bool {
	return slices.Contains(r.srv, int32(i))
}

// without returns a copy of r minus server i's points.
func without(r *ring, i int) ring {
	out := ring{keys: make([]uint32, 0, len(r.keys)), srv: make([]int32, 0, len(r.srv))}
	for k, s := range r.srv {
		if int(s) != i {
			out.keys = append(out.keys, r.keys[k])
			out.srv = append(out.srv, s)
		}
	}
	return out
}

// merged returns a copy of r with server i's sorted points ks added.
func merged(r *ring, ks []uint32, i int) ring {
	n := len(r.keys) + len(ks)
	out := ring{keys: make([]uint32, 0, n), srv: make([]int32, 0, n)}
	a, b := 0, 0
	for a < len(r.keys) || b < len(ks) {
		// Equal keys (servers added without an id share their
		// points) keep the older entry first, as ebtrees do.
		if b == len(ks) || (a < len(r.keys) && r.keys[a] <= ks[b]) {
			out.keys = append(out.keys, r.keys[a])
			out.srv = append(out.srv, r.srv[a])
			a++
		} else {
			out.keys = append(out.keys, ks[b])
			out.srv = append(out.srv, int32(i))
			b++
		}
	}
	return out
}

// eligible is chash_server_is_eligible: with a balance factor, a server may
// serve at most its weighted share of factor% of the backend's load.
func (h *chash) eligible(v *chashView, s int) bool {
	if v.totWeight == 0 {
		return true
	}
	tot := uint32((h.inUse.Load()+1)*int64(h.factor)+99) / 100
	per := tot / v.totWeight
	rem := tot % v.totWeight
	slots := v.ew[s] * per
	slots += (v.cum[s]+v.ew[s])*rem/v.totWeight - v.cum[s]*rem/v.totWeight
	if slots == 0 {
		slots = 1
	}
	return uint32(h.served(s)) < slots
}

// lookup is chash_get_server_hash: the server owning the point nearest to
// hash, moving on clockwise past avoid (and past servers over their share).
func (h *chash) lookup(v *chashView, hash uint32, avoid int) int {
	r, only := v.root()
	if r == nil {
		return only
	}
	n := len(r.keys)
	next := sort.Search(n, func(k int) bool { return r.keys[k] >= hash })
	if next == n {
		next = 0
	}
	prev := next - 1
	if prev < 0 {
		prev = n - 1
	}
	if hash-r.keys[prev] <= r.keys[next]-hash {
		next = prev
	}
	s := int(r.srv[next])
	loop := 0
	for s == avoid || (h.factor > 0 && !h.eligible(v, s)) {
		next++
		if next == n {
			next = 0
			loop++
			if loop > 1 {
				break
			}
		}
		s = int(r.srv[next])
	}
	return s
}

func (h *chash) Pick(k Key, avoid int) int {
	v := h.view.Load()
	if v.totWeight == 0 {
		return -1
	}
	if h.random {
		return h.pickRandom(v, avoid)
	}
	if k.HasHash {
		return h.lookup(v, k.Hash, avoid)
	}
	return h.pickNext(v, avoid)
}

// pickRandom is get_server_rnd: draws random points and keeps the least
// loaded server relative to its weight ("power of two choices" by default).
func (h *chash) pickRandom(v *chashView, avoid int) int {
	curr := -1
	for d := h.draws; d > 0; d-- {
		prev := curr
		curr = h.lookup(v, rand.Uint32(), avoid)
		if curr < 0 {
			break
		}
		if prev >= 0 && prev != curr &&
			uint64(h.served(curr))*uint64(v.ew[prev]) > uint64(h.served(prev))*uint64(v.ew[curr]) {
			curr = prev
		}
	}
	if curr >= 0 && full(int(v.maxconn[curr]), h.served(curr)) {
		return -1
	}
	return curr
}

// pickNext is chash_get_next_server, the round robin used when the hashed
// input is missing: walk the ring from the last point used.
func (h *chash) pickNext(v *chashView, avoid int) int {
	r, only := v.root()
	if r == nil {
		return only
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(r.keys)
	idx := 0
	if h.hasLast {
		// Start after the last point; if that point is gone, HAProxy
		// had moved its cursor to the following one, which is then
		// skipped too.
		idx = sort.Search(n, func(k int) bool { return r.keys[k] >= h.lastKey }) + 1
	}
	avoided, avoidedKey := -1, uint32(0)
	for step := 0; step < n; step++ {
		k := (idx + step) % n
		s := int(r.srv[k])
		h.lastKey, h.hasLast = r.keys[k], true
		if !full(int(v.maxconn[s]), h.served(s)) {
			if s != avoid {
				return s
			}
			avoided, avoidedKey = s, r.keys[k]
		}
	}
	if avoided >= 0 {
		h.lastKey = avoidedKey
	}
	return avoided
}

func (h *chash) change(i int) {
	old := h.view.Load()
	var ew uint32
	if h.ss.usable(i) {
		ew = dynEWeight(&h.ss.list[i])
	}
	for len(h.ew) <= i {
		h.ew = append(h.ew, 0)
	}
	h.ew[i] = ew
	h.publish(old, i)
}

func (h *chash) Update(i int, s Server) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.ss.update(i, s); err != nil {
		return err
	}
	h.change(i)
	return nil
}

func (h *chash) Add(i int, s Server) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := s.ID // before add gives it index+1
	if err := h.ss.add(i, s); err != nil {
		return err
	}
	h.allocNodes(i, id)
	h.change(i)
	return nil
}

func (h *chash) Remove(i int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.ss.remove(i); err != nil {
		return err
	}
	h.change(i)
	return nil
}
