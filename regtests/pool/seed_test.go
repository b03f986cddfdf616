// Package pool tests goha's server idle-connection pools end to end.
package pool

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// cli runs one command through socat, as an operator would.
func cli(t *testing.T, sock, cmd string) string {
	t.Helper()
	return harness.MustSocket(t, sock, cmd)
}

// TestSetServerAddrFlushesIdleConnections replays the runtime API session
// of the seed's bug report: with pool-purge-delay longer than the test,
// a server moved to maintenance and given a new address must never get a
// request on a connection to its old address.
func TestSetServerAddrFlushesIdleConnections(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		t.Skip("socat is not installed")
	}
	o0 := harness.NewOrigin(t, "port0", nil)
	o1 := harness.NewOrigin(t, "port1", nil)
	o2 := harness.NewOrigin(t, "port2", nil)
	port := func(o *harness.Origin) string { return o.Addr[strings.LastIndexByte(o.Addr, ':')+1:] }
	cfg := fmt.Sprintf(`
global
    stats socket ${TMP}/admin.sock level admin
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
    http-reuse always
frontend fe
    bind "fd@${fe}"
    default_backend be_foo
backend be_foo
    default-server pool-purge-delay 60s
    server srv0 %s
    server srv1 0.0.0.0:0 weight 1 disabled
`, o0.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	sock := filepath.Join(p.Dir, "admin.sock")
	harness.WaitCLI(t, sock)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	hits := func(n int) map[string]int {
		m := map[string]int{}
		for i := 0; i < n; i++ {
			_, body := harness.Get(t, client, p.Addrs["fe"], "/")
			m[strings.TrimSpace(body)]++
		}
		return m
	}
	step := func(addrPort string) {
		ip, pt, _ := strings.Cut(addrPort, ":")
		out := cli(t, sock, fmt.Sprintf("set server be_foo/srv1 addr %s port %s", ip, pt))
		if !strings.Contains(out, "by 'stats socket command'") {
			t.Fatalf("set server addr: %q", out)
		}
		cli(t, sock, "set server be_foo/srv1 weight 256")
		if out := cli(t, sock, "set server be_foo/srv1 check-port 8500"); !strings.Contains(out, "health check port updated.") && !strings.Contains(out, "health checks are not enabled") {
			t.Fatalf("check-port: %q", out)
		}
		cli(t, sock, "set server be_foo/srv1 state ready")
	}
	step(o1.Addr)
	state := cli(t, sock, "show servers state be_foo")
	if !regexp.MustCompile(`srv1 127\.0\.0\.1 2 \d+ 256 1 .* ` + port(o1) + ` `).MatchString(state) {
		t.Fatalf("show servers state after the first change:\n%s", state)
	}
	if m := hits(40); m["port1"] == 0 {
		t.Fatalf("srv1 on its first address got no request: %v", m)
	}
	cli(t, sock, "set server be_foo/srv1 state maint")
	if out := cli(t, sock, "set server be_foo/srv1 addr 0.0.0.0 port 0"); !strings.Contains(out, "IP changed from '127.0.0.1' to '0.0.0.0'") {
		t.Fatalf("set addr 0.0.0.0: %q", out)
	}
	if m := hits(10); m["port0"] != 10 {
		t.Fatalf("with srv1 in maintenance every request goes to srv0: %v", m)
	}
	step(o2.Addr)
	m := hits(60)
	if m["port1"] != 0 {
		t.Fatalf("%d requests reached srv1's old address after it moved (pooled connections not flushed): %v", m["port1"], m)
	}
	if m["port2"] == 0 {
		t.Fatalf("srv1's new address got no request: %v", m)
	}
}
