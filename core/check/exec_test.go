package check

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDefaultCheck(t *testing.T) {
	r := newResponder(t, func(c net.Conn) {})
	rules := backendRules(t)
	if rules.Set != DefaultRuleset() {
		t.Fatal("plain check must use the shared default ruleset")
	}
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL4OK, 0, "")

	o := run(t, rules, &Target{Addr: "127.0.0.1", Port: closedPort(t)}, shortTO)
	wantOutcome(t, o, StatusL4Con, 0, "Connection refused")

	// A deadline already past: the connection cannot be made in time.
	o = run(t, rules, r.target(), Timeouts{Inter: time.Nanosecond})
	wantOutcome(t, o, StatusL4TOut, 0, "")
}

func TestCheckPortAndAddr(t *testing.T) {
	r := newResponder(t, func(c net.Conn) {})
	rules := backendRules(t)
	// Service port closed, check port open.
	tg := &Target{Addr: "127.0.0.1", Port: closedPort(t), CheckPort: r.port()}
	wantOutcome(t, run(t, rules, tg, shortTO), StatusL4OK, 0, "")
	tg = &Target{Addr: "127.0.0.2", Port: r.port(), CheckAddr: "127.0.0.1"}
	wantOutcome(t, run(t, rules, tg, shortTO), StatusL4OK, 0, "")
}

func TestTCPCheckSendExpect(t *testing.T) {
	r := newResponder(t, func(c net.Conn) {
		b := readSome(c)
		switch string(b) {
		case "PING\r\n":
			io.WriteString(c, "PONG\r\n")
		case "HELLO\r\n":
			io.WriteString(c, "NOPE\r\n")
		}
	})
	ok := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send", "PING\r\n"),
		w("tcp-check", "expect", "string", "PONG"))
	wantOutcome(t, run(t, ok, r.target(), shortTO), StatusL7OK, 0, "(tcp-check)")

	bad := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send", "HELLO\r\n"),
		w("tcp-check", "comment", "say hello"),
		w("tcp-check", "expect", "string", "PONG", "min-recv", "6"))
	o := run(t, bad, r.target(), shortTO)
	wantOutcome(t, o, StatusL7Rsp, 0, "TCPCHK did not match content 'PONG' at step 3 comment: say hello")

	inv := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send", "HELLO\r\n"),
		w("tcp-check", "expect", "!", "string", "NOPE", "error-status", "L7STS",
			"on-error", "got %[res.payload(0,4)]", "status-code", "int(42)"))
	o = run(t, inv, r.target(), shortTO)
	wantOutcome(t, o, StatusL7Sts, 42, "got NOPE")

	re := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send-binary", "50494e470d0a"),
		w("tcp-check", "expect", "rstring", "^P.NG", "on-success", "matched %[res.payload(0,4)]"))
	wantOutcome(t, run(t, re, r.target(), shortTO), StatusL7OK, 0, "matched PONG")

	bin := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send", "PING\r\n"),
		w("tcp-check", "expect", "binary", "504f4e47"))
	wantOutcome(t, run(t, bin, r.target(), shortTO), StatusL7OK, 0, "(tcp-check)")

	vars := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "set-var(check.cmd)", "str(PING)"),
		w("tcp-check", "connect"),
		w("tcp-check", "send-lf", "%[var(check.cmd)]\r\n"),
		w("tcp-check", "expect", "string-lf", "%[str(PO)]NG"))
	wantOutcome(t, run(t, vars, r.target(), shortTO), StatusL7OK, 0, "(tcp-check)")
}

func TestTCPCheckConnectErrors(t *testing.T) {
	rules := backendRules(t, w("option", "tcp-check"))
	o := run(t, rules, &Target{Addr: "127.0.0.1", Port: closedPort(t)}, shortTO)
	wantOutcome(t, o, StatusL4Con, 0, "Connection refused at initial connection step of tcp-check")

	p := closedPort(t)
	rules = backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "connect", "port", itoa(p), "comment", "second port"))
	o = run(t, rules, &Target{Addr: "127.0.0.1", Port: 1}, shortTO)
	wantOutcome(t, o, StatusL4Con, 0, "Connection refused at step 1 of tcp-check (connect port "+itoa(p)+") comment: 'second port'")
}

