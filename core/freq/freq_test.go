package freq

import (
	"testing"
	"time"
)

// A rate is the current second's count plus the part of the previous
// second that the sliding second still covers, and nothing once two
// seconds have passed.
func TestCtrSlidingSecond(t *testing.T) {
	var c Ctr
	t0 := time.Unix(1000, 0)
	c.Add(t0, 10)
	if r := c.Rate(t0.Add(500 * time.Millisecond)); r != 10 {
		t.Fatalf("same second: %d, want 10", r)
	}
	t1 := time.Unix(1001, 250e6)
	c.Add(t1, 4)
	// 4 now, plus 10 weighted by the 75% of the previous second still in
	// the window.
	if r := c.Rate(t1); r != 4+10*3/4 {
		t.Fatalf("next second: %d, want %d", r, 4+10*3/4)
	}
	if r := c.Rate(time.Unix(1003, 0)); r != 0 {
		t.Fatalf("two seconds later: %d, want 0", r)
	}
}

// The average divides by the samples seen until the window is full, and
// every sample first takes its share (rounded up) off the sum, as
// HAProxy's swrate_add does: ten samples of 100 average 99, not 100.
func TestSWRateAverage(t *testing.T) {
	var s SWRate
	for i := 0; i < 10; i++ {
		s.Add(100)
	}
	if a := s.Avg(10); a != 99 {
		t.Fatalf("avg of 10 samples of 100: %d, want 99", a)
	}
	if a := s.Avg(0); a != 0 {
		t.Fatalf("no samples: %d", a)
	}
}
