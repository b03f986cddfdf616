//go:build regtest

package proxy

import (
	"net"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// TestTCPUseBackend: use_backend rules choose a tcp frontend's backend, as
// in HAProxy 2.6: an unconditional one, one on the client's address, and
// one on an HTTP criterion, which never matches a tcp stream.
func TestTCPUseBackend(t *testing.T) {
	haproxy := bin.HAProxy(t)
	goha := bin.Path(t, "goha")
	// Each backend's server names itself and closes.
	name := func(s string) string {
		return harness.TCPServer(t, func(c net.Conn) {
			c.Write([]byte(s))
			c.Close()
		})
	}
	a, b, d := name("a"), name("b"), name("default")
	cfg := `
defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend always
    bind "fd@${ALWAYS}"
    use_backend ba
    default_backend bd

frontend bysrc
    bind "fd@${BYSRC}"
    use_backend bb if { src 10.0.0.0/8 }
    use_backend ba if { src 127.0.0.0/8 }
    default_backend bd

frontend byhttp
    bind "fd@${BYHTTP}"
    use_backend ba if { path_beg / }
    default_backend bd

backend ba
    server s ` + a + `
backend bb
    server s ` + b + `
backend bd
    server s ` + d + `
`
	run := func(prog string) map[string]string {
		p := harness.Start(t, prog, cfg, "ALWAYS", "BYSRC", "BYHTTP")
		out := map[string]string{}
		for _, fe := range []string{"ALWAYS", "BYSRC", "BYHTTP"} {
			harness.WaitListening(t, p.Addrs[fe], harness.Patience)
			c, err := net.DialTimeout("tcp", p.Addrs[fe], 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			var sb strings.Builder
			buf := make([]byte, 64)
			for {
				n, err := c.Read(buf)
				sb.Write(buf[:n])
				if err != nil {
					break
				}
			}
			c.Close()
			out[fe] = sb.String()
		}
		return out
	}
	want, got := run(haproxy), run(goha)
	if want["ALWAYS"] != "a" || want["BYSRC"] != "a" || want["BYHTTP"] != "default" {
		t.Fatalf("HAProxy chose %v, not what this test expects", want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: goha reached %q, HAProxy %q", k, got[k], w)
		}
	}
}
