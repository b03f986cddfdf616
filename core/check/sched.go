package check

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// interThreshold is HAProxy's SRV_CHK_INTER_THRES: checks faster than this
// do not dictate how start times are spread.
const interThreshold = time.Second

// Scheduler runs one goroutine per configured check. Each goroutine sleeps
// until its check is due, runs at most one probe at a time, and computes the
// next date from the check's current interval (inter, fastinter or
// downinter) with spread-checks jitter. Settings changed on a Check apply at
// its next probe.
type Scheduler struct {
	spread    int           // spread-checks, percent
	maxSpread time.Duration // max-spread-checks, 0 for none

	mu      sync.Mutex // guards following fields
	ctx     context.Context
	cancel  context.CancelFunc
	servers map[*Server]*serverRun
	stopped bool
}

type serverRun struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewScheduler returns a scheduler. spreadPct is the global "spread-checks"
// (0 to 50), maxSpread the global "max-spread-checks" (0: none).
func NewScheduler(spreadPct int, maxSpread time.Duration) *Scheduler {
	if spreadPct < 0 {
		spreadPct = 0
	}
	if spreadPct > 50 {
		spreadPct = 50
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Scheduler{spread: spreadPct, maxSpread: maxSpread, ctx: ctx, cancel: cancel, servers: map[*Server]*serverRun{}}
}

// Start starts the checks of servers, spreading their first probes over
// the smallest check interval (of at least one second) as HAProxy does at
// startup: the i-th of n checks starts after mininter*i/n.
func (sc *Scheduler) Start(servers []*Server) error {
	first := sc.firstOffsets(servers)
	for _, s := range servers {
		if err := sc.add(s, first); err != nil {
			return err
		}
	}
	return nil
}

// firstOffsets computes the delay before each check's first probe.
func (sc *Scheduler) firstOffsets(servers []*Server) map[*Check]time.Duration {
	var checks []*Check
	mininter := time.Duration(0)
	for _, s := range servers {
		for _, c := range []*Check{s.Health, s.Agent} {
			if c == nil {
				continue
			}
			checks = append(checks, c)
			if in := c.Interval(); in >= interThreshold && (mininter == 0 || in < mininter) {
				mininter = in
			}
		}
	}
	n := len(checks)
	first := make(map[*Check]time.Duration, n)
	for pos, c := range checks {
		mi := mininter
		if in := c.Interval(); mi < in {
			mi = in
		}
		if sc.maxSpread > 0 && mi > sc.maxSpread {
			mi = sc.maxSpread
		}
		first[c] = mi * time.Duration(pos) / time.Duration(n)
	}
	return first
}

// Add starts the checks of a server added at run time; its first probe is
// due at once.
func (sc *Scheduler) Add(s *Server) error { return sc.add(s, nil) }

func (sc *Scheduler) add(s *Server, first map[*Check]time.Duration) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.stopped {
		return ErrStopped
	}
	if _, ok := sc.servers[s]; ok {
		return nil
	}
	ctx, cancel := context.WithCancel(sc.ctx)
	run := &serverRun{cancel: cancel}
	sc.servers[s] = run
	for _, c := range []*Check{s.Health, s.Agent} {
		if c == nil {
			continue
		}
		run.wg.Add(1)
		go sc.loop(ctx, &run.wg, c, first[c])
	}
	return nil
}

// Remove stops the checks of a server (del server) and waits for its
// probes to end.
func (sc *Scheduler) Remove(s *Server) {
	sc.mu.Lock()
	run := sc.servers[s]
	delete(sc.servers, s)
	sc.mu.Unlock()
	if run != nil {
		run.cancel()
		run.wg.Wait()
	}
}

// Stop stops every check and waits for the probes in flight to end.
func (sc *Scheduler) Stop() {
	sc.mu.Lock()
	sc.stopped = true
	runs := make([]*serverRun, 0, len(sc.servers))
	for _, r := range sc.servers {
		runs = append(runs, r)
	}
	sc.servers = map[*Server]*serverRun{}
	sc.mu.Unlock()
	sc.cancel()
	for _, r := range runs {
		r.wg.Wait()
	}
}

// jitter applies spread-checks to an interval.
func (sc *Scheduler) jitter(d time.Duration) time.Duration {
	if sc.spread <= 0 {
		return d
	}
	rv := d * time.Duration(sc.spread) / 100
	rv -= time.Duration(2 * float64(rv) * rand.Float64())
	return d + rv
}

func (sc *Scheduler) loop(ctx context.Context, wg *sync.WaitGroup, c *Check, first time.Duration) {
	defer wg.Done()
	s := c.srv
	s.mu.Lock()
	c.next = time.Now().Add(first)
	s.mu.Unlock()
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-timer.C:
		}
		s.mu.Lock()
		due := time.Until(c.next)
		s.mu.Unlock()
		if due > 0 {
			timer.Stop()
			timer.Reset(due)
			continue
		}
		ran := safeProbe(ctx, c)
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		var d time.Duration
		if ran {
			d = sc.jitter(c.intervalLocked())
		} else {
			// Disabled or paused: look again after inter.
			d = c.set.Inter
		}
		if d < time.Millisecond {
			d = time.Millisecond
		}
		c.next = time.Now().Add(d)
		s.mu.Unlock()
		timer.Stop()
		timer.Reset(d)
	}
}

// safeProbe runs one probe; a panic in a probe must not take the process
// down, it only loses that probe.
func safeProbe(ctx context.Context, c *Check) (ran bool) {
	defer func() {
		if recover() != nil {
			c.srv.mu.Lock()
			c.state &^= StInProgress
			c.srv.mu.Unlock()
			ran = true
		}
	}()
	return c.probeOnce(ctx)
}
