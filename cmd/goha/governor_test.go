package main

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestGovernedThreads(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cur, ceiling int
		used, idle   float64
		want         int
	}{
		{"saturated machine, one thread's worth used", 2, 2, 0.88, 0.05, 1},
		{"saturated machine, both threads used", 2, 2, 1.9, 0.05, 2},
		{"saturated machine, a bit over one thread used", 2, 2, 1.1, 0.1, 2},
		{"saturated machine, idle process", 8, 8, 0.01, 0.0, 1},
		{"saturated machine, 10 of 16 used", 16, 16, 9.5, 0.2, 10},
		{"one thread, saturated machine", 1, 2, 0.95, 0.05, 1},
		{"one busy thread, one idle CPU", 1, 2, 0.95, 1.0, 2},
		{"one busy thread, half a CPU idle", 1, 2, 0.9, 0.5, 2},
		{"one busy thread, a little idle", 1, 2, 0.9, 0.4, 1},
		{"one busy thread, many idle CPUs", 1, 16, 1.0, 14.2, 15},
		{"one busy thread, more idle than the ceiling allows", 1, 4, 1.0, 6.0, 4},
		{"one thread not busy, idle CPUs", 1, 2, 0.5, 1.4, 1},
		{"at the ceiling", 2, 2, 2.0, 0.6, 2},
		{"idle machine, idle process", 2, 2, 0.0, 2.0, 2},
		{"partly used, machine not saturated", 4, 4, 2.0, 0.6, 4},
	} {
		if got := governedThreads(tc.cur, tc.ceiling, tc.used, tc.idle); got != tc.want {
			t.Errorf("%s: governedThreads(%d, %d, %.2f, %.2f) = %d, want %d",
				tc.name, tc.cur, tc.ceiling, tc.used, tc.idle, got, tc.want)
		}
	}
}

// TestGovernedThreadsSettles: from any start, repeating the decision with
// the same readings reaches a fixed point at once, so the governor does
// not flap between two counts on a steady load.
func TestGovernedThreadsSettles(t *testing.T) {
	for cur := 1; cur <= 8; cur++ {
		for _, used := range []float64{0, 0.5, 0.9, 1.2, 3.7, 7.9} {
			for _, idle := range []float64{0, 0.2, 0.6, 3, 8} {
				n := governedThreads(cur, 8, used, idle)
				if n < 1 || n > 8 {
					t.Fatalf("governedThreads(%d, 8, %v, %v) = %d, out of range", cur, used, idle, n)
				}
				// Once changed, the same load is at most what the new
				// count can use; a second decision must not undo the first.
				u := min(used, float64(n))
				if m := governedThreads(n, 8, u, idle); n < cur && m > n {
					t.Errorf("from %d (used %v, idle %v): down to %d, then back up to %d", cur, used, idle, n, m)
				}
			}
		}
	}
}

func TestParseIdle(t *testing.T) {
	stat := []byte("cpu  2255 34 2290 22625563 6290 127 456 0 0 0\n" +
		"cpu0 1132 34 1441 11311718 3675 127 438 0 0 0\n" +
		"cpu1 1123 0 849 11313845 2615 0 18 0 0 0\n" +
		"intr 114930548 113199788 0\n")
	if idle, err := parseIdle(stat, nil); err != nil || idle != 22625563+6290 {
		t.Errorf("every CPU: %v, %v", idle, err)
	}
	var one unix.CPUSet
	one.Set(1)
	if idle, err := parseIdle(stat, &one); err != nil || idle != 11313845+2615 {
		t.Errorf("cpu1 only: %v, %v", idle, err)
	}
	var both unix.CPUSet
	both.Set(0)
	both.Set(1)
	if idle, err := parseIdle(stat, &both); err != nil || idle != 11311718+3675+11313845+2615 {
		t.Errorf("cpu0 and cpu1: %v, %v", idle, err)
	}
	var absent unix.CPUSet
	absent.Set(7)
	for _, tc := range []struct {
		stat string
		cpus *unix.CPUSet
	}{
		{"", nil}, {"intr 1 2 3\n", nil}, {"cpu 1 2 3\n", nil}, {"cpu 1 2 3 x 5\n", nil},
		{string(stat), &absent}, {"cpu 1 2 3 4 5\ncpu1 1 2\n", &one},
	} {
		if _, err := parseIdle([]byte(tc.stat), tc.cpus); err == nil {
			t.Errorf("parseIdle(%q, %v): no error", tc.stat, tc.cpus)
		}
	}
}

// TestCPUSampler reads this machine's counters: both only grow.
func TestCPUSampler(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat")
	}
	s, err := newCPUSampler()
	if err != nil {
		t.Fatal(err)
	}
	defer s.stat.Close()
	p0, i0, err := s.sample()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := 0; i < 20_000_000; i++ {
		x += i
	}
	_ = x
	p1, i1, err := s.sample()
	if err != nil {
		t.Fatal(err)
	}
	if p1 <= p0 || i1 < i0 || i0 <= 0 {
		t.Errorf("samples: process %v then %v, idle %v then %v", p0, p1, i0, i1)
	}
}