// Texts captured from haproxy 2.6.12 with the same ruleset and peers.
func TestBadPeersComment(t *testing.T) {
	rules := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send", "PING\r\n"),
		w("tcp-check", "expect", "string", "PONG", "comment", "pong"))
	silent := newResponder(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	wantOutcome(t, run(t, rules, silent.target(), Timeouts{Inter: 100 * time.Millisecond}), StatusL7TOut, 0,
		" at step 2 of tcp-check (expect string 'PONG') comment: 'pong'")
	garbage := newResponder(t, func(c net.Conn) { readSome(c); io.WriteString(c, "\x00\x01garbage") })
	wantOutcome(t, run(t, rules, garbage.target(), shortTO), StatusL7Rsp, 0, "TCPCHK did not match content 'PONG' at step 2 comment: pong")
	empty := newResponder(t, func(c net.Conn) { readSome(c) })
	wantOutcome(t, run(t, rules, empty.target(), shortTO), StatusL7Rsp, 0, "TCPCHK got an empty response at step 2 comment: 'pong'")
	reset := newResponder(t, func(c net.Conn) { readSome(c); c.(*net.TCPConn).SetLinger(0) })
	wantOutcome(t, run(t, rules, reset.target(), shortTO), StatusSockErr, 0,
		"Connection reset by peer at step 2 of tcp-check (expect string 'PONG') comment: 'pong'")
	redis := backendRules(t, w("option", "redis-check"))
	wantOutcome(t, run(t, redis, empty.target(), shortTO), StatusL7Sts, 0, "TCPCHK got an empty response at step 2")
}

func TestBadPeers(t *testing.T) {
	rules := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send", "PING\r\n"),
		w("tcp-check", "expect", "string", "PONG"))

	silent := newResponder(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	o := run(t, rules, silent.target(), Timeouts{Inter: 150 * time.Millisecond})
	wantOutcome(t, o, StatusL7TOut, 0, " at step 2 of tcp-check (expect string 'PONG')")
	if o.Duration < 100*time.Millisecond {
		t.Fatalf("timeout reported after %v", o.Duration)
	}

	// timeout check replaces inter once connected.
	o = run(t, rules, silent.target(), Timeouts{Inter: 10 * time.Second, Connect: time.Second, Check: 100 * time.Millisecond})
	if o.Status != StatusL7TOut || o.Duration > 2*time.Second {
		t.Fatalf("timeout check not applied: %+v", o)
	}

	garbage := newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, "\x00\x01garbage")
	})
	o = run(t, rules, garbage.target(), shortTO)
	wantOutcome(t, o, StatusL7Rsp, 0, "TCPCHK did not match content 'PONG' at step 2")

	empty := newResponder(t, func(c net.Conn) { readSome(c) })
	o = run(t, rules, empty.target(), shortTO)
	wantOutcome(t, o, StatusL7Rsp, 0, "TCPCHK got an empty response at step 2")

	reset := newResponder(t, func(c net.Conn) {
		readSome(c)
		c.(*net.TCPConn).SetLinger(0)
	})
	o = run(t, rules, reset.target(), shortTO)
	wantOutcome(t, o, StatusSockErr, 0, "Connection reset by peer at step 2 of tcp-check (expect string 'PONG')")

	// A reset after a partial answer: the data is judged, not the reset.
	partial := newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, "PO")
		time.Sleep(20 * time.Millisecond)
		c.(*net.TCPConn).SetLinger(0)
	})
	o = run(t, rules, partial.target(), shortTO)
	wantOutcome(t, o, StatusL7Rsp, 0, "TCPCHK did not match content 'PONG' at step 2")
}

func httpResponder(t *testing.T, resp string) *responder {
	return newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, resp)
	})
}

