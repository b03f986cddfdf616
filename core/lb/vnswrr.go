package lb

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// vnTable is one group's virtual-node table: one period of the smooth
// weighted round robin over the group's servers (weights divided by their
// GCD), one slot per pick. Slots are filled lazily, max_init at a time, by
// whichever pick wins the filling flag; slots below filled never change.
type vnTable struct {
	slots   []int32 // slot -> server index; len is the period
	filled  atomic.Int64
	maxInit int
	cursors []counter // one per shard: the next pick's position, growing

	filling atomic.Bool // owned by the goroutine that set it: guards following fields
	members []int32     // servers, declaration order
	w, cw   []int       // reduced weights and SWRR current weights
}

// newVNTable builds the table of members with weights ws and fills its first
// batch. It returns nil for an empty group.
func newVNTable(members []int32, ws []int, maxInit, shards int) *vnTable {
	if len(members) == 0 {
		return nil
	}
	g := 0
	for _, w := range ws {
		g = gcd(g, w)
	}
	t := &vnTable{members: members, w: make([]int, len(ws)), cw: make([]int, len(ws))}
	total := 0
	for j, w := range ws {
		t.w[j] = w / g
		total += t.w[j]
	}
	t.slots = make([]int32, total)
	switch {
	case maxInit <= 0:
		maxInit = len(members)
	case maxInit > total:
		maxInit = total
	}
	t.maxInit = min(maxInit, total)
	t.fillBatch()
	// Each shard starts at its own random slot among the first ones, so
	// that shards (and goha instances) do not all hit the same servers.
	t.cursors = make([]counter, shards)
	span := min(len(members), int(t.filled.Load()))
	for s := range t.cursors {
		t.cursors[s].Store(int64(rand.IntN(span)))
	}
	return t
}

// fillBatch appends up to maxInit slots, one SWRR step each: every weight is
// added to its server's current weight, the first highest wins and loses
// the total. The caller owns t.filling (or t is not shared yet).
func (t *vnTable) fillBatch() {
	f := int(t.filled.Load())
	end := min(f+t.maxInit, len(t.slots))
	for k := f; k < end; k++ {
		best, tot := 0, 0
		for j, w := range t.w {
			t.cw[j] += w
			tot += w
			if t.cw[j] > t.cw[best] {
				best = j
			}
		}
		t.cw[best] -= tot
		t.slots[k] = t.members[best]
	}
	t.filled.Store(int64(end))
}

// vnGen is one immutable generation of a vnswrr backend.
type vnGen struct {
	act, bck *vnTable
	usable   []bool // server index -> up, weight > 0, present
	maxconn  []int32
	actUp    int // usable active servers
	bckUp    int
	fbck     int // first usable backup without allbackups, else -1
}

// vnswrr is goha's "balance vnswrr [max_init=<n>]", Tengine's virtual node
// smooth weighted round robin: the SWRR sequence is computed once into a
// table of total-weight/GCD slots, and each shard walks it with its own
// cursor from a random start. Unusable and full servers are skipped by
// probing forward, at most one table length.
//
// Cost: O(1) per pick when the next slot's server is usable (one atomic add
// on the shard's cursor), lock-free: picks read an atomically swapped
// generation. While a table is being completed, a pick may also fill
// max_init slots at O(servers) each. A weight change, add or remove builds a
// new table in Update (O(max_init x servers)); a state change only swaps the
// usable flags.
type vnswrr struct {
	served func(int) int
	gen    atomic.Pointer[vnGen]

	mu      sync.Mutex // guards following fields (updates only)
	ss      servers
	maxInit int
	shards  int
}

func newVNSWRR(c Config) *vnswrr {
	v := &vnswrr{served: c.Served, maxInit: c.Balance.MaxInit, shards: max(c.Shards, 1)}
	v.ss.init(&c)
	v.publish(true, true)
	return v
}

func (v *vnswrr) Name() string  { return VNSWRR.String() }
func (v *vnswrr) Dynamic() bool { return true }
func (v *vnswrr) Take(int)      {}
func (v *vnswrr) Drop(int)      {}

