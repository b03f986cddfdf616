package check

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// haproxyLogs runs the installed haproxy 2.6 with the given backends (and
// option log-health-checks) until each backend in want has logged as many
// "Health check" lines as asked, or 15 s passed, and returns the lines per
// backend.
func haproxyLogs(t *testing.T, backends string, want map[string]int) map[string][]string {
	t.Helper()
	hap, err := exec.LookPath("haproxy")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/haproxy"); err != nil {
			t.Skip("haproxy not installed")
		}
		hap = "/usr/sbin/haproxy"
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global\n    log stderr local0\ndefaults\n    mode tcp\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n    option log-health-checks\n")
	fmt.Fprintf(&cfg, "frontend fe\n    bind 127.0.0.1:%d\n    default_backend %s\n", closedPort(t), "b0")
	fmt.Fprintf(&cfg, "backend b0\n%s", backends)
	dir := t.TempDir()
	os.WriteFile(dir+"/h.cfg", []byte(cfg.String()), 0o644)
	cmd := exec.Command(hap, "-db", "-f", dir+"/h.cfg")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Skip("haproxy:", err)
	}
	got := map[string][]string{}
	var mu sync.Mutex
	lineRe := regexp.MustCompile(`Health check for server ([^/]+)/s .*`)
	done := make(chan struct{})
	all := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		closed := false
		for sc.Scan() {
			m := lineRe.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			mu.Lock()
			got[m[1]] = append(got[m[1]], m[0])
			complete := true
			for b, n := range want {
				if len(got[b]) < n {
					complete = false
				}
			}
			mu.Unlock()
			if complete && !closed {
				closed = true
				close(all)
			}
		}
	}()
	select {
	case <-all:
	case <-time.After(15 * time.Second):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	cmd.Wait()
	return got
}

var durationRe = regexp.MustCompile(`check duration: \d+ms`)

// staleErrnoRe finds the system error HAProxy 2.6 may append to SOCKS4
// errors that have none: errno left over from an unrelated call (seen:
// "Message too long"), which goha does not reproduce.
var staleErrnoRe = regexp.MustCompile(`(SOCKS4 Proxy (?:deny the request|read error during handshake)) \([^)]*\)`)

// TestDifferentialSPOPSocks4 runs haproxy 2.6 and goha's engine against the
// same SPOE agents and SOCKS4 proxies and compares their log lines
// (durations aside).
func TestDifferentialSPOPSocks4(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	type scenario struct {
		name   string
		lines  [][]string // backend check lines
		port   int        // server port
		socks4 string     // the server's socks4 proxy
		via    bool       // check-via-socks4
		inter  time.Duration
	}
	agent := func(reply []byte) int { return spoa(t, reply).port() }
	http := newResponder(t, func(c net.Conn) {
		readSome(c)
		c.Write([]byte("HTTP/1.0 200 OK\r\n\r\n"))
	})
	spop := [][]string{w("option", "spop-check")}
	httpchk := [][]string{w("option", "httpchk")}
	tcpVia := [][]string{w("option", "tcp-check"), w("tcp-check", "connect", "via-socks4", "comment", "proxied"),
		w("tcp-check", "send", "GET / HTTP/1.0\r\n\r\n"), w("tcp-check", "expect", "string", "200 OK")}
	proxy := func(mode string) string { return newSocks4Proxy(t, mode).addr() }
	scenarios := []scenario{
		{name: "spopok", lines: spop, port: agent(spoaHello("2.0", 16380))},
		{name: "spopempty", lines: spop, port: agent([]byte{0, 0, 0, 0})},
		{name: "spopfrag", lines: spop, port: agent(spoaFrame(spopAgentHello, 0))},
		{name: "spopvsn", lines: spop, port: agent(spoaFrame(spopAgentHello, spopFlagFin, spoaStr("version", "1.0")))},
		{name: "spopnosize", lines: spop, port: agent(spoaFrame(spopAgentHello, spopFlagFin, spoaStr("version", "2.0")))},
		{name: "spopsmall", lines: spop, port: agent(spoaHello("2.0", 100))},
		{name: "spopdiscon", lines: spop, port: agent(spoaDiscon(spopErrBadVersion, "bye"))},
		{name: "spopnormal", lines: spop, port: agent(spoaDiscon(0, ""))},
		{name: "spopgarbage", lines: spop, port: agent([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))},
		{name: "spopclose", lines: spop, port: agent(nil)},
		// Not compared: an agent closing after part of a frame, where
		// HAProxy decodes whatever its buffer held before (it was seen to
		// vary from run to run).
		{name: "spopslow", lines: spop, port: newResponder(t, func(c net.Conn) { readSome(c); readSome(c) }).port(), inter: 300 * time.Millisecond},
		{name: "s4grant", lines: httpchk, port: http.port(), socks4: proxy("grant"), via: true},
		{name: "s4grantl4", port: http.port(), socks4: proxy("grant"), via: true},
		{name: "s4direct", lines: httpchk, port: http.port(), socks4: proxy("deny")},
		{name: "s4deny", lines: httpchk, port: http.port(), socks4: proxy("deny"), via: true},
		{name: "s4denyl4", port: http.port(), socks4: proxy("identd"), via: true},
		{name: "s4close", lines: httpchk, port: http.port(), socks4: proxy("close"), via: true},
		{name: "s4reset", lines: httpchk, port: http.port(), socks4: proxy("reset"), via: true},
		{name: "s4silent", lines: httpchk, port: http.port(), socks4: proxy("silent"), via: true, inter: 300 * time.Millisecond},
		{name: "s4partial", port: http.port(), socks4: proxy("partial"), via: true, inter: 300 * time.Millisecond},
		{name: "s4refused", lines: httpchk, port: http.port(), socks4: fmt.Sprintf("127.0.0.1:%d", closedPort(t)), via: true},
		{name: "s4tcpok", lines: tcpVia, port: http.port(), socks4: proxy("grant")},
		{name: "s4tcpdeny", lines: tcpVia, port: http.port(), socks4: proxy("deny")},
	}
	quote := func(s string) string {
		s = strings.ReplaceAll(s, "\r", `\r`)
		s = strings.ReplaceAll(s, "\n", `\n`)
		return strings.ReplaceAll(s, " ", `\ `)
	}
	var cfg strings.Builder
	want := map[string]int{}
	for _, sc := range scenarios {
		if sc.inter == 0 {
			sc.inter = 200 * time.Millisecond
		}
		fmt.Fprintf(&cfg, "backend %s\n", sc.name)
		for _, l := range sc.lines {
			q := make([]string, len(l))
			for i, x := range l {
				q[i] = quote(x)
			}
			fmt.Fprintf(&cfg, "    %s\n", strings.Join(q, " "))
		}
		extra := ""
		if sc.socks4 != "" {
			extra += " socks4 " + sc.socks4
		}
		if sc.via {
			extra += " check-via-socks4"
		}
		fmt.Fprintf(&cfg, "    server s 127.0.0.1:%d%s check inter %d rise 1 fall 1\n", sc.port, extra, sc.inter.Milliseconds())
		want[sc.name] = 1
	}
	got := haproxyLogs(t, cfg.String(), want)

	for _, sc := range scenarios {
		if sc.inter == 0 {
			sc.inter = 200 * time.Millisecond
		}
		rules := backendRules(t, sc.lines...)
		s := NewServer(ServerConfig{Backend: sc.name, Name: "s", Addr: "127.0.0.1", Port: sc.port,
			Health: &Settings{Rules: rules, Rise: 1, Fall: 1, Socks4: sc.socks4, ViaSocks4: sc.via}}, nil)
		r, tg := s.Health.targetLocked()
		o := run(t, r, &tg, Timeouts{Inter: sc.inter, Connect: time.Second})
		ours := firstLogLine(s.Health, o, sc.name)
		lines := got[sc.name]
		if len(lines) == 0 {
			t.Errorf("%s: haproxy logged nothing; ours: %s", sc.name, ours)
			continue
		}
		theirs := staleErrnoRe.ReplaceAllString(lines[0], "$1")
		if durationRe.ReplaceAllString(ours, "") != durationRe.ReplaceAllString(theirs, "") {
			t.Errorf("%s:\n haproxy %s\n goha    %s", sc.name, lines[0], ours)
		}
	}
}

