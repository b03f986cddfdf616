// Package hatop drives hatop, the curses front end to HAProxy's stats
// socket, in a tmux pseudo-terminal against goha and against HAProxy 2.6:
// hatop must start, draw the proxies and their servers with the same
// statuses, and its hotkeys must change servers.
package hatop

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// cfgTmpl has a server without checks (hatop shows "-"), one checked
// against a listening port (UP), one set down through the socket (DOWN) and
// one disabled in the configuration (MAINT). %d is the checked port.
const cfgTmpl = `global
    maxconn 4000
    stats socket ${TMP}/admin.sock level admin

defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s

frontend fe_main
    bind "fd@${fe}"
    default_backend be_app

backend be_app
    server s1 127.0.0.1:8001 weight 10
    server s2 127.0.0.1:8002 weight 20
    server s3 127.0.0.1:%d weight 30 check inter 200ms

backend be_other
    server o1 127.0.0.1:8011 disabled
`

// TestHatop runs the same session against HAProxy 2.6 and goha and
// compares the tables hatop drew.
func TestHatop(t *testing.T) {
	hatop, err := exec.LookPath("hatop")
	if err != nil {
		t.Skip("hatop is not installed")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed")
	}
	tables := map[string][]string{}
	t.Run("haproxy", func(t *testing.T) {
		tables["haproxy"] = session(t, hatop, tmux, bin.HAProxy(t))
	})
	t.Run("goha", func(t *testing.T) {
		tables["goha"] = session(t, hatop, tmux, bin.Path(t, "goha"))
	})
	want, got := tables["haproxy"], tables["goha"]
	t.Logf("haproxy:\n%s\ngoha:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	if want == nil || got == nil {
		return
	}
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("hatop's table, line %d:\nhaproxy: %q\ngoha:    %q", i, w, g)
		}
	}
}

// term is one hatop in a tmux server of its own.
type term struct {
	t    *testing.T
	tmux string
	sock string
}

func (tm *term) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command(tm.tmux, append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is the pane's text; with escapes, it keeps the attributes.
func (tm *term) screen(escapes bool) string {
	tm.t.Helper()
	if escapes {
		return tm.run("capture-pane", "-p", "-e", "-t", "hatop")
	}
	return tm.run("capture-pane", "-p", "-t", "hatop")
}

// waitFor polls the screen until ok accepts it.
func (tm *term) waitFor(what string, ok func(string) bool) string {
	tm.t.Helper()
	var s string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s = tm.screen(false)
		if ok(s) {
			return s
		}
	}
	tm.t.Fatalf("hatop never showed %s; screen:\n%s", what, s)
	return ""
}

// row returns the fields of a service's line in a proxy's section of
// hatop's STATUS table: NAME, W, STATUS, ... ("-" is hatop's "no check").
func row(screen, proxy, name string) []string {
	in := false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.HasPrefix(l, ">>> "):
			in = strings.TrimSpace(l[4:]) == proxy
		case in:
			if f := strings.Fields(l); len(f) > 2 && f[0] == name {
				return f
			}
		}
	}
	return nil
}

func rowIs(proxy, name, weight, status string) func(string) bool {
	return func(s string) bool {
		f := row(s, proxy, name)
		return f != nil && f[1] == weight && f[2] == status
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// reverse reports whether an SGR parameter list turns reverse video on;
// colour arguments (38;5;n, 38;2;r;g;b) are skipped.
func reverse(params string) bool {
	p := strings.Split(params, ";")
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case "7":
			return true
		case "38", "48", "58":
			if i+1 < len(p) && p[i+1] == "5" {
				i += 2
			} else if i+1 < len(p) && p[i+1] == "2" {
				i += 4
			}
		}
	}
	return false
}

// cursor returns the first word of the line hatop highlights as its
// cursor: the first reverse-video text below the table's header line
// (which is reverse video too).
func (tm *term) cursor() string {
	tm.t.Helper()
	s := tm.screen(true)
	h := strings.Index(s, "NAME ")
	if h < 0 {
		return ""
	}
	s = s[h:]
	s = s[strings.IndexByte(s, '\n')+1:]
	for _, m := range sgr.FindAllStringSubmatchIndex(s, -1) {
		if !reverse(s[m[2]:m[3]]) {
			continue
		}
		rest := strings.TrimLeft(sgr.ReplaceAllString(s[m[1]:], ""), "\n")
		line, _, _ := strings.Cut(rest, "\n")
		if f := strings.Fields(line); len(f) > 0 {
			return f[0]
		}
		return ""
	}
	return ""
}

// moveTo moves hatop's cursor down to the line of a service.
func (tm *term) moveTo(name string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "hatop", "Home")
	for i := 0; i < 20; i++ {
		if tm.cursor() == name {
			return
		}
		tm.run("send-keys", "-t", "hatop", "Down")
		time.Sleep(150 * time.Millisecond)
	}
	tm.t.Fatalf("hatop's cursor never reached %s; screen:\n%s", name, tm.screen(false))
}

