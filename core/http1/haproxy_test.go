package http1

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const haproxyBin = "/usr/sbin/haproxy"

// startHAProxy runs the installed HAProxy with a frontend answering 200 on
// /ok paths and 503 (no server) elsewhere, and returns its address.
func startHAProxy(t *testing.T) string {
	return startHAProxyWith(t, "127.0.0.1:9")
}

// startHAProxyWith also routes /srv to a server at srv.
func startHAProxyWith(t *testing.T, srv string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs haproxy")
	}
	if _, err := os.Stat(haproxyBin); err != nil {
		t.Skip("haproxy not installed")
	}
	// Probe a free port below 32768 (haproxy needs a fixed one).
	var addr string
	for p := 20000 + os.Getpid()%10000; ; p++ {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			addr = l.Addr().String()
			l.Close()
			break
		}
		if p > 32000 {
			t.Skip("no free port")
		}
	}
	cfg := filepath.Join(t.TempDir(), "h.cfg")
	conf := fmt.Sprintf(`defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 2s
frontend fe
    bind %s
    http-request deny if { path_beg /deny }
    use_backend ok if { path_beg /ok }
    use_backend srv if { path_beg /srv }
    use_backend srv if { path_beg /fwd }
    option forwardfor
    default_backend nosrv
backend nosrv
backend ok
    option http-buffer-request
    http-request return status 200 content-type text/plain string "hello"
backend srv
    server s %s
`, addr, srv)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(haproxyBin, "-db", "-f", cfg)
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start haproxy:", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatal("haproxy did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exchange sends raw and returns the response head's status and the whole
// response.
func exchange(t *testing.T, addr, raw string) (int, []byte) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(raw))
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	out, _ := io.ReadAll(c)
	// Read the status by hand: HAProxy relays codes goha's parser refuses.
	line, _, _ := bytes.Cut(out, []byte("\r\n"))
	f := bytes.Fields(line)
	if len(f) < 2 {
		t.Fatalf("haproxy answered %q", out)
	}
	st, err := strconv.Atoi(string(f[1]))
	if err != nil {
		t.Fatalf("haproxy answered %q", out)
	}
	return st, out
}

// TestAgainstHAProxy replays the request vectors against the real HAProxy
// and checks that goha's parser accepts and rejects exactly as it does.
func TestAgainstHAProxy(t *testing.T) {
	addr := startHAProxy(t)
	for _, v := range requestVectors {
		hs, _ := exchange(t, addr, v.raw)
		if hs == 200 || hs == 503 {
			hs = 0 // accepted: answered by the /ok backend or by "no server"
		}
		ours, _, _ := parseStatus(t, v.raw)
		if hs != ours {
			t.Errorf("%s: haproxy %d, goha %d", v.name, hs, ours)
		}
	}
}

// TestRepliesAgainstHAProxy compares the error replies byte for byte.
func TestRepliesAgainstHAProxy(t *testing.T) {
	addr := startHAProxy(t)
	cases := []struct {
		raw  string
		want []byte
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", ErrorReply(503).Bytes(ConnNone)},
		{"GET / HTTP/1.0\r\n\r\n", ErrorReply(503).Bytes(ConnClose)},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", ErrorReply(503).Bytes(ConnKeepAlive)},
		{"GET /deny HTTP/1.1\r\nHost: a\r\n\r\n", ErrorReply(403).Bytes(ConnNone)},
		{"G(T / HTTP/1.1\r\n\r\n", RawError(400)},
		{"GET /ok HTTP/1.0\r\nContent-Length: 1\r\n\r\na", RawError(413)},
		{"POST /ok HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", RawError(422)},
	}
	for _, c := range cases {
		_, got := exchange(t, addr, c.raw)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%q:\nhaproxy %q\ngoha    %q", c.raw, got, c.want)
		}
	}
}

// TestChunkedAgainstHAProxy sends each chunked-body vector as a request
// body (HAProxy waits for the whole body with http-buffer-request) and
// checks that goha's framing accepts and refuses the same ones.
func TestChunkedAgainstHAProxy(t *testing.T) {
	addr := startHAProxy(t)
	head := "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, v := range chunkVectors {
		if v.n == -2 {
			continue // incomplete: HAProxy would wait for the timeout
		}
		if v.kind == ErrTrailer {
			// HAProxy may answer before it parses the trailers (its
			// reply to these is 400 or 200 depending on timing).
			continue
		}
		hs, _ := exchange(t, addr, head+v.in)
		if (hs == 200) != (v.n >= 0) {
			t.Errorf("%s: haproxy %d, goha valid=%v", v.name, hs, v.n >= 0)
		}
	}
}

