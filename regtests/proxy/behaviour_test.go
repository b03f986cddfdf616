package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

func slowOrigin(t *testing.T, d time.Duration) *harness.Origin {
	return harness.NewOrigin(t, "slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d)
		io.WriteString(w, "slow\n")
	})
}

func TestQueueingWithMaxconn(t *testing.T) {
	var mu sync.Mutex
	cur, peak := 0, 0
	o := harness.NewOrigin(t, "one", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur++
		if cur > peak {
			peak = cur
		}
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
		io.WriteString(w, "ok")
	})
	cfg := defaults + fmt.Sprintf(`
    timeout queue 5s
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s maxconn 1
`, o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	var wg sync.WaitGroup
	errs := make(chan string, 10)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get("http://" + p.Addrs["fe"] + "/")
			if err != nil {
				errs <- err.Error()
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- resp.Status
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if peak != 1 {
		t.Fatalf("server saw %d concurrent requests with maxconn 1", peak)
	}
}

func TestTimeouts(t *testing.T) {
	slow := slowOrigin(t, 3*time.Second)
	// full holds each request 3 s and says when one has arrived, so that
	// the next one is known to find the server full.
	arrived := make(chan struct{}, 4)
	full := harness.NewOrigin(t, "full", func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		time.Sleep(3 * time.Second)
		io.WriteString(w, "full\n")
	})
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 500ms
    timeout http-request 500ms
    timeout queue 300ms
frontend fe
    bind "fd@${fe}"
    use_backend full if { path_beg /full }
    default_backend be
backend be
    server s1 %s
backend full
    timeout server 5s
    server s1 %s maxconn 1
`, slow.Addr, full.Addr)
	for name, prog := range proxies(t) {
		p := harness.Start(t, prog, cfg, "fe")
		addr := p.Addrs["fe"]
		// timeout server: 504.
		if out := harness.RawRequest(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second); !strings.HasPrefix(out, "HTTP/1.1 504") {
			t.Errorf("%s: timeout server: %q", name, firstLine(out))
		}
		// timeout http-request: a partial head gets 408.
		if out := harness.RawRequest(t, addr, "GET / HTTP/1.1\r\nHost:", 5*time.Second); !strings.HasPrefix(out, "HTTP/1.1 408") {
			t.Errorf("%s: timeout http-request: %q", name, firstLine(out))
		}
		// timeout queue: the second request to a full server gets 503.
		done := make(chan string)
		go func() { done <- harness.RawRequest(t, addr, "GET /full HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second) }()
		select {
		case <-arrived:
		case <-time.After(harness.Patience):
			t.Fatalf("%s: the first request never reached the server", name)
		}
		if out := harness.RawRequest(t, addr, "GET /full2 HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second); !strings.HasPrefix(out, "HTTP/1.1 503") {
			t.Errorf("%s: timeout queue: %q\n%s", name, firstLine(out), p.Output())
		}
		<-done
		p.Stop()
	}
}

func TestNoServerAndConnectFailure(t *testing.T) {
	// Port 1: a port drawn free and closed again was soon taken by
	// another package's test server, which answered 200.
	dead := "127.0.0.1:1"
	cfg := defaults + fmt.Sprintf(`
    retries 1
frontend fe
    bind "fd@${fe}"
    use_backend empty if { path_beg /empty }
    default_backend dead
backend empty
backend dead
    server s1 %s
`, dead)
	for name, prog := range proxies(t) {
		p := harness.Start(t, prog, cfg, "fe")
		for _, path := range []string{"/empty", "/dead"} {
			out := harness.RawRequest(t, p.Addrs["fe"], "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n", 5*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 503") || !strings.Contains(out, "No server is available to handle this request.") {
				t.Errorf("%s %s: %q", name, path, out)
			}
		}
		p.Stop()
	}
}

func TestRulesAndRouting(t *testing.T) {
	o := harness.NewOrigin(t, "hdrs", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s a=%s b=%s gone=%s xff=%s", r.URL.Path, r.Header.Get("X-A"), strings.Join(r.Header.Values("X-B"), "+"), r.Header.Get("X-Gone"), r.Header.Get("X-Forwarded-For"))
	})
	api := harness.NewOrigin(t, "api", nil)
	errfile := filepath.Join(t.TempDir(), "403.http")
	os.WriteFile(errfile, []byte("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\nnope!\r\n"), 0o644)
	cfg := defaults + fmt.Sprintf(`
    option forwardfor
frontend fe
    bind "fd@${fe}"
    errorfile 403 %s
    acl is_api path_beg /api
    acl is_png path_end .png
    acl post method POST
    http-request deny if is_png
    http-request return status 200 content-type text/plain string pong if { path /ping }
    http-request set-header X-A one
    http-request add-header X-B two
    http-request add-header X-B three
    http-request del-header X-Gone
    use_backend api if is_api !post
    default_backend be
backend be
    server s1 %s
backend api
    server a1 %s
`, errfile, o.Addr, api.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	addr := p.Addrs["fe"]
	c := &http.Client{}
	req, _ := http.NewRequest("GET", "http://"+addr+"/x", nil)
	req.Header.Set("X-Gone", "yes")
	req.Header.Set("X-A", "zero")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "/x a=one b=two+three gone= xff=127.0.0.1" {
		t.Fatalf("headers seen by the origin: %q", b)
	}
	if st, body := harness.Get(t, c, addr, "/api/v1"); st != 200 || body != "api\n" {
		t.Fatalf("use_backend: %d %q", st, body)
	}
	r2, _ := c.Post("http://"+addr+"/api/v1", "text/plain", strings.NewReader("x"))
	b2, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if !strings.HasPrefix(string(b2), "/api/v1 a=one") {
		t.Fatalf("POST /api should go to the default backend: %q", b2)
	}
	if st, body := harness.Get(t, c, addr, "/img.png"); st != 403 || body != "nope!\r\n" {
		t.Fatalf("deny with errorfile: %d %q", st, body)
	}
	if st, body := harness.Get(t, c, addr, "/ping"); st != 200 || body != "pong" {
		t.Fatalf("return: %d %q", st, body)
	}
}

func TestBodilessResponsesAndPipelining(t *testing.T) {
	o := harness.NewOrigin(t, "codes", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(204)
		case "/304":
			w.WriteHeader(304)
		default:
			io.WriteString(w, "body:"+r.URL.Path)
		}
	})
	cfg := defaults + oneServer(o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	c, err := net.Dial("tcp", p.Addrs["fe"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Five pipelined requests in one write.
	io.WriteString(c, "HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /204 HTTP/1.1\r\nHost: x\r\n\r\nGET /304 HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.0\r\nHost: x\r\n\r\n")
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	want := []struct {
		method string
		status int
		body   string
	}{{"HEAD", 200, ""}, {"GET", 204, ""}, {"GET", 304, ""}, {"GET", 200, "body:/a"}, {"GET", 200, "body:/b"}}
	for i, w := range want {
		resp, body, err := harness.ReadResponse(br, w.method)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if resp.StatusCode != w.status || body != w.body {
			t.Fatalf("response %d: %d %q, want %d %q", i, resp.StatusCode, body, w.status, w.body)
		}
	}
	// HTTP/1.0 without keep-alive: the connection closes.
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("connection still open after an HTTP/1.0 exchange: %v", err)
	}
}

func TestClientAbortAndSlowClients(t *testing.T) {
	got := make(chan int64, 4)
	receiving := make(chan struct{}, 1)
	o := harness.NewOrigin(t, "sink", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/abort" {
			receiving <- struct{}{}
		}
		n, _ := io.Copy(io.Discard, r.Body)
		got <- n
		io.WriteString(w, "ok")
	})
	cfg := "\nglobal\n    stats socket ${TMP}/s.sock level admin" + defaults + oneServer(o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	addr := p.Addrs["fe"]
	sock := filepath.Join(p.Dir, "s.sock")
	// The descriptors counted as the base are those of a goha that has
	// served a request and has its client connection gone: its pooled
	// server connection is one of them.
	if out := harness.RawRequest(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", harness.Patience); !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Fatalf("first request: %q", firstLine(out))
	}
	<-got
	harness.WaitScur(t, sock, "fe", "FRONTEND", 0)
	baseFDs := p.FDs()
	// A client aborting mid-body, once the origin is reading that body.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "POST /abort HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("a", 1000))
	select {
	case <-receiving:
	case <-time.After(harness.Patience):
		t.Fatal("the request never reached the origin")
	}
	c.Close()
	select {
	case n := <-got:
		if n >= 100000 {
			t.Fatalf("origin got the whole body from an aborted client")
		}
	case <-time.After(harness.Patience):
		t.Fatal("origin never saw the end of the aborted request")
	}
	// Slow clients sending a byte at a time do not block others.
	var slow []net.Conn
	for i := 0; i < 20; i++ {
		s, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(s, "GE")
		slow = append(slow, s)
	}
	cl := &http.Client{Timeout: harness.Patience}
	for i := 0; i < 10; i++ {
		if st, _ := harness.Get(t, cl, addr, "/fast"); st != 200 {
			t.Fatalf("fast client got %d while slow clients trickle", st)
		}
		<-got
	}
	cl.CloseIdleConnections()
	for _, s := range slow {
		s.Close()
	}
	// Descriptors come back to where they were (pooled server connection
	// aside).
	harness.Within(harness.Patience, func() bool { return p.FDs() <= baseFDs+2 })
	if n := p.FDs(); n > baseFDs+2 {
		t.Fatalf("descriptor leak: %d open, %d before", n, baseFDs)
	}
	if !strings.Contains(p.Output(), " CD") && !strings.Contains(p.Output(), " cD") {
		t.Logf("log output:\n%s", p.Output())
	}
}

func TestTCPModeHalfClose(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				b, _ := io.ReadAll(c) // until the client half-closes
				c.Write([]byte(strings.ToUpper(string(b))))
				c.Close()
			}()
		}
	}()
	cfg := fmt.Sprintf(`
defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen l
    bind "fd@${fe}"
    server s1 %s
`, ln.Addr())
	for name, prog := range proxies(t) {
		p := harness.Start(t, prog, cfg, "fe")
		c, err := net.Dial("tcp", p.Addrs["fe"])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "hello over tcp")
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		if string(b) != "HELLO OVER TCP" {
			t.Fatalf("%s: got %q", name, b)
		}
		// Garbage on a tcp frontend is forwarded, not interpreted.
		if out := harness.RawRequest(t, p.Addrs["fe"], "\x00\xff garbage\r\n\r\n", 3*time.Second); out != "\x00\xff GARBAGE\r\n\r\n" && out != "" {
			t.Logf("%s: garbage answer %q", name, out)
		}
		p.Stop()
	}
}

// TestIdleKeepAliveParked: a keep-alive connection idle longer than the
// parking delay is served again on its next request, and closed when the
// keep-alive timeout passes.
func TestIdleKeepAliveParked(t *testing.T) {
	o := harness.NewOrigin(t, "s1", nil)
	cfg := fmt.Sprintf(`
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 5s
    timeout http-keep-alive 3s
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s
`, o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	c, err := net.Dial("tcp", p.Addrs["fe"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		io.WriteString(c, "GET /p HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, body, err := harness.ReadResponse(br, "GET")
		if err != nil || resp.StatusCode != 200 || body != "s1\n" {
			t.Fatalf("request %d after idling: %v %v %q", i, resp, err, body)
		}
		time.Sleep(700 * time.Millisecond) // past the parking delay, within keep-alive
	}
	// Now stay idle past the keep-alive timeout: goha closes, long
	// before the client timeout would.
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(harness.Patience))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection not closed by the keep-alive timeout: %v", err)
	}
	if waited := time.Since(start); waited > 15*time.Second {
		t.Fatalf("closed after %v, keep-alive timeout is 3 s, client timeout 30 s", waited)
	}
}
