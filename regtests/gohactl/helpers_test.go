// Package gohactl drives the gohactl binary against a real HAProxy 2.6: one
// command at a time, as a script on standard input, and as an interactive
// shell in a tmux pseudo-terminal. It also points gohactl at peers that are
// not stats sockets. Tests skip when haproxy or tmux is missing.
package gohactl

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

var gohactlBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gohactl-regtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gohactlBin = filepath.Join(dir, "gohactl")
	build := exec.Command("go", "build", "-o", gohactlBin, "goha/cmd/gohactl")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building gohactl:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// A session that outlives every test's keeps the tmux server up: when
	// a test's cleanup killed the last session, the server would exit
	// while a parallel test starts its own ("server exited unexpectedly").
	keeper := exec.Command("tmux", "-L", tmuxServer, "new-session", "-d", "-s", "keeper", "sleep 86400")
	haveTmux := keeper.Run() == nil
	code := m.Run()
	if haveTmux {
		exec.Command("tmux", "-L", tmuxServer, "kill-server").Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// haproxy is one HAProxy process started by a test.
type haproxy struct {
	t    *testing.T
	dir  string
	cfg  string
	sock string
	mapf string
	cmd  *exec.Cmd
	log  bytes.Buffer // written until exited is closed
	// exited is closed once the process has been reaped.
	exited chan struct{}
}

func haproxyPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("HAPROXY_PROGRAM"), "/usr/sbin/haproxy"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	p, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	return p
}

// startProxy starts bin (haproxy, or goha) on cfg, which names the stats
// socket sock.
func startProxy(t *testing.T, bin, cfg, sock string) *haproxy {
	t.Helper()
	h := &haproxy{t: t, dir: filepath.Dir(cfg), cfg: cfg, sock: sock}
	h.start(bin)
	t.Cleanup(h.stop)
	return h
}

