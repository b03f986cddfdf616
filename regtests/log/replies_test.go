//go:build regtest

package log

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// A reply that the proxy makes itself (an error page, a deny, a return
// rule) is compared with HAProxy 2.6's byte for byte, with whether the
// connection stays open after it and with its log line, whose byte count
// HAProxy takes from its internal form of the message, not from the wire.
var replyRequests = []string{
	"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: x\r\n\r\n",
	"GET /deny HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /deny HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
	"GET /deny HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	"POST /deny HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab",
	"GET /r HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /r2 HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /r3 HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /lf/abc HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /reset HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /reset HTTP/1.0\r\nHost: x\r\n\r\n",
	"GET /reset HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
	"GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n",
}

// replyProbe follows a reply on the same connection to see whether the
// proxy kept it; its log line is told apart by its path.
const (
	replyProbePath = "/r?keep-alive-probe"
	replyProbe     = "GET " + replyProbePath + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
)

// resetOrigin reads a request and closes without answering.
func resetOrigin(t *testing.T) string {
	return harness.TCPServer(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		c.Close()
	})
}

type replySeen struct {
	wire   string
	closed bool
	log    string
}

func runReplies(t *testing.T, prog, reset string) []replySeen {
	logs := newLogSink(t)
	cfg := fmt.Sprintf(`
global
    log %s format raw local0
    stats socket ${TMP}/s.sock level admin
defaults
    mode http
    log global
    option httplog
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}"
    http-request deny if { path /deny }
    http-request return status 200 content-type text/plain string hi if { path /r }
    http-request return status 200 content-type text/plain string hi hdr x-a b hdr x-c d if { path /r2 }
    http-request return status 204 if { path /r3 }
    http-request return status 200 content-type text/plain lf-string "p=%%[path]" hdr x-p "%%[path]" if { path_beg /lf }
    use_backend reset if { path /reset }
    default_backend none
backend none
    server h1 127.0.0.1:1 disabled
backend reset
    server r1 %s
`, logs.Addr(), reset)
	p := harness.Start(t, prog, cfg, "fe")
	sock := filepath.Join(p.Dir, "s.sock")
	var out []replySeen
	for _, r := range replyRequests {
		// The previous case's connection must be gone from both
		// proxies, or its log line counts it among the active ones.
		settle(t, sock, "fe", 0)
		c, err := net.Dial("tcp", p.Addrs["fe"])
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, r)
		var seen replySeen
		seen.wire, err = readOneResponse(bufio.NewReader(c))
		if err != nil {
			t.Fatalf("%s: %q: %v (got %q)", prog, r, err, seen.wire)
		}
		// Closed after the reply, or kept for the next request? A
		// second request tells, where waiting to see no close could
		// only guess.
		_, err = io.WriteString(c, replyProbe)
		if err == nil {
			_, err = readOneResponse(bufio.NewReader(c))
		}
		seen.closed = err != nil
		c.Close()
		lines := 1
		if !seen.closed {
			lines = 2
		}
		for i := 0; i < lines; i++ {
			l, ok := logs.Line()
			if !ok {
				t.Fatalf("%s: no log line for %q (closed: %v)", prog, r, seen.closed)
			}
			if seen.log == "" && !strings.Contains(l, replyProbePath) {
				seen.log = l
			}
		}
		out = append(out, seen)
	}
	return out
}

// readOneResponse reads a response head and its Content-Length body.
func readOneResponse(br *bufio.Reader) (string, error) {
	var head bytes.Buffer
	cl := 0
	for {
		l, err := br.ReadString('\n')
		head.WriteString(l)
		if err != nil {
			return head.String(), err
		}
		if l == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "content-length") {
			cl, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	body := make([]byte, cl)
	_, err := io.ReadFull(br, body)
	return head.String() + string(body), err
}

// logRest drops what of a log line differs between runs: the client's
// address, the date and the timers' values (whether each is -1, unset, is
// kept).
var (
	logPrefix = regexp.MustCompile(`^\S+ \[[^\]]+\] `)
	logTimers = regexp.MustCompile(` -?\d+/-?\d+/-?\d+/-?\d+/-?\d+ `)
	logTimer  = regexp.MustCompile(`\d+`)
)

func logRest(l string) string {
	l = logPrefix.ReplaceAllString(l, "")
	// The first such field is the timers; the second, the counters.
	if m := logTimers.FindStringIndex(l); m != nil {
		ts := strings.ReplaceAll(logTimer.ReplaceAllString(l[m[0]:m[1]], "N"), "-N", "-1")
		l = l[:m[0]] + ts + l[m[1]:]
	}
	return l
}

func TestRepliesAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	reset := resetOrigin(t)
	// Both run at once, each waiting for its own state.
	var got, want []replySeen
	t.Run("run", func(t *testing.T) {
		t.Run("goha", func(t *testing.T) {
			t.Parallel()
			got = runReplies(t, bin.Path(t, "goha"), reset)
		})
		t.Run("haproxy", func(t *testing.T) {
			t.Parallel()
			want = runReplies(t, haproxy, reset)
		})
	})
	if t.Failed() {
		return
	}
	for i, r := range replyRequests {
		g, w := got[i], want[i]
		if g.wire != w.wire {
			t.Errorf("%q: goha sent\n%q\nHAProxy sent\n%q", r, g.wire, w.wire)
		}
		if g.closed != w.closed {
			t.Errorf("%q: goha closed the connection after the reply: %v, HAProxy: %v", r, g.closed, w.closed)
		}
		if logRest(g.log) != logRest(w.log) {
			t.Errorf("%q: goha logged\n%s\nHAProxy logged\n%s", r, g.log, w.log)
		}
	}
}
