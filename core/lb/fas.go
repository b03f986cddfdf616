package lb

import (
	"slices"
	"sync"
	"sync/atomic"
)

// groupView is an immutable snapshot of which servers are usable, per group,
// and which one serves alone when there is no active server and no
// allbackups. Snapshot-based algorithms publish one per change.
type groupView struct {
	act, bck []int32 // usable servers, in the algorithm's order
	fbck     int     // first usable backup without allbackups, else -1
	maxconn  []int32 // server index -> limit
}

// servers is the configuration side of the snapshot-based algorithms. Its
// owner's mutex guards it.
type servers struct {
	list       []Server
	present    []bool
	allBackups bool
}

func (ss *servers) init(c *Config) {
	ss.list = append([]Server(nil), c.Servers...)
	ss.present = make([]bool, len(ss.list))
	for i := range ss.present {
		ss.present[i] = true
	}
	ss.allBackups = c.AllBackups
}

func (ss *servers) usable(i int) bool {
	return ss.present[i] && ss.list[i].Usable && ss.list[i].Weight > 0
}

// view builds a groupView listing usable servers in declaration order.
func (ss *servers) view() *groupView {
	v := &groupView{fbck: -1, maxconn: make([]int32, len(ss.list))}
	for i := range ss.list {
		v.maxconn[i] = int32(ss.list[i].MaxConn)
		if !ss.usable(i) {
			continue
		}
		if ss.list[i].Backup {
			if len(v.bck) == 0 && !ss.allBackups {
				v.fbck = i
			}
			v.bck = append(v.bck, int32(i))
		} else {
			v.act = append(v.act, int32(i))
		}
	}
	return v
}

func (ss *servers) update(i int, s Server) error {
	if err := checkServer(&s, i); err != nil {
		return err
	}
	if i < 0 || i >= len(ss.list) || !ss.present[i] {
		return ErrIndex
	}
	ss.list[i] = s
	return nil
}

func (ss *servers) add(i int, s Server) error {
	if err := checkServer(&s, i); err != nil {
		return err
	}
	if i < 0 || (i < len(ss.list) && ss.present[i]) {
		return ErrIndex
	}
	for len(ss.list) <= i {
		ss.list = append(ss.list, Server{})
		ss.present = append(ss.present, false)
	}
	ss.list[i], ss.present[i] = s, true
	return nil
}

func (ss *servers) remove(i int) error {
	if i < 0 || i >= len(ss.list) || !ss.present[i] {
		return ErrIndex
	}
	ss.present[i] = false
	return nil
}

// fas is "balance first": HAProxy's FAS (lb_fas.c). The usable server with
// the lowest ID that is not full gets the connection, so servers fill up one
// after the other. Weights only take a server in or out.
//
// Cost: O(k) per pick for k full servers skipped, lock-free (a snapshot
// swapped atomically on change).
type fas struct {
	served func(int) int
	view   atomic.Pointer[groupView]

	mu sync.Mutex // guards ss
	ss servers
}

func newFAS(c Config) *fas {
	f := &fas{served: c.Served}
	f.ss.init(&c)
	f.publish()
	return f
}

func (f *fas) Name() string  { return First.String() }
func (f *fas) Dynamic() bool { return true }
func (f *fas) Take(int)      {}
func (f *fas) Drop(int)      {}

// publish sorts each group by server ID and swaps the snapshot in.
func (f *fas) publish() {
	v := f.ss.view()
	byID := func(a, b int32) int { return f.ss.list[a].ID - f.ss.list[b].ID }
	slices.SortStableFunc(v.act, byID)
	slices.SortStableFunc(v.bck, byID)
	f.view.Store(v)
}

func (f *fas) Pick(_ Key, avoid int) int {
	v := f.view.Load()
	var list []int32
	switch {
	case len(v.act) > 0:
		list = v.act
	case v.fbck >= 0:
		return v.fbck
	default:
		list = v.bck
	}
	avoided := -1
	for _, s := range list {
		i := int(s)
		if !full(int(v.maxconn[i]), f.served(i)) {
			if i != avoid {
				return i
			}
			avoided = i
		}
	}
	return avoided
}

func (f *fas) Update(i int, s Server) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.ss.update(i, s); err != nil {
		return err
	}
	f.publish()
	return nil
}

func (f *fas) Add(i int, s Server) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.ss.add(i, s); err != nil {
		return err
	}
	f.publish()
	return nil
}

func (f *fas) Remove(i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.ss.remove(i); err != nil {
		return err
	}
	f.publish()
	return nil
}