var responseVectors = []struct {
	name string
	raw  string
	ok   bool // HAProxy 2.6.12 relays it (false: 502)
}{
	{"plain", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", true},
	{"until-close", "HTTP/1.1 200 OK\r\n\r\nhi", true},
	{"bare-lf", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", true},
	{"no-reason", "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nhi", true},
	{"version-shape", "HTTP/1 200 OK\r\nContent-Length: 2\r\n\r\nhi", false},
	{"version-name", "HTXP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", true},
	{"garbage", "garbage\r\n\r\n", false},
	{"status-letters", "HTTP/1.1 abc OK\r\n\r\n", false},
	{"dup-cl-differ", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi", false},
	{"cl-and-te", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", true},
	{"te-gzip-chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", false},
	{"te-identity", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nhi", false},
	{"space-in-name", "HTTP/1.1 200 OK\r\nA B: c\r\nContent-Length: 2\r\n\r\nhi", false},
	{"status-4-digits", "HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nhi", true},
	{"status-2-digits", "HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nhi", true},
	{"bad-chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false},
}

// TestResponsesAgainstHAProxy serves each response vector from a real
// server behind HAProxy and checks that goha refuses exactly the ones
// HAProxy turns into a 502.
func TestResponsesAgainstHAProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	next := make(chan string, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			c.Read(buf)
			c.Write([]byte(<-next))
			c.Close()
		}
	}()
	addr := startHAProxyWith(t, ln.Addr().String())
	for _, v := range responseVectors {
		var h Head
		_, perr := h.ParseResponse([]byte(v.raw), MethodGET)
		goha := perr == nil
		if goha && h.Body == BodyChunked {
			var b Body
			b.Init(&h)
			_, _, berr := b.Scan([]byte(v.raw)[h.Len():])
			goha = berr == nil
		}
		if goha != v.ok {
			t.Errorf("%s: goha relays=%v, table says %v", v.name, goha, v.ok)
		}
		next <- v.raw
		hs, _ := exchange(t, addr, "GET /srv HTTP/1.1\r\nHost: a\r\n\r\n")
		if (hs != 502) != v.ok {
			t.Errorf("%s: haproxy answered %d, table says relayed=%v", v.name, hs, v.ok)
		}
	}
}

// canonical renders a head as HAProxy forwards it: lower-case names.
func canonical(t *testing.T, raw []byte) string {
	var h Head
	h.MaxSize = len(raw) + 1
	if _, err := h.ParseRequest(raw); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	var b strings.Builder
	b.WriteString(string(h.MethodBytes()) + " " + string(h.URI()) + " " + string(h.Version()) + "\n")
	for i := 0; i < h.NumFields(); i++ {
		if h.Deleted(i) {
			continue
		}
		n, v := h.Field(i)
		b.WriteString(strings.ToLower(string(n)) + ": " + string(v) + "\n")
	}
	return b.String()
}

// TestForwardedHeadAgainstHAProxy captures the head HAProxy sends to a
// server (http-keep-alive mode, option forwardfor) and compares it with the
// head the Rewriter builds for the same request, header name case aside.
func TestForwardedHeadAgainstHAProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	heads := make(chan []byte, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var got []byte
			buf := make([]byte, 4096)
			for !bytes.Contains(got, []byte("\r\n\r\n")) {
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					break
				}
			}
			end := bytes.Index(got, []byte("\r\n\r\n"))
			if end >= 0 {
				got = got[:end+4]
			}
			heads <- got
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
			c.Close()
		}
	}()
	addr := startHAProxyWith(t, ln.Addr().String())
	reqs := []string{
		"GET /fwd HTTP/1.0\r\nX-A: 1\r\n\r\n",
		"GET /fwd HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
		"GET /fwd HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"POST /fwd HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
		"POST /fwd HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\nx",
		"POST /fwd HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
		"POST /fwd HTTP/1.1\r\nHost: a\r\nConnection: upgrade, keep-alive\r\nUpgrade: h2c\r\nX-A: 1\r\nContent-Length: 1\r\n\r\nx",
		"GET /fwd HTTP/1.1\r\nHost: a\r\nX-Fold: a\r\n  b\r\nHost: a\r\n\r\n",
		"GET  /fwd\tHTTP/1.1\nHost: a\nX-B:  spaced  \n\n",
		"GET /fwd HTTP/2.0\r\nHost: a\r\n\r\n",
		"GET /fwd HTTP/1.9\r\nHost: a\r\n\r\n",
	}
	for _, raw := range reqs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(raw))
		theirs := <-heads
		c.Close()

		var h Head
		buf := []byte(raw)
		if _, err := h.ParseRequest(buf); err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		var rw Rewriter
		rw.AddForwardedFor("", netip.MustParseAddr("127.0.0.1"))
		rw.SetConnection(&h, ConnForRequest(&h, true))
		ours := rw.Head(&h)
		if got, want := canonical(t, ours), canonical(t, theirs); got != want {
			t.Errorf("%q:\nhaproxy sends %q\ngoha sends    %q", raw, want, got)
		}
	}
}
