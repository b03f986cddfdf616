//go:build regtest

package checks

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

const levelsCfg = `
backend be
    log %s daemon
    option log-health-checks
    server s1 %s check inter 200 rise 1 fall 1
    server s2 %s
    server t1 %s track s1
`

// TestServerEventLevels: the syslog levels of server events are
// HAProxy's: a health check's result and a return to service are notices,
// a server going down (by check or for maintenance) an alert, one already
// down entering maintenance a notice, an empty backend an emergency.
func TestServerEventLevels(t *testing.T) {
	got := map[string]string{}
	for _, pr := range proxies(t) {
		addr, collect := syslogReceiver(t)
		s1 := newSwitchable(t, "s1")
		r := start(t, pr, fmt.Sprintf(levelsCfg, addr, s1.addr, s1.addr, s1.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L4OK" })
		s1.stop()
		r.waitStatus("be", "t1", "DOWN", 3*time.Second)
		r.cli("disable server be/s1")
		r.cli("disable server be/s2")
		r.cli("enable server be/s2")
		r.waitEvent("Server be/s2 is UP/READY", 3*time.Second)
		r.p.Stop()
		got[pr.name] = strings.Join(collect(), "\n")
	}
	compare(t, "syslog lines", got)
}

// syslogReceiver listens for syslog datagrams and returns their address
// and a function that, once the proxy has stopped, returns every message
// received as "<pri> text" (check durations masked).
func syslogReceiver(t *testing.T) (net.Addr, func() []string) {
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
	return pc.LocalAddr(), func() []string {
		// The last line has been written once stderr shows it; its
		// datagram is on the loopback by then.
		pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		<-done
		pc.Close()
		return lines
	}
}
