//go:build regtest

package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const dynamicCfg = `
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    balance roundrobin
    server s1 %s check inter 200 rise 1 fall 1
`

// TestDynamicServerCheck: a server added with check has its check
// configured but idle, in maintenance, until enable server and enable
// health; then it probes, goes DOWN with its server, and can be deleted
// once back in maintenance.
func TestDynamicServerCheck(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		d1 := newSwitchable(t, "d1")
		r := start(t, pr, fmt.Sprintf(dynamicCfg, s1.addr))
		var seen []string
		// HAProxy 2.6 ends some replies without their empty line.
		say := func(what, reply string) { seen = append(seen, what+": "+strings.TrimSpace(reply)) }
		see := func(what string, v view) { seen = append(seen, what+": "+v.String()) }
		say("add", r.cli("add server be/d1 "+d1.addr+" check inter 200 rise 1 fall 1"))
		see("added", r.view("be", "d1"))
		r.cli("enable server be/d1")
		see("enabled", r.view("be", "d1"))
		r.cli("enable health be/d1")
		see("checked", r.waitView("be", "d1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" }))
		d1.stop()
		see("down", r.waitStatus("be", "d1", "DOWN", 3*time.Second))
		say("del running", r.cli("del server be/d1"))
		r.cli("disable server be/d1")
		say("del", r.cli("del server be/d1"))
		if out := r.cli("show servers state be"); strings.Contains(out, " d1 ") {
			t.Errorf("%s: d1 still listed after del server:\n%s", pr.name, out)
		}
		got[pr.name] = strings.Join(seen, "\n")
		r.p.Stop()
	}
	compare(t, "dynamic server views", got)
}
