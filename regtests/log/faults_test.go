//go:build regtest

package log

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// A fault case: a listen section of its own (so that its counters are its
// own), the server behind it, and what the client does.
type faultCase struct {
	name    string
	mode    string
	retries int
	extra   string // more lines for the section
	// When a proxy sees the client's reset depends on when it next
	// writes: goha's timers are only bounded by HAProxy's.
	looseTimers bool
	server      func(t *testing.T) string // the server's address
	client      func(c net.Conn) string   // what the client saw
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// resetConn closes c with an RST.
func resetConn(c net.Conn) {
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
}

// clientEnd reads c until it ends and says how: "eof", "rst" or
// "timeout", after what it read.
func clientEnd(c net.Conn) string {
	c.SetReadDeadline(time.Now().Add(4 * time.Second))
	b, err := io.ReadAll(c)
	end := "eof"
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		end = "rst"
	case isTimeout(err):
		end = "timeout"
	case err != nil:
		end = err.Error()
	}
	status := ""
	if f := strings.Fields(string(b)); len(f) > 1 && strings.HasPrefix(f[0], "HTTP/") {
		status = f[1] + " "
	}
	return fmt.Sprintf("%s%d bytes, %s", status, len(b), end)
}

// refusedAddr is where nothing listens: port 1, privileged, so that no
// other test on the machine can take it meanwhile, as a port freed
// after a listen could be.
func refusedAddr(t *testing.T) string { return "127.0.0.1:1" }

// httpHead reads a request head off c.
func httpHead(c net.Conn) {
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for !strings.Contains(string(buf), "\r\n\r\n") {
		n, err := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			return
		}
	}
}

// cutBody answers 200 with a 1000-byte body of which it sends 10 bytes,
// then, after 200 ms, resets (rst) or closes.
func cutBody(rst bool) func(t *testing.T) string {
	return func(t *testing.T) string {
		return harness.TCPServer(t, func(c net.Conn) {
			httpHead(c)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
			time.Sleep(200 * time.Millisecond)
			if rst {
				resetConn(c)
			} else {
				c.Close()
			}
		})
	}
}

func get(c net.Conn) string {
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	return clientEnd(c)
}

var faultCases = []faultCase{
	{name: "http-server-reset-mid-body", mode: "http", server: cutBody(true), client: get},
	{name: "http-server-close-mid-body", mode: "http", server: cutBody(false), client: get},
	{name: "http-refused-retries-1", mode: "http", retries: 1, server: refusedAddr, client: get},
	{name: "http-refused-retries-0", mode: "http", server: refusedAddr, client: get},
	{name: "http-server-timeout-mid-body", mode: "http", extra: "timeout server 500ms",
		server: func(t *testing.T) string {
			return harness.TCPServer(t, func(c net.Conn) {
				defer c.Close()
				httpHead(c)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				c.Read(make([]byte, 1))
			})
		}, client: get},
	// The server goes on sending after the client's reset.
	{name: "http-client-reset-mid-body", mode: "http", looseTimers: true,
		server: func(t *testing.T) string {
			return harness.TCPServer(t, func(c net.Conn) {
				defer c.Close()
				httpHead(c)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
				for i := 0; i < 20; i++ {
					time.Sleep(50 * time.Millisecond)
					if _, err := io.WriteString(c, "0123456789"); err != nil {
						return
					}
				}
			})
		},
		client: func(c net.Conn) string {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			b := make([]byte, 48)
			_, err := io.ReadFull(c, b)
			resetConn(c)
			return fmt.Sprintf("read %v", err)
		}},
	// The client reads nothing of a large response.
	{name: "http-client-timeout-mid-body", mode: "http", extra: "timeout client 500ms",
		server: func(t *testing.T) string {
			return harness.TCPServer(t, func(c net.Conn) {
				defer c.Close()
				httpHead(c)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n")
				c.SetWriteDeadline(time.Now().Add(5 * time.Second))
				io.CopyN(c, zeros{}, 64<<20)
			})
		},
		client: func(c net.Conn) string {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			time.Sleep(1500 * time.Millisecond)
			return "-"
		}},
	// After the server's reset the client keeps its side open and sends
	// more: the stream has ended all the same.
	{name: "tcp-server-reset", mode: "tcp",
		server: func(t *testing.T) string {
			return harness.TCPServer(t, func(c net.Conn) {
				c.Read(make([]byte, 100))
				time.Sleep(100 * time.Millisecond)
				resetConn(c)
			})
		},
		client: func(c net.Conn) string {
			io.WriteString(c, "hello")
			end := clientEnd(c)
			io.WriteString(c, "more")
			time.Sleep(500 * time.Millisecond)
			return end
		}},
	{name: "tcp-server-close", mode: "tcp",
		server: func(t *testing.T) string {
			return harness.TCPServer(t, func(c net.Conn) {
				c.Read(make([]byte, 100))
				io.WriteString(c, "bye")
				c.Close()
			})
		},
		client: func(c net.Conn) string { io.WriteString(c, "hello"); return clientEnd(c) }},
	{name: "tcp-client-reset", mode: "tcp",
		server: func(t *testing.T) string {
			return harness.TCPServer(t, func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				io.Copy(c, c)
			})
		},
		client: func(c net.Conn) string {
			io.WriteString(c, "hello")
			b := make([]byte, 5)
			_, err := io.ReadFull(c, b)
			resetConn(c)
			return fmt.Sprintf("echo %q %v", b, err)
		}},
	{name: "tcp-client-half-close", mode: "tcp",
		server: func(t *testing.T) string {
			return harness.TCPServer(t, func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				io.Copy(c, c)
			})
		},
		client: func(c net.Conn) string {
			io.WriteString(c, "hello")
			c.(*net.TCPConn).CloseWrite()
			return clientEnd(c)
		}},
	{name: "tcp-refused-with-data", mode: "tcp", retries: 1, server: refusedAddr,
		client: func(c net.Conn) string {
			io.WriteString(c, "hello")
			return clientEnd(c)
		}},
}

