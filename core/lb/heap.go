package lb

// heap is a binary min-heap of intrusive nodes ordered by (key, seq), with
// the same first-in-first-out order among equal keys as tree. Roundrobin
// needs only first, insert and remove, which a flat array serves faster
// than a tree: O(1) first, O(log n) insert and remove, no pointer chasing.
// Not thread safe; the owner's lock guards it.
type heap struct {
	nodes []*tnode
	seq   uint64
}

// insert adds n with key k after every entry already holding k.
func (h *heap) insert(n *tnode, k uint64) {
	if n.in {
		h.remove(n)
	}
	h.seq++
	n.key, n.seq, n.in = k, h.seq, true
	n.hidx = int32(len(h.nodes))
	h.nodes = append(h.nodes, n)
	h.up(int(n.hidx))
}

// remove unlinks n; it does nothing when n is not in the heap.
func (h *heap) remove(n *tnode) {
	if !n.in {
		return
	}
	i, last := int(n.hidx), len(h.nodes)-1
	if i != last {
		h.swap(i, last)
	}
	h.nodes[last] = nil
	h.nodes = h.nodes[:last]
	n.in = false
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h *heap) first() *tnode {
	if len(h.nodes) == 0 {
		return nil
	}
	return h.nodes[0]
}

func (h *heap) swap(a, b int) {
	h.nodes[a], h.nodes[b] = h.nodes[b], h.nodes[a]
	h.nodes[a].hidx = int32(a)
	h.nodes[b].hidx = int32(b)
}

func (h *heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.nodes[i].less(h.nodes[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *heap) down(i int) {
	n := len(h.nodes)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.nodes[r].less(h.nodes[l]) {
			m = r
		}
		if !h.nodes[m].less(h.nodes[i]) {
			return
		}
		h.swap(i, m)
		i = m
	}
}
