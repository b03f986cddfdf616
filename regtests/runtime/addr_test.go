//go:build regtest

package runtime_test

import (
	"strings"
	"testing"
)

// TestSetServerAddrPortRange checks that a port past 65535 is refused
// and changes nothing, where HAProxy stores its low 16 bits, and that
// the ports at both ends of the range are taken as HAProxy takes them.
func TestSetServerAddrPortRange(t *testing.T) {
	p := start(t)
	before, _ := p.both(t, "admin", "show servers state be1\n")
	for _, port := range []string{"99999999", "65536"} {
		_, g := p.both(t, "admin", "set server be1/s1 addr 127.0.0.5 port "+port+"\n")
		if !strings.Contains(g, "provided port '"+port+"' is invalid") {
			t.Errorf("port %s: goha replied %q", port, g)
		}
		_, g = p.both(t, "admin", "show servers state be1\n")
		if maskTimes(g) != maskTimes(before) {
			t.Errorf("port %s changed goha's servers:\n--- before:\n%s--- after:\n%s", port, before, g)
		}
	}
	// Restore HAProxy's side to the same state before comparing.
	p.both(t, "admin", "set server be1/s1 addr 127.0.0.1 port "+strings.Fields(strings.Split(before, "\n")[2])[18]+"\n")
	for _, c := range []string{"set server be1/s1 addr 127.0.0.5 port 65535", "set server be1/s1 addr 127.0.0.5 port 0",
		"set server be1/s1 addr 127.0.0.6 port 65535", "show servers state be1"} {
		h, g := p.both(t, "admin", c+"\n")
		if h, g = maskTimes(mask(h)), maskTimes(mask(g)); h != g {
			t.Errorf("%q:\n--- haproxy:\n%s--- goha:\n%s", c, h, g)
		}
	}
}
