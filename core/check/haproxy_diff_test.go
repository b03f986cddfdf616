package check

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDifferentialHAProxy runs the installed haproxy 2.6 and goha's engine
// against the same peers and compares the "option log-health-checks" lines
// of the first probe of each server (durations aside).
func TestDifferentialHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	hap, err := exec.LookPath("haproxy")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/haproxy"); err != nil {
			t.Skip("haproxy not installed")
		}
		hap = "/usr/sbin/haproxy"
	}
	http := func(resp string) *responder {
		return newResponder(t, func(c net.Conn) { readSome(c); io.WriteString(c, resp) })
	}
	type scenario struct {
		name   string
		lines  [][]string // backend check lines
		port   int
		server string // extra server keywords
		agent  bool
	}
	agentDown := newResponder(t, func(c net.Conn) { io.WriteString(c, "down #gone away\n") })
	agentErr := newResponder(t, func(c net.Conn) { io.WriteString(c, "up bogus\n") })
	smtp := newResponder(t, func(c net.Conn) {
		io.WriteString(c, "220 mx ESMTP\r\n")
		readSome(c)
		io.WriteString(c, "250-mx greets you\r\n250 SIZE 100\r\n")
		readSome(c)
		io.WriteString(c, "221 bye\r\n")
	})
	scenarios := []scenario{
		{name: "closed", port: closedPort(t)},
		{name: "tcpclosed", lines: [][]string{w("option", "tcp-check")}, port: closedPort(t)},
		{name: "http503", lines: [][]string{w("option", "httpchk")}, port: http("HTTP/1.0 503 Service Unavailable\r\n\r\n").port()},
		{name: "http200", lines: [][]string{w("option", "httpchk", "GET", "/")}, port: http("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok").port()},
		{name: "httpbody", lines: [][]string{w("option", "httpchk"), w("http-check", "expect", "string", "nope")},
			port: http("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok").port()},
		{name: "tcpempty", lines: [][]string{w("option", "tcp-check"), w("tcp-check", "send", "PING\r\n"), w("tcp-check", "expect", "string", "PONG")},
			port: newResponder(t, func(c net.Conn) { readSome(c) }).port()},
		{name: "tcpgarbage", lines: [][]string{w("option", "tcp-check"), w("tcp-check", "send", "PING\r\n"),
			w("tcp-check", "expect", "string", "PONG", "comment", "pong check")},
			port: http("garbage\r\n").port()},
		{name: "tcpok", lines: [][]string{w("option", "tcp-check"), w("tcp-check", "send-binary", "50494e470d0a"),
			w("tcp-check", "expect", "rstring", "^PO", "on-success", "got %[res.payload(0,4)]")},
			port: http("PONG\r\n").port()},
		{name: "redisbad", lines: [][]string{w("option", "redis-check")}, port: http("-ERR nope\r\n").port()},
		{name: "smtp", lines: [][]string{w("option", "smtpchk", "EHLO", "x")}, port: smtp.port()},
		{name: "smtpbusy", lines: [][]string{w("option", "smtpchk")}, port: http("554 too busy\r\n").port()},
		{name: "httppost", lines: [][]string{w("option", "httpchk", "POST", "/x")}, port: http("HTTP/1.0 404 Not Found\r\n\r\n").port()},
		{name: "pgsql", lines: [][]string{w("option", "pgsql-check", "user", "pg")}, port: http("R\x00\x00\x00\x17\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00").port()},
		{name: "ldapbad", lines: [][]string{w("option", "ldap-check")}, port: http("HTTP/1.0 400 Bad Request\r\n\r\n").port()},
		{name: "agentdown", agent: true, port: agentDown.port()},
		{name: "agenterr", agent: true, port: agentErr.port()},
	}

	// haproxy's configuration, one backend per scenario.
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global\n    log stderr local0\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n    option log-health-checks\n")
	fmt.Fprintf(&cfg, "frontend fe\n    bind 127.0.0.1:%d\n    default_backend closed\n", closedPort(t))
	quote := func(s string) string {
		s = strings.ReplaceAll(s, "\r", `\r`)
		s = strings.ReplaceAll(s, "\n", `\n`)
		s = strings.ReplaceAll(s, " ", `\ `)
		return s
	}
	for _, sc := range scenarios {
		fmt.Fprintf(&cfg, "backend %s\n", sc.name)
		for _, l := range sc.lines {
			q := make([]string, len(l))
			for i, x := range l {
				q[i] = quote(x)
			}
			fmt.Fprintf(&cfg, "    %s\n", strings.Join(q, " "))
		}
		if sc.agent {
			fmt.Fprintf(&cfg, "    server s 127.0.0.1:1 agent-check agent-port %d agent-inter 200\n", sc.port)
		} else {
			fmt.Fprintf(&cfg, "    server s 127.0.0.1:%d check inter 200 rise 1 fall 1\n", sc.port)
		}
	}
	dir := t.TempDir()
	os.WriteFile(dir+"/h.cfg", []byte(cfg.String()), 0o644)
	cmd := exec.Command(hap, "-db", "-f", dir+"/h.cfg")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Skip("haproxy:", err)
	}
	got := map[string]string{}
	lineRe := regexp.MustCompile(`(Health|Agent) check for server ([^/]+)/s .*`)
	done := make(chan struct{})
	all := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := lineRe.FindStringSubmatch(sc.Text()); m != nil {
				if _, ok := got[m[2]]; !ok {
					got[m[2]] = m[0]
					if len(got) == len(scenarios) {
						close(all)
					}
				}
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

	dur := regexp.MustCompile(`check duration: \d+ms`)
	for _, sc := range scenarios {
		var rules *Rules
		var settings *Settings
		if sc.agent {
			rules = AgentRules("")
		} else {
			rules = backendRules(t, sc.lines...)
			settings = &Settings{Rules: rules, Rise: 1, Fall: 1}
		}
		cfg := ServerConfig{Backend: sc.name, Name: "s", Addr: "127.0.0.1", Port: sc.port, Health: settings}
		if sc.agent {
			cfg.Port = 1
			cfg.Agent = &Settings{Port: sc.port}
		}
		s := NewServer(cfg, nil)
		c := s.Health
		if sc.agent {
			c = s.Agent
		}
		r, tg := c.targetLocked()
		o := run(t, r, &tg, Timeouts{Inter: 200 * time.Millisecond, Connect: time.Second})
		rep := apply(c, o)
		ours := CheckLogText(&rep, false, sc.name, "s", false)
		want, ok := got[sc.name]
		if !ok {
			t.Errorf("%s: haproxy logged nothing; ours: %s", sc.name, ours)
			continue
		}
		if dur.ReplaceAllString(ours, "") != dur.ReplaceAllString(want, "") {
			t.Errorf("%s:\n haproxy %s\n goha    %s", sc.name, want, ours)
		}
	}
}