var faultFields = []string{"stot", "econ", "eresp", "cli_abrt", "srv_abrt", "wretr", "connect", "hrsp_2xx", "hrsp_5xx"}

type faultSeen struct {
	client string
	log    []string // section, status, termination state, Tt, Ta (Tt in tcp)
	stats  map[string]map[string]string
}

func runFaults(t *testing.T, prog string, addrs []string) []faultSeen {
	logs := newLogSink(t)
	var b strings.Builder
	fmt.Fprintf(&b, `
global
    stats socket ${TMP}/s.sock level admin
    log %s format raw local0
defaults
    log global
    timeout connect 2s
    timeout client 3s
    timeout server 3s
`, logs.Addr())
	var names []string
	for i, fc := range faultCases {
		name := fmt.Sprintf("c%d", i)
		names = append(names, name)
		// %Ta is HTTP's; tcp lines give Tt twice.
		ta := "%Tt"
		if fc.mode == "http" {
			ta = "%Ta"
		}
		fmt.Fprintf(&b, "listen %s\n    mode %s\n    bind \"fd@${%s}\"\n    log-format \"%%f %%ST %%ts %%Tt %s\"\n    retries %d\n    %s\n    server s1 %s\n",
			name, fc.mode, name, ta, fc.retries, fc.extra, addrs[i])
	}
	p := harness.Start(t, prog, b.String(), names...)
	sock := filepath.Join(p.Dir, "s.sock")
	var out []faultSeen
	lines := map[string][]string{}
	for i, fc := range faultCases {
		// Runs beside the other proxy's run: errors, no Fatal.
		c, err := net.Dial("tcp", p.Addrs[names[i]])
		if err != nil {
			t.Error(err)
			return nil
		}
		seen := faultSeen{client: fc.client(c)}
		c.Close()
		// A line may come after the next case's: each is keyed by its
		// section's name.
		for lines[names[i]] == nil {
			l, ok := logs.Line()
			if !ok {
				t.Errorf("%s: %s: no log line", prog, fc.name)
				return nil
			}
			f := strings.Fields(l)
			lines[f[0]] = f
		}
		seen.log = lines[names[i]]
		settle(t, sock, names[i], 0)
		seen.stats = showStat(t, sock)
		out = append(out, seen)
	}
	return out
}

// TestFaultsAgainstHAProxy: the termination state, the client's view of
// the end and the counters of each fault, goha's against HAProxy 2.6's.
func TestFaultsAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	addrs := make([]string, len(faultCases))
	for i, fc := range faultCases {
		addrs[i] = fc.server(t)
	}
	var got, want []faultSeen
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); got = runFaults(t, bin.Path(t, "goha"), addrs) }()
	go func() { defer wg.Done(); want = runFaults(t, haproxy, addrs) }()
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, fc := range faultCases {
		g, w := got[i], want[i]
		t.Logf("%s: HAProxy %s %q; goha %s %q", fc.name, w.client, w.log, g.client, g.log)
		if g.client != w.client {
			t.Errorf("%s: the client saw %s from goha, %s from HAProxy", fc.name, g.client, w.client)
		}
		if len(g.log) != 5 || len(w.log) != 5 || g.log[1] != w.log[1] || g.log[2] != w.log[2] {
			t.Errorf("%s: goha logged %q, HAProxy %q", fc.name, g.log, w.log)
		} else {
			// Tt and Ta, close to HAProxy's.
			for _, i := range []int{3, 4} {
				gt, _ := strconv.Atoi(g.log[i])
				wt, _ := strconv.Atoi(w.log[i])
				if gt-wt > 250 || (wt-gt > 250 && !fc.looseTimers) || (fc.looseTimers && gt <= 0) {
					t.Errorf("%s: goha logged %q, HAProxy %q: timers differ", fc.name, g.log, w.log)
				}
			}
		}
		name := fmt.Sprintf("c%d", i)
		for _, row := range []string{name + "/FRONTEND", name + "/BACKEND", name + "/s1"} {
			for _, f := range faultFields {
				if gv, wv := g.stats[row][f], w.stats[row][f]; gv != wv {
					t.Errorf("%s: %s %s: goha %q, HAProxy %q", fc.name, row, f, gv, wv)
				}
			}
		}
	}
}
