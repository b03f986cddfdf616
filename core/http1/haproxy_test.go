package http1

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

const haproxyBin = "/usr/sbin/haproxy"

// startHAProxy runs the installed HAProxy with a frontend answering 200 on
// /ok paths and 503 (no server) elsewhere, and returns its address.
func startHAProxy(t *testing.T) string {
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
    default_backend nosrv
backend nosrv
backend ok
    option http-buffer-request
    http-request return status 200 content-type text/plain string "hello"
`, addr)
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
	var h Head
	if _, err := h.ParseResponse(out, MethodGET); err != nil {
		t.Fatalf("haproxy answered %q", out)
	}
	return h.Status, out
}

// TestAgainstHAProxy replays the request vectors against the real HAProxy
// and checks that goha's parser accepts and rejects exactly as it does.
func TestAgainstHAProxy(t *testing.T) {
	addr := startHAProxy(t)
	for _, v := range requestVectors {
		hs, _ := exchange(t, addr, v.raw)
		if hs == 200 {
			hs = 0
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
		hs, _ := exchange(t, addr, head+v.in)
		if (hs == 200) != (v.n >= 0) {
			t.Errorf("%s: haproxy %d, goha valid=%v", v.name, hs, v.n >= 0)
		}
	}
}
