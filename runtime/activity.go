package runtime

import (
	"fmt"
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
// its argument and needs no particular level. Counters of what goha has no
// equivalent for (its scheduler's loops, polls and task switches are the
// Go runtime's) are zero.
func cmdShowActivity(c *Ctx) {
	n := c.Proc.Threads
	if n <= 0 {
		n = 1
	}
	got := map[string]ActivityCounter{}
	got["fd_takeover"] = ActivityCounter{Name: "fd_takeover", PerThread: c.Proc.FDTakeover()}
	got["accepted"] = ActivityCounter{Name: "accepted", PerThread: c.Proc.Accepted()}
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

// cmdShowPools prints goha's pools in 2.6's layout. Names are cut to 11
// characters and the address is the pool's index, since Go pools have no
// stable address.
func cmdShowPools(c *Ctx) {
	var pools []PoolInfo
	b := []byte("Dumping pools usage. Use SIGQUIT to flush them.\n")
	var alloc, used int
	for i, p := range pools {
		name := p.Name
		if len(name) > 11 {
			name = name[:11]
		}
		shared := ""
		if p.Shared {
			shared = " [SHARED]"
		}
		b = fmt.Appendf(b, "  - Pool %s (%d bytes) : %d allocated (%d bytes), %d used (~%d by thread caches), needed_avg %d, %d failures, %d users, @%#x%s\n",
			name, p.Size, p.Allocated, p.Allocated*p.Size, p.Used, 0, p.NeededAvg, p.Failures, p.Users, i+1, shared)
		alloc += p.Allocated * p.Size
		used += p.Used * p.Size
	}
	b = fmt.Appendf(b, "Total: %d pools, %d bytes allocated, %d used (~%d by thread caches).\n", len(pools), alloc, used, 0)
	c.Write(b)
}
