package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const trackCfg = `
frontend fe
    bind "fd@${fe}"
    default_backend be2
backend be
    server s1 %s check inter 200 rise 1 fall 1
backend be2
    server t1 %s track be/s1
    server t2 %s
`

// TestTrackDown: a server tracking another goes DOWN and UP with it,
// traffic follows, and each change is logged "via" the tracked server.
func TestTrackDown(t *testing.T) {
	got, evs := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		r := start(t, pr, fmt.Sprintf(trackCfg, s1.addr, s1.addr, s2.addr))
		var seen []string
		see := func(what string, v view) {
			seen = append(seen, fmt.Sprintf("%s: %v chkdown=%s", what, v, r.stat("be2", "t1")["chkdown"]))
		}
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		see("start", r.view("be2", "t1"))
		s1.stop()
		see("down", r.waitStatus("be2", "t1", "DOWN", 3*time.Second))
		r.waitEvent("Server be2/t1 is DOWN", time.Second)
		if m := r.hits(4); m["s2"] != 4 {
			t.Errorf("%s: tracked server down, traffic %v", pr.name, m)
		}
		s1.restart()
		see("up", r.waitStatus("be2", "t1", "UP", 3*time.Second))
		r.waitEvent("Server be2/t1 is UP", time.Second)
		if m := r.hits(4); m["s1"] == 0 {
			t.Errorf("%s: tracked server back up, traffic %v", pr.name, m)
		}
		ev := strings.Join(r.events(), "\n")
		for _, want := range []string{
			"Server be2/t1 is DOWN via be/s1. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
			"Server be2/t1 is UP via be/s1. 2 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.",
		} {
			if !strings.Contains(ev, want) {
				t.Errorf("%s: missing state line %q in\n%s", pr.name, want, ev)
			}
		}
		got[pr.name], evs[pr.name] = strings.Join(seen, "\n"), ev
		r.p.Stop()
	}
	compare(t, "tracker views", got)
	compare(t, "state lines", evs)
}

// TestTrackMaint: a tracker shows MAINT (via be/s1) while the tracked
// server is in maintenance, gets no traffic, refuses `set server health`,
// and comes back with it.
func TestTrackMaint(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		r := start(t, pr, fmt.Sprintf(trackCfg, s1.addr, s1.addr, s2.addr))
		var seen []string
		see := func(what string, v view) { seen = append(seen, what+": "+v.String()) }
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		r.cli("set server be/s1 state maint")
		see("maint", r.waitStatus("be2", "t1", "MAINT (via be/s1)", 3*time.Second))
		if m := r.hits(4); m["s2"] != 4 {
			t.Errorf("%s: tracked server in maintenance, traffic %v", pr.name, m)
		}
		if out := r.cli("set server be2/t1 health down"); !strings.Contains(out, "cannot change health on a tracking server.") {
			t.Errorf("%s: set health on a tracker: %q", pr.name, out)
		}
		r.cli("set server be/s1 state ready")
		see("ready", r.waitStatus("be2", "t1", "UP", 3*time.Second))
		if m := r.hits(4); m["s1"] == 0 {
			t.Errorf("%s: tracked server ready, traffic %v", pr.name, m)
		}
		got[pr.name] = strings.Join(seen, "\n")
		r.p.Stop()
	}
	compare(t, "tracker views", got)
}

// TestAdminStateLines: maintenance entered and left from the stats
// socket is logged, for the server and its trackers.
func TestAdminStateLines(t *testing.T) {
	for _, pr := range proxies(t) {
		t.Run(pr.name, func(t *testing.T) {
			s1 := newSwitchable(t, "s1")
			s2 := newSwitchable(t, "s2")
			r := start(t, pr, fmt.Sprintf(trackCfg, s1.addr, s1.addr, s2.addr))
			r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
			r.cli("set server be/s1 state maint")
			r.waitEvent("Server be2/t1 is going DOWN for maintenance via be/s1.", 2*time.Second)
			r.cli("set server be/s1 state ready")
			r.waitEvent("Server be2/t1 is UP/READY (leaving maintenance).", 2*time.Second)
			want := []string{
				"Server be/s1 is going DOWN for maintenance. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
				"backend 'be' has no server available!",
				"Server be2/t1 is going DOWN for maintenance via be/s1. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
				"Server be/s1 is UP/READY (leaving forced maintenance).",
				"Server be2/t1 is UP/READY (leaving maintenance).",
			}
			if ev := strings.Join(r.events(), "\n"); ev != strings.Join(want, "\n") {
				t.Errorf("state lines:\n%s\nwant:\n%s", ev, strings.Join(want, "\n"))
			}
		})
	}
}
