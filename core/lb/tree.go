package lb

// tree is an ordered set of intrusive nodes keyed by (key, seq), where seq is
// an insertion counter. It stands in for HAProxy's eb32 trees: entries with
// equal keys come out in insertion order (first in, first out), which is what
// makes roundrobin and leastconn rotate among servers of equal standing.
//
// It is a treap: O(log n) expected per insert, delete, first and next, no
// allocation (each server owns its node). Not thread safe; the algorithm that
// owns the tree holds its lock.
type tree struct {
	root *tnode
	seq  uint64
	rnd  uint32 // xorshift state for node priorities
}

// tnode is one entry of a tree. in tells whether it is currently linked, so
// that removing a node that is not in a tree is a no-op, as eb32_delete is.
type tnode struct {
	key         uint64
	seq         uint64
	prio        uint32
	srv         int32
	hidx        int32 // position when in a heap
	in          bool
	left, right *tnode
}

func (a *tnode) less(b *tnode) bool {
	return a.key < b.key || (a.key == b.key && a.seq < b.seq)
}

func (t *tree) nextPrio() uint32 {
	if t.rnd == 0 {
		t.rnd = 0x9e3779b9
	}
	x := t.rnd
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	t.rnd = x
	return x
}

// insert links n with key k after every entry already holding k.
func (t *tree) insert(n *tnode, k uint64) {
	if n.in {
		t.remove(n)
	}
	t.seq++
	n.key, n.seq, n.prio = k, t.seq, t.nextPrio()
	n.left, n.right, n.in = nil, nil, true
	t.root = t.insertAt(t.root, n)
}

func (t *tree) insertAt(cur, n *tnode) *tnode {
	if cur == nil {
		return n
	}
	if n.prio > cur.prio {
		n.left, n.right = split(cur, n)
		return n
	}
	if n.less(cur) {
		cur.left = t.insertAt(cur.left, n)
	} else {
		cur.right = t.insertAt(cur.right, n)
	}
	return cur
}

// split cuts the subtree at cur into the entries before and after n.
func split(cur, n *tnode) (l, r *tnode) {
	if cur == nil {
		return nil, nil
	}
	if cur.less(n) {
		cur.right, r = split(cur.right, n)
		return cur, r
	}
	l, cur.left = split(cur.left, n)
	return l, cur
}

func merge(l, r *tnode) *tnode {
	if l == nil {
		return r
	}
	if r == nil {
		return l
	}
	if l.prio > r.prio {
		l.right = merge(l.right, r)
		return l
	}
	r.left = merge(l, r.left)
	return r
}

// remove unlinks n; it does nothing when n is not in the tree.
func (t *tree) remove(n *tnode) {
	if !n.in {
		return
	}
	t.root = removeAt(t.root, n)
	n.in, n.left, n.right = false, nil, nil
}

func removeAt(cur, n *tnode) *tnode {
	if cur == nil {
		return nil
	}
	if cur == n {
		return merge(cur.left, cur.right)
	}
	if n.less(cur) {
		cur.left = removeAt(cur.left, n)
	} else {
		cur.right = removeAt(cur.right, n)
	}
	return cur
}

// first returns the smallest entry, or nil.
func (t *tree) first() *tnode {
	n := t.root
	if n == nil {
		return nil
	}
	for n.left != nil {
		n = n.left
	}
	return n
}

// next returns the entry following n (which must be in the tree), or nil.
func (t *tree) next(n *tnode) *tnode {
	var best *tnode
	for cur := t.root; cur != nil; {
		if n.less(cur) {
			best = cur
			cur = cur.left
		} else {
			cur = cur.right
		}
	}
	return best
}

func (t *tree) empty() bool { return t.root == nil }
