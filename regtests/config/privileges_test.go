//go:build regtest

package config

import (
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestPrivilegesDropped runs the same configuration on goha and HAProxy:
// once its sockets are bound the serving process roots itself in `chroot`
// and runs as `user`/`group`, and it still serves traffic and its stats
// socket.
func TestPrivilegesDropped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to change identity")
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	grp, err := user.LookupGroupId(nobody.Gid)
	if err != nil {
		t.Skip("nobody's group has no name")
	}
	origin := harness.NewOrigin(t, "live", nil)
	cfg := `
global
    stats socket ${TMP}/s.sock level admin
    chroot ${TMP}
    user nobody
    group ` + grp.Name + `

defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${FE}"
    default_backend be

backend be
    server live ` + origin.Addr + `
`
	type view struct{ uid, gid, groups, root string }
	run := func(prog string) view {
		p := harness.Start(t, prog, cfg, "FE")
		sock := filepath.Join(p.Dir, "s.sock")
		harness.WaitCLI(t, sock)
		var v view
		// The identity changes after the stats socket answers: wait for it.
		harness.Eventually(t, prog+" running as nobody", func() bool {
			st, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID()) + "/status")
			if err != nil {
				return false
			}
			for _, l := range strings.Split(string(st), "\n") {
				k, val, _ := strings.Cut(l, ":")
				switch k {
				case "Uid":
					v.uid = strings.Join(strings.Fields(val), " ")
				case "Gid":
					v.gid = strings.Join(strings.Fields(val), " ")
				case "Groups":
					v.groups = strings.Join(strings.Fields(val), " ")
				}
			}
			return strings.HasPrefix(v.uid, nobody.Uid+" ")
		})
		v.root, _ = os.Readlink("/proc/" + strconv.Itoa(p.PID()) + "/root")
		if v.root != p.Dir {
			t.Errorf("%s: root directory %q, want %q", prog, v.root, p.Dir)
		}
		want := strings.Repeat(nobody.Uid+" ", 3) + nobody.Uid
		if v.uid != want || v.gid != strings.TrimSpace(strings.Repeat(grp.Gid+" ", 4)) {
			t.Errorf("%s: uid %q gid %q, want all %s and %s", prog, v.uid, v.gid, nobody.Uid, grp.Gid)
		}
		if code, body := harness.Get(t, &http.Client{Timeout: 5 * time.Second}, p.Addrs["FE"], "/"); code != 200 || body != "live\n" {
			t.Errorf("%s: after the drop got %d %q, want 200 from live", prog, code, body)
		}
		if out := harness.MustSocket(t, sock, "show info"); !strings.Contains(out, "Pid: "+strconv.Itoa(p.PID())) {
			t.Errorf("%s: stats socket after the drop: %q", prog, out)
		}
		return v
	}
	g, h := run(bin.Path(t, "goha")), run(haproxy)
	if g.uid != h.uid || g.gid != h.gid || g.groups != h.groups {
		t.Errorf("identity differs:\n goha    %+v\n haproxy %+v", g, h)
	}
}
