// Package proxy tests goha's data path end to end: the built binary between
// real clients and real origin servers on loopback. Where a scenario's
// outcome is HAProxy's behaviour (server order, status codes), it runs
// against HAProxy 2.6 too when installed.
package proxy

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

const defaults = `
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
`

// oneServer is a frontend sending everything to one server at addr.
func oneServer(addr string) string {
	return fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s
`, addr)
}

// proxies returns the binaries a comparative scenario runs on.
func proxies(t *testing.T) map[string]string {
	m := map[string]string{"goha": bin.Path(t, "goha")}
	if p, err := exec.LookPath("haproxy"); err == nil {
		m["haproxy"] = p
	}
	return m
}

func origins(t *testing.T, names ...string) []*harness.Origin {
	var out []*harness.Origin
	for _, n := range names {
		out = append(out, harness.NewOrigin(t, n, nil))
	}
	return out
}

// sequence sends n requests on one keep-alive connection and returns the
// names of the servers that answered.
func sequence(t *testing.T, addr string, n int, path string) []string {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer c.CloseIdleConnections()
	var seq []string
	for i := 0; i < n; i++ {
		st, body := harness.Get(t, c, addr, path)
		if st != 200 {
			t.Fatalf("request %d: status %d", i, st)
		}
		seq = append(seq, strings.TrimSpace(body))
	}
	return seq
}

func TestRoundRobinWeightsSequence(t *testing.T) {
	o := origins(t, "s1", "s2", "s3")
	cfg := defaults + fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    balance roundrobin
    server s1 %s weight 1
    server s2 %s weight 2
    server s3 %s weight 3
`, o[0].Addr, o[1].Addr, o[2].Addr)
	seqs := map[string][]string{}
	for name, prog := range proxies(t) {
		p := harness.Start(t, prog, cfg, "fe")
		seqs[name] = sequence(t, p.Addrs["fe"], 12, "/")
		p.Stop()
	}
	got := seqs["goha"]
	count := map[string]int{}
	for _, s := range got {
		count[s]++
	}
	if count["s1"] != 2 || count["s2"] != 4 || count["s3"] != 6 {
		t.Fatalf("distribution over two cycles: %v (sequence %v)", count, got)
	}
	if h, ok := seqs["haproxy"]; ok && strings.Join(h, ",") != strings.Join(got, ",") {
		t.Fatalf("server order differs:\n goha    %v\n haproxy %v", got, h)
	}
	t.Logf("sequence: %v", got)
}

