package stream

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
)

// compBody is the text the test backend serves.
var compBody = []byte(strings.Repeat("<p>The quick brown fox jumps over the lazy dog.</p>\n", 400))

// compBackend serves compBody for every request: with a Content-Length,
// or chunked in uneven pieces with a trailer for a path starting with
// /chunked.
func compBackend(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					var b bytes.Buffer
					b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"v1\"\r\n")
					b.WriteString("X-Got-AE: " + req.Header.Get("Accept-Encoding") + "\r\n")
					if strings.HasPrefix(req.URL.Path, "/chunked") {
						b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
						for p, n := compBody, 1; len(p) > 0; n = n*3 + 1 {
							k := min(n, len(p))
							b.WriteString(strconv.FormatInt(int64(k), 16) + "\r\n")
							b.Write(p[:k])
							b.WriteString("\r\n")
							p = p[k:]
						}
						b.WriteString("0\r\nX-Trailer: yes\r\n\r\n")
					} else {
						b.WriteString("Content-Length: " + strconv.Itoa(len(compBody)) + "\r\n\r\n")
						b.Write(compBody)
					}
					if _, err := c.Write(b.Bytes()); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// compProxy runs a process whose frontend fe compresses with lines and
// returns its address and the process.
func compProxy(tb testing.TB, lines string) (string, *Process) {
	return compProxyWith(tb, lines, compBackend(tb))
}

// compProxyTo is compProxy with the server at be.
func compProxyTo(tb testing.TB, lines, be string) string {
	addr, _ := compProxyWith(tb, lines, be)
	return addr
}

func compProxyWith(tb testing.TB, lines, be string) (string, *Process) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	ln.Close()
	tb.Cleanup(func() { f.Close() })
	cfgText := `
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind fd@` + strconv.Itoa(int(f.Fd())) + `
` + lines + `
    http-response set-header X-Comp %[res.comp]/%[res.comp_algo]
    default_backend be
backend be
    server s1 ` + be + `
`
	d := &diag.Collector{}
	secs := config.Parse("comp.cfg", []byte(cfgText), config.Options{}, d)
	cfg := core.Build(secs, d)
	if d.HasAlert() {
		tb.Fatalf("%v", d.All())
	}
	proc := New(cfg)
	proc.Prepare(d)
	if d.HasAlert() {
		tb.Fatalf("%v", d.All())
	}
	if err := proc.Run(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(proc.Stop)
	return proc.Listeners(cfg.FindProxy("fe", core.CapFE))[0].String(), proc
}

