// Package log tests goha's access logs end to end: requests through the
// proxy produce httplog lines that reach syslog receivers through rings
// (TCP, both framings) and UDP targets.
package log

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// tcpSink accepts one connection at a time and sends every frame it reads.
func tcpSink(t *testing.T, octet bool) (string, <-chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan string, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			for {
				if octet {
					n, err := br.ReadString(' ')
					if err != nil {
						break
					}
					size, err := strconv.Atoi(strings.TrimSpace(n))
					if err != nil {
						ch <- "BAD FRAME " + n
						break
					}
					buf := make([]byte, size)
					if _, err := io.ReadFull(br, buf); err != nil {
						break
					}
					ch <- string(buf)
				} else {
					l, err := br.ReadString('\n')
					if err != nil {
						break
					}
					ch <- strings.TrimSuffix(l, "\n")
				}
			}
			c.Close()
		}
	}()
	return ln.Addr().String(), ch
}

var httplogRe = regexp.MustCompile(`^<134>1 \S+ \S+ haproxy \d+ - - 127\.0\.0\.1:\d+ \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d\.\d{3}\] fe be/s1 \d+/\d+/\d+/\d+/\d+ 200 \d+ - - ---- \d+/\d+/\d+/\d+/0 0/0 "GET /p(\d+) HTTP/1\.1"$`)

