//go:build regtest

// Package security runs request-smuggling and response-mixing scenarios
// against goha and HAProxy 2.6 on the same configuration: a client and an
// origin written on raw sockets, so that each side sees the exact bytes
// the proxy sends. Every scenario asserts that the proxy stays safe (no
// request escapes the rules, no client gets another's response) and, where
// the outcome is deterministic, that both proxies behave alike.
package security

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// proxies lists the binaries a scenario runs on: goha always, HAProxy
// when installed.
func proxies(t *testing.T) [][2]string {
	out := [][2]string{{"goha", bin.Path(t, "goha")}}
	if p := haproxyPath(); p != "" {
		out = append(out, [2]string{"haproxy", p})
	}
	return out
}

func haproxyPath() string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	return ""
}

// each runs fn once per proxy, each with its own origin and proxy process
// started on cfg, whose "${SRV}" is the origin's address.
func each(t *testing.T, cfg string, handle func(o *origin, c *sconn), fn func(t *testing.T, addr string, o *origin)) {
	for _, p := range proxies(t) {
		t.Run(p[0], func(t *testing.T) {
			o := newOrigin(t, handle)
			c := strings.ReplaceAll(cfg, "${SRV}", o.addr)
			px := harness.Start(t, p[1], c, "fe")
			harness.WaitListening(t, px.Addrs["fe"], 5*time.Second)
			fn(t, px.Addrs["fe"], o)
		})
	}
}

const baseCfg = `
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}"
    http-request deny if { path_beg /admin }
    default_backend be
backend be
    server s1 ${SRV}
`

// origin is a raw-socket server run by a script, one goroutine per
// connection, that records what each connection received.
type origin struct {
	addr string

	mu    sync.Mutex
	conns []*sconn
	reqs  []string // request lines in the order the origin parsed them
}

// sconn is one origin connection.
type sconn struct {
	o   *origin
	id  int
	c   net.Conn
	br  *bufio.Reader
	rec bytes.Buffer // guarded by o.mu
	eof chan struct{}
}

func newOrigin(t *testing.T, handle func(o *origin, c *sconn)) *origin {
	o := &origin{}
	o.addr = harness.TCPServer(t, func(c net.Conn) {
		defer c.Close()
		o.mu.Lock()
		sc := &sconn{o: o, id: len(o.conns) + 1, c: c, eof: make(chan struct{})}
		o.conns = append(o.conns, sc)
		o.mu.Unlock()
		sc.br = bufio.NewReader(recorder{sc})
		handle(o, sc)
	})
	return o
}

type recorder struct{ sc *sconn }

func (r recorder) Read(p []byte) (int, error) {
	n, err := r.sc.c.Read(p)
	r.sc.o.mu.Lock()
	r.sc.rec.Write(p[:n])
	r.sc.o.mu.Unlock()
	if err == io.EOF {
		select {
		case <-r.sc.eof:
		default:
			close(r.sc.eof)
		}
	}
	return n, err
}

// received returns what connection i (from 1) received so far.
func (o *origin) received(i int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i < 1 || i > len(o.conns) {
		return ""
	}
	return o.conns[i-1].rec.String()
}

func (o *origin) numConns() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.conns)
}

func (o *origin) conn(i int) *sconn {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.conns[i-1]
}

func (o *origin) requestLines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.reqs...)
}

// reqHead is a request head as the origin parsed it.
type reqHead struct {
	line   string // request line
	method string
	path   string
	hdr    map[string]string // lower-case names, last value
	raw    string
}

// readHead reads a request head; lenient skips lines before one that
// looks like a request line, as some servers do.
func (sc *sconn) readHead(lenient bool) (*reqHead, error) {
	h := &reqHead{hdr: map[string]string{}}
	for {
		line, err := sc.br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		h.raw += line
		l := strings.TrimRight(line, "\r\n")
		if l == "" {
			if h.line == "" {
				continue
			}
			break
		}
		if h.line == "" {
			f := strings.Fields(l)
			if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") {
				if lenient {
					h.raw = ""
					continue
				}
				return nil, fmt.Errorf("bad request line %q", l)
			}
			h.line, h.method, h.path = l, f[0], f[1]
			sc.o.mu.Lock()
			sc.o.reqs = append(sc.o.reqs, l)
			sc.o.mu.Unlock()
			continue
		}
		if k, v, ok := strings.Cut(l, ":"); ok {
			h.hdr[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return h, nil
}

// contentLength is the head's Content-Length, 0 when absent.
func (h *reqHead) contentLength() int {
	n, _ := strconv.Atoi(h.hdr["content-length"])
	return n
}

// respond writes a response whose body is the request's path, so that a
// client can tell which request a response answers.
func (sc *sconn) respond(h *reqHead, extra string) error {
	body := h.path
	_, err := fmt.Fprintf(sc.c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s", len(body), extra, body)
	return err
}

// waitEOF reports whether the proxy closed the connection within d.
func (sc *sconn) waitEOF(d time.Duration) bool {
	select {
	case <-sc.eof:
		return true
	case <-time.After(d):
		return false
	}
}

// client is a raw client connection.
type client struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(8 * time.Second))
	return &client{t: t, c: c, br: bufio.NewReader(c)}
}

func (cl *client) send(s string) {
	cl.t.Helper()
	if _, err := io.WriteString(cl.c, s); err != nil {
		cl.t.Fatal(err)
	}
}

// response reads one response: its status and body (Content-Length
// framed, or up to the close); 1xx responses are skipped. A read error
// before the status line gives status 0.
func (cl *client) response() (int, string) {
	for {
		line, err := cl.br.ReadString('\n')
		if err != nil {
			return 0, ""
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return 0, line
		}
		st, _ := strconv.Atoi(f[1])
		n := -1
		for {
			l, err := cl.br.ReadString('\n')
			if err != nil {
				return st, ""
			}
			l = strings.TrimRight(l, "\r\n")
			if l == "" {
				break
			}
			if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "content-length") {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if st >= 100 && st < 200 {
			continue
		}
		if n < 0 {
			b, _ := io.ReadAll(cl.br)
			return st, string(b)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(cl.br, b); err != nil {
			return st, ""
		}
		return st, string(b)
	}
}

// closed reports whether the proxy closed the client connection within d
// with nothing more to read.
func (cl *client) closed(d time.Duration) bool {
	cl.c.SetReadDeadline(time.Now().Add(d))
	defer cl.c.SetDeadline(time.Now().Add(8 * time.Second))
	_, err := cl.br.ReadByte()
	return err == io.EOF
}
