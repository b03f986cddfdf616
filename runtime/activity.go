package runtime

import (
	"fmt"
	"goha/core/stream"
	"strconv"
	"time"
)

func init() {
	Register(
		&Command{Words: []string{"show", "activity"}, Usage: "show activity",
			Help: "show per-thread activity stats (for support/developers)", Run: cmdShowActivity},
		&Command{Words: []string{"show", "pools"}, Usage: "show pools",
			Help: "report information about the memory pools usage", Run: cmdShowPools},
	)
}

// activityNames are 2.6's show activity lines after thread_id and date_now.
var activityNames = []string{"ctxsw", "tasksw", "empty_rq", "long_rq", "loops", "wake_tasks", "wake_signal",
	"poll_io", "poll_exp", "poll_drop_fd", "poll_skip_fd", "conn_dead", "stream_calls", "pool_fail", "buf_wait",
	"cpust_ms_tot", "cpust_ms_1s", "cpust_ms_15s", "avg_loop_us", "accepted", "accq_pushed", "accq_full",
	"accq_ring", "fd_takeover"}

// cmdShowActivity prints 2.6's per-thread counters. Like 2.6, it ignores
// its argument and needs no particular level. The counters the process
// keeps are real (stream.Process.Activity says which); those of what goha
// has no equivalent for (HAProxy's scheduler, its task switches and CPU
// steal) are zero.
func cmdShowActivity(c *Ctx) {
	n := c.Proc.Threads
	if n <= 0 {
		n = 1
	}
	got := map[string]ActivityCounter{}
	for name, v := range c.Proc.Activity() {
		got[name] = ActivityCounter{Name: name, PerThread: v}
	}
	now := time.Now()
	b := make([]byte, 0, 2048)
	b = fmt.Appendf(b, "thread_id: %d (1..%d)\n", c.Thread()+1, n)
	b = fmt.Appendf(b, "date_now: %d.%06d\n", now.Unix(), now.Nanosecond()/1000)
	for _, name := range activityNames {
		a := got[name]
		if name == "avg_loop_us" {
			a.Avg = true
		}
		b = append(b, name...)
		b = append(b, ':')
		var sum uint32
		for i := 0; i < n; i++ {
			if i < len(a.PerThread) {
				sum += a.PerThread[i]
			}
		}
		if n == 1 {
			b = append(b, ' ')
			b = strconv.AppendUint(b, uint64(sum), 10)
			b = append(b, '\n')
			continue
		}
		tot := uint64(sum)
		if a.Avg {
			tot = (uint64(sum) + uint64(n)/2) / uint64(n)
		}
		b = append(b, ' ')
		b = strconv.AppendUint(b, tot, 10)
		b = append(b, " ["...)
		for i := 0; i < n; i++ {
			v := uint32(0)
			if i < len(a.PerThread) {
				v = a.PerThread[i]
			}
			b = append(b, ' ')
			b = strconv.AppendUint(b, uint64(v), 10)
		}
		b = append(b, " ]\n"...)
	}
	c.Write(b)
}

// cmdShowPools prints the data path's pools in 2.6's layout. Names are
// cut to 11 characters as HAProxy cuts them. Go's pools keep their idle
// objects in per-P caches only, so what is allocated and not in use is
// what "by thread caches" counts; needed_avg is the number in use (no
// average is kept); Go allocations do not fail, so there are no failures;
// and the address is the pool's rank, since Go pools have no stable one.
func cmdShowPools(c *Ctx) {
	pools := c.Proc.Pools()
	b := []byte("Dumping pools usage. Use SIGQUIT to flush them.\n")
	var alloc, used, cached int64
	for i, p := range pools {
		name := p.Name
		if len(name) > 11 {
			name = name[:11]
		}
		idle := max(p.Allocated-p.Used, 0)
		size := int64(p.Size)
		b = fmt.Appendf(b, "  - Pool %s (%d bytes) : %d allocated (%d bytes), %d used (~%d by thread caches), needed_avg %d, 0 failures, 1 users, @%#x [SHARED]\n",
			name, p.Size, p.Allocated, p.Allocated*size, p.Used, idle, p.Used, i+1)
		alloc += p.Allocated * size
		used += p.Used * size
		cached += idle * size
	}
	b = fmt.Appendf(b, "Total: %d pools, %d bytes allocated, %d used (~%d by thread caches).\n", len(pools), alloc, used, cached)
	c.Write(b)
}

// poolTotals are the bytes the pools hold and those in use, for show info.
func poolTotals(p *stream.Process) (alloc, used int64) {
	for _, pl := range p.Pools() {
		alloc += pl.Allocated * int64(pl.Size)
		used += pl.Used * int64(pl.Size)
	}
	return alloc, used
}
