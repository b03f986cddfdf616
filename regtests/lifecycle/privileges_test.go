//go:build regtest

package lifecycle

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// identity is what /proc says of a process's credentials and root
// directory.
type identity struct {
	uid, gid string // real, effective, saved and file-system ids
	root     string
}

func procIdentity(t *testing.T, pid int) identity {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var id identity
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			id.uid = strings.Join(strings.Fields(v), " ")
		}
		if v, ok := strings.CutPrefix(line, "Gid:"); ok {
			id.gid = strings.Join(strings.Fields(v), " ")
		}
	}
	if id.root, err = os.Readlink(fmt.Sprintf("/proc/%d/root", pid)); err != nil {
		t.Fatal(err)
	}
	return id
}

// workerPID reads the current worker's pid in show proc.
func workerPID(out string) int {
	_, ws, ok := strings.Cut(out, "# workers\n")
	if !ok {
		return 0
	}
	f := strings.Fields(ws)
	if len(f) < 2 || f[1] != "worker" {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// TestMasterPrivileges: under a master, with user, group and chroot in
// global, the master keeps root and its own root directory, and every
// worker, the first and those of reloads, runs as the user and group in
// the chroot, having bound its sockets (or taken them from the previous
// worker) before. HAProxy 2.6 runs the same configuration the same way.
func TestMasterPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	g, err := user.LookupGroup("nogroup")
	if err != nil {
		t.Skip("no group nogroup")
	}
	want := identity{
		uid: strings.Repeat(u.Uid+" ", 3) + u.Uid,
		gid: strings.Repeat(g.Gid+" ", 3) + g.Gid,
	}
	for _, prog := range []string{"goha", "haproxy"} {
		t.Run(prog, func(t *testing.T) {
			path := bin.Path(t, "goha")
			if prog == "haproxy" {
				path = bin.HAProxy(t)
			}
			dir := t.TempDir()
			jail := filepath.Join(dir, "jail")
			if err := os.Mkdir(jail, 0o755); err != nil {
				t.Fatal(err)
			}
			// The test's directory is root's: the user must be able to
			// reach the jail through it.
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			want := want
			want.root = jail
			port := harness.FreePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			global := fmt.Sprintf("    user nobody\n    group nogroup\n    chroot %s\n", jail)
			write := func(body string) {
				if err := os.WriteFile(filepath.Join(dir, "reload.cfg"), []byte(config(dir, port, body, global)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("one")
			args := []string{"-W", "-S", filepath.Join(dir, "master.sock"), "-f", filepath.Join(dir, "reload.cfg")}
			m := harness.StartArgs(t, path, args, "")
			waitBody(t, addr, "one")
			harness.WaitCLI(t, filepath.Join(dir, "master.sock"))
			t.Cleanup(func() {
				if t.Failed() {
					t.Log(m.Output())
				}
			})
			if got, root := procIdentity(t, m.PID()), (identity{uid: "0 0 0 0", gid: "0 0 0 0", root: "/"}); got != root {
				t.Errorf("master: %+v, want %+v", got, root)
			}
			first := workerPID(showProc(t, dir))
			if got := procIdentity(t, first); got != want {
				t.Errorf("first worker %d: %+v, want %+v", first, got, want)
			}
			for i, body := range []string{"two", "three"} {
				write(body)
				if i == 0 {
					m.Signal(syscall.SIGUSR2)
				} else {
					harness.MustSocket(t, filepath.Join(dir, "master.sock"), "reload")
				}
				waitBody(t, addr, body)
				// HAProxy's master executes itself again on a reload: its
				// CLI refuses connections for a moment.
				var pid int
				harness.Eventually(t, "a new worker in show proc", func() bool {
					out, err := harness.Socket(filepath.Join(dir, "master.sock"), "show proc")
					pid = workerPID(out)
					return err == nil && pid != 0 && pid != first
				})
				first = pid
				if got := procIdentity(t, pid); got != want {
					t.Errorf("worker %d after reload %d: %+v, want %+v", pid, i+1, got, want)
				}
			}
			// The stats socket the workers bound as root answers the
			// worker that left root.
			if out := harness.MustSocket(t, filepath.Join(dir, "stats.sock"), "show info"); !strings.Contains(out, "\nPid: ") {
				t.Errorf("show info:\n%s", out)
			}
		})
	}
}
