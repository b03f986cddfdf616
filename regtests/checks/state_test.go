package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDownAndUp: a server whose origin stops is marked DOWN after fall
// failures and gets no traffic; once the origin is back it is UP after
// rise successes and gets traffic again. The state lines match HAProxy's.
func TestDownAndUp(t *testing.T) {
	evs := map[string]string{}
	views := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    balance roundrobin
    server s1 %s check inter 200 rise 2 fall 2
    server s2 %s check inter 200 rise 2 fall 2
`, s1.addr, s2.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		if m := r.hits(10); m["s1"] == 0 || m["s2"] == 0 {
			t.Fatalf("%s: both servers up, traffic %v", pr.name, m)
		}
		s1.stop()
		down := r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("Server be/s1 is DOWN", time.Second)
		if m := r.hits(10); m["s2"] != 10 {
			t.Errorf("%s: s1 down, traffic %v", pr.name, m)
		}
		s1.restart()
		up := r.waitStatus("be", "s1", "UP", 3*time.Second)
		r.waitEvent("Server be/s1 is UP", time.Second)
		if m := r.hits(10); m["s1"] == 0 {
			t.Errorf("%s: s1 back up, traffic %v", pr.name, m)
		}
		if n := r.stat("be", "s1")["chkdown"]; n != "1" {
			t.Errorf("%s: chkdown %q after one down transition", pr.name, n)
		}
		if want := `stat="DOWN"/"L4CON"/""`; !strings.HasPrefix(down.String(), want) {
			t.Errorf("%s: down: %v, want %s", pr.name, down, want)
		}
		if want := `stat="UP"/"L4OK"/""`; !strings.HasPrefix(up.String(), want) {
			t.Errorf("%s: up: %v, want %s", pr.name, up, want)
		}
		ev := strings.Join(r.events(), "\n")
		for _, want := range []string{
			`Server be/s1 is DOWN, reason: Layer4 connection problem, info: "Connection refused", check duration: Xms. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.`,
			`Server be/s1 is UP, reason: Layer4 check passed, check duration: Xms. 2 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.`,
		} {
			if !strings.Contains(ev, want) {
				t.Errorf("%s: missing state line %q in\n%s", pr.name, want, ev)
			}
		}
		evs[pr.name] = ev
		views[pr.name] = down.String() + " / " + up.String()
		r.p.Stop()
	}
	compare(t, "state lines", evs)
	compare(t, "views", views)
}

// TestLastServerDown: when the last server goes down, the backend reports
// it has no server left, as HAProxy does.
func TestLastServerDown(t *testing.T) {
	evs := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s check inter 200 rise 1 fall 1
`, s1.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		s1.stop()
		r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("backend 'be' has no server available!", 2*time.Second)
		if m := r.hits(3); m["503"] != 3 {
			t.Errorf("%s: no server left, traffic %v", pr.name, m)
		}
		evs[pr.name] = strings.Join(r.events(), "\n")
		r.p.Stop()
	}
	compare(t, "state lines", evs)
}

// TestLogHealthChecks: with option log-health-checks, every probe that
// moves the counter is logged, and the state lines carry no check reason.
func TestLogHealthChecks(t *testing.T) {
	evs := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		r := start(t, pr, fmt.Sprintf(`
global
    log stderr format raw local0 info
backend be
    log global
    option log-health-checks
    server s1 %s check inter 200 rise 2 fall 2
`, s1.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		s1.stop()
		r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("Server be/s1 is DOWN", time.Second)
		s1.restart()
		r.waitStatus("be", "s1", "UP", 3*time.Second)
		r.waitEvent("Server be/s1 is UP", time.Second)
		evs[pr.name] = strings.Join(r.events(), "\n")
		r.p.Stop()
	}
	compare(t, "state lines", evs)
}

// TestBackupTakesOver: when the only active server goes down, the backup
// server gets the traffic and the state line says so.
func TestBackupTakesOver(t *testing.T) {
	evs := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		b1 := newSwitchable(t, "b1")
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s check inter 200 rise 1 fall 1
    server b1 %s check inter 200 rise 1 fall 1 backup
`, s1.addr, b1.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		if m := r.hits(4); m["s1"] != 4 {
			t.Errorf("%s: active server up, traffic %v", pr.name, m)
		}
		s1.stop()
		r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("Server be/s1 is DOWN", time.Second)
		if m := r.hits(4); m["b1"] != 4 {
			t.Errorf("%s: active server down, traffic %v", pr.name, m)
		}
		b1.stop()
		r.waitStatus("be", "b1", "DOWN", 3*time.Second)
		r.waitEvent("Backup Server be/b1 is DOWN", time.Second)
		evs[pr.name] = strings.Join(r.events(), "\n")
		r.p.Stop()
	}
	compare(t, "state lines", evs)
}