// send runs one command on the stats socket and returns the reply.
func send(t *testing.T, sock, cmd string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "%s\n", cmd)
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// serverState returns a server's fields in show servers state.
func serverState(t *testing.T, sock, be, srv string) []string {
	t.Helper()
	out := send(t, sock, "show servers state "+be)
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, " "); len(f) >= 25 && f[1] == be && f[3] == srv {
			return f
		}
	}
	t.Fatalf("show servers state %s has no %s:\n%s", be, srv, out)
	return nil
}

// waitState polls show servers state until ok accepts the server's fields.
func waitState(t *testing.T, sock, be, srv, what string, ok func([]string) bool) {
	t.Helper()
	var f []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if f = serverState(t, sock, be, srv); ok(f) {
			return
		}
	}
	t.Fatalf("%s/%s never got %s: %s", be, srv, what, strings.Join(f, " "))
}

var checkTime = regexp.MustCompile(`in +[0-9]+ms`)

// session starts prog, drives hatop against it, and returns hatop's table
// (check durations masked).
func session(t *testing.T, hatop, tmux, prog string) []string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	p := harness.Start(t, prog, fmt.Sprintf(cfgTmpl, ln.Addr().(*net.TCPAddr).Port), "fe")
	sock := filepath.Join(p.Dir, "admin.sock")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("no stats socket:\n%s", p.Output())
		}
	}
	if r := send(t, sock, "set server be_app/s2 health down"); r != "\n" {
		t.Fatalf("set server be_app/s2 health down: %q", r)
	}

	// A tmux server of our own; the pane stays open after hatop exits so
	// that its last words can be read.
	tm := &term{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	tm.run("-f", "/dev/null", "new-session", "-d", "-s", "hatop", "-x", "200", "-y", "50",
		fmt.Sprintf("'%s' -s '%s' -i 1; echo hatop exited: $?; sleep 600", hatop, sock))
	t.Cleanup(func() { exec.Command(tmux, "-S", tm.sock, "kill-server").Run() })

	// Start-up: the header, the proxies, every server with its status.
	// Curses paints row by row: wait for the last proxy's last row, not the
	// first one that changes, or the capture may catch a half-drawn screen.
	screen := tm.waitFor("the servers", func(s string) bool {
		return rowIs("be_app", "s3", "30", "UP")(s) && rowIs("be_other", "BACKEND", "0", "DOWN")(s)
	})
	for _, want := range []string{"HAProxy Version:", ">>> fe_main", ">>> be_app", ">>> be_other"} {
		if !strings.Contains(screen, want) {
			t.Errorf("hatop's screen lacks %q:\n%s", want, screen)
		}
	}
	for _, r := range []struct{ proxy, name, weight, status string }{
		{"fe_main", "FRONTEND", "0", "OPEN"},
		{"be_app", "s1", "10", "-"},
		{"be_app", "s2", "20", "DOWN"},
		{"be_app", "s3", "30", "UP"},
		{"be_app", "BACKEND", "40", "UP"},
		{"be_other", "o1", "1", "MAINT"},
		{"be_other", "BACKEND", "0", "DOWN"},
	} {
		if !rowIs(r.proxy, r.name, r.weight, r.status)(screen) {
			t.Errorf("hatop: %s/%s is %q, want weight %s status %s", r.proxy, r.name, row(screen, r.proxy, r.name), r.weight, r.status)
		}
	}
	var table []string
	if i := strings.Index(screen, ">>> fe_main"); i >= 0 {
		for _, l := range strings.Split(screen[i:], "\n") {
			if l = strings.TrimRight(l, " "); l != "" && !strings.Contains(l, "1-STATUS") {
				table = append(table, checkTime.ReplaceAllString(l, "in <t>ms"))
			}
		}
	}

	// F8 adds 10 to the weight of the server under the cursor.
	tm.moveTo("s1")
	tm.run("send-keys", "-t", "hatop", "F8")
	waitState(t, sock, "be_app", "s1", "weight 20", func(f []string) bool { return f[7] == "20" })
	tm.waitFor("s1 at weight 20", rowIs("be_app", "s1", "20", "-"))

	// F10 puts it in maintenance, F9 takes it out.
	tm.run("send-keys", "-t", "hatop", "F10")
	waitState(t, sock, "be_app", "s1", "maintenance", func(f []string) bool { return f[6] == "1" })
	tm.waitFor("s1 in maintenance", rowIs("be_app", "s1", "20", "MAINT"))
	tm.run("send-keys", "-t", "hatop", "F9")
	waitState(t, sock, "be_app", "s1", "ready", func(f []string) bool { return f[6] == "0" })
	tm.waitFor("s1 back", rowIs("be_app", "s1", "20", "-"))

	// The CLI view (5) runs typed commands on hatop's interactive session.
	tm.run("send-keys", "-t", "hatop", "5")
	tm.waitFor("the CLI view", func(s string) bool { return strings.Contains(s, "> ") })
	tm.run("send-keys", "-t", "hatop", "-l", "get weight be_app/s1")
	tm.run("send-keys", "-t", "hatop", "Enter")
	tm.waitFor("get weight's reply", func(s string) bool { return strings.Contains(s, "20 (initial 10)") })

	// Quit with ESC-q: hatop closes its session and exits 0.
	tm.run("send-keys", "-t", "hatop", "Escape", "q")
	tm.waitFor("hatop's exit", func(s string) bool { return strings.Contains(s, "hatop exited: 0") })
	return table
}