func TestHTTPCheck(t *testing.T) {
	var got string
	r := newResponder(t, func(c net.Conn) {
		got = string(readSome(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nX-Role: primary, rw\r\n\r\nhealthy")
	})
	rules := backendRules(t, w("option", "httpchk"))
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL7OK, 200, "")
	if got != "OPTIONS / HTTP/1.0\r\n\r\n" {
		t.Fatalf("request %q", got)
	}

	rules = backendRules(t, w("option", "httpchk", "GET", "/health", "HTTP/1.1"),
		w("http-check", "send", "hdr", "Host", "www"),
		w("http-check", "expect", "string", "healthy"))
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL7OK, 200, "")
	if got != "GET /health HTTP/1.1\r\nhost: www\r\nconnection: close\r\n\r\n" {
		t.Fatalf("request %q", got)
	}

	rules = backendRules(t, w("option", "httpchk"),
		w("http-check", "expect", "hdr", "name", "x-role", "value", "rw"))
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL7OK, 200, "")
	rules = backendRules(t, w("option", "httpchk"),
		w("http-check", "expect", "fhdr", "name", "x-role", "value", "rw"))
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL7Sts, 200, "OK")

	rules = backendRules(t, w("option", "httpchk"),
		w("http-check", "expect", "!", "string", "healthy"))
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL7Rsp, 200, "HTTP check matched unwanted content")

	down := httpResponder(t, "HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
	rules = backendRules(t, w("option", "httpchk", "GET", "/"))
	wantOutcome(t, run(t, rules, down.target(), shortTO), StatusL7Sts, 503, "Service Unavailable")
	rules = backendRules(t, w("option", "httpchk"), w("http-check", "expect", "rstatus", "^5"))
	wantOutcome(t, run(t, rules, down.target(), shortTO), StatusL7OK, 503, "")

	gone := httpResponder(t, "HTTP/1.0 404 Not Found\r\n\r\n")
	rules = backendRules(t, w("option", "httpchk"), w("http-check", "disable-on-404"))
	wantOutcome(t, run(t, rules, gone.target(), shortTO), StatusL7OKC, 404, "")
	tg := gone.target()
	tg.ServerDown = true
	wantOutcome(t, run(t, rules, tg, shortTO), StatusL7Sts, 404, "Not Found")

	// Texts captured from haproxy 2.6.12.
	world := backendRules(t, w("option", "httpchk"), w("http-check", "expect", "string", "world"))
	hello := httpResponder(t, "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello")
	wantOutcome(t, run(t, world, hello.target(), shortTO), StatusL7Rsp, 200, "HTTP content check did not match")
	nobody := httpResponder(t, "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
	wantOutcome(t, run(t, world, nobody.target(), shortTO), StatusL7Rsp, 200, "HTTP content check could not find a response body")

	junk := httpResponder(t, "SSH-2.0-OpenSSH\r\n\r\n")
	wantOutcome(t, run(t, rules, junk.target(), shortTO), StatusL7Rsp, 0, "")

	// The body arrives in pieces; the expect waits for it.
	chunked := newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nheal")
		time.Sleep(30 * time.Millisecond)
		io.WriteString(c, "\r\n3\r\nthy\r\n0\r\n\r\n")
	})
	rules = backendRules(t, w("option", "httpchk"), w("http-check", "expect", "string", "healthy"))
	wantOutcome(t, run(t, rules, chunked.target(), shortTO), StatusL7OK, 200, "")
}

func TestHTTPCheckSendState(t *testing.T) {
	var got string
	r := newResponder(t, func(c net.Conn) {
		got = string(readSome(c))
		io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\n")
	})
	rules := backendRules(t, w("option", "httpchk"), w("http-check", "send-state"))
	tg := r.target()
	tg.StateHeader = StateHeader(OpStopped, true, 0, 2, 3, "127.0.0.1", 29995, "be", "h1", "vm", 1, 0, 0, 0, 0, 0)
	run(t, rules, tg, shortTO)
	want := "OPTIONS / HTTP/1.0\r\nx-haproxy-server-state: DOWN; address=127.0.0.1; port=29995; name=be/h1; node=vm; weight=1/0; scur=0/0; qcur=0\r\n\r\n"
	if got != want {
		t.Fatalf("request %q\nwant    %q", got, want)
	}
}

