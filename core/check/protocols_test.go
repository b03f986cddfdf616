package check

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSharedRulesets(t *testing.T) {
	a := NewBackend("a", false)
	b := NewBackend("b", false)
	for _, opt := range [][]string{
		w("option", "redis-check"), w("option", "ssl-hello-chk"), w("option", "ldap-check"),
		w("option", "smtpchk", "EHLO", "x"), w("option", "pgsql-check", "user", "u"),
		w("option", "mysql-check", "user", "u"), w("option", "mysql-check"),
	} {
		if err := a.Option(opt); err != nil {
			t.Fatal(err)
		}
		if err := b.Option(opt); err != nil {
			t.Fatal(err)
		}
		ra, _, _ := a.Finalize("backend")
		rb, _, _ := b.Finalize("backend")
		if ra.Set != rb.Set || !ra.Set.Shared || ra.Flags&RulesShared == 0 {
			t.Fatalf("%v: rulesets not shared", opt)
		}
	}
	if AgentRules("x").Set != AgentRules("y").Set {
		t.Fatal("agent ruleset not shared")
	}
}

// startRedis runs the installed redis-server on a free loopback port.
func startRedis(t *testing.T, extra ...string) int {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
			t.Skip("redis-server not installed")
		}
		path = "/usr/bin/redis-server"
	}
	port := closedPort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir()}, extra...)
	cmd := exec.Command(path, args...)
	if err := cmd.Start(); err != nil {
		t.Skip("redis-server:", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			return port
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return 0
}

func TestRedisCheck(t *testing.T) {
	port := startRedis(t)
	rules := backendRules(t, w("option", "redis-check"))
	o := run(t, rules, &Target{Addr: "127.0.0.1", Port: port}, shortTO)
	wantOutcome(t, o, StatusL7OK, 0, "Redis server is ok")

	// A password-protected redis answers -NOAUTH and keeps the
	// connection open: HAProxy waits for +PONG until the timeout.
	port = startRedis(t, "--requirepass", "secret")
	o = run(t, rules, &Target{Addr: "127.0.0.1", Port: port}, Timeouts{Inter: 200 * time.Millisecond})
	wantOutcome(t, o, StatusL7TOut, 0, "")

	// A server that answers an error and closes: the first line is the info.
	errSrv := newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, "-ERR unknown command\r\n")
	})
	wantOutcome(t, run(t, rules, errSrv.target(), shortTO), StatusL7Sts, 0, "-ERR unknown command")
}

func smtpServer(t *testing.T, greet, reply string, got *string) *responder {
	return newResponder(t, func(c net.Conn) {
		io.WriteString(c, greet)
		b := readSome(c)
		if got != nil {
			*got = string(b)
		}
		io.WriteString(c, reply)
		if q := readSome(c); string(q) == "QUIT\r\n" {
			io.WriteString(c, "221 2.0.0 bye\r\n")
		}
	})
}

func TestSMTPCheck(t *testing.T) {
	var got string
	s := smtpServer(t, "220 mx.example ESMTP\r\n", "250-mx.example hello\r\n250 SIZE 1000\r\n", &got)
	rules := backendRules(t, w("option", "smtpchk", "EHLO", "checker.example"))
	wantOutcome(t, run(t, rules, s.target(), shortTO), StatusL7OK, 221, "2.0.0 bye")
	if got != "EHLO checker.example\r\n" {
		t.Fatalf("sent %q", got)
	}
	rules = backendRules(t, w("option", "smtpchk"))
	run(t, rules, s.target(), shortTO)
	if got != "HELO localhost\r\n" {
		t.Fatalf("sent %q", got)
	}
	busy := smtpServer(t, "554 5.3.2 too busy\r\n", "", nil)
	wantOutcome(t, run(t, rules, busy.target(), shortTO), StatusL7Sts, 554, "5.3.2 too busy")
	junk := smtpServer(t, "hello there\r\n", "", nil)
	wantOutcome(t, run(t, rules, junk.target(), shortTO), StatusL7Rsp, 0, "hello there")
	// A refused EHLO is judged when the server closes (2.6.12 waits for
	// a complete 2xx reply until then, or until the timeout).
	refuse := newResponder(t, func(c net.Conn) {
		io.WriteString(c, "220 ok\r\n")
		readSome(c)
		io.WriteString(c, "502 5.5.1 no EHLO\r\n")
	})
	wantOutcome(t, run(t, rules, refuse.target(), shortTO), StatusL7Sts, 502, "5.5.1 no EHLO")
}

