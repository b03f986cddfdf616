package lb

import "sync"

// Tree tags of a fwrr server: which of its group's trees holds it.
const (
	treeNone int8 = iota - 1
	treeCurr
	treeT0
	treeT1
)

// fwrrGroup is one group (active or backup) of HAProxy's fast weighted round
// robin. Servers wait in "curr" ordered by their next position; "init" holds
// servers that have not been served in this window yet, heaviest first, and
// "next" those pushed to the next window. init and next name t[0] or t[1]
// and swap when curr runs dry.
type fwrrGroup struct {
	curr       heap
	t          [2]heap
	init, next int8 // treeT0 or treeT1
	currPos    int32
	currWeight int32
	nextWeight int32
}

func (g *fwrrGroup) tree(tag int8) *heap {
	switch tag {
	case treeCurr:
		return &g.curr
	case treeT0:
		return &g.t[0]
	case treeT1:
		return &g.t[1]
	}
	return nil
}

// fwrr is "balance roundrobin": HAProxy's FWRR (lb_fwrr.c), a weighted round
// robin whose weights may change at run time, taking effect smoothly.
// HAProxy's three ebtrees per group are heaps here: the algorithm only ever
// looks at their first entry.
//
// Cost: O(log n) per pick (plus O(log n) per full or avoided server
// skipped). Locking: one mutex, like HAProxy's lbprm lock, held for the
// whole pick and for updates.
type fwrr struct {
	mu sync.Mutex // guards following fields
	base
	act, bck fwrrGroup
	fullBuf  []int // scratch list of skipped servers, reused across picks
}

func newFWRR(c Config) *fwrr {
	f := &fwrr{}
	f.base.init(&c, dynEWeight)
	for _, g := range []*fwrrGroup{&f.act, &f.bck} {
		g.init, g.next = treeT0, treeT1
	}
	f.act.currPos, f.act.currWeight, f.act.nextWeight = int32(f.totWact), int32(f.totWact), int32(f.totWact)
	f.bck.currPos, f.bck.currWeight, f.bck.nextWeight = int32(f.totWbck), int32(f.totWbck), int32(f.totWbck)
	for _, r := range f.recs {
		if !f.currently(r) {
			continue
		}
		g := f.group(r)
		f.queueByWeight(g, g.init, r)
	}
	return f
}

func (f *fwrr) Name() string  { return RoundRobin.String() }
func (f *fwrr) Dynamic() bool { return true }
func (f *fwrr) Take(int)      {}
func (f *fwrr) Drop(int)      {}

func (f *fwrr) group(r *rec) *fwrrGroup {
	if r.backup {
		return &f.bck
	}
	return &f.act
}

// queueByWeight puts r in tree tag sorted by decreasing weight, so that heavy
// servers start first in a window.
func (f *fwrr) queueByWeight(g *fwrrGroup, tag int8, r *rec) {
	g.tree(tag).insert(&r.node, uint64(maxEWeight-r.nextEW))
	r.lbTree = tag
}

func (f *fwrr) dequeue(g *fwrrGroup, r *rec) {
	if t := g.tree(r.lbTree); t != nil {
		t.remove(&r.node)
	}
}

// queue places r according to its next position (fwrr_queue_srv): in curr if
// the position lies in this window, else in next.
func (f *fwrr) queue(r *rec) {
	g := f.group(r)
	switch {
	case !f.willbe(r):
		r.lbTree = treeNone
	case r.nextEW == 0 || r.npos >= uint32(2*g.currWeight) || r.npos >= uint32(g.currWeight+g.nextWeight):
		r.npos -= uint32(g.currWeight)
		f.queueByWeight(g, g.next, r)
	default:
		// Position first, then the remainder and weight break ties so
		// that heavier servers and those owed more go first. HAProxy's
		// 32-bit key overflows beyond 4095 servers; 64 bits do not.
		k := uint64(MaxWeight)*uint64(r.npos) + uint64((maxEWeight+r.rweight-r.nextEW)/WeightScale)
		g.curr.insert(&r.node, k)
		r.lbTree = treeCurr
	}
}

// getSrv prepares r's position when it leaves its tree (fwrr_get_srv).
func (f *fwrr) getSrv(r *rec) {
	g := f.group(r)
	switch r.lbTree {
	case g.init:
		r.npos, r.rweight = 0, 0
	case g.next:
		r.npos += uint32(g.currWeight)
	case treeNone:
		r.npos = uint32(g.currPos)
	}
}

func (f *fwrr) switchTrees(g *fwrrGroup) {
	g.init, g.next = g.next, g.init
	g.currWeight = g.nextWeight
	g.currPos = g.currWeight
}

// fromGroup returns curr's first server if its turn has come, else the
// heaviest server not yet served in this window, else curr's first.
func (f *fwrr) fromGroup(g *fwrrGroup) *rec {
	var s1 *rec
	if n := g.curr.first(); n != nil {
		s1 = f.recs[n.srv]
		if s1.curEW != 0 && s1.npos <= uint32(g.currPos) {
			return s1
		}
	}
	if n := g.tree(g.init).first(); n != nil {
		s2 := f.recs[n.srv]
		if s2.curEW != 0 {
			s2.npos, s2.rweight = 0, 0
			return s2
		}
	}
	return s1
}