func (v *vnswrr) table(backup bool) *vnTable {
	var members []int32
	var ws []int
	for i, s := range v.ss.list {
		if v.ss.present[i] && s.Weight > 0 && s.Backup == backup {
			members = append(members, int32(i))
			ws = append(ws, s.Weight)
		}
	}
	return newVNTable(members, ws, v.maxInit, v.shards)
}

// publish swaps in a new generation, rebuilding the tables asked for and
// keeping the others. v.mu must be held (or v not yet shared).
func (v *vnswrr) publish(act, bck bool) {
	g := &vnGen{fbck: -1}
	if old := v.gen.Load(); old != nil {
		g.act, g.bck = old.act, old.bck
	}
	if act {
		g.act = v.table(false)
	}
	if bck {
		g.bck = v.table(true)
	}
	n := len(v.ss.list)
	g.usable = make([]bool, n)
	g.maxconn = make([]int32, n)
	for i := range v.ss.list {
		g.maxconn[i] = int32(v.ss.list[i].MaxConn)
		if !v.ss.usable(i) {
			continue
		}
		g.usable[i] = true
		if v.ss.list[i].Backup {
			if g.bckUp == 0 && !v.ss.allBackups {
				g.fbck = i
			}
			g.bckUp++
		} else {
			g.actUp++
		}
	}
	v.gen.Store(g)
}

func (v *vnswrr) Pick(k Key, avoid int) int {
	g := v.gen.Load()
	switch {
	case g.actUp > 0:
		return v.walk(g, g.act, k.Shard, avoid)
	case g.fbck >= 0:
		return g.fbck
	case g.bckUp > 0:
		return v.walk(g, g.bck, k.Shard, avoid)
	}
	return -1
}

// walk takes the shard's next slot, probing forward past unusable, full
// and avoided servers for at most one period.
func (v *vnswrr) walk(g *vnGen, t *vnTable, shard, avoid int) int {
	if t == nil {
		return -1
	}
	total := int64(len(t.slots))
	filled := t.filled.Load()
	if filled < total && t.filling.CompareAndSwap(false, true) {
		t.fillBatch()
		t.filling.Store(false)
		filled = t.filled.Load()
	}
	if shard < 0 {
		shard = -shard
	}
	cur := &t.cursors[shard%len(t.cursors)]
	c := cur.Add(1) - 1
	avoided := -1
	for k := int64(0); k < total; k++ {
		pos := (c + k) % total
		if pos >= filled {
			// Another pick is filling: stay in the filled part.
			pos %= filled
		}
		s := int(t.slots[pos])
		if !g.usable[s] || full(int(g.maxconn[s]), v.served(s)) {
			continue
		}
		if s == avoid {
			if avoided < 0 {
				avoided = s
			}
			continue
		}
		if k > 0 {
			// Jump the cursor to the chosen slot, as Tengine does, so
			// skipped slots do not all fall to the next server.
			cur.Add(k)
		}
		return s
	}
	return avoided
}

func (v *vnswrr) Update(i int, s Server) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if i < 0 || i >= len(v.ss.list) || !v.ss.present[i] {
		return ErrIndex
	}
	old := v.ss.list[i]
	if err := v.ss.update(i, s); err != nil {
		return err
	}
	s = v.ss.list[i]
	if old.Weight == s.Weight && old.Backup == s.Backup {
		v.publish(false, false)
		return nil
	}
	v.publish(!old.Backup || !s.Backup, old.Backup || s.Backup)
	return nil
}

func (v *vnswrr) Add(i int, s Server) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.ss.add(i, s); err != nil {
		return err
	}
	v.publish(!s.Backup, s.Backup)
	return nil
}

func (v *vnswrr) Remove(i int) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if i < 0 || i >= len(v.ss.list) || !v.ss.present[i] {
		return ErrIndex
	}
	b := v.ss.list[i].Backup
	if err := v.ss.remove(i); err != nil {
		return err
	}
	v.publish(!b, b)
	return nil
}
