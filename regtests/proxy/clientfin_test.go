package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestClientFINWithPartialHead: a client that sends part of a request head
// and shuts down its side in the same breath is a client abort. The proxy
// closes at once and logs CR; it must not sit out the http-request timeout
// and answer 408 (the FIN arrives with the data, so a reader that takes
// the data and then waits for new readiness misses it). HAProxy sends a
// 400 to the half-closed client before it closes; goha closes without one.
func TestClientFINWithPartialHead(t *testing.T) {
	origin := harness.TCPServer(t, func(c net.Conn) {
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	for name, prog := range proxies(t) {
		t.Run(name, func(t *testing.T) {
			logs, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer logs.Close()
			cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout http-request 3s
frontend fe
    bind "fd@${fe}"
    log %s format raw local0
    option dontlognull
    log-format "fin %%ST %%ts"
    default_backend be
backend be
    server s1 %s
`, logs.LocalAddr(), origin)
			p := harness.Start(t, prog, cfg, "fe")
			for _, head := range []string{
				"GET / HT",
				"GET / HTTP/1.1\r\nHost: x\r\n",
			} {
				c, err := net.Dial("tcp", p.Addrs["fe"])
				if err != nil {
					t.Fatal(err)
				}
				// A first request and its response leave the proxy
				// waiting for the next one, which is when one readiness
				// for the data and the FIN together could be missed.
				io.WriteString(c, "GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				first, _, err := harness.ReadResponse(br, "GET")
				if err != nil || first.StatusCode != 200 {
					t.Fatalf("first request: %v %v", first, err)
				}
				if line := finLog(t, logs); line != "fin 200 --" {
					t.Fatalf("first request: log %q", line)
				}
				// The head and the FIN in one segment: corked, the
				// data waits for the shutdown, which marks its FIN.
				tc := c.(*net.TCPConn)
				rc, err := tc.SyscallConn()
				if err != nil {
					t.Fatal(err)
				}
				rc.Control(func(fd uintptr) {
					err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1)
				})
				if err != nil {
					t.Fatal(err)
				}
				io.WriteString(c, head)
				tc.CloseWrite()
				c.SetReadDeadline(time.Now().Add(20 * time.Second))
				got, err := io.ReadAll(br)
				c.Close()
				if err != nil {
					t.Fatalf("%q: the proxy did not close: %v", head, err)
				}
				if len(got) != 0 && !strings.HasPrefix(string(got), "HTTP/1.1 400 ") {
					t.Errorf("%q: the proxy answered %q, want nothing or a 400", head, got)
				}
				if line := finLog(t, logs); line != "fin 400 CR" && line != "fin -1 CR" {
					t.Errorf("%q: log %q, want termination state CR", head, line)
				}
			}
		})
	}
}

// finLog is the next access log line on logs.
func finLog(t *testing.T, logs net.PacketConn) string {
	t.Helper()
	buf := make([]byte, 2048)
	for {
		logs.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := logs.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no access log line: %v", err)
		}
		if line := strings.TrimSpace(string(buf[:n])); strings.HasPrefix(line, "fin ") {
			return line
		}
	}
}
