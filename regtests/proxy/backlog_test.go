package proxy

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestListenBacklog: the listen queue of each bind is its `backlog`, else
// the frontend's, else the bind's maxconn, else the frontend's, else the
// process's, as HAProxy sets it; `ss` reads it back from the kernel.
func TestListenBacklog(t *testing.T) {
	ss, err := exec.LookPath("ss")
	if err != nil {
		t.Skip("ss is not installed")
	}
	want := []string{"7", "50", "13", "21", "100"}
	got := map[string]string{}
	for name, prog := range proxies(t) {
		var ports [5]int
		for i := range ports {
			ports[i] = harness.FreePort(t)
		}
		p := harness.Start(t, prog, fmt.Sprintf(`
global
    maxconn 100
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend a
    bind 127.0.0.1:%d backlog 7
    bind 127.0.0.1:%d
    maxconn 50
frontend b
    backlog 13
    maxconn 50
    bind 127.0.0.1:%d
frontend c
    bind 127.0.0.1:%d maxconn 21
frontend d
    bind 127.0.0.1:%d
`, ports[0], ports[1], ports[2], ports[3], ports[4]))
		var queues []string
		for _, port := range ports {
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			harness.WaitListening(t, addr, 5*time.Second)
			out, err := exec.Command(ss, "-ltnH", fmt.Sprintf("sport = :%d", port)).Output()
			if err != nil {
				t.Fatalf("ss: %v", err)
			}
			// One line per listening socket (goha opens one per thread):
			// State Recv-Q Send-Q Local Peer, Send-Q being the backlog.
			seen := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if f := strings.Fields(line); len(f) >= 4 {
					seen[f[2]] = true
				}
			}
			var qs []string
			for q := range seen {
				qs = append(qs, q)
			}
			sort.Strings(qs)
			queues = append(queues, strings.Join(qs, "|"))
		}
		p.Stop()
		got[name] = strings.Join(queues, " ")
		if got[name] != strings.Join(want, " ") {
			t.Errorf("%s: listen queues %s, want %s", name, got[name], strings.Join(want, " "))
		}
	}
}
