package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// closingOrigin answers keep-alive requests on raw sockets and ends each
// connection the way servers end idle ones: after idle without a request
// (0: right after the first response), either with a plain close or with
// a lingering close (half-close, then read and drop whatever comes for a
// while, as Apache and nginx do). The body names the connection.
func closingOrigin(t *testing.T, idle time.Duration, linger bool) (string, *atomic.Int32) {
	var conns atomic.Int32
	addr := harness.TCPServer(t, func(c net.Conn) {
		id := conns.Add(1)
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			if idle > 0 {
				c.SetReadDeadline(time.Now().Add(idle))
			}
			req, err := http.ReadRequest(br)
			if err != nil {
				break
			}
			io.Copy(io.Discard, req.Body)
			body := fmt.Sprintf("conn%d", id)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			if idle == 0 {
				break
			}
		}
		if linger {
			c.(*net.TCPConn).CloseWrite()
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			io.Copy(io.Discard, c)
		}
	})
	return addr, &conns
}

// A pooled server connection that its server closed while idle is never
// answered from: the request goes to a new connection, whichever way the
// server closed, and long before the server timeout.
func TestPooledConnectionClosedByServer(t *testing.T) {
	cases := []struct {
		name   string
		idle   time.Duration
		linger bool
		wait   time.Duration // between the client's requests
	}{
		{"close after idle", 150 * time.Millisecond, false, 400 * time.Millisecond},
		{"lingering close after idle", 150 * time.Millisecond, true, 400 * time.Millisecond},
		{"close after each response", 0, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, conns := closingOrigin(t, tc.idle, tc.linger)
			cfg := `
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 3s
    retries 3
` + oneServer(addr)
			p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
			cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer cl.CloseIdleConnections()
			for i := 0; i < 6; i++ {
				if i > 0 {
					time.Sleep(tc.wait)
				}
				code, body := harness.Get(t, cl, p.Addrs["fe"], "/")
				if code != 200 || !strings.HasPrefix(body, "conn") {
					t.Fatalf("request %d: %d %q, want 200 from the origin\n%s", i, code, body, p.Output())
				}
			}
			if n := conns.Load(); n < 2 {
				t.Errorf("the origin saw %d connections; it closed each one, so goha had to open new ones", n)
			}
		})
	}
}
