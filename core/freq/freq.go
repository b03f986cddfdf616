// Package freq holds HAProxy's rate counters: events per second over a
// sliding second, and sliding-window averages. They are lock-free and
// shared by the threads that count.
package freq

import (
	"sync/atomic"
	"time"
)

// Ctr is HAProxy's per-second event counter: the count of the current
// second plus the previous second's, which gives a rate that moves smoothly
// across second boundaries. Lock-free; concurrent rotations may lose an
// event at the boundary, which a rate tolerates.
type Ctr struct {
	sec  atomic.Int64 // unix second that curr counts
	curr atomic.Int64
	prev atomic.Int64
}

func (f *Ctr) rotate(sec int64) {
	for {
		s := f.sec.Load()
		if s == sec {
			return
		}
		if f.sec.CompareAndSwap(s, sec) {
			c := f.curr.Swap(0)
			if sec == s+1 {
				f.prev.Store(c)
			} else {
				f.prev.Store(0)
			}
			return
		}
	}
}

// Add counts n events at now and returns the current rate.
func (f *Ctr) Add(now time.Time, n int64) int64 {
	f.rotate(now.Unix())
	f.curr.Add(n)
	return f.Rate(now)
}

// Rate estimates events per second at now: the current second's count plus
// the share of the previous second that the sliding window still covers.
func (f *Ctr) Rate(now time.Time) int64 {
	sec := now.Unix()
	s := f.sec.Load()
	switch {
	case s == sec:
		frac := int64(now.Nanosecond())
		return f.curr.Load() + f.prev.Load()*(1e9-frac)/1e9
	case s == sec-1:
		frac := int64(now.Nanosecond())
		return f.curr.Load() * (1e9 - frac) / 1e9
	default:
		return 0
	}
}

// SWRate is HAProxy's sliding-window average over N=1024 samples:
// sum = sum - sum/N + v, average = sum/N (swrate_add).
type SWRate struct{ sum atomic.Int64 }

const swrateN = 1024 // samples in the window

// Add takes sample v into the window.
func (s *SWRate) Add(v int64) {
	for {
		old := s.sum.Load()
		n := old - (old+swrateN-1)/swrateN + v
		if s.sum.CompareAndSwap(old, n) {
			return
		}
	}
}

// Avg returns the average. HAProxy divides by the number of samples seen when
// fewer than N were taken; callers pass that count (the request total).
func (s *SWRate) Avg(samples int64) int64 {
	if samples <= 0 {
		return 0
	}
	if samples < swrateN {
		return s.sum.Load() / samples
	}
	return s.sum.Load() / swrateN
}
