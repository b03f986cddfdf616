package lb

// rec is the per-server state of the tree-based algorithms (roundrobin,
// leastconn). Like HAProxy, it keeps the committed ("cur") weight and state
// next to the pending ("next") ones, so that an update can tell what changed.
type rec struct {
	backup  bool
	id      int
	iweight int // weight at configuration time
	maxconn int

	nextUsable, curUsable bool
	nextEW, curEW         uint32

	node   tnode
	lbTree int8 // fwrr: which tree holds node (treeNone, treeCurr, treeT0, treeT1)

	// fwrr positions, as HAProxy's npos, lpos and rweight.
	npos, lpos, rweight uint32
}

// base keeps the server records and the proxy-wide counts HAProxy derives in
// recount_servers and keeps up to date on every change. The owner's lock
// guards it.
type base struct {
	recs       []*rec // nil: no server at that index; pointers, as trees link their nodes
	allBackups bool
	served     func(int) int

	srvAct, srvBck   int    // usable active and backup servers
	totWact, totWbck uint32 // their total effective weights
	fbck             int    // first usable backup without allbackups, else -1
}

func (b *base) willbe(r *rec) bool    { return r.nextEW > 0 && r.nextUsable }
func (b *base) currently(r *rec) bool { return r.curEW > 0 && r.curUsable }
func (b *base) changed(r *rec) bool {
	return r.nextEW != r.curEW || r.nextUsable != r.curUsable
}
func (b *base) commit(r *rec) { r.curEW, r.curUsable = r.nextEW, r.nextUsable }

func (b *base) isFull(i int) bool {
	r := b.recs[i]
	return r.maxconn > 0 && b.served(i) >= r.maxconn
}

// init fills the records from the configuration with the given effective
// weight function; every server starts committed, as after HAProxy's init.
func (b *base) init(c *Config, ew func(*Server) uint32) {
	b.allBackups = c.AllBackups
	b.served = c.Served
	b.recs = make([]*rec, len(c.Servers))
	for i := range c.Servers {
		b.set(i, &c.Servers[i], ew)
		r := b.recs[i]
		r.iweight = c.Servers[i].Weight
		b.commit(r)
	}
	b.recount()
}

// set records s as server i's pending state.
func (b *base) set(i int, s *Server, ew func(*Server) uint32) {
	r := b.recs[i]
	if r == nil {
		r = &rec{lbTree: treeNone}
		b.recs[i] = r
	}
	r.backup = s.Backup
	r.id = s.ID
	r.maxconn = s.MaxConn
	r.nextUsable = s.Usable
	r.nextEW = ew(s)
	r.node.srv = int32(i)
}

// recount is HAProxy's recount_servers on committed states.
func (b *base) recount() {
	b.srvAct, b.srvBck, b.totWact, b.totWbck, b.fbck = 0, 0, 0, 0, -1
	for i := range b.recs {
		r := b.recs[i]
		if r == nil || !b.currently(r) {
			continue
		}
		if r.backup {
			if b.srvBck == 0 && !b.allBackups {
				b.fbck = i
			}
			b.srvBck++
			b.totWbck += r.curEW
		} else {
			b.srvAct++
			b.totWact += r.curEW
		}
	}
}

// accountDown removes server i (currently usable) from the counts.
func (b *base) accountDown(i int) {
	r := b.recs[i]
	if !r.backup {
		b.srvAct--
		b.totWact -= r.curEW
		return
	}
	b.srvBck--
	b.totWbck -= r.curEW
	if i == b.fbck {
		// The first backup left: the next usable one after it takes over.
		b.fbck = -1
		for j := i + 1; j < len(b.recs); j++ {
			o := b.recs[j]
			if o != nil && o.backup && b.willbe(o) {
				b.fbck = j
				break
			}
		}
	}
}

// accountUp adds server i (about to become usable) to the counts.
func (b *base) accountUp(i int) {
	r := b.recs[i]
	if !r.backup {
		b.srvAct++
		b.totWact += r.nextEW
		return
	}
	b.srvBck++
	b.totWbck += r.nextEW
	if !b.allBackups && (b.fbck < 0 || i < b.fbck) {
		b.fbck = i
	}
}

// grow makes room for index i; it reports false when i is in use.
func (b *base) grow(i int) bool {
	if i < 0 {
		return false
	}
	if i < len(b.recs) {
		return b.recs[i] == nil
	}
	for len(b.recs) <= i {
		b.recs = append(b.recs, nil)
	}
	return true
}

func (b *base) valid(i int) bool {
	return i >= 0 && i < len(b.recs) && b.recs[i] != nil
}

// add registers server i of a weighted picker: it starts out of rotation,
// then comes up like any other through apply, the picker's own placement.
// The picker's lock must be held.
func (b *base) add(i int, s Server, apply func(int)) error {
	if err := checkServer(&s, i); err != nil {
		return err
	}
	if !b.grow(i) {
		return ErrIndex
	}
	b.set(i, &Server{ID: s.ID, Weight: s.Weight, Backup: s.Backup, MaxConn: s.MaxConn}, dynEWeight)
	b.recs[i].iweight = s.Weight
	b.commit(b.recs[i])
	b.set(i, &s, dynEWeight)
	apply(i)
	return nil
}

// remove takes server i out through apply and forgets it; other indices do
// not move. The picker's lock must be held.
func (b *base) remove(i int, apply func(int)) error {
	if !b.valid(i) {
		return ErrIndex
	}
	b.recs[i].nextUsable = false
	apply(i)
	b.recs[i] = nil
	return nil
}
