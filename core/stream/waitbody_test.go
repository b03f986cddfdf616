package stream

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// http-request wait-for-body: the rules after it see the body once it is
// whole, or once at-least bytes of it are in, and a body that does not
// come in time is a 408 that closes the connection.
func TestWaitForBodyRequest(t *testing.T) {
	o := newUnitOrigin(t, okHandler)
	_, addr := unitHTTPProxy(t, `    http-request wait-for-body time 30s if { path /all }
    http-request wait-for-body time 30s at-least 4 if { path /some }
    http-request wait-for-body time 50ms if { path /late }
    http-request return status 200 content-type text/plain lf-string "%[req.body]"
`, "    server s1 "+o.addr+"\n")

	c := dialUnit(t, addr)
	c.send("POST /all HTTP/1.1\r\nHost: unit\r\nContent-Length: 10\r\n\r\nhello")
	if !c.held() {
		t.Fatal("answered before the whole body came")
	}
	c.send("world")
	if r, body := c.read("POST"); r.StatusCode != 200 || body != "helloworld" {
		t.Fatalf("content-length body: %d %q, want 200 \"helloworld\"", r.StatusCode, body)
	}
	// Chunked: the rules see the data without the framing.
	c.send("POST /all HTTP/1.1\r\nHost: unit\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
	if !c.held() {
		r, b := c.read("POST")
		t.Fatalf("answered before the last chunk came: %v %q", r, b)
	}
	c.send("2\r\nde\r\n0\r\n\r\n")
	if r, body := c.read("POST"); r.StatusCode != 200 || body != "abcde" {
		t.Fatalf("chunked body: %d %q, want 200 \"abcde\"", r.StatusCode, body)
	}
	// A client that waits for 100-continue gets it from the proxy.
	c.send("POST /all HTTP/1.1\r\nHost: unit\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
	if r, _ := c.read("POST"); r.StatusCode != 100 {
		t.Fatalf("Expect: 100-continue: status %d, want 100", r.StatusCode)
	}
	c.send("xyz")
	if r, body := c.read("POST"); r.StatusCode != 200 || body != "xyz" {
		t.Fatalf("body after 100-continue: %d %q", r.StatusCode, body)
	}

	// at-least: the rules go on with the first bytes, the rest unsent.
	c = dialUnit(t, addr)
	c.send("POST /some HTTP/1.1\r\nHost: unit\r\nContent-Length: 10\r\n\r\nabcd")
	if r, body := c.read("POST"); r.StatusCode != 200 || body != "abcd" {
		t.Fatalf("at-least 4: %d %q, want 200 \"abcd\"", r.StatusCode, body)
	}

	c = dialUnit(t, addr)
	c.send("POST /late HTTP/1.1\r\nHost: unit\r\nContent-Length: 10\r\n\r\nabc")
	r, _ := c.read("POST")
	if r.StatusCode != 408 || !r.Close {
		t.Fatalf("body late: %d (close %v), want 408 and a close", r.StatusCode, r.Close)
	}
	if err := c.closed(); err != nil {
		t.Fatalf("after the 408: %v", err)
	}
	if n := o.reqs.Load(); n != 0 {
		t.Errorf("the origin saw %d requests", n)
	}
}

// rawHTTPOrigin is an origin that reads requests (with a reader of
// bufSize bytes) and hands each one, body unread, to answer, with the
// connection to write its response on; answer false closes the
// connection. It runs until the test ends.
func rawHTTPOrigin(tb testing.TB, bufSize int, answer func(req *http.Request, c net.Conn) bool) string {
	tb.Helper()
	return tcpOrigin(tb, func(c net.Conn) {
		br := bufio.NewReaderSize(c, bufSize)
		for {
			req, err := http.ReadRequest(br)
			if err != nil || !answer(req, c) {
				return
			}
		}
	})
}

// http-response wait-for-body: the response rules see the body once it is
// whole or at-least bytes of it are in; a body that does not come in time
// is a 504, the server connection is closed and the client's goes on.
func TestWaitForBodyResponse(t *testing.T) {
	release := make(chan struct{})
	srvClosed := make(chan struct{})
	addrO := rawHTTPOrigin(t, 4096, func(req *http.Request, c net.Conn) bool {
		io.Copy(io.Discard, req.Body)
		switch req.URL.Path {
		case "/all":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234")
			time.Sleep(20 * time.Millisecond)
			io.WriteString(c, "56789")
		case "/some":
			io.WriteString(c, "HTTP/1.1 201 Created\r\nContent-Length: 10\r\n\r\nabcd")
			<-release
			io.WriteString(c, "efghij")
		case "/late":
			io.WriteString(c, "HTTP/1.1 202 Accepted\r\nContent-Length: 10\r\n\r\nab")
			c.SetReadDeadline(time.Now().Add(unitWait))
			if n, err := c.Read(make([]byte, 1)); n == 0 && err == io.EOF {
				close(srvClosed)
			}
		default:
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
		return true
	})
	_, addr := unitHTTPProxy(t, "", `    http-response wait-for-body time 30s if { status 200 }
    http-response wait-for-body time 30s at-least 4 if { status 201 }
    http-response wait-for-body time 50ms if { status 202 }
    http-response set-header x-body %[res.body]
    server s1 `+addrO+"\n")

	c := dialUnit(t, addr)
	if r, body := c.get("/all"); r.StatusCode != 200 || r.Header.Get("x-body") != "0123456789" || body != "0123456789" {
		t.Fatalf("whole body: %d x-body %q body %q", r.StatusCode, r.Header.Get("x-body"), body)
	}
	c.send("GET /some HTTP/1.1\r\nHost: unit\r\n\r\n")
	c.c.SetReadDeadline(time.Now().Add(unitWait))
	r, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 201 || r.Header.Get("x-body") != "abcd" {
		t.Fatalf("at-least 4: %d x-body %q", r.StatusCode, r.Header.Get("x-body"))
	}
	close(release)
	if b, err := io.ReadAll(r.Body); err != nil || string(b) != "abcdefghij" {
		t.Fatalf("at-least 4: body %q, %v", b, err)
	}
	r, body := c.get("/late")
	if r.StatusCode != 504 || r.Close || !strings.Contains(body, "504 Gateway Time-out") {
		t.Fatalf("late body: %d (close %v) %q, want a 504 on a kept connection", r.StatusCode, r.Close, body)
	}
	waitDone(t, "the server connection's close", srvClosed)
	if r, body := c.get("/next"); r.StatusCode != 200 || body != "ok" {
		t.Fatalf("request after the 504: %d %q", r.StatusCode, body)
	}
}

// The wait-for-body words, with HAProxy 2.6's messages (haproxy -c).
func TestCompileWaitBody(t *testing.T) {
	for _, c := range []struct {
		args    string
		msg     string
		time    time.Duration
		atLeast int64
	}{
		{"", "expects time <time> [ at-least <bytes> ]", 0, 0},
		{"time", "missing argument for 'time'", 0, 0},
		{"at-least 10", "expects time <time> [ at-least <bytes> ]", 0, 0},
		{"time 1x", "unexpected character 'x'", 0, 0},
		{"time x", "unexpected character 'x'", 0, 0},
		{"time 99999999999", "time overflow (maximum value is 2147483647 ms or ~24.8 days)", 0, 0},
		{"time 1s at-least", "missing argument for 'at-least'", 0, 0},
		{"time 1s at-least 1x", "unexpected character 'x'", 0, 0},
		{"time 1s at-least 1kb", "unexpected character 'b'", 0, 0},
		{"time 1s at-least 1k", "", time.Second, 1024},
		{"at-least 3 time 20", "", 20 * time.Millisecond, 3},
		{"time 0", "", 0, 0},
		{"time 1s time 2m", "", 2 * time.Minute, 0},
	} {
		w, err := compileWaitBody(strings.Fields(c.args))
		switch {
		case c.msg != "" && (err == nil || err.Error() != c.msg):
			t.Errorf("%q: got %v, want %q", c.args, err, c.msg)
		case c.msg == "" && err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.msg == "" && (w.time != c.time || w.atLeast != c.atLeast):
			t.Errorf("%q: time %v at-least %d, want %v %d", c.args, w.time, w.atLeast, c.time, c.atLeast)
		}
	}
}

func FuzzCompileWaitBody(f *testing.F) {
	for _, s := range []string{"time 1s", "time 1s at-least 1k", "at-least", "time 99999999999999999999", "time 1us"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := compileWaitBody(strings.Fields(s))
		if err == nil && (w.time < 0 || w.atLeast < 0) {
			t.Fatalf("%q: time %v at-least %d", s, w.time, w.atLeast)
		}
	})
}
