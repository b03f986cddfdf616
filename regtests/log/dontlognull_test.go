//go:build regtest

package log

import (
	"fmt"
	"net"
	"sort"
	"testing"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestDontLogNullAgainstHAProxy: in tcp mode, option dontlognull leaves out
// the line of a connection that brought no byte, and only that one; a
// frontend without it logs such a connection, as HAProxy does.
func TestDontLogNullAgainstHAProxy(t *testing.T) {
	run := func(prog string) []string {
		logs := newLogSink(t)
		cfg := fmt.Sprintf(`
global
    log %s format raw local0
defaults
    mode tcp
    log global
    log-format "%%ft %%ts %%U"
    retries 0
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend quiet
    bind "fd@${quiet}"
    option dontlognull
    default_backend refused
frontend loud
    bind "fd@${loud}"
    default_backend refused
backend refused
    server s1 127.0.0.1:1
`, logs.Addr())
		// The listeners are bound before the proxy starts: connections
		// wait in their backlog.
		p := harness.Start(t, prog, cfg, "quiet", "loud")
		send := func(addr, data string) {
			c, err := net.DialTimeout("tcp", addr, harness.Patience)
			if err != nil {
				t.Fatal(err)
			}
			if data != "" {
				c.Write([]byte(data))
			}
			c.Close()
		}
		send(p.Addrs["quiet"], "")
		send(p.Addrs["quiet"], "x")
		send(p.Addrs["loud"], "")
		var lines []string
		for range 2 {
			l, ok := logs.Line()
			if !ok {
				t.Errorf("%s: a log line is missing after %q", prog, lines)
				break
			}
			lines = append(lines, l)
		}
		// A third line would be the null connection's on the quiet
		// frontend; it has had the time the two others took.
		if l, ok := logs.Line(); ok {
			lines = append(lines, l)
		}
		sort.Strings(lines)
		return lines
	}
	want := run(bin.HAProxy(t))
	t.Logf("HAProxy logged %q", want)
	got := run(bin.Path(t, "goha"))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("goha logged %q, HAProxy %q", got, want)
	}
}
