//go:build regtest

// Package lifecycle runs goha's process life cycle with real processes:
// listeners handed over with -x and -sf, master-worker reloads, systemd
// notifications, and hand-overs between goha and HAProxy 2.6, all under
// client load that must see no refused, reset or failed request.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// config is a frontend on a real port and a UNIX socket (a process that takes the sockets
// of another must find them by address) answering body, with a stats
// socket that exposes the listeners.
func config(dir string, port int, body, extraGlobal string) string {
	return fmt.Sprintf(`global
    stats socket %s/stats.sock level admin expose-fd listeners
%s
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend fe
    bind 127.0.0.1:%d
    bind %s/fe.sock
    http-request return status 200 content-type text/plain string "%s"
`, dir, extraGlobal, port, dir, body)
}

// load sends requests to addr from keep-alive and one-connection-per-
// request clients until stopped, and counts what failed. The keep-alive
// clients are Go's, which send an idempotent request again on a new
// connection when a reused one was closed before any answer, as browsers
// do; a fresh connection refused or reset fails the request.
type load struct {
	addr   string
	ok     atomic.Int64
	okNew  atomic.Int64 // of ok, those sent on a connection of their own
	failed atomic.Int64
	mu     sync.Mutex // guards errs and bodies
	errs   []string
	bodies map[string]int
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startLoad(t *testing.T, addr string, workers int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{addr: addr, cancel: cancel, bodies: map[string]int{}}
	for i := 0; i < workers; i++ {
		keepAlive := i%2 == 0
		tr := &http.Transport{DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 1}
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer tr.CloseIdleConnections()
			for ctx.Err() == nil {
				l.one(c, !keepAlive)
				// A bounded load: the processes must also have room to
				// start on two shared cores.
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	t.Cleanup(l.stop)
	return l
}

func (l *load) one(c *http.Client, fresh bool) {
	resp, err := c.Get("http://" + l.addr + "/")
	if err == nil {
		var b []byte
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if err == nil {
			l.ok.Add(1)
			if fresh {
				l.okNew.Add(1)
			}
			l.mu.Lock()
			l.bodies[string(b)]++
			l.mu.Unlock()
			return
		}
	}
	l.failed.Add(1)
	l.mu.Lock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, err.Error())
	}
	l.mu.Unlock()
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

// check stops the load and fails the test if any request failed or too
// few succeeded for the test to mean anything.
func (l *load) check(t *testing.T) {
	t.Helper()
	l.stop()
	t.Logf("requests: %d ok (%d on connections of their own, %d keep-alive), %d failed; bodies %v",
		l.ok.Load(), l.okNew.Load(), l.ok.Load()-l.okNew.Load(), l.failed.Load(), l.bodies)
	if n := l.failed.Load(); n > 0 {
		t.Errorf("%d requests failed: %v", n, l.errs)
	}
	if l.ok.Load() < 100 {
		t.Errorf("only %d requests succeeded", l.ok.Load())
	}
}

// body fetches one answer on a fresh connection.
func body(addr string) string {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func waitBody(t *testing.T, addr, want string) {
	t.Helper()
	harness.Eventually(t, "the answer "+want, func() bool { return body(addr) == want })
}

func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func waitExited(t *testing.T, p *harness.Proc) {
	t.Helper()
	harness.Eventually(t, fmt.Sprintf("process %d to exit", p.PID()), p.Exited)
}

// handOver starts prog taking the sockets of the process old (-x on its
// stats socket, -sf its pid), and waits until old has exited and the new
// process answers want.
func handOver(t *testing.T, prog string, old *harness.Proc, dir string, port int, want, extraGlobal string) *harness.Proc {
	t.Helper()
	pidFile := filepath.Join(dir, "pid")
	p := harness.StartArgs(t, prog, []string{"-p", pidFile, "-x", filepath.Join(dir, "stats.sock"),
		"-sf", strconv.Itoa(old.PID())}, config(dir, port, want, extraGlobal))
	waitExited(t, old)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitBody(t, addr, want)
	// HAProxy writes no pid file in the foreground.
	if !strings.HasSuffix(prog, "haproxy") {
		harness.Eventually(t, "the pid file to name the new process", func() bool { return readPid(pidFile) == p.PID() })
	}
	return p
}

// TestHandOverSF hands the listeners from goha to goha three times with
// -x and -sf under load: no request may fail, the pid file names the
// newest process (the old one does not remove it), and the new process
// binds nothing itself.
func TestHandOverSF(t *testing.T) {
	goha := bin.Path(t, "goha")
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	pidFile := filepath.Join(dir, "pid")
	p := harness.StartArgs(t, goha, []string{"-p", pidFile}, config(dir, port, "v0", ""))
	waitBody(t, addr, "v0")
	ino := inode(t, filepath.Join(dir, "fe.sock"))
	l := startLoad(t, addr, 8)
	for i := 1; i <= 3; i++ {
		time.Sleep(200 * time.Millisecond)
		p = handOver(t, goha, p, dir, port, fmt.Sprintf("v%d", i), "")
		if !strings.Contains(harness.MustSocket(t, filepath.Join(dir, "stats.sock"), "show info"), fmt.Sprintf("Pid: %d\n", p.PID())) {
			t.Fatalf("the stats socket is not the new process's")
		}
	}
	time.Sleep(200 * time.Millisecond)
	l.check(t)
	if got := readPid(pidFile); got != p.PID() {
		t.Fatalf("pid file says %d, want %d", got, p.PID())
	}
	if got := inode(t, filepath.Join(dir, "fe.sock")); got != ino {
		t.Errorf("the UNIX socket was bound again (inode %d, was %d)", got, ino)
	}
	// Each process has as many listening sockets as the first bound:
	// the same ones, not more.
	if n := listeningSockets(t, port); n != 2 {
		t.Errorf("%d sockets listen on port %d, want the first process's 2 (nbthread 2)", n, port)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// listeningSockets counts the listening TCP sockets on port, from
// /proc/net/tcp.
func listeningSockets(t *testing.T, port int) int {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(":%04X ", port)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1]+" ", want) && f[3] == "0A" {
			n++
		}
	}
	return n
}

// TestHandOverST is the same with -st: the old process stops at once,
// and the sockets stay open in the new one.
func TestHandOverST(t *testing.T) {
	goha := bin.Path(t, "goha")
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	pidFile := filepath.Join(dir, "pid")
	old := harness.StartArgs(t, goha, []string{"-p", pidFile}, config(dir, port, "v0", ""))
	waitBody(t, addr, "v0")
	p := harness.StartArgs(t, goha, []string{"-p", pidFile, "-x", filepath.Join(dir, "stats.sock"),
		"-st", strconv.Itoa(old.PID())}, config(dir, port, "v1", ""))
	waitExited(t, old)
	waitBody(t, addr, "v1")
	if got := readPid(pidFile); got != p.PID() {
		t.Fatalf("pid file says %d, want %d", got, p.PID())
	}
}

// TestHandOverNotExposed: without `expose-fd listeners` the old process
// gives nothing, and the new one refuses to start, as HAProxy does.
func TestHandOverNotExposed(t *testing.T) {
	goha := bin.Path(t, "goha")
	dir := t.TempDir()
	port := harness.FreePort(t)
	cfg := strings.Replace(config(dir, port, "v0", ""), " expose-fd listeners", "", 1)
	old := harness.StartArgs(t, goha, nil, cfg)
	waitBody(t, fmt.Sprintf("127.0.0.1:%d", port), "v0")
	p := harness.StartArgs(t, goha, []string{"-x", filepath.Join(dir, "stats.sock")}, cfg)
	harness.Eventually(t, "the new process to exit", p.Exited)
	if !strings.Contains(p.Output(), "Failed to get the sockets from the old process!") {
		t.Fatalf("output:\n%s", p.Output())
	}
	if old.Exited() {
		t.Fatal("the old process stopped")
	}
}

// TestHandOverHAProxy hands the listeners from HAProxy 2.6 to goha and
// back to HAProxy under load. goha runs one thread, so one socket per
// address, which is what HAProxy 2.6 takes per bind.
func TestHandOverHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	goha := bin.Path(t, "goha")
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	pidFile := filepath.Join(dir, "pid")
	p := harness.StartArgs(t, haproxy, []string{"-p", pidFile}, config(dir, port, "haproxy-1", "    nbthread 1"))
	waitBody(t, addr, "haproxy-1")
	l := startLoad(t, addr, 8)
	time.Sleep(200 * time.Millisecond)
	ino := inode(t, filepath.Join(dir, "fe.sock"))
	p = handOver(t, goha, p, dir, port, "goha-1", "    nbthread 1")
	time.Sleep(200 * time.Millisecond)
	p = handOver(t, haproxy, p, dir, port, "haproxy-2", "    nbthread 1")
	time.Sleep(200 * time.Millisecond)
	handOver(t, goha, p, dir, port, "goha-2", "    nbthread 1")
	time.Sleep(200 * time.Millisecond)
	l.check(t)
	// The UNIX bind's socket went from process to process too: the file
	// is the first one's, and it answers.
	if got := inode(t, filepath.Join(dir, "fe.sock")); got != ino {
		t.Errorf("the UNIX socket was bound again (inode %d, was %d)", got, ino)
	}
	uc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return net.Dial("unix", filepath.Join(dir, "fe.sock"))
	}}}
	resp, err := uc.Get("http://x/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "goha-2" {
		t.Errorf("the UNIX bind answered %q", b)
	}
	if n := listeningSockets(t, port); n != 1 {
		t.Errorf("%d sockets listen on port %d, want 1", n, port)
	}
}

