//go:build regtest

package runtime_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

const activityCfg = `global
    nbthread 1
    stats socket ${TMP}/admin.sock level admin
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}"
`

// TestShowActivityAccepted: show activity's accepted counts the
// connections accepted, the frontend's and the stats socket's, as
// HAProxy's does, and clear counters resets it.
func TestShowActivityAccepted(t *testing.T) {
	progs := map[string]string{"goha": bin.Path(t, "goha")}
	if p, err := exec.LookPath("haproxy"); err == nil {
		progs["haproxy"] = p
	} else if _, err := exec.LookPath("/usr/sbin/haproxy"); err == nil {
		progs["haproxy"] = "/usr/sbin/haproxy"
	} else {
		t.Skip("haproxy not installed")
	}
	got := map[string]string{}
	for name, prog := range progs {
		p := harness.Start(t, prog, activityCfg, "fe")
		sock := filepath.Join(p.Dir, "admin.sock")
		harness.WaitCLI(t, sock)
		accepted := func() string {
			out := harness.MustSocket(t, sock, "show activity")
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "accepted:") {
					return l
				}
			}
			t.Fatalf("%s: no accepted line in:\n%s", name, out)
			return ""
		}
		before := accepted()
		for i := 0; i < 5; i++ {
			harness.RawRequest(t, p.Addrs["fe"], "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", harness.Patience)
		}
		after := accepted()
		harness.MustSocket(t, sock, "clear counters")
		cleared := accepted()
		got[name] = before + " | " + after + " | " + cleared
		p.Stop()
	}
	t.Logf("%v", got)
	if got["goha"] != got["haproxy"] {
		t.Errorf("accepted before, after 5 connections, after clear counters:\n haproxy %s\n goha    %s", got["haproxy"], got["goha"])
	}
}

// TestShowActivityCountsEvents: after traffic, the counters goha keeps
// have moved on both proxies: stream_calls by at least one per request
// (HAProxy calls a stream several times), and the event loop's loops
// while the process waits.
func TestShowActivityCountsEvents(t *testing.T) {
	progs := map[string]string{"goha": bin.Path(t, "goha")}
	if _, err := exec.LookPath("/usr/sbin/haproxy"); err == nil {
		progs["haproxy"] = "/usr/sbin/haproxy"
	}
	for name, prog := range progs {
		p := harness.Start(t, prog, activityCfg, "fe")
		sock := filepath.Join(p.Dir, "admin.sock")
		harness.WaitCLI(t, sock)
		counter := func(key string) int {
			out := harness.MustSocket(t, sock, "show activity")
			for _, l := range strings.Split(out, "\n") {
				if v, ok := strings.CutPrefix(l, key+":"); ok {
					n, err := strconv.Atoi(strings.Fields(v)[0])
					if err != nil {
						t.Fatalf("%s: %s: %v", name, l, err)
					}
					return n
				}
			}
			t.Fatalf("%s: no %s line in:\n%s", name, key, out)
			return 0
		}
		calls := counter("stream_calls")
		for i := 0; i < 5; i++ {
			harness.RawRequest(t, p.Addrs["fe"], "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", harness.Patience)
		}
		if got := counter("stream_calls"); got < calls+5 {
			t.Errorf("%s: stream_calls went from %d to %d after 5 requests", name, calls, got)
		}
		loops := counter("loops")
		harness.Eventually(t, name+": loops moves on", func() bool { return counter("loops") > loops })
		p.Stop()
	}
}
