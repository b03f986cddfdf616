//go:build regtest

package proxy

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// upInterface returns an interface other than loopback that is up, or "".
func upInterface() string {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			return i.Name
		}
	}
	return ""
}

// TestBindSocketOptions runs the bind parameters that shape the listening
// socket on goha and HAProxy: v6only keeps IPv4 clients off an IPv6
// wildcard, interface ties a socket to a device (a loopback client cannot
// reach a socket tied to another one), and mode, uid and gid set a unix
// socket's permissions and owner.
func TestBindSocketOptions(t *testing.T) {
	if ln, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback:", err)
	} else {
		ln.Close()
	}
	dev := upInterface()
	if dev == "" {
		t.Skip("no network interface besides loopback")
	}
	for name, prog := range map[string]string{"goha": bin.Path(t, "goha"), "haproxy": bin.HAProxy(t)} {
		t.Run(name, func(t *testing.T) {
			v6only, dual, tied, lo := harness.FreePort(t), harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
			cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind [::]:%d v6only
    bind [::]:%d v4v6
    bind 0.0.0.0:%d interface %s
    bind 127.0.0.1:%d interface lo
    bind unix@${TMP}/fe.sock mode 640 uid 1 gid 2
    http-request return status 200 content-type text/plain string ok
`, v6only, dual, tied, dev, lo)
			h := harness.Start(t, prog, cfg)
			harness.WaitListening(t, fmt.Sprintf("127.0.0.1:%d", lo), harness.Patience)
			reach := func(addr string) bool {
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err == nil {
					c.Close()
				}
				return err == nil
			}
			for addr, want := range map[string]bool{
				fmt.Sprintf("[::1]:%d", v6only):     true,
				fmt.Sprintf("127.0.0.1:%d", v6only): false,
				fmt.Sprintf("127.0.0.1:%d", dual):   true,
				fmt.Sprintf("127.0.0.1:%d", tied):   false,
			} {
				if got := reach(addr); got != want {
					t.Errorf("%s reachable: %v, want %v\n%s", addr, got, want, h.Output())
				}
			}
			fi, err := os.Stat(filepath.Join(h.Dir, "fe.sock"))
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if fi.Mode().Perm() != 0o640 || st.Uid != 1 || st.Gid != 2 {
				t.Errorf("fe.sock: mode %o uid %d gid %d, want 640 1 2", fi.Mode().Perm(), st.Uid, st.Gid)
			}
			h.Stop()
		})
	}
}
