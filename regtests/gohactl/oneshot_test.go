package gohactl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOneShot(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	home := t.TempDir()

	r := gohactl(t, home, "", nil, "-S", h.sock, "show", "backend")
	if r.code != 0 || r.stdout != "# name\nweb\napi\n" || r.stderr != "" {
		t.Errorf("show backend: %+v", r)
	}
	// An error reply: the severity prefix is gone, the status is 1.
	r = gohactl(t, home, "", nil, "-S", h.sock, "get", "weight", "web/nosuch")
	if r.code != 1 || r.stderr != "No such server.\n" || r.stdout != "" {
		t.Errorf("error reply: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "frobnicate")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "Unknown command") {
		t.Errorf("unknown command: %+v", r)
	}
	// A message that is not an error keeps status 0.
	r = gohactl(t, home, "", nil, "-S", h.sock, "show version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "2.") || strings.HasPrefix(r.stdout, "[") {
		t.Errorf("show version: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "set", "weight", "web/s2", "7")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("set weight: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "get weight web/s2")
	if r.code != 0 || r.stdout != "7 (initial 1)\n" {
		t.Errorf("get weight: %+v", r)
	}

	// Words with blanks and semicolons reach the server whole: each
	// argument is one word, and a single argument is parsed like a shell line.
	r = gohactl(t, home, "", nil, "-S", h.sock, "add", "map", h.mapf, "key with space", "v;1")
	if r.code != 0 {
		t.Errorf("add map: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "add map "+h.mapf+` "second key" 'v 2;'`)
	if r.code != 0 {
		t.Errorf("add map quoted: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "show", "map", h.mapf)
	if !strings.Contains(r.stdout, " key with space v;1\n") || !strings.Contains(r.stdout, " second key v 2;\n") {
		t.Errorf("map after quoted adds: %+v", r)
	}
	// A payload comes from standard input.
	r = gohactl(t, home, "k1 v1\nk2 v2\n", nil, "-S", h.sock, "add", "map", h.mapf, "<<")
	if r.code != 0 {
		t.Errorf("payload: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "show", "map", h.mapf)
	if !strings.Contains(r.stdout, " k1 v1\n") || !strings.Contains(r.stdout, " k2 v2\n") {
		t.Errorf("map after payload: %+v", r)
	}

	// Tables.
	r = gohactl(t, home, "", nil, "-S", h.sock, "show stat | where svname=s* | cols pxname,svname,status,weight")
	want := "pxname  svname  status    weight\n" +
		"web     s1      no check       1\n" +
		"web     s2      no check       7\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("table:\n%s\nwant:\n%s\n%+v", r.stdout, want, r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "show", "servers", "state", "api", "|", "cols", "be_name,srv_name,srv_uweight")
	if r.code != 0 || r.stdout != "be_name  srv_name  srv_uweight\napi      a1                  1\n" {
		t.Errorf("servers state table: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "watch", "1", "show info")
	if r.code != 2 || !strings.Contains(r.stderr, "watch needs a terminal") {
		t.Errorf("watch without a terminal: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", h.sock, "show info | cols x")
	if r.code != 2 || !strings.Contains(r.stderr, "not a table") {
		t.Errorf("show info as table: %+v", r)
	}
}

func TestSocketSelection(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	home := t.TempDir()
	r := gohactl(t, home, "", nil, "-f", h.cfg, "show", "backend")
	if r.code != 0 || !strings.Contains(r.stdout, "web") {
		t.Errorf("-f: %+v", r)
	}
	r = gohactl(t, home, "", []string{"GOHA_SOCKET=" + h.sock}, "show", "backend")
	if r.code != 0 || !strings.Contains(r.stdout, "web") {
		t.Errorf("GOHA_SOCKET: %+v", r)
	}
	// -S wins over the environment.
	r = gohactl(t, home, "", []string{"GOHA_SOCKET=/nonexistent"}, "-S", h.sock, "show", "backend")
	if r.code != 0 {
		t.Errorf("-S over GOHA_SOCKET: %+v", r)
	}
	r = gohactl(t, home, "", nil, "show", "backend")
	if r.code != 2 || !strings.Contains(r.stderr, "GOHA_SOCKET") {
		t.Errorf("no socket: %+v", r)
	}
	cfg := filepath.Join(t.TempDir(), "nosock.cfg")
	os.WriteFile(cfg, []byte("global\n  daemon\n"), 0o600)
	r = gohactl(t, home, "", nil, "-f", cfg, "show", "backend")
	if r.code != 2 || !strings.Contains(r.stderr, "stats socket") {
		t.Errorf("config without socket: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", filepath.Join(t.TempDir(), "none"), "show", "backend")
	if r.code != 3 || !strings.Contains(r.stderr, "cannot connect") {
		t.Errorf("nothing listening: %+v", r)
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	h := startHAProxy(t)
	home := t.TempDir()
	script := "show backend\n" +
		"set weight web/s1 5; get weight web/s1\n" +
		"\n" +
		"add map " + h.mapf + " <<\n" +
		"p1 v1\n" +
		"p2 v2\n" +
		"\n" +
		"show map " + h.mapf + " | grep p[12]\n"
	r := gohactl(t, home, script, nil, "-S", h.sock)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("script: %+v", r)
	}
	lines := strings.Split(r.stdout, "\n")
	if len(lines) != 7 || lines[0] != "# name" || lines[3] != "5 (initial 1)" ||
		!strings.HasSuffix(lines[4], " p1 v1") || !strings.HasSuffix(lines[5], " p2 v2") {
		t.Errorf("stdout: %q", r.stdout)
	}

	r = gohactl(t, home, "get weight web/nosuch\nshow backend\n", nil, "-S", h.sock)
	if r.code != 1 || r.stdout != "# name\nweb\napi\n" || r.stderr != "No such server.\n" {
		t.Errorf("a failing line: %+v", r)
	}
}
