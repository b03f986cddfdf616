package gohactl

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"goha/regtests/internal/harness"
)

var (
	gohaOnce sync.Once
	gohaBin  string
	gohaErr  string
)

// gohaPath builds goha once; the test is skipped when goha does not build,
// since that is goha's failure to report, not gohactl's.
func gohaPath(t *testing.T) string {
	gohaOnce.Do(func() {
		dir := filepath.Dir(gohactlBin)
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "goha"), "goha/cmd/goha").CombinedOutput()
		if err != nil {
			gohaErr = fmt.Sprintf("goha does not build: %v: %s", err, out)
			return
		}
		gohaBin = filepath.Join(dir, "goha")
	})
	if gohaBin == "" {
		t.Skip(gohaErr)
	}
	return gohaBin
}

// The same commands against goha's stats socket, which speaks HAProxy's
// protocol.
func TestAgainstGoha(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds goha; skipped in -short mode")
	}
	bin := gohaPath(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	cfg := filepath.Join(dir, "goha.cfg")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`global
    stats socket %s level admin
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
    default_backend web
backend web
    server s1 127.0.0.1:1
    server s2 127.0.0.1:1
backend api
    server a1 127.0.0.1:1
`, sock, harness.FreePort(t))), 0o600)
	g := startProxy(t, bin, cfg, sock)
	home := t.TempDir()

	r := gohactl(t, home, "", nil, "-f", cfg, "show", "backend")
	if r.code != 0 || r.stdout != "# name\nweb\napi\n" {
		t.Errorf("show backend: %+v", r)
	}
	r = gohactl(t, home, "", nil, "-S", sock, "get", "weight", "web/nosuch")
	if r.code != 1 || r.stderr != "No such server.\n" {
		t.Errorf("error reply: %+v", r)
	}
	r = gohactl(t, home, "set weight web/s2 4\nshow stat | where svname=s* | cols pxname,svname,weight\n", nil, "-S", sock)
	want := "pxname  svname  weight\nweb     s1           1\nweb     s2           4\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("script and table: %+v", r)
	}

	p := newPane(t, home, "-S", sock)
	p.typeText("get weight w")
	p.keys("Tab", "Tab", "Tab")
	p.waitFor("web/s1  web/s2")
	p.typeText("2")
	p.keys("Enter")
	if out := p.output("get weight web/s2"); out != "4 (initial 1)\n" {
		t.Errorf("get weight: %q", out)
	}
	g.restart()
	if out := p.run("show backend"); !strings.Contains(out, "reconnecting") || !strings.HasSuffix(out, "# name\nweb\napi\n") {
		t.Errorf("after restart: %q", out)
	}
}
