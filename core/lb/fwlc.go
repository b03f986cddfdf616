package lb

import "sync"

// fwlc is "balance leastconn": HAProxy's FWLC (lb_fwlc.c). Servers sit in a
// tree keyed by their load, (served+1) x 4096 / eweight, or 0 when idle; the
// first server that is not full wins, and servers of equal load rotate
// because a server that takes or drops a connection is requeued behind its
// peers.
//
// Cost: O(log n) per pick (plus one step per full server), O(log n) per
// Take/Drop. Locking: one mutex, like HAProxy's lbprm lock.
type fwlc struct {
	mu sync.Mutex // guards following fields
	base
	act, bck tree
}

func newFWLC(c Config) *fwlc {
	f := &fwlc{}
	f.base.init(&c, dynEWeight)
	for i, r := range f.recs {
		if f.currently(r) {
			f.queue(i, r.curEW)
		}
	}
	return f
}

func (f *fwlc) Name() string  { return LeastConn.String() }
func (f *fwlc) Dynamic() bool { return true }

func (f *fwlc) tree(r *rec) *tree {
	if r.backup {
		return &f.bck
	}
	return &f.act
}

func (f *fwlc) key(i int, ew uint32) uint64 {
	n := f.served(i)
	if n <= 0 {
		return 0
	}
	if ew == 0 {
		ew = 1
	}
	return uint64(uint32(n+1) * maxEWeight / ew)
}

func (f *fwlc) queue(i int, ew uint32) {
	r := f.recs[i]
	f.tree(r).insert(&r.node, f.key(i, ew))
}

func (f *fwlc) Pick(_ Key, avoid int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var t *tree
	switch {
	case f.srvAct > 0:
		t = &f.act
	case f.fbck >= 0:
		return f.fbck
	case f.srvBck > 0:
		t = &f.bck
	default:
		return -1
	}
	avoided := -1
	for n := t.first(); n != nil; n = t.next(n) {
		i := int(n.srv)
		if !f.isFull(i) {
			if i != avoid {
				return i
			}
			avoided = i
		}
	}
	return avoided
}

// reposition is fwlc_srv_reposition: requeue server i at its new load.
func (f *fwlc) reposition(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.valid(i) {
		return
	}
	r := f.recs[i]
	if !r.node.in {
		return
	}
	if k := f.key(i, r.curEW); k != r.node.key {
		f.tree(r).insert(&r.node, k)
	}
}

func (f *fwlc) Take(i int) { f.reposition(i) }
func (f *fwlc) Drop(i int) { f.reposition(i) }

func (f *fwlc) apply(i int) {
	r := f.recs[i]
	if !f.changed(r) {
		return
	}
	was, will := f.currently(r), f.willbe(r)
	switch {
	case was && !will:
		f.accountDown(i)
		f.tree(r).remove(&r.node)
	case !was && will:
		f.accountUp(i)
		f.queue(i, r.nextEW)
	case was && will:
		if r.backup {
			f.totWbck += r.nextEW - r.curEW
		} else {
			f.totWact += r.nextEW - r.curEW
		}
		f.tree(r).remove(&r.node)
		f.queue(i, r.nextEW)
	}
	f.commit(r)
}

func (f *fwlc) Update(i int, s Server) error {
	if err := checkServer(&s, i); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.valid(i) {
		return ErrIndex
	}
	if r := f.recs[i]; s.Backup != r.backup {
		r.nextUsable = false
		f.apply(i)
		r.backup = s.Backup
	}
	f.set(i, &s, dynEWeight)
	f.apply(i)
	return nil
}

func (f *fwlc) Add(i int, s Server) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.add(i, s, f.apply)
}

func (f *fwlc) Remove(i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.remove(i, f.apply)
}