// startMaster runs goha as a master on config, whose CLI the test uses.
func startMaster(t *testing.T, args []string, dir string, port int, body string) *harness.Proc {
	t.Helper()
	cfgPath := filepath.Join(dir, "reload.cfg")
	if err := os.WriteFile(cfgPath, []byte(config(dir, port, body, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, "-S", filepath.Join(dir, "master.sock"), "-p", filepath.Join(dir, "pid"), "-f", cfgPath)
	// The harness's own configuration is empty: the file above is the
	// one a reload reads again.
	return harness.StartArgs(t, bin.Path(t, "goha"), args, "")
}

func rewrite(t *testing.T, dir string, port int, body, extra string) {
	t.Helper()
	cfg := config(dir, port, body, "") + extra
	if err := os.WriteFile(filepath.Join(dir, "reload.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// showProc runs show proc on the master CLI.
func showProc(t *testing.T, dir string) string {
	return harness.MustSocket(t, filepath.Join(dir, "master.sock"), "show proc")
}

// reloads reads the master's "<n> [failed: <f>]".
func reloads(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 5 && f[1] == "master" {
			return f[2] + " " + f[3] + " " + f[4]
		}
	}
	return ""
}

// TestMasterReloads reloads a master twenty times in a row under load
// (keep-alive clients and clients opening a connection per request),
// by SIGUSR2 and by `reload` on the master CLI in turn, each time with a
// configuration whose answer changes: every answer after a reload is the
// new one, and no request fails.
func TestMasterReloads(t *testing.T) {
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	m := startMaster(t, []string{"-W"}, dir, port, "r0")
	waitBody(t, addr, "r0")
	ino := inode(t, filepath.Join(dir, "fe.sock"))
	l := startLoad(t, addr, 8)
	const n = 20
	for i := 1; i <= n; i++ {
		time.Sleep(100 * time.Millisecond)
		rewrite(t, dir, port, fmt.Sprintf("r%d", i), "")
		if i%2 == 0 {
			if err := m.Signal(syscall.SIGUSR2); err != nil {
				t.Fatal(err)
			}
		} else {
			harness.MustSocket(t, filepath.Join(dir, "master.sock"), "reload")
		}
		waitBody(t, addr, fmt.Sprintf("r%d", i))
	}
	harness.Eventually(t, "the old workers to leave", func() bool {
		return !strings.Contains(showProc(t, dir), "# old workers")
	})
	l.check(t)
	if got := inode(t, filepath.Join(dir, "fe.sock")); got != ino {
		t.Errorf("the UNIX socket was bound again (inode %d, was %d)", got, ino)
	}
	out := showProc(t, dir)
	if got, want := reloads(out), fmt.Sprintf("%d [failed: 0]", n); got != want {
		t.Fatalf("master reloads %q, want %q:\n%s", got, want, out)
	}
	if got := readPid(filepath.Join(dir, "pid")); got != m.PID() {
		t.Fatalf("pid file says %d, want the master's %d", got, m.PID())
	}
}

// TestMasterReloadBrokenConfig: a configuration that does not load keeps
// the worker serving; the master counts the failure and show
// startup-logs has the ALERTs.
func TestMasterReloadBrokenConfig(t *testing.T) {
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	m := startMaster(t, []string{"-W"}, dir, port, "good")
	waitBody(t, addr, "good")
	before := showProc(t, dir)
	l := startLoad(t, addr, 4)
	rewrite(t, dir, port, "bad", "    bogus-keyword\n")
	if err := m.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, "the failed reload", func() bool { return reloads(showProc(t, dir)) == "1 [failed: 1]" })
	time.Sleep(300 * time.Millisecond)
	l.check(t)
	if got := body(addr); got != "good" {
		t.Fatalf("answer %q after a failed reload", got)
	}
	logs := harness.MustSocket(t, filepath.Join(dir, "master.sock"), "show startup-logs")
	if !strings.Contains(logs, "[ALERT]") || !strings.Contains(logs, "bogus-keyword") || !strings.Contains(logs, "Loading failure!") {
		t.Fatalf("show startup-logs:\n%s", logs)
	}
	// The same worker serves, having lived through one reload.
	wk := func(out string) string {
		_, after, _ := strings.Cut(out, "# workers\n")
		f := strings.Fields(after)
		return f[0] + " " + f[1] + " " + f[2]
	}
	after := showProc(t, dir)
	if pid := strings.Fields(wk(before))[0]; wk(after) != pid+" worker 1" {
		t.Fatalf("show proc before:\n%s\nafter:\n%s", before, after)
	}
	// A good configuration loads again.
	rewrite(t, dir, port, "fixed", "")
	harness.MustSocket(t, filepath.Join(dir, "master.sock"), "reload")
	waitBody(t, addr, "fixed")
}

// TestMasterOldWorkers: a worker with a connection in flight stays in
// show proc's "# old workers" after a reload until the connection ends.
func TestMasterOldWorkers(t *testing.T) {
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	startMaster(t, []string{"-W"}, dir, port, "one")
	waitBody(t, addr, "one")
	// A request whose headers never end keeps a stream in the worker.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
	time.Sleep(100 * time.Millisecond)
	rewrite(t, dir, port, "two", "")
	harness.MustSocket(t, filepath.Join(dir, "master.sock"), "reload")
	waitBody(t, addr, "two")
	out := showProc(t, dir)
	if !strings.Contains(out, "# old workers\n") || reloads(out) != "1 [failed: 0]" {
		t.Fatalf("show proc:\n%s", out)
	}
	// The old worker still answers its master's CLI, by pid.
	_, olds, _ := strings.Cut(out, "# old workers\n")
	oldPid := strings.Fields(olds)[0]
	info := harness.MustSocket(t, filepath.Join(dir, "master.sock"), "@!"+oldPid+" show info")
	if !strings.Contains(info, "\nPid: "+oldPid+"\n") {
		t.Fatalf("@!%s show info:\n%s", oldPid, info)
	}
	if cur := harness.MustSocket(t, filepath.Join(dir, "master.sock"), "@1 show info"); strings.Contains(cur, "\nPid: "+oldPid+"\n") {
		t.Fatalf("@1 is the old worker")
	}
	io.WriteString(c, "\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, _ := io.ReadAll(c)
	if !strings.Contains(string(b), "one") {
		t.Fatalf("the old worker answered %q", b)
	}
	harness.Eventually(t, "the old worker to leave", func() bool {
		return !strings.Contains(showProc(t, dir), "# old workers")
	})
}

// TestSystemdNotify: -Ws tells $NOTIFY_SOCKET READY=1 with the master's
// pid, RELOADING=1 then READY=1 on a reload, STOPPING=1 at the end.
func TestSystemdNotify(t *testing.T) {
	dir := t.TempDir()
	port := harness.FreePort(t)
	nsock := filepath.Join(dir, "notify.sock")
	pc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: nsock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	msgs := make(chan string, 16)
	go func() {
		buf := make([]byte, 512)
		for {
			n, err := pc.Read(buf)
			if err != nil {
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	next := func() string {
		select {
		case s := <-msgs:
			return s
		case <-time.After(harness.Patience):
			return "nothing"
		}
	}
	t.Setenv("NOTIFY_SOCKET", nsock)
	m := startMaster(t, []string{"-Ws"}, dir, port, "a")
	if got, want := next(), fmt.Sprintf("READY=1\nMAINPID=%d", m.PID()); got != want {
		t.Fatalf("first notification %q, want %q", got, want)
	}
	rewrite(t, dir, port, "b", "")
	m.Signal(syscall.SIGUSR2)
	if got := next(); got != "RELOADING=1" {
		t.Fatalf("got %q, want RELOADING=1", got)
	}
	if got := next(); got != "READY=1" {
		t.Fatalf("got %q, want READY=1", got)
	}
	waitBody(t, fmt.Sprintf("127.0.0.1:%d", port), "b")
	m.Signal(syscall.SIGTERM)
	if got := next(); got != "STOPPING=1" {
		t.Fatalf("got %q, want STOPPING=1", got)
	}
}

// TestPauseResume: SIGTTOU pauses the listeners (new connections are
// refused, the frontend shows PAUSED, the stats socket answers), SIGTTIN
// resumes them, with the same messages as HAProxy, which runs the same
// steps.
func TestPauseResume(t *testing.T) {
	for _, prog := range []string{"goha", "haproxy"} {
		t.Run(prog, func(t *testing.T) {
			path := bin.Path(t, "goha")
			if prog == "haproxy" {
				path = bin.HAProxy(t)
			}
			dir := t.TempDir()
			port := harness.FreePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			p := harness.StartArgs(t, path, nil, config(dir, port, "up", ""))
			waitBody(t, addr, "up")
			p.Signal(syscall.SIGTTOU)
			harness.Eventually(t, "connections to be refused", func() bool {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err == nil {
					c.Close()
					return false
				}
				return errors.Is(err, syscall.ECONNREFUSED)
			})
			stat := harness.MustSocket(t, filepath.Join(dir, "stats.sock"), "show stat")
			if st := harness.ParseStat(stat)["fe/FRONTEND"]["status"]; st != "PAUSED" {
				t.Fatalf("frontend status %q while paused", st)
			}
			p.Signal(syscall.SIGTTIN)
			waitBody(t, addr, "up")
			for _, msg := range []string{"Paused frontend GLOBAL.", "Paused frontend fe.", "Resumed frontend GLOBAL.", "Resumed frontend fe."} {
				if !p.WaitOutput(msg, harness.Patience) {
					t.Fatalf("no %q in:\n%s", msg, p.Output())
				}
			}
		})
	}
}

// TestMasterReloadServerState: run-time weights and states saved with
// `show servers state` into the server-state-file come back after a
// reload.
func TestMasterReloadServerState(t *testing.T) {
	dir := t.TempDir()
	port := harness.FreePort(t)
	srv := harness.NewOrigin(t, "s", nil)
	extra := fmt.Sprintf(`
backend be
    load-server-state-from-file global
    server s1 %s weight 10
    server s2 %s weight 10
`, srv.Addr, srv.Addr)
	global := fmt.Sprintf("    server-state-file %s/state\n", dir)
	write := func(body string) {
		cfg := strings.Replace(config(dir, port, body, global), "\nfrontend fe\n", "\nfrontend fe\n    use_backend be if { path /be }\n", 1) + extra
		if err := os.WriteFile(filepath.Join(dir, "reload.cfg"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	args := []string{"-W", "-S", filepath.Join(dir, "master.sock"), "-f", filepath.Join(dir, "reload.cfg")}
	m := harness.StartArgs(t, bin.Path(t, "goha"), args, "")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitBody(t, addr, "one")
	sock := filepath.Join(dir, "stats.sock")
	harness.MustSocket(t, sock, "set weight be/s1 3")
	harness.MustSocket(t, sock, "set server be/s2 state maint")
	state := harness.MustSocket(t, sock, "show servers state")
	if err := os.WriteFile(filepath.Join(dir, "state"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	write("two")
	m.Signal(syscall.SIGUSR2)
	waitBody(t, addr, "two")
	if got := harness.MustSocket(t, sock, "get weight be/s1"); !strings.HasPrefix(got, "3 (initial 10)") {
		t.Fatalf("s1's weight after the reload: %q", got)
	}
	st := harness.ParseStat(harness.MustSocket(t, sock, "show stat"))
	if got := st["be/s2"]["status"]; got != "MAINT" {
		t.Fatalf("s2's status after the reload: %q", got)
	}
}

// TestHandOverHAProxyToMaster moves a running HAProxy 2.6's listeners to
// a goha master (-W -x -sf) under load, then reloads the master: the
// first worker takes HAProxy's sockets, the next one the first's.
func TestHandOverHAProxyToMaster(t *testing.T) {
	haproxy := bin.HAProxy(t)
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	hp := harness.StartArgs(t, haproxy, nil, config(dir, port, "haproxy", "    nbthread 1"))
	waitBody(t, addr, "haproxy")
	l := startLoad(t, addr, 8)
	time.Sleep(200 * time.Millisecond)
	rewrite(t, dir, port, "goha-1", "")
	args := []string{"-W", "-S", filepath.Join(dir, "master.sock"), "-p", filepath.Join(dir, "pid"),
		"-x", filepath.Join(dir, "stats.sock"), "-sf", strconv.Itoa(hp.PID()), "-f", filepath.Join(dir, "reload.cfg")}
	m := harness.StartArgs(t, bin.Path(t, "goha"), args, "")
	waitExited(t, hp)
	waitBody(t, addr, "goha-1")
	time.Sleep(200 * time.Millisecond)
	rewrite(t, dir, port, "goha-2", "")
	m.Signal(syscall.SIGUSR2)
	waitBody(t, addr, "goha-2")
	time.Sleep(200 * time.Millisecond)
	l.check(t)
	if got := readPid(filepath.Join(dir, "pid")); got != m.PID() {
		t.Fatalf("pid file says %d, want the master's %d", got, m.PID())
	}
}

// TestMasterHardStopAfter: an old worker whose connection never ends
// leaves anyway once hard-stop-after has passed, closing it.
func TestMasterHardStopAfter(t *testing.T) {
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cfgPath := filepath.Join(dir, "reload.cfg")
	write := func(body string) {
		cfg := strings.Replace(config(dir, port, body, "    hard-stop-after 500ms"), "timeout client 30s", "timeout client 1h", 1)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	args := []string{"-W", "-S", filepath.Join(dir, "master.sock"), "-f", cfgPath}
	harness.StartArgs(t, bin.Path(t, "goha"), args, "")
	waitBody(t, addr, "one")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
	write("two")
	harness.MustSocket(t, filepath.Join(dir, "master.sock"), "reload")
	waitBody(t, addr, "two")
	harness.Eventually(t, "the old worker to leave", func() bool {
		return !strings.Contains(showProc(t, dir), "# old workers")
	})
	c.SetReadDeadline(time.Now().Add(harness.Patience))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the held connection: %v", err)
	}
}

// TestMasterHardStopAfterTunnel: a tcp-mode stream relaying both ways
// through an old worker (a long-lived tunnel) does not keep it: the old
// worker leaves once hard-stop-after has passed after a reload, cutting
// the tunnel, while the new worker relays new connections.
func TestMasterHardStopAfterTunnel(t *testing.T) {
	dir := t.TempDir()
	port := harness.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	echo := harness.TCPServer(t, func(c net.Conn) {
		defer c.Close()
		io.Copy(c, c)
	})
	cfgPath := filepath.Join(dir, "tunnel.cfg")
	write := func(gen string) {
		cfg := fmt.Sprintf(`global
    stats socket %s/stats.sock level admin expose-fd listeners
    hard-stop-after 500ms
    # generation %s
defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h
frontend fe
    bind 127.0.0.1:%d
    default_backend be
backend be
    server echo %s
`, dir, gen, port, echo)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	roundTrip := func(c net.Conn, msg string) error {
		if _, err := io.WriteString(c, msg); err != nil {
			return err
		}
		buf := make([]byte, len(msg))
		c.SetReadDeadline(time.Now().Add(harness.Patience))
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
		if string(buf) != msg {
			return fmt.Errorf("echoed %q, want %q", buf, msg)
		}
		return nil
	}
	write("1")
	args := []string{"-W", "-S", filepath.Join(dir, "master.sock"), "-f", cfgPath}
	harness.StartArgs(t, bin.Path(t, "goha"), args, "")
	harness.WaitListening(t, addr, harness.Patience)
	tunnel, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tunnel.Close()
	if err := roundTrip(tunnel, "before"); err != nil {
		t.Fatalf("the tunnel before the reload: %v", err)
	}
	write("2")
	harness.MustSocket(t, filepath.Join(dir, "master.sock"), "reload")
	harness.Eventually(t, "a second worker", func() bool {
		return strings.Contains(showProc(t, dir), "# old workers")
	})
	harness.Eventually(t, "the old worker to leave", func() bool {
		return !strings.Contains(showProc(t, dir), "# old workers")
	})
	tunnel.SetReadDeadline(time.Now().Add(harness.Patience))
	if _, err := io.ReadAll(tunnel); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the tunnel after hard-stop-after: %v", err)
	}
	fresh, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := roundTrip(fresh, "after"); err != nil {
		t.Fatalf("a new connection after the reload: %v", err)
	}
}
