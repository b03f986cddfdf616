package gohactl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestShellCompletion(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	p := newPane(t, t.TempDir(), "-S", h.sock)

	// Command words come from the server's help.
	p.typeText("sho")
	p.keys("Tab")
	p.waitFor("gohactl> show ")
	p.typeText("backe")
	p.keys("Tab")
	p.waitFor("gohactl> show backend ")
	p.keys("Enter")
	if out := p.output("show backend "); out != "# name\nweb\napi\n" {
		t.Errorf("show backend: %q", out)
	}

	// Server names come from show servers state.
	p.typeText("get weight w")
	p.keys("Tab")
	p.waitFor("gohactl> get weight web/")
	p.keys("Tab")
	p.waitFor("gohactl> get weight web/s")
	p.keys("Tab")
	p.waitFor("web/s1  web/s2")
	p.typeText("2")
	p.keys("Enter")
	if out := p.output("get weight web/s2"); out != "1 (initial 1)\n" {
		t.Errorf("get weight: %q", out)
	}

	// Adding a server refreshes the names.
	if out := p.run("add server web/s3 127.0.0.1:1"); out != "New server registered.\n" {
		t.Fatalf("add server: %q", out)
	}
	p.typeText("get weight web/s")
	p.keys("Tab", "Tab")
	p.waitFor("web/s1  web/s2  web/s3")
	p.keys("C-c")

	// Backend names, and the values of set server's options.
	p.typeText("show servers state a")
	p.keys("Tab")
	p.waitFor("gohactl> show servers state api ")
	p.keys("C-c")
	p.typeText("set server web/s1 sta")
	p.keys("Tab")
	p.waitFor("gohactl> set server web/s1 state ")
	p.typeText("dr")
	p.keys("Tab")
	p.waitFor("gohactl> set server web/s1 state drain ")
	p.keys("Enter")
	p.output("set server web/s1 state drain ")
	if out := p.run("show servers state web | where srv_name=s1 | cols srv_admin_state"); out != "srv_admin_state\n              8\n" {
		t.Errorf("after drain: %q", out)
	}
}

func TestShellHistory(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	home := t.TempDir()
	p := newPane(t, home, "-S", h.sock)
	p.run("show version")
	p.run("get weight web/s1")
	p.keys("C-d")
	eventually(t, 5*time.Second, "the shell to exit on Ctrl-D", func() bool {
		done, status := p.exited()
		return done && status == "0"
	})

	b, err := os.ReadFile(filepath.Join(home, "state", "gohactl", "history"))
	if err != nil || string(b) != "show version\nget weight web/s1\n" {
		t.Fatalf("history file: %q, %v", b, err)
	}
	p = newPane(t, home, "-S", h.sock)
	p.keys("Up")
	p.waitFor("gohactl> get weight web/s1")
	p.keys("Up")
	p.waitFor("gohactl> show version")
	p.keys("Enter")
	if out := p.output("show version"); !strings.HasPrefix(out, "2.") {
		t.Errorf("recalled command: %q", out)
	}
}

func TestShellQuotingPayloadTables(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	p := newPane(t, t.TempDir(), "-S", h.sock)

	if out := p.run("add map " + h.mapf + ` 'key with space' "v;1"`); out != "" {
		t.Errorf("add map: %q", out)
	}
	// Ctrl-C abandons the line being typed.
	p.typeText("add map " + h.mapf + " abandoned line")
	p.keys("C-c")
	p.typeText("add map " + h.mapf + " <<")
	p.keys("Enter")
	p.waitFor("+ ")
	p.typeText("pk1 pv1")
	p.keys("Enter")
	p.typeText("pk2 pv2")
	p.keys("Enter", "Enter")
	p.waitFor("+ pk2 pv2")
	out := p.run("show map " + h.mapf)
	for _, want := range []string{" key with space v;1\n", " pk1 pv1\n", " pk2 pv2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show map lacks %q: %q", want, out)
		}
	}
	if strings.Contains(out, "abandoned") {
		t.Errorf("the abandoned line was sent: %q", out)
	}

	// Column names complete from the command's own header.
	p.typeText("show stat | where svname=s1,a1 | cols pxname,sv")
	p.keys("Tab")
	p.waitFor("| cols pxname,svname")
	p.typeText(",status,wei")
	p.keys("Tab")
	p.waitFor("| cols pxname,svname,status,weight")
	p.keys("Enter")
	out = p.output("show stat | where svname=s1,a1 | cols pxname,svname,status,weight")
	want := "pxname  svname  status    weight\n" +
		"web     s1      no check       1\n" +
		"api     a1      no check       1\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	if out := p.run("get weight web/nosuch"); out != "No such server.\n" {
		t.Errorf("error reply: %q", out)
	}
	if out := p.run("show stat | where nosuch=1"); !strings.Contains(out, `no column "nosuch"`) {
		t.Errorf("bad column: %q", out)
	}
}

