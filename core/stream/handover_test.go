package stream

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
)

// TestAdoptListeners: a process given listening sockets (as -x receives
// them) listens on them rather than binding; the address is held by the
// adopted socket alone (Go's listener has no SO_REUSEPORT, so a bind of
// its own would fail), and the sockets no bind wants are closed.
func TestAdoptListeners(t *testing.T) {
	dir := t.TempDir()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	upath := filepath.Join(dir, "u.sock")
	ul, err := net.Listen("unix", upath)
	if err != nil {
		t.Fatal(err)
	}
	ul.(*net.UnixListener).SetUnlinkOnClose(false)
	var files []*os.File
	for _, l := range []net.Listener{tl, other, ul} {
		f, err := l.(interface{ File() (*os.File, error) }).File()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		l.Close()
	}
	otherFD := files[1]
	cfgText := fmt.Sprintf(`
defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s
frontend fe
    bind %s
    bind %s
    http-request return status 200 content-type text/plain string "adopted"
`, tl.Addr(), upath)
	d := &diag.Collector{}
	cfg := core.Build(config.Parse("unit.cfg", []byte(cfgText), config.Options{}, d), d)
	if d.HasAlert() {
		t.Fatalf("configuration: %v", d.All())
	}
	proc := New(cfg)
	proc.Adopt(files)
	if err := proc.Run(); err != nil {
		t.Fatal(err)
	}
	defer proc.Stop()
	if n := proc.AdoptedCount(); n != 2 {
		t.Fatalf("%d sockets adopted, want 2", n)
	}
	for _, nw := range [][2]string{{"tcp", tl.Addr().String()}, {"unix", upath}} {
		c, err := net.Dial(nw[0], nw[1])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET / HTTP/1.0\r\n\r\n")
		b := make([]byte, 4096)
		n, _ := c.Read(b)
		c.Close()
		if got := string(b[:n]); !strings.Contains(got, "adopted") {
			t.Fatalf("%s answered %q", nw[1], got)
		}
	}
	// The socket no bind wanted is closed.
	if _, err := otherFD.Stat(); err == nil {
		t.Fatal("the unwanted socket is still open")
	}
}

func TestUnixPathMatches(t *testing.T) {
	for _, c := range []struct {
		name, path string
		want       bool
	}{
		{"/run/a.sock", "/run/a.sock", true},
		{"/run/a.sock.1234.tmp", "/run/a.sock", true},
		{"/run/a.sock.tmp", "/run/a.sock", false},
		{"/run/a.sock.x.tmp", "/run/a.sock", false},
		{"/run/a.sockX", "/run/a.sock", false},
		{"/run/b.sock", "/run/a.sock", false},
	} {
		if got := unixPathMatches(c.name, c.path); got != c.want {
			t.Errorf("unixPathMatches(%q, %q) = %v", c.name, c.path, got)
		}
	}
}
