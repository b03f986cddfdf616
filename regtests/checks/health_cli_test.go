//go:build regtest

package checks

import (
	"fmt"
	"net"
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
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 4096)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				m := string(buf[:n])
				pri, _, _ := strings.Cut(m, ">")
				if i := strings.Index(m, "]: "); i >= 0 {
					m = m[i+3:]
				}
				lines = append(lines, pri+"> "+duration.ReplaceAllString(strings.TrimSpace(m), "check duration: Xms"))
			}
		}()
		s1 := newSwitchable(t, "s1")
		r := start(t, pr, fmt.Sprintf(healthCLICfg, pc.LocalAddr(), s1.addr, s1.addr, pc.LocalAddr(), s1.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		r.cli("set server be/s1 health down")
		r.waitEvent("Server be2/t1 is DOWN via be/s1", 3*time.Second)
		r.cli("set server be/s1 health up")
		r.waitEvent("Server be2/t1 is UP via be/s1", 3*time.Second)
		r.p.Stop()
		pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		<-done
		pc.Close()
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