func mysqlPkt(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

func mysqlGreeting(version string) []byte {
	p := []byte{10}
	p = append(p, version...)
	p = append(p, 0, 1, 0, 0, 0)
	p = append(p, "abcdefgh"...)
	p = append(p, 0, 0xff, 0xf7, 33, 2, 0)
	p = append(p, make([]byte, 13)...)
	return mysqlPkt(0, p)
}

func TestMySQLCheck(t *testing.T) {
	var auth []byte
	ok := newResponder(t, func(c net.Conn) {
		c.Write(mysqlGreeting("8.0.36-test"))
		auth = readSome(c)
		c.Write(mysqlPkt(2, []byte{0, 0, 0, 2, 0, 0, 0}))
	})
	rules := backendRules(t, w("option", "mysql-check", "user", "haproxy"))
	wantOutcome(t, run(t, rules, ok.target(), shortTO), StatusL7OK, 0, "8.0.36-test")
	// post-41 authentication packet: length, sequence 1, caps, user, COM_QUIT.
	if len(auth) < 4 || int(auth[0]) != len("haproxy")+34 || auth[3] != 1 ||
		!strings.Contains(string(auth), "haproxy\x00") || !strings.HasSuffix(string(auth), "\x01\x00\x00\x00\x01") {
		t.Fatalf("auth packet % x", auth)
	}

	denied := newResponder(t, func(c net.Conn) {
		c.Write(mysqlGreeting("8.0.36-test"))
		readSome(c)
		e := []byte{0xff}
		e = binary.LittleEndian.AppendUint16(e, 1045)
		e = append(e, "#28000Access denied for user 'haproxy'"...)
		c.Write(mysqlPkt(2, e))
	})
	wantOutcome(t, run(t, rules, denied.target(), shortTO), StatusL7Sts, 1045, "#28000Access denied for user 'haproxy'")

	noUser := backendRules(t, w("option", "mysql-check"))
	wantOutcome(t, run(t, noUser, denied.target(), shortTO), StatusL7OK, 0, "8.0.36-test")

	short := newResponder(t, func(c net.Conn) { c.Write([]byte{0x30, 0, 0, 0, 10}) })
	wantOutcome(t, run(t, noUser, short.target(), shortTO), StatusL7Rsp, 0, "")
}

func TestPgSQLCheck(t *testing.T) {
	var startup []byte
	ok := newResponder(t, func(c net.Conn) {
		startup = readSome(c)
		c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 0})
	})
	rules := backendRules(t, w("option", "pgsql-check", "user", "postgres"))
	wantOutcome(t, run(t, rules, ok.target(), shortTO), StatusL7OK, 0, "PostgreSQL server is ok")
	want := "\x00\x00\x00\x17\x00\x03\x00\x00user\x00postgres\x00\x00"
	if string(startup) != want {
		t.Fatalf("startup %q want %q", startup, want)
	}
	md5 := newResponder(t, func(c net.Conn) {
		readSome(c)
		c.Write([]byte{'R', 0, 0, 0, 12, 0, 0, 0, 5, 1, 2, 3, 4})
	})
	wantOutcome(t, run(t, rules, md5.target(), shortTO), StatusL7OK, 0, "PostgreSQL server is ok")
	fatal := newResponder(t, func(c net.Conn) {
		readSome(c)
		msg := "SFATAL\x00VFATAL\x00C28000\x00Mno pg_hba.conf entry\x00\x00"
		b := []byte{'E', 0, 0, 0, byte(4 + len(msg))}
		c.Write(append(b, msg...))
	})
	wantOutcome(t, run(t, rules, fatal.target(), shortTO), StatusL7Rsp, 0, "FATAL")
	odd := newResponder(t, func(c net.Conn) {
		readSome(c)
		c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 0x0b})
	})
	wantOutcome(t, run(t, rules, odd.target(), shortTO), StatusL7Sts, 0, "PostgreSQL unknown error")
}

func ldapBindResponse(code byte) []byte {
	// LDAPMessage { messageID 1, bindResponse { resultCode, "", "" } }
	return []byte{0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, code, 0x04, 0x00, 0x04, 0x00}
}

func TestLDAPCheck(t *testing.T) {
	var req []byte
	ok := newResponder(t, func(c net.Conn) {
		req = readSome(c)
		c.Write(ldapBindResponse(0))
	})
	rules := backendRules(t, w("option", "ldap-check"))
	wantOutcome(t, run(t, rules, ok.target(), shortTO), StatusL7OK, 0, "Success")
	if string(req) != "\x30\x0c\x02\x01\x01\x60\x07\x02\x01\x03\x04\x00\x80\x00" {
		t.Fatalf("bind request % x", req)
	}
	bad := newResponder(t, func(c net.Conn) {
		readSome(c)
		c.Write(ldapBindResponse(49))
	})
	wantOutcome(t, run(t, rules, bad.target(), shortTO), StatusL7Sts, 49, "See RFC: http://tools.ietf.org/html/rfc4511#section-4.1.9")
	notLDAP := newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, "HTTP/1.0 400 Bad Request\r\n\r\n")
	})
	wantOutcome(t, run(t, rules, notLDAP.target(), shortTO), StatusL7Rsp, 0, "Not LDAPv3 protocol")
	other := newResponder(t, func(c net.Conn) {
		readSome(c)
		c.Write([]byte{0x30, 0x0c, 0x02, 0x01, 0x02, 0x61, 0x07, 0x0a, 0x01, 0, 0x04, 0x00, 0x04, 0x00})
	})
	wantOutcome(t, run(t, rules, other.target(), shortTO), StatusL7Rsp, 0, "Not LDAPv3 protocol")
}