func TestAccessLogsThroughRings(t *testing.T) {
	o := harness.NewOrigin(t, "s1", nil)
	for _, proto := range []string{"legacy", "octet-count"} {
		t.Run(proto, func(t *testing.T) {
			sink, lines := tcpSink(t, proto == "octet-count")
			cfg := fmt.Sprintf(`
ring logs
    format rfc5424
    size 65536
    timeout connect 1s
    timeout server 5s
    server sink %s log-proto %s

global
    log ring@logs local0 info

defaults
    mode http
    log global
    option httplog
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s
`, sink, proto, o.Addr)
			p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
			c := &http.Client{}
			for i := 0; i < 20; i++ {
				if st, _ := harness.Get(t, c, p.Addrs["fe"], fmt.Sprintf("/p%d", i)); st != 200 {
					t.Fatalf("status %d", st)
				}
			}
			for i := 0; i < 20; i++ {
				select {
				case l := <-lines:
					m := httplogRe.FindStringSubmatch(l)
					if m == nil {
						t.Fatalf("line %d: %q", i, l)
					}
					if m[1] != strconv.Itoa(i) {
						t.Fatalf("line %d out of order: %q", i, l)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("only %d lines arrived\n%s", i, p.Output())
				}
			}
		})
	}
}

func TestAccessLogsUDPAndShowEvents(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		t.Skip("socat is not installed")
	}
	logs := newLogSink(t)
	o := harness.NewOrigin(t, "s1", nil)
	cfg := fmt.Sprintf(`
ring buf
    format raw
    size 32768

global
    stats socket ${TMP}/s.sock level admin

defaults
    mode http
    option httplog
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}"
    log %s format rfc3164 local1 info
    log ring@buf local0
    default_backend be
backend be
    server s1 %s
`, logs.Addr(), o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	harness.Get(t, &http.Client{}, p.Addrs["fe"], "/udp")
	l, ok := logs.Line()
	if !ok {
		t.Fatal("no UDP log")
	}
	if !regexp.MustCompile(`^<142>\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ haproxy\[\d+\]: 127\.0\.0\.1:\d+ .*"GET /udp HTTP/1\.1"$`).MatchString(l) {
		t.Fatalf("UDP rfc3164 line: %q", l)
	}
	out, _ := harness.Socket(filepath.Join(p.Dir, "s.sock"), "show events buf")
	if !strings.Contains(out, `"GET /udp HTTP/1.1"`) {
		t.Fatalf("show events buf:\n%s", out)
	}
}

// TestErrorRepliesLogged checks the log lines of requests goha answers
// itself, as HAProxy 2.6 writes them: a malformed request and a request
// head that never completes are answered by the HTTP layer before any
// stream exists (no request line, -1 timers, 0 bytes), a denied request
// by the stream (its reply's size).
func TestErrorRepliesLogged(t *testing.T) {
	logs := newLogSink(t)
	o := harness.NewOrigin(t, "s1", nil)
	cfg := fmt.Sprintf(`
defaults
    mode http
    option httplog
    timeout connect 2s
    timeout client 5s
    timeout server 5s
    timeout http-request 500ms

frontend fe
    bind "fd@${fe}"
    log %s format raw local0
    http-request deny if { path /deny }
    default_backend be
backend be
    server s1 %s
`, logs.Addr(), o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	send := func(raw string, wait time.Duration) {
		c, err := net.Dial("tcp", p.Addrs["fe"])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte(raw))
		c.SetReadDeadline(time.Now().Add(wait))
		io.Copy(io.Discard, c)
	}
	read := func() string {
		l, ok := logs.Line()
		if !ok {
			t.Fatal("no log line")
		}
		return l
	}
	cases := []struct {
		raw  string
		want string
	}{
		{"GET /\x01 HTTP/1.1\r\n\r\n", ` fe fe/<NOSRV> -1/-1/-1/-1/\d+ 400 0 - - PR-- \d+/\d+/0/0/0 0/0 "<BADREQ>"$`},
		{"GET / HTTP/1.1\r\n", ` fe fe/<NOSRV> -1/-1/-1/-1/\d+ 408 0 - - cR-- \d+/\d+/0/0/0 0/0 "<BADREQ>"$`},
		{"GET /deny HTTP/1.1\r\nHost: x\r\n\r\n", ` fe fe/<NOSRV> \d+/-1/-1/-1/\d+ 403 1\d\d - - PR-- \d+/\d+/0/0/0 0/0 "GET /deny HTTP/1.1"$`},
	}
	for _, tc := range cases {
		send(tc.raw, 3*time.Second)
		if l := read(); !regexp.MustCompile(tc.want).MatchString(l) {
			t.Errorf("request %q logged\n%s\nwant match for %s", tc.raw, l, tc.want)
		}
	}
}

// TestShowInfoLogCounters checks show info's CumRecvLogs (messages
// log-forward received) and DroppedLogs (lines a datagram target had no
// room for: here a UNIX socket nobody reads, whose queue fills up).
func TestShowInfoLogCounters(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		t.Skip("socat is not installed")
	}
	dir := t.TempDir()
	stuck := filepath.Join(dir, "stuck.sock")
	ua, err := net.ResolveUnixAddr("unixgram", stuck)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := net.ListenUnixgram("unixgram", ua)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	cfg := fmt.Sprintf(`
global
    stats socket ${TMP}/s.sock level admin

log-forward lf
    dgram-bind "fd@${lf}"
    log unix@%s local0
`, stuck)
	// The socket is bound before goha starts, so that no message is
	// lost to a bind that has not happened yet.
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "udp:lf")
	sock := filepath.Join(p.Dir, "s.sock")
	var m map[string]string
	// waitRecv waits until CumRecvLogs is n, and fails if it passes n.
	waitRecv := func(n int) {
		t.Helper()
		harness.WaitSocket(t, sock, "show info", func(out string) bool {
			m = map[string]string{}
			for _, l := range strings.Split(out, "\n") {
				if k, v, ok := strings.Cut(l, ": "); ok {
					m[k] = v
				}
			}
			got, err := strconv.Atoi(m["CumRecvLogs"])
			if err == nil && got > n {
				t.Fatalf("CumRecvLogs = %d, want %d", got, n)
			}
			return err == nil && got == n
		})
	}
	waitRecv(0)
	c, err := net.Dial("udp", p.Addrs["lf"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// In batches that the receive buffer holds even when goha is slow to
	// read it, each received before the next is sent.
	const sent, batch = 1000, 50
	for i := 0; i < sent; i++ {
		fmt.Fprintf(c, "<134>Nov 30 03:00:00 host app: message %d", i)
		if (i+1)%batch == 0 {
			waitRecv(i + 1)
		}
	}
	// The stuck socket's queue holds a few hundred datagrams; the rest
	// were dropped, not waited for.
	if n, err := strconv.Atoi(m["DroppedLogs"]); err != nil || n <= 0 || n >= sent {
		t.Fatalf("DroppedLogs = %q, want between 1 and %d", m["DroppedLogs"], sent-1)
	}
}