func TestShellWatch(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	home := t.TempDir()
	p := newPane(t, home, "-S", h.sock)
	p.typeText("watch 0.5 show stat | where svname=s2 | cols svname,weight")
	p.keys("Enter")
	p.waitFor("Every 500ms: show stat | where svname=s2 | cols svname,weight")
	p.waitFor("s2           1")

	if r := gohactl(t, home, "", nil, "-S", h.sock, "set", "weight", "web/s2", "42"); r.code != 0 {
		t.Fatalf("set weight: %+v", r)
	}
	// The new value is drawn in reverse video in the frame after the change.
	eventually(t, 5*time.Second, "the changed weight in reverse video", func() bool {
		s := p.capture(true)
		return strings.Contains(s, "\x1b[7m42")
	})
	p.keys("q")
	p.waitFor("gohactl> ")
	if out := p.run("get weight web/s2"); out != "42 (initial 1)\n" {
		t.Errorf("after watch: %q", out)
	}
}

func TestShellReconnect(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	p := newPane(t, t.TempDir(), "-S", h.sock)
	if out := p.run("set weight web/s1 3; get weight web/s1"); out != "3 (initial 1)\n" {
		t.Fatalf("before restart: %q", out)
	}
	h.restart()
	out := p.run("get weight web/s1")
	if !strings.Contains(out, "the server closed the connection") || !strings.HasSuffix(out, "1 (initial 1)\n") {
		t.Errorf("after restart: %q", out)
	}
	if out := p.run("show backend"); out != "# name\nweb\napi\n" {
		t.Errorf("next command: %q", out)
	}
	// With the server gone, a command fails clearly and the shell stays.
	h.stop()
	if out := p.run("show backend"); !strings.Contains(out, "cannot connect") {
		t.Errorf("server down: %q", out)
	}
	h.start(haproxyPath(t))
	if out := p.run("show backend"); out != "# name\nweb\napi\n" {
		t.Errorf("server back: %q", out)
	}
}

// Ctrl-C abandons a command that is waiting for its reply.
func TestShellInterrupt(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	p := newPane(t, t.TempDir(), "-S", h.sock)
	// "show events <ring> -w" waits for new events until the client types.
	p.typeText("show events buf0 -w")
	p.keys("Enter")
	p.waitFor("gohactl> show events buf0 -w\n")
	p.keys("C-c")
	p.waitFor("gohactl: interrupted (the next command reconnects)")
	if out := p.run("show backend"); out != "# name\nweb\napi\n" {
		t.Errorf("after interrupt: %q", out)
	}
}

// watch as a one-shot command, across a restart of the server.
func TestOneShotWatch(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	p := startPane(t, t.TempDir(), "-S", h.sock, "-t", "1s", "watch", "0.2", "show servers state | cols be_name,srv_name,srv_uweight")
	p.waitFor("Every 200ms: show servers state | cols be_name,srv_name,srv_uweight")
	p.waitFor("api      a1                  1")
	h.stop()
	p.waitFor("gohactl: cannot connect to " + h.sock)
	h.start(haproxyPath(t))
	p.waitFor("api      a1                  1")
	p.keys("x")
	eventually(t, 5*time.Second, "watch to stop on a key", func() bool {
		done, status := p.exited()
		return done && status == "0"
	})
}
