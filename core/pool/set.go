package pool

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// Set is the process-wide part of the pools: shard count, global limits,
// the fd_takeover counters and the purge task shared by every server
// created from it. HAProxy has one of these implicitly (global settings,
// activity[], idle_conn_task).
type Set[C Conn] struct {
	threads  int
	opts     Options
	takeover []paddedCounter // fd_takeover per taking shard

	idle atomic.Int64 // idle connections over all servers; kept only with opts.MaxIdle > 0

	mu      sync.Mutex    // guards following fields and every Server's queue fields
	queue   purgeQueue[C] // armed servers, earliest due first
	running bool          // purge goroutine started and not stopped
	wake    chan struct{} // nudges the purge goroutine when the earliest due moves
	stop    chan struct{} // closed by Stop
	done    chan struct{} // closed when the purge goroutine returns
}

// NewSet returns a pool set for o.Threads shards. The purge task does not
// run until Start.
func NewSet[C Conn](o Options) (*Set[C], error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Set[C]{
		threads:  o.Threads,
		opts:     o,
		takeover: make([]paddedCounter, o.Threads),
		wake:     make(chan struct{}, 1),
	}, nil
}

// Threads returns the number of shards.
func (p *Set[C]) Threads() int { return p.threads }

// FDTakeover appends to dst, for each shard, how many connections that
// shard took over from a sibling, and returns the extended slice. These
// are `show activity`'s fd_takeover values; like HAProxy's they are
// 32-bit and wrap.
func (p *Set[C]) FDTakeover(dst []uint32) []uint32 {
	for i := range p.takeover {
		dst = append(dst, p.takeover[i].v.Load())
	}
	return dst
}

// ClearFDTakeover resets the fd_takeover counters (`clear counters`).
func (p *Set[C]) ClearFDTakeover() {
	for i := range p.takeover {
		p.takeover[i].v.Store(0)
	}
}

func (p *Set[C]) usedFDs() int {
	if p.opts.UsedFDs == nil {
		return 0
	}
	return p.opts.UsedFDs()
}

// fdsLow reports whether descriptors are at or above the low watermark.
func (p *Set[C]) fdsLow() bool {
	return p.opts.LowFDs > 0 && p.usedFDs() >= p.opts.LowFDs
}

// NewServer creates the pool of one server. alive, if not nil, is asked
// about a pooled connection before it is handed out; a false answer
// closes the connection and the search goes on. It must be cheap (for
// example a non-blocking peek) and must not block.
func (p *Set[C]) NewServer(st Settings, alive func(C) bool) (*Server[C], error) {
	if err := st.validate(); err != nil {
		return nil, err
	}
	s := &Server[C]{
		set:    p,
		st:     st,
		alive:  alive,
		shards: make([]shard[C], p.threads),
		hidx:   -1,
	}
	return s, nil
}

// Start runs the purge task in its own goroutine until Stop. Servers are
// queued for purging when they first keep an idle connection, and every
// pool-purge-delay after that while they still have some.
func (p *Set[C]) Start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running {
		return
	}
	p.running = true
	p.stop = make(chan struct{})
	p.done = make(chan struct{})
	go p.purgeLoop(p.stop, p.done)
}

// Stop ends the purge task and waits for it. Pooled connections stay
// open; close them with CloseAll per server.
func (p *Set[C]) Stop() {
	p.mu.Lock()
	if !p.running {
		p.mu.Unlock()
		return
	}
	p.running = false
	stop, done := p.stop, p.done
	p.mu.Unlock()
	close(stop)
	<-done
}

func (p *Set[C]) purgeLoop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		p.mu.Lock()
		var wait time.Duration = -1
		var due *Server[C]
		if len(p.queue) > 0 {
			top := p.queue[0]
			if d := time.Until(top.due); d <= 0 {
				heap.Pop(&p.queue)
				due = top
			} else {
				wait = d
			}
		}
		p.mu.Unlock()

		if due != nil {
			due.purgeDue()
			continue
		}
		var timer <-chan time.Time
		if wait >= 0 {
			t.Reset(wait)
			timer = t.C
		}
		select {
		case <-stop:
			return
		case <-p.wake:
		case <-timer:
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
	}
}

// arm queues s for a purge one pool-purge-delay from now, unless it is
// already queued.
func (p *Set[C]) arm(s *Server[C]) {
	p.mu.Lock()
	if s.hidx < 0 && !s.deleted.Load() {
		s.armed.Store(true)
		s.due = time.Now().Add(s.st.PurgeDelay)
		heap.Push(&p.queue, s)
		if s.hidx == 0 {
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
	}
	p.mu.Unlock()
}

func (p *Set[C]) dequeue(s *Server[C]) {
	p.mu.Lock()
	if s.hidx >= 0 {
		heap.Remove(&p.queue, s.hidx)
	}
	p.mu.Unlock()
}

// purgeQueue is a min-heap of servers by due time. Set.mu must be held.
type purgeQueue[C Conn] []*Server[C]

func (q purgeQueue[C]) Len() int           { return len(q) }
func (q purgeQueue[C]) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q purgeQueue[C]) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].hidx = i
	q[j].hidx = j
}
func (q *purgeQueue[C]) Push(x any) {
	s := x.(*Server[C])
	s.hidx = len(*q)
	*q = append(*q, s)
}
func (q *purgeQueue[C]) Pop() any {
	old := *q
	s := old[len(old)-1]
	old[len(old)-1] = nil
	s.hidx = -1
	*q = old[:len(old)-1]
	return s
}