// updatePosition moves r forward by total/weight, carrying the remainder.
func (f *fwrr) updatePosition(g *fwrrGroup, r *rec) {
	ew := r.curEW
	if ew == 0 {
		return
	}
	if r.npos == 0 {
		r.npos = uint32(g.currPos)
	}
	r.lpos = r.npos
	r.npos += uint32(g.nextWeight) / ew
	r.rweight += uint32(g.nextWeight) % ew
	if r.rweight >= ew {
		r.rweight -= ew
		r.npos++
	}
}

func (f *fwrr) Pick(_ Key, avoid int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var g *fwrrGroup
	switch {
	case f.srvAct > 0:
		g = &f.act
	case f.fbck >= 0:
		return f.fbck
	case f.srvBck > 0:
		g = &f.bck
	default:
		return -1
	}
	switched := false
	var srv, avoided *rec
	skipped := f.fullBuf[:0]
	for {
		if g.currWeight == 0 {
			g.currPos, g.currWeight = g.nextWeight, g.nextWeight
		}
		for {
			srv = f.fromGroup(g)
			if srv != nil {
				break
			}
			if switched {
				srv = avoided
				break
			}
			switched = true
			f.switchTrees(g)
		}
		if srv == nil || srv == avoided {
			break
		}
		f.updatePosition(g, srv)
		f.dequeue(g, srv)
		g.currPos++
		i := int(srv.node.srv)
		if !f.isFull(i) {
			if i != avoid || avoided != nil {
				break
			}
			avoided = srv
		}
		skipped = append(skipped, i)
	}
	if srv != nil {
		f.queue(srv)
	}
	// Requeue skipped servers, latest first as HAProxy's list does. After a
	// switch their place was lost and only their weight counts.
	for k := len(skipped) - 1; k >= 0; k-- {
		r := f.recs[skipped[k]]
		if r == srv {
			continue
		}
		if switched {
			f.queueByWeight(g, g.init, r)
		} else {
			f.queue(r)
		}
	}
	f.fullBuf = skipped[:0]
	if srv == nil {
		return -1
	}
	return int(srv.node.srv)
}

// setDown is fwrr_set_server_status_down for a server that was usable.
func (f *fwrr) setDown(i int) {
	r := f.recs[i]
	g := f.group(r)
	g.nextWeight -= int32(r.curEW)
	f.accountDown(i)
	f.dequeue(g, r)
	r.lbTree = treeNone
	f.commit(r)
}

// setUp is fwrr_set_server_status_up for a server that was not usable.
func (f *fwrr) setUp(i int) {
	r := f.recs[i]
	g := f.group(r)
	g.nextWeight += int32(r.nextEW)
	f.accountUp(i)
	f.getSrv(r)
	r.npos = uint32(g.currPos) + (uint32(g.nextWeight)+uint32(g.currWeight)-uint32(g.currPos))/r.nextEW
	f.queue(r)
	f.commit(r)
}

// apply is fwrr_update_server_weight: it handles any change of server i.
func (f *fwrr) apply(i int) {
	r := f.recs[i]
	if !f.changed(r) {
		return
	}
	was, will := f.currently(r), f.willbe(r)
	switch {
	case !was && !will:
		f.commit(r)
		return
	case !was && will:
		f.setUp(i)
		return
	case was && !will:
		f.setDown(i)
		return
	}
	g := f.group(r)
	g.nextWeight = g.nextWeight - int32(r.curEW) + int32(r.nextEW)
	if r.backup {
		f.totWbck = f.totWbck - r.curEW + r.nextEW
	} else {
		f.totWact = f.totWact - r.curEW + r.nextEW
	}
	switch r.lbTree {
	case g.init:
		f.dequeue(g, r)
		f.queueByWeight(g, g.init, r)
	case treeNone:
		f.getSrv(r)
		r.npos = uint32(g.currPos) + (uint32(g.nextWeight)+uint32(g.currWeight)-uint32(g.currPos))/r.nextEW
		f.queue(r)
	default:
		// Still in this window or the next: keep what it already
		// consumed and move its next turn to the new pace.
		f.getSrv(r)
		prev := r.npos
		step := uint32(g.nextWeight) / r.nextEW
		r.npos = r.lpos + step
		r.rweight = 0
		if r.npos > prev {
			r.npos = prev
		}
		if r.npos < uint32(g.currPos+2) {
			r.npos = uint32(g.currPos) + step
		}
		f.dequeue(g, r)
		f.queue(r)
	}
	f.commit(r)
}

func (f *fwrr) Update(i int, s Server) error {
	if err := checkServer(&s, i); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.valid(i) {
		return ErrIndex
	}
	r := f.recs[i]
	if s.Backup != r.backup {
		// HAProxy cannot change this at run time; goha treats it as
		// leaving one group and joining the other.
		r.nextUsable = false
		f.apply(i)
		r.backup = s.Backup
		r.npos, r.rweight = 0, 0
	}
	f.set(i, &s, dynEWeight)
	f.apply(i)
	return nil
}

func (f *fwrr) Add(i int, s Server) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.add(i, s, f.apply)
}

func (f *fwrr) Remove(i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.remove(i, f.apply)
}