// startHAProxy writes a configuration with an admin stats socket in a
// temporary directory, a frontend on a free port using a map, and two
// backends: web (s1, s2) and api (a1).
func startHAProxy(t *testing.T) *haproxy {
	t.Helper()
	bin := haproxyPath(t)
	dir := t.TempDir()
	h := &haproxy{t: t, dir: dir, sock: filepath.Join(dir, "s"), mapf: filepath.Join(dir, "m.map")}
	h.cfg = filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(h.mapf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The probed port may be taken by someone else before haproxy binds
	// it; another port is then tried.
	var err error
	for try := 0; try < 3; try++ {
		cfg := fmt.Sprintf(`global
    stats socket %s level admin
    stats timeout 1m
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
    http-request set-var(txn.m) req.hdr(host),map(%s)
    default_backend web
backend web
    server s1 127.0.0.1:1
    server s2 127.0.0.1:1
backend api
    server a1 127.0.0.1:1
`, h.sock, harness.FreePort(t), h.mapf)
		if err := os.WriteFile(h.cfg, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if err = h.tryStart(bin); err == nil {
			t.Cleanup(h.stop)
			return h
		}
	}
	t.Fatal(err)
	return nil
}

func (h *haproxy) start(bin string) {
	h.t.Helper()
	if err := h.tryStart(bin); err != nil {
		h.t.Fatal(err)
	}
}

// tryStart starts the process and waits for its stats socket; it returns
// an error, with the process's output, if the process exits first.
func (h *haproxy) tryStart(bin string) error {
	h.t.Helper()
	os.Remove(h.sock)
	h.log.Reset()
	h.cmd = exec.Command(bin, "-db", "-f", h.cfg)
	h.cmd.Stdout, h.cmd.Stderr = &h.log, &h.log
	if err := h.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	exited := make(chan struct{})
	h.exited = exited
	cmd := h.cmd
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		select {
		case <-exited:
			h.cmd = nil
			return fmt.Errorf("%s exited: %s", bin, h.log.String())
		default:
		}
		if c, err := net.Dial("unix", h.sock); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			h.cmd.Process.Kill()
			<-exited
			h.cmd = nil
			return fmt.Errorf("no stats socket from %s within 5s: %s", bin, h.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *haproxy) stop() {
	if h.cmd == nil || h.cmd.Process == nil {
		return
	}
	h.cmd.Process.Kill()
	<-h.exited
	h.cmd = nil
}

func (h *haproxy) restart() {
	h.t.Helper()
	bin := h.cmd.Path
	h.stop()
	h.start(bin)
}

// eventually polls cond every 20ms until it holds or the time is up.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// gohactl runs the binary with a clean environment rooted in home. A run
// that outlives its deadline fails the test: gohactl must never hang.
func gohactl(t *testing.T, home string, stdin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, gohactlBin, args...)
	cmd.Env = append([]string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PATH=/usr/bin:/bin"}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("gohactl %q hung", args)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// pane is a tmux session, on a tmux server private to the test process,
// running one command in a 200x50 pseudo-terminal.
type pane struct {
	t    *testing.T
	name string
}

var tmuxServer = fmt.Sprintf("gohactl-regtest-%d", os.Getpid())
var paneSeq atomic.Int32

func tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", tmuxServer}, args...)...).CombinedOutput()
	return string(out), err
}

func newPane(t *testing.T, home string, args ...string) *pane {
	t.Helper()
	p := startPane(t, home, args...)
	p.waitFor("gohactl>")
	return p
}

// startPane runs gohactl with args in a new pane, and leaves the pane open
// after it exits, with its exit status shown, until the test ends.
func startPane(t *testing.T, home string, args ...string) *pane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	p := &pane{t: t, name: fmt.Sprintf("gohactl%d", paneSeq.Add(1))}
	cmdline := []string{"env", "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "TERM=xterm", gohactlBin}
	for _, a := range args {
		cmdline = append(cmdline, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	for i := range cmdline[:4] {
		cmdline[i] = "'" + cmdline[i] + "'"
	}
	if out, err := tmux("new-session", "-d", "-s", p.name, "-x", "200", "-y", "50", strings.Join(cmdline, " ")+"; echo EXIT=$?; sleep 60"); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { tmux("kill-session", "-t", p.name) })
	return p
}

// typeText sends literal text; keys sends tmux key names (Tab, Enter, C-c).
func (p *pane) typeText(s string) {
	p.t.Helper()
	if out, err := tmux("send-keys", "-t", p.name, "-l", s); err != nil {
		p.t.Fatalf("send-keys: %v: %s", err, out)
	}
}

func (p *pane) keys(k ...string) {
	p.t.Helper()
	if out, err := tmux(append([]string{"send-keys", "-t", p.name}, k...)...); err != nil {
		p.t.Fatalf("send-keys: %v: %s", err, out)
	}
}

func (p *pane) capture(escapes bool) string {
	// -N keeps the blank that follows a completed word.
	args := []string{"capture-pane", "-p", "-N", "-t", p.name}
	if escapes {
		args = append(args, "-e")
	}
	out, _ := tmux(args...)
	return out
}

// waitFor waits until the screen contains s, and returns the screen.
func (p *pane) waitFor(s string) string {
	p.t.Helper()
	var screen string
	deadline := time.Now().Add(5 * time.Second)
	for {
		screen = p.capture(false)
		if strings.Contains(screen, s) {
			return screen
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never showed %q; it shows:\n%s", s, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run types a command line and Enter, waits for the next prompt, and
// returns what was printed between the two.
func (p *pane) run(line string) string {
	p.t.Helper()
	p.typeText(line)
	p.keys("Enter")
	return p.output(line)
}

// output waits for the reply to the command line shown after the last
// prompt and returns it.
func (p *pane) output(line string) string {
	p.t.Helper()
	var out string
	defer func() {
		if p.t.Failed() {
			p.t.Logf("screen:\n%q", p.capture(false))
		}
	}()
	eventually(p.t, 5*time.Second, "the prompt after "+line, func() bool {
		screen := trimLines(p.capture(false))
		line := strings.TrimRight(line, " ")
		i := strings.LastIndex(screen, "gohactl> "+line+"\n")
		if i < 0 {
			return false
		}
		rest := screen[i+len("gohactl> "+line+"\n"):]
		j := strings.LastIndex(rest, "gohactl>")
		if j < 0 {
			return false
		}
		out = rest[:j]
		return true
	})
	return out
}

// trimLines drops the blanks at the end of each line, which the terminal
// may or may not keep.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// clear empties the screen and scrollback so that later captures start fresh.
func (p *pane) clear() {
	tmux("clear-history", "-t", p.name)
	p.keys("C-l")
	time.Sleep(50 * time.Millisecond)
}

// exited reports whether gohactl has exited, and its status.
func (p *pane) exited() (bool, string) {
	screen := p.capture(false)
	i := strings.LastIndex(screen, "EXIT=")
	if i < 0 {
		return false, ""
	}
	return true, strings.Fields(screen[i+len("EXIT="):])[0]
}
