//go:build regtest

package config

import (
	"goha/regtests/internal/harness"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"goha/regtests/internal/bin"
)

// TestCommandLineOptions: -C, -L and -n do on goha what they do on HAProxy
// 2.6, and the options goha cannot honour are refused, not ignored.
func TestCommandLineOptions(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	goha := bin.Path(t, "goha")
	dir := t.TempDir()
	peers := "peers p\n    peer node1 127.0.0.1:10000\n    peer node2 127.0.0.1:10001\n"
	if err := os.WriteFile(filepath.Join(dir, "peers.cfg"), []byte(peers), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(prog string, args ...string) string {
		cmd := exec.Command(prog, args...)
		cmd.Dir = t.TempDir() // not dir: -C must take goha there
		out, _ := cmd.CombinedOutput()
		var keep []string
		for _, l := range strings.Split(string(out), "\n") {
			if !strings.Contains(l, "[NOTICE]") && l != "" {
				_, msg, ok := strings.Cut(l, ") : ")
				if !ok {
					msg = l
				}
				keep = append(keep, msg)
			}
		}
		return strings.Join(keep, "\n")
	}
	for _, c := range []struct {
		args     []string
		peerOnly bool // the local peer is the only listener
	}{
		// -C: a relative -f is read from the directory -C names.
		{[]string{"-C", dir, "-c", "-f", "peers.cfg", "-L", "node1"}, true},
		// -L: the local peer's name; another name leaves the section
		// without one, which HAProxy warns about and drops.
		{[]string{"-C", dir, "-c", "-f", "peers.cfg", "-L", "other"}, false},
		{[]string{"-C", filepath.Join(dir, "nonexistent"), "-c", "-f", "peers.cfg"}, false},
	} {
		args := c.args
		g, h := run(goha, args...), run(haproxy, args...)
		if c.peerOnly {
			// goha has no peers yet: a configuration whose only
			// listener is a local peer does not start.
			g = strings.ReplaceAll(g, "Configuration file has no error but will not start (no listener) => exit(2).", "Configuration file is valid")
		}
		if g != h {
			t.Errorf("%q:\n goha    %q\n haproxy %q", args, g, h)
		}
	}
	if out := run(goha, "-m", "100", "-c", "-f", filepath.Join(dir, "peers.cfg")); !strings.Contains(out, "option '-m' is not supported by goha") {
		t.Errorf("-m: %q", out)
	}
}

// TestMaxConnFlag: -n is the process maxconn, over the global section's,
// as show info reports it on goha and on HAProxy.
func TestMaxConnFlag(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	for name, prog := range map[string]string{"goha": bin.Path(t, "goha"), "haproxy": haproxy} {
		dir := t.TempDir()
		sock := filepath.Join(dir, "s.sock")
		cfg := "global\n    maxconn 500\n    stats socket " + sock + " level admin\ndefaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\nbackend b\n    server s 127.0.0.1:1\n"
		path := filepath.Join(dir, "t.cfg")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(prog, "-db", "-n", "123", "-f", path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		harness.WaitCLI(t, sock)
		info := harness.MustSocket(t, sock, "show info")
		cmd.Process.Kill()
		cmd.Wait()
		if !strings.Contains(info, "\nMaxconn: 123\n") {
			t.Errorf("%s: show info has no Maxconn: 123:\n%s", name, info)
		}
	}
}
