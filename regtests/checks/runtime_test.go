package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestDisableEnableHealth: with its health check disabled a server keeps
// its state whatever its origin does; enabled again, the next check
// judges it.
func TestDisableEnableHealth(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		// The proxy's own checks of another server measure the time
		// s1's check stays disabled, in intervals however slow the
		// machine.
		// (HTTP checks: HAProxy's plain connect checks reset the
		// connection before a server could count it.)
		clock := harness.NewOrigin(t, "clock", nil)
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s check inter 200 rise 1 fall 1
    server s2 %s
backend clock
    option httpchk
    server c1 %s check inter 200
`, s1.addr, s2.addr, clock.Addr))
		var seen []string
		see := func(what string, v view) { seen = append(seen, what+": "+v.String()) }
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		if out := r.cli("disable health be/s1"); strings.TrimSpace(out) != "" {
			t.Errorf("%s: disable health: %q", pr.name, out)
		}
		s1.stop()
		// Several intervals pass: nothing probes, nothing changes.
		n := r.stat("be", "s1")["chkfail"]
		t0 := clock.Reqs.Load()
		harness.Eventually(t, pr.name+": 3 checks of the clock server", func() bool { return clock.Reqs.Load() >= t0+3 })
		v := r.view("be", "s1")
		see("disabled, origin stopped", v)
		if v.Status != "no check" || !strings.HasPrefix(v.State, "2 ") || r.stat("be", "s1")["chkfail"] != n {
			t.Errorf("%s: disabled health check still acts: %v", pr.name, v)
		}
		r.cli("enable health be/s1")
		see("enabled", r.waitStatus("be", "s1", "DOWN", 3*time.Second))
		if m := r.hits(4); m["s2"] != 4 {
			t.Errorf("%s: s1 down, traffic %v", pr.name, m)
		}
		got[pr.name] = strings.Join(seen, "\n")
		r.p.Stop()
	}
	compare(t, "views", got)
}

// TestSetServerHealth: `set server health down|up` forces the state at
// once; the next checks judge the server again, rise and fall counting
// from the forced state.
func TestSetServerHealth(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s check inter 1s rise 2 fall 2
    server s2 %s
`, s1.addr, s2.addr))
		var seen []string
		see := func(what string, v view) { seen = append(seen, what+": "+v.String()) }
		r.waitView("be", "s1", 4*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		if out := r.cli("set server be/s1 health down"); strings.TrimSpace(out) != "" {
			t.Errorf("%s: set server health down: %q", pr.name, out)
		}
		v := r.view("be", "s1")
		see("health down", v)
		if v.Status != "DOWN" {
			t.Errorf("%s: after set server health down: %v", pr.name, v)
		}
		if m := r.hits(4); m["s2"] != 4 {
			t.Errorf("%s: s1 forced down, traffic %v", pr.name, m)
		}
		see("next check", r.waitStatus("be", "s1", "DOWN 1/2", 3*time.Second))
		see("next check", r.waitStatus("be", "s1", "UP", 3*time.Second))

		s1.stop()
		see("origin stopped", r.waitStatus("be", "s1", "DOWN", 5*time.Second))
		r.cli("set server be/s1 health up")
		v = r.view("be", "s1")
		see("health up", v)
		if v.Status != "UP" {
			t.Errorf("%s: after set server health up: %v", pr.name, v)
		}
		see("next check", r.waitStatus("be", "s1", "UP 1/2", 3*time.Second))
		see("next check", r.waitStatus("be", "s1", "DOWN", 3*time.Second))
		got[pr.name] = strings.Join(seen, "\n")
		r.p.Stop()
	}
	compare(t, "views", got)
}

// TestSetCheckPort: `set server check-port` moves the health check to
// another port from the next probe on.
func TestSetCheckPort(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		closed := freeAddr(t)
		r := start(t, pr, fmt.Sprintf(`
backend be
    server s1 %s check inter 200 rise 1 fall 1
`, s1.addr))
		var seen []string
		see := func(what string, v view) { seen = append(seen, what+": "+v.String()) }
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		out := r.cli("set server be/s1 check-port " + port(closed))
		seen = append(seen, "reply: "+strings.TrimSpace(out))
		see("closed port", r.waitStatus("be", "s1", "DOWN", 3*time.Second))
		if f := strings.Fields(r.cli("show servers state be")); !strings.Contains(strings.Join(f, " "), " "+port(closed)+" ") {
			t.Errorf("%s: show servers state does not show the check port %s", pr.name, port(closed))
		}
		r.cli("set server be/s1 check-port " + port(s1.addr))
		see("server port", r.waitStatus("be", "s1", "UP", 3*time.Second))
		if out := r.cli("set server be/s1 check-port 70000"); !strings.Contains(out, "provided port is invalid") {
			t.Errorf("%s: check-port 70000: %q", pr.name, out)
		}
		got[pr.name] = strings.Join(seen, "\n")
		r.p.Stop()
	}
	compare(t, "views", got)
}

// TestSetServerHealthLines: a state forced from the stats socket is
// logged "changed from CLI".
func TestSetServerHealthLines(t *testing.T) {
	for _, pr := range proxies(t) {
		t.Run(pr.name, func(t *testing.T) {
			s1 := newSwitchable(t, "s1")
			s2 := newSwitchable(t, "s2")
			r := start(t, pr, fmt.Sprintf(`
backend be
    server s1 %s check inter 1s rise 1 fall 1
    server s2 %s
`, s1.addr, s2.addr))
			r.waitView("be", "s1", 4*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
			r.cli("set server be/s1 health down")
			r.waitEvent("Server be/s1 is DOWN, changed from CLI. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.", 2*time.Second)
			r.cli("set server be/s1 health up")
			r.waitEvent("Server be/s1 is UP, changed from CLI. 2 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.", 2*time.Second)
		})
	}
}
