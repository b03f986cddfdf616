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

// programPIDs reads show proc's "# programs" lines: pid by name.
func programPIDs(out string) map[string]int {
	_, progs, _ := strings.Cut(out, "# programs\n")
	progs, _, _ = strings.Cut(progs, "# old programs\n")
	m := map[string]int{}
	for _, line := range strings.Split(progs, "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && f[4] == "-" {
			n, _ := strconv.Atoi(f[0])
			m[f[1]] = n
		}
	}
	return m
}

// TestMasterPrograms: a master starts the program sections' commands
// (show proc lists them under "# programs", with the user asked for);
// a reload starts a program with start-on-reload anew and stops the old
// instance, and leaves one with `no option start-on-reload` running.
// HAProxy 2.6 does the same on the same configuration, except for the
// last.
func TestMasterPrograms(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	for _, prog := range []string{"goha", "haproxy"} {
		t.Run(prog, func(t *testing.T) {
			path := bin.Path(t, "goha")
			if prog == "haproxy" {
				path = bin.HAProxy(t)
			}
			dir := t.TempDir()
			port := harness.FreePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			extra := `
program again
    command sleep 300

program kept
    command sleep 301
    user nobody
    no option start-on-reload
`
			write := func(body string) {
				if err := os.WriteFile(filepath.Join(dir, "reload.cfg"), []byte(config(dir, port, body, "")+extra), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("one")
			msock := filepath.Join(dir, "master.sock")
			m := harness.StartArgs(t, path, []string{"-W", "-S", msock, "-f", filepath.Join(dir, "reload.cfg")}, "")
			t.Cleanup(func() {
				if t.Failed() {
					t.Log(m.Output())
				}
			})
			waitBody(t, addr, "one")
			var before map[string]int
			harness.Eventually(t, "two programs in show proc", func() bool {
				out, err := harness.Socket(msock, "show proc")
				before = programPIDs(out)
				return err == nil && before["again"] > 0 && before["kept"] > 0
			})
			if got := procIdentity(t, before["kept"]).uid; got != strings.Repeat(nobody.Uid+" ", 3)+nobody.Uid {
				t.Errorf("program kept runs as uids %s", got)
			}
			if got := procIdentity(t, before["again"]).uid; got != "0 0 0 0" {
				t.Errorf("program again runs as uids %s", got)
			}
			write("two")
			m.Signal(syscall.SIGUSR2)
			waitBody(t, addr, "two")
			var after map[string]int
			harness.Eventually(t, "a new instance of again", func() bool {
				out, err := harness.Socket(msock, "show proc")
				after = programPIDs(out)
				return err == nil && after["again"] > 0 && after["again"] != before["again"]
			})
			// HAProxy 2.6.12 stops the kept program too (its new worker
			// sends SIGUSR1 to every pid of -sf, programs included) and
			// does not start it again; goha keeps it running, as the
			// option says (docs/operations.md).
			if prog == "goha" && after["kept"] != before["kept"] {
				t.Errorf("kept was started again: pid %d, was %d", after["kept"], before["kept"])
			}
			harness.Eventually(t, "the old instance of again to leave", func() bool {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", before["again"]))
				// A zombie until the master reaps it counts as gone.
				return err != nil || strings.Contains(string(b), ") Z ")
			})
		})
	}
}