// firstLogLine applies a probe's outcome (its early result first) and
// returns the first log line it makes.
func firstLogLine(c *Check, o Outcome, backend string) string {
	var lines []string
	if o.Prior != nil {
		if rep := apply(c, *o.Prior); rep.Logged {
			lines = append(lines, CheckLogText(&rep, false, backend, "s", false))
		}
	}
	if rep := apply(c, o); rep.Logged {
		lines = append(lines, CheckLogText(&rep, false, backend, "s", false))
	}
	if len(lines) == 0 {
		return "(nothing logged)"
	}
	return lines[0]
}

// TestDifferentialSPOPRise compares what haproxy 2.6 and goha log while a
// server checked with spop-check comes back: an agent that fails once
// (the server goes DOWN), then answers well. Each good probe counts twice.
func TestDifferentialSPOPRise(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	flaky := func() *responder {
		var n atomic.Int32
		good := spoaHello("2.0", 16380)
		return newResponder(t, func(c net.Conn) {
			readSome(c)
			if n.Add(1) == 1 {
				c.Write([]byte{0, 0, 0, 0})
				return
			}
			c.Write(good)
		})
	}
	hp := flaky()
	got := haproxyLogs(t, fmt.Sprintf("backend rise\n    option spop-check\n    server s 127.0.0.1:%d check inter 200 rise 3 fall 1\n", hp.port()),
		map[string]int{"rise": 4})["rise"]

	gp := flaky()
	rec := &recorder{reports: make(chan Report, 20)}
	s := NewServer(ServerConfig{Backend: "rise", Name: "s", Addr: "127.0.0.1", Port: gp.port(),
		Health: &Settings{Rules: backendRules(t, w("option", "spop-check")), Rise: 3, Fall: 1, Inter: 200 * time.Millisecond}}, rec)
	var ours []string
	for probe := 0; probe < 3; probe++ {
		s.Health.probeOnce(t.Context())
	}
	close(rec.reports)
	for rep := range rec.reports {
		if rep.Logged {
			ours = append(ours, CheckLogText(&rep, false, "rise", "s", false))
		}
	}
	if len(got) < 4 || len(ours) < 4 {
		t.Fatalf("haproxy logged %q\ngoha logged %q", got, ours)
	}
	for i := 0; i < 4; i++ {
		if durationRe.ReplaceAllString(ours[i], "") != durationRe.ReplaceAllString(got[i], "") {
			t.Errorf("line %d:\n haproxy %s\n goha    %s", i, got[i], ours[i])
		}
	}
}
