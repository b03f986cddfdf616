package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestShutdownSessionsServer: "shutdown sessions server" closes the client
// connections of every stream the server serves, in tcp and http mode,
// and leaves the other server's streams alone.
func TestShutdownSessionsServer(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		t.Skip("socat is not installed")
	}
	echo := func() string {
		return harness.TCPServer(t, func(c net.Conn) { defer c.Close(); io.Copy(c, c) })
	}
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	slow := harness.NewOrigin(t, "slow", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-hold:
			case <-time.After(5 * time.Second):
			}
		}
		io.WriteString(w, "done")
	})
	e1, e2 := echo(), echo()
	for name, prog := range proxies(t) {
		t.Run(name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "stats.sock")
			logs, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer logs.Close()
			cfg := fmt.Sprintf(`
global
    stats socket %s level admin
defaults
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend tcpfe
    mode tcp
    bind "fd@${tcpfe}"
    default_backend tcpbe
backend tcpbe
    mode tcp
    balance roundrobin
    server s1 %s
    server s2 %s
frontend httpfe
    mode http
    bind "fd@${httpfe}"
    log %s format raw local0
    option httplog
    default_backend httpbe
backend httpbe
    mode http
    server h1 %s
`, sock, e1, e2, logs.LocalAddr(), slow.Addr)
			p := harness.Start(t, prog, cfg, "tcpfe", "httpfe")
			// Four tcp streams, two on each server (round robin), each
			// proven established by an echo.
			var conns []net.Conn
			for i := 0; i < 4; i++ {
				c, err := net.Dial("tcp", p.Addrs["tcpfe"])
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				fmt.Fprintf(c, "ping%d\n", i)
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l != fmt.Sprintf("ping%d\n", i) {
					t.Fatalf("tcp stream %d: %q %v", i, l, err)
				}
				conns = append(conns, c)
			}
			// One http request waiting for the slow server.
			hc, err := net.Dial("tcp", p.Addrs["httpfe"])
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Close()
			io.WriteString(hc, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
			waitScur(t, sock, "httpbe", "h1", 1)

			harness.MustSocket(t, sock, "shutdown sessions server tcpbe/s1")
			harness.MustSocket(t, sock, "shutdown sessions server httpbe/h1")
			closed := func(c net.Conn) bool {
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				_, err := c.Read(make([]byte, 64))
				return err != nil && !isNetTimeout(err)
			}
			for i, c := range conns {
				want := i%2 == 0 // streams 0 and 2 went to s1
				if want {
					if !closed(c) {
						t.Errorf("tcp stream %d on s1 still open after shutdown sessions server", i)
					}
					continue
				}
				fmt.Fprintf(c, "again%d\n", i)
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l != fmt.Sprintf("again%d\n", i) {
					t.Errorf("tcp stream %d on s2 was disturbed: %q %v", i, l, err)
				}
			}
			// The http exchange is cut on its server side: the client
			// gets a 502 and its connection goes on.
			br := bufio.NewReader(hc)
			hc.SetReadDeadline(time.Now().Add(3 * time.Second))
			resp, _, err := harness.ReadResponse(br, "GET")
			if err != nil || resp.StatusCode != 502 {
				t.Fatalf("killed http exchange: %v %v, want a 502", resp, err)
			}
			io.WriteString(hc, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, body, err := harness.ReadResponse(br, "GET")
			if err != nil || resp.StatusCode != 200 || body != "done" {
				t.Fatalf("next request on the same connection: %v %q %v, want 200", resp, body, err)
			}
			// Logged as killed while waiting for the response head: no
			// Tr, a 502, KH.
			buf := make([]byte, 2048)
			logs.SetReadDeadline(time.Now().Add(3 * time.Second))
			n, _, err := logs.ReadFrom(buf)
			killedLog := regexp.MustCompile(` httpfe httpbe/h1 \d+/\d+/\d+/-1/\d+ 502 \d+ - - KH-- .* "GET /slow HTTP/1.1"`)
			if err != nil || !killedLog.Match(buf[:n]) {
				t.Errorf("killed exchange logged %q (%v), want a match for %s", buf[:n], err, killedLog)
			}
			if f := statFields(t, sock, "httpbe", "h1"); f[14] != "1" {
				t.Errorf("httpbe/h1 eresp %s, want 1 (the killed exchange)", f[14])
			}
			waitScur(t, sock, "tcpbe", "s1", 0)
		})
	}
}

func isNetTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// statFields returns show stat's fields for be/srv.
func statFields(t *testing.T, sock, be, srv string) []string {
	t.Helper()
	for _, l := range strings.Split(harness.MustSocket(t, sock, "show stat"), "\n") {
		f := strings.Split(l, ",")
		if len(f) > 20 && f[0] == be && f[1] == srv {
			return f
		}
	}
	t.Fatalf("show stat has no %s/%s", be, srv)
	return nil
}

// waitScur waits until show stat gives server be/srv want current sessions.
func waitScur(t *testing.T, sock, be, srv string, want int) {
	t.Helper()
	harness.WaitScur(t, sock, be, srv, want)
}