// agentServer answers each connection with the next reply.
func agentServer(t *testing.T, replies chan string, sent chan string) *responder {
	return newResponder(t, func(c net.Conn) {
		if sent != nil {
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			line, _ := bufio.NewReader(c).ReadString('\n')
			sent <- line
		}
		io.WriteString(c, <-replies)
	})
}

func TestAgentCheck(t *testing.T) {
	replies := make(chan string, 32)
	sent := make(chan string, 32)
	a := agentServer(t, replies, sent)
	cases := []struct {
		reply string
		st    Status
		desc  string
	}{
		{"up\n", StatusL7OK, "via agent : up"},
		{"down #gone away\n", StatusL7Sts, "via agent : down (gone away)"},
		{"stopped\n", StatusL7Sts, "via agent : stopped"},
		{"fail\r\n", StatusL7Sts, "via agent : fail"},
		{"75%\n", StatusChecked, ""},
		{"drain\n", StatusChecked, ""},
		{"bogus\n", StatusChecked, "agent reports an error : bogus"},
		{"up bogus #x\n", StatusL7OK, "via agent : up (bogus)"},
		{"down bogus #x\n", StatusL7Sts, "via agent : down (x)"},
		{"UP, 50%, maxconn:30\n", StatusL7OK, "via agent : UP"},
		{"up", StatusL7TOut, ""},
		{"", StatusL7Rsp, "TCPCHK got an empty response at step 2"},
	}
	rules := AgentRules("ping\n")
	for _, c := range cases {
		replies <- c.reply
		o := run(t, rules, a.target(), shortTO)
		wantOutcome(t, o, c.st, 0, c.desc)
		if s := <-sent; s != "ping\n" {
			t.Fatalf("agent got %q", s)
		}
	}
	// Without agent-send nothing is sent.
	replies <- "up\n"
	o := run(t, AgentRules(""), a.target(), shortTO)
	wantOutcome(t, o, StatusL7OK, 0, "via agent : up")
	if s := <-sent; s != "" {
		t.Fatalf("agent got %q without agent-send", s)
	}
}

func TestAgentReplyWords(t *testing.T) {
	cases := []struct {
		in   string
		want AgentReply
	}{
		{"up\n", AgentReply{Health: "up"}},
		{"ready,75%\tmaxconn:10 #busy now\n", AgentReply{Admin: "ready", Weight: "75%", Maxconn: "10", Desc: "busy now"}},
		{"maint drain ready\n", AgentReply{Admin: "ready"}},
		{"down up\n", AgentReply{Health: "up"}},
		{"x y 5%\n", AgentReply{Err: "x", Weight: "5%"}},
		{"#   only desc\n", AgentReply{Desc: "only desc"}},
		{"Stopped\r\ntrailing", AgentReply{Health: "Stopped"}},
		{"a#b\n", AgentReply{Err: "a#b"}},
	}
	for _, c := range cases {
		got, ok := ParseAgentReply([]byte(c.in))
		if !ok || got != c.want {
			t.Errorf("%q: got %+v ok=%v want %+v", c.in, got, ok, c.want)
		}
	}
	if _, ok := ParseAgentReply([]byte("up")); ok {
		t.Error("line without end accepted")
	}
	if _, ok := ParseAgentReply([]byte("up\x00\n")); ok {
		t.Error("NUL before the line end accepted")
	}
	st, desc := AgentStatus(&AgentReply{Health: "up", Weight: "300%"}, "Relative weight must be positive.")
	if st != StatusL7OK || desc != "via agent : up (Relative weight must be positive.)" {
		t.Errorf("got %v %q", st, desc)
	}
	st, desc = AgentStatus(&AgentReply{Weight: "1%"}, "Backend is using a static LB algorithm and only accepts weights '0%' and '100%'.")
	if st != StatusChecked || desc != "agent warns : Backend is using a static LB algorithm and only accepts weights '0%' and '100%'." {
		t.Errorf("got %v %q", st, desc)
	}
}
