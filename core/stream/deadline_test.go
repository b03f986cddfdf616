package stream

import (
	"testing"
	"time"
)

// TestDeadlineExpiry checks the deadline a re-arm leaves in force: never
// before the timeout, never more than maxSlack after it, whatever the
// timeout, while a connection active every millisecond sets it only
// once per slack period or so.
func TestDeadlineExpiry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, to := range []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, time.Second, 3 * time.Second, 5 * time.Second, time.Minute} {
		var d deadline
		var inForce time.Time
		sets := 0
		set := func(t time.Time) error { inForce = t; sets++; return nil }
		const steps = 2000
		for i := 0; i < steps; i++ {
			now := t0.Add(time.Duration(i) * time.Millisecond)
			d.arm(set, now, to)
			late := inForce.Sub(now.Add(to))
			if late < 0 || late > maxSlack {
				t.Fatalf("timeout %v armed at +%v: fires %v after its value", to, now.Sub(t0), late)
			}
			// Timeouts of a few seconds keep HAProxy's precision in logs.
			if to <= 3200*time.Millisecond && late > 50*time.Millisecond {
				t.Fatalf("timeout %v armed at +%v: fires %v late, more than 50ms", to, now.Sub(t0), late)
			}
		}
		// One set per slack period, at least one per maxSlack.
		if want := steps/int(slack(to)/time.Millisecond) + 1; sets > want+1 {
			t.Errorf("timeout %v: %d deadline updates in %d arms, want at most %d", to, sets, steps, want+1)
		}
	}
}

// TestDeadlineClear checks that a zero timeout clears the deadline once.
func TestDeadlineClear(t *testing.T) {
	var d deadline
	var got []time.Time
	set := func(t time.Time) error { got = append(got, t); return nil }
	now := time.Now()
	d.arm(set, now, time.Second)
	d.arm(set, now, 0)
	d.arm(set, now, 0)
	if len(got) != 2 || !got[1].IsZero() {
		t.Fatalf("deadlines set: %v", got)
	}
}