func TestAlgorithmsSameOrderAsHAProxy(t *testing.T) {
	o := origins(t, "a", "b", "c", "d")
	algos := []string{"static-rr", "leastconn", "first", "source", "uri", "url_param id", "hdr(x-key)", "uri\n    hash-type consistent"}
	for _, algo := range algos {
		t.Run(strings.Fields(algo)[0], func(t *testing.T) {
			cfg := defaults + fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    balance %s
    server a %s maxconn 100
    server b %s weight 2 maxconn 100
    server c %s weight 3 maxconn 100
    server d %s maxconn 100
`, algo, o[0].Addr, o[1].Addr, o[2].Addr, o[3].Addr)
			res := map[string]string{}
			for name, prog := range proxies(t) {
				p := harness.Start(t, prog, cfg, "fe")
				c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
				var seq []string
				for i := 0; i < 24; i++ {
					req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/p/%d?id=%d", p.Addrs["fe"], i%7, i%5), nil)
					req.Header.Set("X-Key", fmt.Sprintf("k%d", i%6))
					resp, err := c.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					seq = append(seq, strings.TrimSpace(string(b)))
				}
				c.CloseIdleConnections()
				p.Stop()
				res[name] = strings.Join(seq, ",")
			}
			if h, ok := res["haproxy"]; ok && h != res["goha"] {
				t.Fatalf("server order differs:\n goha    %s\n haproxy %s", res["goha"], h)
			}
		})
	}
}

func TestKeepAliveReuse(t *testing.T) {
	o := origins(t, "s1")
	cfg := defaults + oneServer(o[0].Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	sequence(t, p.Addrs["fe"], 50, "/")
	if n := o[0].Conns.Load(); n != 1 {
		t.Fatalf("50 keep-alive requests opened %d server connections, want 1", n)
	}
	// A new client connection reuses the pooled server connection too.
	sequence(t, p.Addrs["fe"], 5, "/")
	if n := o[0].Conns.Load(); n > 2 {
		t.Fatalf("server connections: %d", n)
	}
}

func TestChunkedBothWays(t *testing.T) {
	o := harness.NewOrigin(t, "echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-TE", strings.Join(r.TransferEncoding, ","))
		fl := w.(http.Flusher)
		for i := 0; i < 3; i++ {
			w.Write(b)
			fl.Flush()
		}
	})
	cfg := defaults + oneServer(o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	c, err := net.Dial("tcp", p.Addrs["fe"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(c, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
		resp, body, err := harness.ReadResponse(br, "POST")
		if err != nil {
			t.Fatal(err)
		}
		if body != strings.Repeat("hello world", 3) || resp.Header.Get("X-TE") != "chunked" {
			t.Fatalf("round %d: body %q te %q", i, body, resp.Header.Get("X-TE"))
		}
		if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("response not chunked: %v", resp.TransferEncoding)
		}
	}
}

// bigReader produces n pseudo-random bytes without holding them.
type bigReader struct{ n, i int64 }

func (r *bigReader) Read(p []byte) (int, error) {
	if r.i >= r.n {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n-r.i {
		p = p[:r.n-r.i]
	}
	for k := range p {
		p[k] = byte((r.i + int64(k)) * 7 % 251)
	}
	r.i += int64(len(p))
	return len(p), nil
}

func TestLargeBodiesStreamed(t *testing.T) {
	const size = 200 << 20
	want := sha256.New()
	io.Copy(want, &bigReader{n: size})
	sum := fmt.Sprintf("%x", want.Sum(nil))
	o := harness.NewOrigin(t, "big", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			h := sha256.New()
			n, _ := io.Copy(h, r.Body)
			fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(size))
		io.Copy(w, &bigReader{n: size})
	})
	cfg := defaults + oneServer(o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	resp, err := http.Get("http://" + p.Addrs["fe"] + "/big")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, _ := io.Copy(h, resp.Body)
	resp.Body.Close()
	if n != size || fmt.Sprintf("%x", h.Sum(nil)) != sum {
		t.Fatalf("download: %d bytes, checksum mismatch", n)
	}
	up, err := http.Post("http://"+p.Addrs["fe"]+"/up", "application/octet-stream", &bigReader{n: size})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(up.Body)
	up.Body.Close()
	if string(b) != fmt.Sprintf("%d %s", size, sum) {
		t.Fatalf("upload seen by the origin: %q", b)
	}
	if _, peak := p.RSS(); peak > 64<<10 {
		t.Fatalf("peak RSS %d kB while streaming 200 MB bodies: bodies are not streamed", peak)
	}
}

func TestWebSocketTunnel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil || !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
					return
				}
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
				io.Copy(c, br) // echo
			}()
		}
	}()
	cfg := defaults + fmt.Sprintf(`
    timeout tunnel 10s
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    server s1 %s
`, ln.Addr())
	for name, prog := range proxies(t) {
		p := harness.Start(t, prog, cfg, "fe")
		c, err := net.Dial("tcp", p.Addrs["fe"])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 101 {
			t.Fatalf("%s: upgrade: %v %v", name, resp, err)
		}
		for i := 0; i < 5; i++ {
			msg := fmt.Sprintf("frame-%d|", i)
			io.WriteString(c, msg)
			buf := make([]byte, len(msg))
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			if _, err := io.ReadFull(br, buf); err != nil || string(buf) != msg {
				t.Fatalf("%s: echo %q: %q %v", name, msg, buf, err)
			}
		}
		c.Close()
		p.Stop()
	}
}

func TestSmugglingVectorsRejected(t *testing.T) {
	o := origins(t, "s1")
	cfg := defaults + oneServer(o[0].Addr)
	vectors := map[string]string{
		"differing CL":     "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
		"space in name":    "GET / HTTP/1.1\r\nHost: x\r\nX Bad: 1\r\n\r\n",
		"space before :":   "GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n",
		"bad CL":           "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n",
		"TE not chunked":   "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
		"bad request line": "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
		"NUL in header":    "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
	}
	for name, prog := range proxies(t) {
		p := harness.Start(t, prog, cfg, "fe")
		for v, raw := range vectors {
			out := harness.RawRequest(t, p.Addrs["fe"], raw, 3*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 400 ") && !strings.HasPrefix(out, "HTTP/1.1 501 ") && !strings.HasPrefix(out, "HTTP/1.1 422 ") {
				t.Errorf("%s: %s: answered %q", name, v, firstLine(out))
			}
		}
		p.Stop()
	}
	if n := o[0].Reqs.Load(); n != 0 {
		t.Fatalf("%d smuggling vectors reached the origin", n)
	}
}

func TestCLAndTEFramedByChunked(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	o := harness.NewOrigin(t, "s1", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %q cl=%d", r.URL.Path, b, r.ContentLength))
		mu.Unlock()
		io.WriteString(w, "ok")
	})
	cfg := defaults + oneServer(o.Addr)
	p := harness.Start(t, bin.Path(t, "goha"), cfg, "fe")
	raw := "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	out := harness.RawRequest(t, p.Addrs["fe"], raw, 3*time.Second)
	if !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Fatalf("answer: %q", out)
	}
	if strings.Count(out, "HTTP/1.1 ") != 1 {
		t.Fatalf("the connection was not closed after the response: %q", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !strings.HasPrefix(seen[0], `/a "abc"`) {
		t.Fatalf("origin saw %v", seen)
	}
}

func firstLine(s string) string {
	if i := strings.Index(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
