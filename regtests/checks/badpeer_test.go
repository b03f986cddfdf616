package checks

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBadPeers: HTTP checks against peers that accept and never answer,
// answer garbage, or close in the middle of a response get the right
// check status;
// the servers go DOWN and the proxy keeps serving through the good one.
func TestBadPeers(t *testing.T) {
	got := map[string]string{}
	want := map[string]string{
		"hold":    `stat="DOWN"/"L7TOUT"/""`,
		"garbage": `stat="DOWN"/"L7RSP"/""`,
		"half":    `stat="DOWN"/"L7RSP"/""`,
	}
	for _, pr := range proxies(t) {
		hold := newResponder(t, func(string) *string { return nil })
		garbage := newResponder(t, always("\x00\x01garbage\xff\r\n\r\n"))
		half := newResponder(t, always("HTTP/1.1 200 OK\r\nContent-Le"))
		good := newSwitchable(t, "good")
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    option httpchk GET /health
    timeout check 300ms
    default-server check inter 200 rise 1 fall 1
    server hold %s
    server garbage %s
    server half %s
    server good %s
`, hold.addr, garbage.addr, half.addr, good.addr))
		var seen []string
		for _, name := range []string{"hold", "garbage", "half"} {
			v := r.waitView("be", name, 3*time.Second, "a failed check", func(v view) bool {
				return v.Status == "DOWN" && v.CheckStatus != "" && v.CheckStatus != "INI"
			})
			info := r.stat("be", name)["last_chk"]
			seen = append(seen, fmt.Sprintf("%s: %v info=%q", name, v, info))
			if !strings.HasPrefix(v.String(), want[name]) {
				t.Errorf("%s: %s: %v info=%q, want %s", pr.name, name, v, info, want[name])
			}
		}
		if m := r.hits(10); m["good"] != 10 {
			t.Errorf("%s: traffic with three bad peers %v", pr.name, m)
		}
		if r.p.Exited() {
			t.Fatalf("%s exited:\n%s", pr.name, r.p.Output())
		}
		got[pr.name] = strings.Join(seen, "\n")
		r.p.Stop()
	}
	compare(t, "bad peers", got)
}

// TestResetPeer: a peer that accepts the check's connection and resets it
// at once: the connection was established, so HAProxy reports a socket
// error (SOCKERR, "Connection reset by peer"), not a layer 4 problem.
func TestResetPeer(t *testing.T) {
	for _, pr := range proxies(t) {
		t.Run(pr.name, func(t *testing.T) {
			reset := newResponder(t, always(""))
			reset.rst.Store(true)
			good := newSwitchable(t, "good")
			r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    option httpchk GET /health
    default-server check inter 200 rise 1 fall 1
    server reset %s
    server good %s
`, reset.addr, good.addr))
			v := r.waitView("be", "reset", 3*time.Second, "a failed check", func(v view) bool { return v.Status == "DOWN" })
			if info := r.stat("be", "reset")["last_chk"]; !strings.HasPrefix(v.String(), `stat="DOWN"/"SOCKERR"/"" state="0 0 1 5 2 0 6 0"`) || info != "Connection reset by peer" {
				t.Errorf("reset: %v info=%q", v, info)
			}
			if m := r.hits(4); m["good"] != 4 {
				t.Errorf("traffic %v", m)
			}
		})
	}
}
