package pool

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pipeConn is a cheap real connection for the benchmark: one end of an
// in-memory pipe, closing both ends.
type pipeConn struct {
	net.Conn
	peer net.Conn
}

func (c *pipeConn) Close() error {
	c.peer.Close()
	return c.Conn.Close()
}

// BenchmarkTakeover is the pool-level miniature of HAProxy's 2.2
// experiment: 4 shards, many concurrent users bound to shards, each
// request picks a random server, takes a pooled connection or dials,
// holds it 1 ms (the server's response time) and releases it. It reports
// takeovers per request, the reuse rate, and the spread of takeovers
// over the shards (max/min), measured after a warm-up of 20 requests per
// user so that the connection pools are in steady state.
func BenchmarkTakeover(b *testing.B) {
	for _, servers := range []int{50, 200} {
		for _, c := range []struct {
			name string
			low  int
			scan Scan
		}{
			{"low=0/rr", 0, ScanRoundRobin},
			{"low=0/zero", 0, ScanFromZero},
			{"low=8/rr", 8, ScanRoundRobin},
			{"low=8/zero", 8, ScanFromZero},
			{"low=16/rr", 16, ScanRoundRobin},
		} {
			b.Run(fmt.Sprintf("servers=%d/%s", servers, c.name), func(b *testing.B) {
				benchTakeover(b, 4, servers, 400, c.low, c.scan)
			})
		}
	}
}

func benchTakeover(b *testing.B, threads, nservers, users, low int, scan Scan) {
	p, err := NewSet[*pipeConn](Options{Threads: threads, Scan: scan})
	if err != nil {
		b.Fatal(err)
	}
	st := DefaultSettings()
	st.LowConn = low
	servers := make([]*Server[*pipeConn], nservers)
	for i := range servers {
		if servers[i], err = p.NewServer(st, nil); err != nil {
			b.Fatal(err)
		}
	}

	var budget atomic.Int64
	run := func() {
		var wg sync.WaitGroup
		for u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				th := u % threads
				x := uint32(u*2654435761 + 1)
				for budget.Add(-1) >= 0 {
					x ^= x << 13
					x ^= x >> 17
					x ^= x << 5
					s := servers[x%uint32(nservers)]
					e := s.Get(th, NotFirst)
					if e == nil {
						a, z := net.Pipe()
						e = s.Track(&pipeConn{Conn: a, peer: z}, s.Gen())
					}
					time.Sleep(time.Millisecond)
					s.Release(th, e, true)
				}
			}()
		}
		wg.Wait()
	}
	totals := func() (reused, connects uint64, to []uint32) {
		for _, s := range servers {
			st := s.Stats()
			reused += st.Reused
			connects += st.Connects
		}
		return reused, connects, p.FDTakeover(nil)
	}

	budget.Store(int64(users * 20))
	run()
	r0, c0, t0 := totals()
	b.ResetTimer()
	budget.Store(int64(b.N))
	run()
	b.StopTimer()
	r1, c1, t1 := totals()

	var sum uint64
	lo, hi := ^uint32(0), uint32(0)
	per := make([]uint32, len(t1))
	for i := range t1 {
		d := t1[i] - t0[i]
		per[i] = d
		sum += uint64(d)
		lo, hi = min(lo, d), max(hi, d)
	}
	reused, connects := r1-r0, c1-c0
	b.ReportMetric(float64(sum)/float64(b.N), "takeovers/op")
	b.ReportMetric(100*float64(reused)/float64(reused+connects), "reuse%")
	if lo > 0 {
		b.ReportMetric(float64(hi)/float64(lo), "spread")
	}
	b.ReportMetric(float64(c1), "conns")
	if b.N > 1 {
		b.Logf("fd_takeover: %d %v", sum, per)
	}
	for _, s := range servers {
		s.CloseAll()
	}
}

// BenchmarkGetRelease measures the hot path: a reuse from the own shard
// and the release back to it, on all shards in parallel.
func BenchmarkGetRelease(b *testing.B) {
	const threads = 4
	p, err := NewSet[*pipeConn](Options{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	s, err := p.NewServer(DefaultSettings(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		th := int(next.Add(1)-1) % threads
		a, z := net.Pipe()
		e := s.Track(&pipeConn{Conn: a, peer: z}, s.Gen())
		for pb.Next() {
			if !s.Release(th, e, true) {
				b.Error("not kept")
				return
			}
			if e = s.Get(th, NotFirst); e == nil {
				b.Error("nothing to reuse")
				return
			}
		}
		s.Done(e)
	})
}
