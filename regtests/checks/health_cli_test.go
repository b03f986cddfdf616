//go:build regtest

package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const healthCLICfg = `
backend be
    log %s daemon
    server s1 %s check inter 1h
    server s2 %s
backend be2
    log %s daemon
    server t1 %s track be/s1
`

// TestSetHealthEventLevels: `set server <srv> health down|up` logs the
// server's change and then each tracker's ("via be/s1"), with the
// backend left empty reported, at HAProxy's syslog levels.
func TestSetHealthEventLevels(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		addr, collect := syslogReceiver(t)
		s1 := newSwitchable(t, "s1")
		r := start(t, pr, fmt.Sprintf(healthCLICfg, addr, s1.addr, s1.addr, addr, s1.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		r.cli("set server be/s1 health down")
		r.waitEvent("Server be2/t1 is DOWN via be/s1", 3*time.Second)
		r.cli("set server be/s1 health up")
		r.waitEvent("Server be2/t1 is UP via be/s1", 3*time.Second)
		r.p.Stop()
		lines := collect()
		// Each backend logs through its own target, which batches UDP
		// datagrams: lines of different backends may cross on the way,
		// so each backend's lines are compared in their own order.
		var be, be2 []string
		for _, l := range lines {
			if strings.Contains(l, " be2") {
				be2 = append(be2, l)
			} else {
				be = append(be, l)
			}
		}
		got[pr.name] = strings.Join(append(be, be2...), "\n")
	}
	if !strings.Contains(got["haproxy"], "be2/t1 is DOWN via be/s1") {
		t.Fatalf("HAProxy did not log the tracker: %s", got["haproxy"])
	}
	compare(t, "syslog lines", got)
}