// TestCompressionRelay sends requests through a compressing frontend on
// one keep-alive connection and decodes what comes back.
func TestCompressionRelay(t *testing.T) {
	addr, proc := compProxy(t, "    compression algo gzip deflate\n    compression type text/html\n    compression offload\n")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	cases := []struct {
		path, ae, ua string
		coding       string // "" when not compressed
	}{
		{"/plain", "gzip", "", "gzip"},
		{"/chunked", "gzip", "", "gzip"},
		{"/plain", "deflate;q=0.9, gzip;q=0.1", "", "deflate"},
		{"/chunked", "br", "", ""},
		{"/plain", "", "", ""},
		{"/plain", "gzip", "Mozilla/4.0 (compatible; MSIE 5.5)", ""},
	}
	compressed := 0
	for _, tc := range cases {
		req := "GET " + tc.path + " HTTP/1.1\r\nHost: x\r\n"
		if tc.ae != "" {
			req += "Accept-Encoding: " + tc.ae + "\r\n"
		}
		if tc.ua != "" {
			req += "User-Agent: " + tc.ua + "\r\n"
		}
		if _, err := c.Write([]byte(req + "\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.path, tc.ae, err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s %q: body: %v", tc.path, tc.ae, err)
		}
		if got := resp.Header.Get("Content-Encoding"); got != tc.coding {
			t.Fatalf("%s %q: Content-Encoding %q, want %q", tc.path, tc.ae, got, tc.coding)
		}
		body := raw
		if tc.coding != "" {
			compressed++
			var r io.Reader
			if tc.coding == "gzip" {
				r, err = gzip.NewReader(bytes.NewReader(raw))
			} else {
				r, err = zlib.NewReader(bytes.NewReader(raw))
			}
			if err == nil {
				body, err = io.ReadAll(r)
			}
			if err != nil {
				t.Fatalf("%s %q: decoding: %v", tc.path, tc.ae, err)
			}
			if len(raw) >= len(compBody) {
				t.Errorf("%s %q: %d bytes for %d", tc.path, tc.ae, len(raw), len(compBody))
			}
			if resp.ContentLength != -1 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
				t.Errorf("%s %q: framing CL %d TE %v", tc.path, tc.ae, resp.ContentLength, resp.TransferEncoding)
			}
			if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("%s: Vary %q", tc.path, got)
			}
			if got := resp.Header.Get("ETag"); got != `W/"v1"` {
				t.Errorf("%s: ETag %q", tc.path, got)
			}
			if got := resp.Header.Get("X-Got-AE"); got != "" {
				t.Errorf("%s: offload left Accept-Encoding %q", tc.path, got)
			}
			if got, want := resp.Header.Get("X-Comp"), "1/"+tc.coding; got != want {
				t.Errorf("%s: res.comp/res.comp_algo %q, want %q", tc.path, got, want)
			}
			if tc.path == "/chunked" && resp.Trailer.Get("X-Trailer") != "yes" {
				t.Errorf("%s: trailer %v", tc.path, resp.Trailer)
			}
		} else {
			if got := resp.Header.Get("ETag"); got != `"v1"` {
				t.Errorf("%s %q: ETag %q", tc.path, tc.ae, got)
			}
			if got := resp.Header.Get("X-Comp"); got != "0/" {
				t.Errorf("%s %q: res.comp/res.comp_algo %q", tc.path, tc.ae, got)
			}
		}
		if !bytes.Equal(body, compBody) {
			t.Fatalf("%s %q: %d bytes back, want %d", tc.path, tc.ae, len(body), len(compBody))
		}
	}
	fe := proc.Conf.FindProxy("fe", core.CapFE)
	if got := fe.FE.CompRsp.Load(); got != int64(compressed) {
		t.Errorf("comp_rsp %d, want %d", got, compressed)
	}
	if in := fe.FE.CompIn.Load(); in != int64(compressed*len(compBody)) {
		t.Errorf("comp_in %d, want %d", in, compressed*len(compBody))
	}
	if out := fe.FE.CompOut.Load(); out <= 0 || out >= fe.FE.CompIn.Load() {
		t.Errorf("comp_out %d for comp_in %d", out, fe.FE.CompIn.Load())
	}
}

// BenchmarkProxyCompressed is BenchmarkProxyKeepAlive for a 20 kB
// text/html response, compressed with gzip at level 1 (gzip) and passed
// as it is (plain) through the same proxy: the difference is the cost of
// a compressed response.
func BenchmarkProxyCompressed(b *testing.B) {
	addr, _ := compProxy(b, "    compression algo gzip\n")
	for _, bc := range []struct{ name, ae, want string }{{"gzip", "gzip", "gzip"}, {"plain", "br", ""}} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			req := []byte("GET /plain HTTP/1.1\r\nHost: x\r\nAccept-Encoding: " + bc.ae + "\r\n\r\n")
			b.ReportAllocs()
			b.SetBytes(int64(len(compBody)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.Header.Get("Content-Encoding") != bc.want {
					b.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
				}
			}
		})
	}
}

// TestCompressionStreams checks that the body is compressed as it comes:
// the first part of a chunked body reaches the client, decodable, while
// the server still holds the rest back.
func TestCompressionStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	release := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n"))
		<-release
		c.Write([]byte("5\r\nrest\n\r\n0\r\n\r\n"))
	}()
	addr := compProxyTo(t, "    compression algo gzip\n", ln.Addr().String())
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A proxy that waited for the whole body would leave the reads
	// below blocked: the deadline turns that into a failure.
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	first := make([]byte, 6)
	_, err = io.ReadFull(zr, first)
	close(release)
	if err != nil || string(first) != "first\n" {
		t.Fatalf("first part: %q, %v", first, err)
	}
	rest, err := io.ReadAll(zr)
	if err != nil || string(rest) != "rest\n" {
		t.Fatalf("rest: %q, %v", rest, err)
	}
}
