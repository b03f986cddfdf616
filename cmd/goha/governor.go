package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	goruntime "runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The scheduler-thread governor. HAProxy runs nbthread threads whatever
// else the machine runs; each thread owns its connections and sleeps in
// its own epoll_wait. Go's scheduler is not built that way: with two
// scheduler threads on a machine whose CPUs are already busy (load
// generator, backends, other services), every wake-up of a peer preempts
// one of them, goroutines migrate between the two, and the process pays
// for it in context switches and kernel time without getting more CPU.
// Measured on a 2-CPU machine shared with wrk and the backends
// (docs/performance.md): one scheduler thread instead of two served 20-50%
// more requests with 35% less kernel time per request, and involuntary
// context switches fell from 0.77 to 0.14 per request.
//
// So goha starts with the scheduler threads nbthread asks for and, four
// times a second, compares the CPU it used over the last half second with
// the CPU the machine left idle:
//   - the machine has no idle CPU and goha did not use all its threads:
//     it keeps only as many as it used, rounded up (an extra one could
//     only take CPU from the processes goha is serving or is served by);
//   - goha used nearly all its threads and the machine has idle CPUs:
//     it takes as many more as are idle, up to nbthread.
// "The machine" is the CPUs goha may run on: a container's cpuset limits
// it, though /proc/stat shows the whole host.
// Shards (nbthread) are unaffected: listeners, pools and per-thread
// counters stay as configured. GOMAXPROCS set in the environment turns
// the governor off.

const (
	// governorTick is how often the governor samples CPU use, and
	// governorWindow how many ticks each decision looks back: a new
	// process under load (a reload, say) settles within a second.
	governorTick   = 250 * time.Millisecond
	governorWindow = 2
	// governorHold is how many ticks pass after a change before the next
	// one: the other processes on the machine take a moment to settle
	// into the CPU goha gave back or took, and a decision made before
	// that would flap.
	governorHold = 8
)

const (
	// busyShare: a thread used at least this much counts as fully used.
	busyShare = 0.85
	// saturatedIdle: the machine is saturated when fewer CPUs than this
	// were idle on average.
	saturatedIdle = 0.25
	// spareIdle: one more thread needs at least this much idle CPU.
	spareIdle = 0.5
)

// governedThreads is the number of scheduler threads to run next, given
// the current count, the ceiling (nbthread capped by the CPUs), the CPUs
// the process used over the last interval and the CPUs the machine left
// idle over it.
func governedThreads(cur, ceiling int, used, idle float64) int {
	switch {
	case used >= busyShare*float64(cur) && idle >= spareIdle && cur < ceiling:
		n := cur + int(idle+1-spareIdle)
		return min(n, ceiling)
	case idle < saturatedIdle && cur > 1:
		need := max(1, int(math.Ceil(used)))
		return min(need, cur)
	}
	return cur
}

// cpuSampler reads the process's CPU time and the idle time of the CPUs
// it may run on.
type cpuSampler struct {
	stat *os.File // /proc/stat, kept open and re-read from the start
	buf  []byte
	hz   float64      // clock ticks per second of /proc/stat's counters
	cpus *unix.CPUSet // the process's CPUs; nil: every CPU of the machine
}

func newCPUSampler() (*cpuSampler, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return nil, err
	}
	s := &cpuSampler{stat: f, buf: make([]byte, 64<<10), hz: 100}
	// In a container limited to some of the host's CPUs (a cpuset),
	// /proc/stat still shows every CPU of the host: only those the
	// process may use say whether there is room for another thread.
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil && set.Count() > 0 {
		s.cpus = &set
	}
	return s, nil
}

// sample returns the process's user+system CPU time and its CPUs'
// idle+iowait time, both in seconds.
func (s *cpuSampler) sample() (proc, idle float64, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	proc = tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
	n, err := s.stat.ReadAt(s.buf, 0)
	if err != nil && err != io.EOF {
		return 0, 0, err
	}
	idle, err = parseIdle(s.buf[:n], s.cpus)
	return proc, idle / s.hz, err
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// parseIdle returns idle+iowait, in clock ticks, from /proc/stat: summed
// over the "cpuN" lines of the CPUs in cpus, or from the aggregate "cpu"
// line when cpus is nil.
func parseIdle(stat []byte, cpus *unix.CPUSet) (float64, error) {
	var sum float64
	found := false
	for len(stat) > 0 {
		var line []byte
		line, stat, _ = bytes.Cut(stat, []byte("\n"))
		f := bytes.Fields(line)
		if len(f) == 0 || !bytes.HasPrefix(f[0], []byte("cpu")) {
			break // the cpu lines come first
		}
		if cpus == nil {
			if string(f[0]) != "cpu" {
				break
			}
		} else {
			n, err := strconv.Atoi(string(f[0][3:]))
			if err != nil || !cpus.IsSet(n) {
				continue // the aggregate line, or another CPU
			}
		}
		if len(f) < 6 {
			return 0, fmt.Errorf("unexpected /proc/stat line %q", line)
		}
		for _, v := range f[4:6] { // idle, iowait
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("unexpected /proc/stat line %q", line)
			}
			sum += float64(n)
		}
		found = true
	}
	if !found {
		return 0, fmt.Errorf("no cpu line in /proc/stat")
	}
	return sum, nil
}

// startGovernor runs the governor until the returned function is called.
// report, when not nil, is told of every change.
func startGovernor(ceiling int, report func(from, to int, used, idle float64)) (stop func()) {
	s, err := newCPUSampler()
	if err != nil || ceiling <= 1 {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		defer s.stat.Close()
		t := time.NewTicker(governorTick)
		defer t.Stop()
		// The last governorWindow+1 samples: decisions use the CPU
		// spent between the oldest and the newest.
		type point struct {
			proc, idle float64
			at         time.Time
		}
		var win [governorWindow + 1]point
		n, hold := 0, 0
		for {
			proc, idle, err := s.sample()
			if err != nil {
				return
			}
			copy(win[:], win[1:])
			win[governorWindow] = point{proc, idle, time.Now()}
			if n < len(win) {
				n++
			}
			if hold > 0 {
				hold--
			} else if n == len(win) {
				old, now := win[0], win[governorWindow]
				secs := now.at.Sub(old.at).Seconds()
				used, idle := (now.proc-old.proc)/secs, (now.idle-old.idle)/secs
				cur := goruntime.GOMAXPROCS(0)
				if next := governedThreads(cur, ceiling, used, idle); next != cur {
					goruntime.GOMAXPROCS(next)
					hold = governorHold
					if report != nil {
						report(cur, next, used, idle)
					}
				}
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-exited }
}
