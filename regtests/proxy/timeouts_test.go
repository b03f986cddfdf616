package proxy

import (
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// TestTCPTimeouts: each of timeout client, tunnel, client-fin and
// server-fin ends its side of an idle tcp stream after its 300 ms, not at
// once and not at the 10 s timeouts around it; timeout connect ends a
// connection attempt to a server that never answers the SYN with 503.
// Run on goha and, when installed, HAProxy. (The lower bound is loose:
// the test's clock starts a scheduling delay after the proxy's may.)
func TestTCPTimeouts(t *testing.T) {
	cases := []struct {
		name     string
		timeouts string
		// clientFin: the client shuts its sending side once the stream
		// is up; serverFin: the server does.
		clientFin, serverFin bool
		// watchServer: the timeout shows as the end of the server's
		// reads; otherwise as the end of the client's.
		watchServer bool
	}{
		// Both sides idle: the client side's timeout shuts the stream
		// toward the server.
		{name: "timeout client", timeouts: "timeout client 300ms\n    timeout server 10s", watchServer: true},
		{name: "timeout tunnel", timeouts: "timeout client 10s\n    timeout server 10s\n    timeout tunnel 300ms"},
		// The server has closed its side: how long the client may
		// keep its own side open.
		{name: "timeout client-fin", timeouts: "timeout client 10s\n    timeout server 10s\n    timeout client-fin 300ms", serverFin: true, watchServer: true},
		// The client has closed its side: how long the server may.
		{name: "timeout server-fin", timeouts: "timeout client 10s\n    timeout server 10s\n    timeout server-fin 300ms", clientFin: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for name, prog := range proxies(t) {
				done := make(chan struct{})
				// The server reports when the proxy ended its side of
				// the stream (its reads see the end), holding the
				// connection open until the test ends.
				srvEnd := make(chan time.Time, 1)
				up := make(chan struct{}, 1)
				srv := harness.TCPServer(t, func(c net.Conn) {
					defer c.Close()
					up <- struct{}{}
					// One byte echoed back shows the client that the
					// proxy holds an established stream on both sides;
					// only then may a FIN start the timeout being
					// measured.
					b := make([]byte, 1)
					c.SetDeadline(time.Now().Add(8 * time.Second))
					if _, err := io.ReadFull(c, b); err != nil {
						return
					}
					if _, err := c.Write(b); err != nil {
						return
					}
					if tc.serverFin {
						c.(*net.TCPConn).CloseWrite()
					}
					c.SetReadDeadline(time.Now().Add(8 * time.Second))
					io.Copy(io.Discard, c)
					srvEnd <- time.Now()
					<-done
				})
				p := harness.Start(t, prog, fmt.Sprintf(`
defaults
    mode tcp
    timeout connect 1s
    %s
listen li
    bind "fd@${fe}"
    server s1 %s
`, tc.timeouts, srv), "fe")
				c, err := net.Dial("tcp", p.Addrs["fe"])
				if err != nil {
					t.Fatal(err)
				}
				select {
				case <-up:
				case <-time.After(5 * time.Second):
					t.Fatalf("%s: no connection reached the server", name)
				}
				c.SetDeadline(time.Now().Add(8 * time.Second))
				b := []byte{'e'}
				if _, err := c.Write(b); err != nil {
					t.Fatalf("%s: write: %v", name, err)
				}
				if _, err := io.ReadFull(c, b); err != nil || b[0] != 'e' {
					t.Fatalf("%s: no echo through the proxy: %q, %v", name, b, err)
				}
				if tc.serverFin {
					// The server's FIN has crossed the proxy: from here
					// on only the client's side is open.
					if n, err := c.Read(b); n != 0 || err != io.EOF {
						t.Fatalf("%s: want the server's FIN, got %d bytes, %v", name, n, err)
					}
				}
				begin := time.Now()
				var end time.Time
				if tc.clientFin {
					c.(*net.TCPConn).CloseWrite()
				}
				if tc.watchServer {
					select {
					case end = <-srvEnd:
					case <-time.After(9 * time.Second):
					}
				} else {
					c.SetReadDeadline(time.Now().Add(8 * time.Second))
					if _, err := io.Copy(io.Discard, c); err == nil {
						end = time.Now()
					}
				}
				c.Close()
				close(done)
				if end.IsZero() {
					t.Errorf("%s: stream not ended by %s", name, tc.name)
				} else if waited := end.Sub(begin); waited < 150*time.Millisecond || waited > 5*time.Second {
					t.Errorf("%s: stream ended after %v by %s (300ms)", name, waited, tc.name)
				}
				p.Stop()
			}
		})
	}

	// Inactivity, not age: a stream with traffic every 150 ms outlives a
	// 600 ms timeout client and timeout server several times over.
	t.Run("active stream", func(t *testing.T) {
		for name, prog := range proxies(t) {
			srv := harness.TCPServer(t, func(c net.Conn) {
				defer c.Close()
				io.Copy(c, c)
			})
			p := harness.Start(t, prog, fmt.Sprintf(`
defaults
    mode tcp
    timeout connect 1s
    timeout client 600ms
    timeout server 600ms
listen li
    bind "fd@${fe}"
    server s1 %s
`, srv), "fe")
			c, err := net.Dial("tcp", p.Addrs["fe"])
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			for i := 0; i < 16; i++ {
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write([]byte{byte('a' + i)}); err != nil {
					t.Fatalf("%s: write %d: %v", name, i, err)
				}
				if _, err := io.ReadFull(c, b); err != nil || b[0] != byte('a'+i) {
					t.Fatalf("%s: echo %d after %d ms of traffic: %q, %v", name, i, i*150, b, err)
				}
				time.Sleep(150 * time.Millisecond)
			}
			c.Close()
			p.Stop()
		}
	})

	t.Run("timeout connect", func(t *testing.T) {
		addr := unansweredAddr(t)
		for name, prog := range proxies(t) {
			p := harness.Start(t, prog, fmt.Sprintf(`
defaults
    mode http
    retries 0
    timeout connect 300ms
    timeout client 10s
    timeout server 10s
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s
`, addr), "fe")
			begin := time.Now()
			out := harness.RawRequest(t, p.Addrs["fe"], "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 8*time.Second)
			waited := time.Since(begin)
			if !strings.HasPrefix(out, "HTTP/1.1 503 ") {
				t.Errorf("%s: %q, want a 503", name, firstLine(out))
			}
			if waited < 150*time.Millisecond || waited > 5*time.Second {
				t.Errorf("%s: answered after %v, timeout connect is 300ms", name, waited)
			}
			p.Stop()
		}
	})
}

// unansweredAddr returns the address of a listening socket whose accept
// queue is full and never drained: the kernel drops further SYNs, so a
// connection attempt to it lasts until the connecting side gives up.
func unansweredAddr(t *testing.T) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	// Fill the queue: the first connections complete, the next ones hang.
	for i := 0; i < 4; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		t.Skip("the kernel accepted a connection on a full queue")
	}
	return addr
}