func TestTLSChecks(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	a := srv.Listener.Addr().(*net.TCPAddr)
	tg := &Target{Addr: "127.0.0.1", Port: a.Port}

	rules := backendRules(t, w("option", "tcp-check"), w("tcp-check", "connect", "ssl"))
	wantOutcome(t, run(t, rules, tg, shortTO), StatusL6OK, 0, "(tcp-check)")

	// check-ssl on a plain check: the implicit connect takes the server's setting.
	tls := *tg
	tls.SSL = true
	wantOutcome(t, run(t, backendRules(t), &tls, shortTO), StatusL6OK, 0, "")
	rules = backendRules(t, w("option", "httpchk"), w("http-check", "expect", "status", "200"))
	wantOutcome(t, run(t, rules, &tls, shortTO), StatusL7OK, 200, "")

	// TLS towards a plain server fails at layer 6.
	plain := newResponder(t, func(c net.Conn) { io.WriteString(c, "220 not tls\r\n") })
	pt := plain.target()
	pt.SSL = true
	o := run(t, backendRules(t), pt, shortTO)
	if o.Status != StatusL6Rsp || !strings.HasPrefix(o.Desc, "SSL handshake failure") {
		t.Fatalf("got %+v", o)
	}

	// ssl-hello-chk: Go refuses SSLv3 with an alert record, which still
	// proves an SSL stack answers.
	hello := backendRules(t, w("option", "ssl-hello-chk"))
	wantOutcome(t, run(t, hello, tg, shortTO), StatusL6OK, 0, "")
	wantOutcome(t, run(t, hello, plain.target(), shortTO), StatusL6Rsp, 0, "")
}

func TestTLSVerify(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	a := srv.Listener.Addr().(*net.TCPAddr)
	tg := &Target{Addr: "127.0.0.1", Port: a.Port, SSL: true, TLS: &tls.Config{}}
	o := run(t, backendRules(t), tg, shortTO)
	if o.Status != StatusL6Rsp {
		t.Fatalf("verify required must fail on an unknown CA: %+v", o)
	}
}

func TestSendLogFormatNames(t *testing.T) {
	got := make(chan string, 1)
	r := newResponder(t, func(c net.Conn) {
		b := readSome(c)
		got <- string(b)
		io.WriteString(c, "OK\r\n")
	})
	rules := backendRules(t, w("option", "tcp-check"),
		w("tcp-check", "send-lf", "hello %[be_name]/%[srv_name]\r\n"),
		w("tcp-check", "expect", "string", "OK"))
	tg := r.target()
	tg.Backend, tg.Server = "be1", "srv1"
	wantOutcome(t, run(t, rules, tg, shortTO), StatusL7OK, 0, "(tcp-check)")
	if s := <-got; s != "hello be1/srv1\r\n" {
		t.Fatalf("server received %q", s)
	}
}

func TestHTTPExpectHeaderLogFormat(t *testing.T) {
	r := newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Hdr-Name: x-role\r\nX-Role: primary, rw\r\n\r\n")
	})
	rules := backendRules(t, w("option", "httpchk"),
		w("http-check", "expect", "status", "200"),
		w("http-check", "set-var(check.name)", "res.fhdr(x-hdr-name)"),
		w("http-check", "expect", "hdr", "name-lf", "-m", "str", "%[var(check.name)]"),
		w("http-check", "expect", "hdr", "name-lf", "%[res.fhdr(x-hdr-name)]", "value-lf", "%[res.hdr(x-role)]"),
		w("http-check", "expect", "fhdr", "name", "x-role", "value-lf", "%[res.fhdr(x-role)]"))
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL7OK, 200, "")

	rules = backendRules(t, w("option", "httpchk"),
		w("http-check", "expect", "hdr", "name", "x-role", "value-lf", "%[res.fhdr(x-hdr-name)]"))
	wantOutcome(t, run(t, rules, r.target(), shortTO), StatusL7Sts, 200, "OK")
}
