package lb

// heap is a binary min-heap of intrusive nodes ordered by (key, seq), with
// the same first-in-first-out order among equal keys as tree. Roundrobin
// needs only first, insert and remove, which a flat array serves faster
// than a tree: O(1) first, O(log n) insert and remove, no pointer chasing.
// Not thread safe; the owner's lock guards it.
type heap struct {
	ents []hent
	seq  uint64
}

// hent keeps a node's order next to it, so that sifting compares without
// following pointers.
type hent struct {
	key, seq uint64
	n        *tnode
}

func (a *hent) less(b *hent) bool {
	return a.key < b.key || (a.key == b.key && a.seq < b.seq)
}

// insert adds n with key k after every entry already holding k.
func (h *heap) insert(n *tnode, k uint64) {
	if n.in {
		h.remove(n)
	}
	h.seq++
	n.key, n.seq, n.in = k, h.seq, true
	n.hidx = int32(len(h.ents))
	h.ents = append(h.ents, hent{key: k, seq: h.seq, n: n})
	h.up(int(n.hidx))
}

// remove unlinks n; it does nothing when n is not in the heap.
func (h *heap) remove(n *tnode) {
	if !n.in {
		return
	}
	i, last := int(n.hidx), len(h.ents)-1
	if i != last {
		h.swap(i, last)
	}
	h.ents[last] = hent{}
	h.ents = h.ents[:last]
	n.in = false
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h *heap) first() *tnode {
	if len(h.ents) == 0 {
		return nil
	}
	return h.ents[0].n
}

func (h *heap) swap(a, b int) {
	h.ents[a], h.ents[b] = h.ents[b], h.ents[a]
	h.ents[a].n.hidx = int32(a)
	h.ents[b].n.hidx = int32(b)
}

func (h *heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.ents[i].less(&h.ents[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *heap) down(i int) {
	n := len(h.ents)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.ents[r].less(&h.ents[l]) {
			m = r
		}
		if !h.ents[m].less(&h.ents[i]) {
			return
		}
		h.swap(i, m)
		i = m
	}
}
