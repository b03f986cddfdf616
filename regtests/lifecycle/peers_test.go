//go:build regtest

package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestMasterReloadStickTables: with a peers section naming the local
// peer, the entries of a stick table set at run time are in the new
// worker's table after a reload: the old worker teaches them to the new
// one over the local peer's address, whose listening socket the new
// worker took over. Two reloads in a row: the second worker passes on
// what it learned from the first. (HAProxy 2.6.12 run on the same
// configuration leaves its new worker's table empty: its old process
// never connects to the local peer; docs/operations.md.)
func TestMasterReloadStickTables(t *testing.T) {
	path := bin.Path(t, "goha")
	dir := t.TempDir()
	port, pport := harness.FreePort(t), harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	global := "    localpeer lp\n"
	extra := fmt.Sprintf(`
peers mypeers
    peer lp 127.0.0.1:%d

backend st
    stick-table type string len 32 size 100 expire 10m store gpc0,http_req_cnt peers mypeers
`, pport)
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(dir, "reload.cfg"), []byte(config(dir, port, body, global)+extra), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	args := []string{"-W", "-S", filepath.Join(dir, "master.sock"), "-f", filepath.Join(dir, "reload.cfg")}
	m := harness.StartArgs(t, path, args, "")
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(m.Output())
		}
	})
	waitBody(t, addr, "one")
	sock := filepath.Join(dir, "stats.sock")
	harness.MustSocket(t, sock, "set table st key alpha data.gpc0 7")
	harness.MustSocket(t, sock, "set table st key beta data.gpc0 3 data.http_req_cnt 11")
	has := func(out string) bool {
		return strings.Contains(out, " key=alpha ") && strings.Contains(out, " gpc0=7") &&
			strings.Contains(out, " key=beta ") && strings.Contains(out, " gpc0=3 http_req_cnt=11")
	}
	if out := harness.MustSocket(t, sock, "show table st"); !has(out) {
		t.Fatalf("show table st before the reload:\n%s", out)
	}
	for i, body := range []string{"two", "three"} {
		write(body)
		m.Signal(syscall.SIGUSR2)
		waitBody(t, addr, body)
		out, _ := harness.WaitSocket(t, sock, "show table st", has)
		if !has(out) {
			t.Fatalf("show table st after reload %d:\n%s", i+1, out)
		}
	}
}

// TestHandOverStickTables: the same hand-off without a master, from one
// goha to the next with -x and -sf.
func TestHandOverStickTables(t *testing.T) {
	dir := t.TempDir()
	port, pport := harness.FreePort(t), harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cfg := func(body string) string {
		return config(dir, port, body, "    localpeer lp\n") + fmt.Sprintf(`
peers mypeers
    peer lp 127.0.0.1:%d

backend st
    stick-table type string len 32 size 100 expire 10m store gpc0 peers mypeers
`, pport)
	}
	goha := bin.Path(t, "goha")
	p := harness.StartArgs(t, goha, nil, cfg("one"))
	waitBody(t, addr, "one")
	sock := filepath.Join(dir, "stats.sock")
	harness.MustSocket(t, sock, "set table st key alpha data.gpc0 7")
	for _, body := range []string{"two", "three"} {
		next := harness.StartArgs(t, goha, []string{"-x", sock, "-sf", strconv.Itoa(p.PID())}, cfg(body))
		waitExited(t, p)
		waitBody(t, addr, body)
		if out := harness.MustSocket(t, sock, "show table st"); !strings.Contains(out, " key=alpha ") || !strings.Contains(out, " gpc0=7") {
			t.Fatalf("show table st after the hand-over to %s:\n%s\n%s", body, out, next.Output())
		}
		p = next
	}
}
