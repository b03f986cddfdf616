package http1

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// miniProxy is the stream loop core builds on this package, reduced to one
// client connection and one server connection: parse, rewrite, one write
// per message, stream what does not fit, keep both sides alive.
func miniProxy(t *testing.T, client net.Conn, server string) {
	defer client.Close()
	srv, err := net.Dial("tcp", server)
	if err != nil {
		t.Error(err)
		return
	}
	defer srv.Close()
	cbuf, sbuf := NewBuffer(DefaultBufSize), NewBuffer(DefaultBufSize)
	var req, resp Head
	var rb, sb Body
	var rwReq, rwResp Rewriter
	ip := netip.MustParseAddr("192.0.2.9")
	for {
		n, err := readHead(cbuf, client, func(b []byte) (int, error) { return req.ParseRequest(b) })
		if err != nil {
			if e, ok := err.(*Error); ok {
				client.Write(RawError(e.Status()))
			}
			return
		}
		rb.Init(&req)
		m, done, err := Complete(cbuf.Bytes(), n, &rb)
		if err != nil {
			return
		}
		rwReq.Reset()
		rwReq.SetConnection(&req, ConnForRequest(&req, true))
		rwReq.AddForwardedFor("", ip)
		if _, err := rwReq.WriteTo(srv, &req, cbuf.Bytes()[n:m]); err != nil {
			return
		}
		method := req.Method
		reqRef := req // the flags ConnForResponse needs; no slices used
		cbuf.Discard(m)
		if !done {
			if _, err := Forward(srv, cbuf, client, &rb); err != nil {
				return
			}
		}
		for {
			n, err = readHead(sbuf, srv, func(b []byte) (int, error) { return resp.ParseResponse(b, method) })
			if err != nil {
				client.Write(ErrorReply(502).Bytes(ConnClose))
				return
			}
			sb.Init(&resp)
			m, done, err = Complete(sbuf.Bytes(), n, &sb)
			if err != nil {
				return
			}
			ka := KeepClient(&reqRef, &resp)
			rwResp.Reset()
			rwResp.SetConnection(&resp, ConnForResponse(&resp, &reqRef, ka))
			if _, err := rwResp.WriteTo(client, &resp, sbuf.Bytes()[n:m]); err != nil {
				return
			}
			interim := resp.IsInterim()
			sbuf.Discard(m)
			if !done {
				if _, err := Forward(client, sbuf, srv, &sb); err != nil {
					return
				}
			}
			if interim {
				continue
			}
			if !ka {
				return
			}
			break
		}
	}
}

func readHead(b *Buffer, c net.Conn, parse func([]byte) (int, error)) (int, error) {
	for {
		if b.Len() > 0 {
			n, err := parse(b.Bytes())
			if err != nil || n > 0 {
				return n, err
			}
		}
		if _, err := b.Fill(c); err != nil {
			return 0, err
		}
	}
}

// TestMiniProxy drives real net/http client and server through miniProxy:
// keep-alive, chunked request and response bodies, HEAD, a 5 MB response,
// X-Forwarded-For, and a request refused by the parser.
func TestMiniProxy(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16)
	bigSum := sha256.Sum256(big)
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen-XFF", r.Header.Get("X-Forwarded-For"))
		switch r.URL.Path {
		case "/big":
			w.Write(big)
		case "/echo":
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body)
		case "/chunked":
			w.Write([]byte("part1-"))
			w.(http.Flusher).Flush()
			w.Write([]byte("part2"))
		default:
			w.Header().Set("Content-Length", "2")
			w.Write([]byte("ok"))
		}
	})}
	bl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go backend.Serve(bl)
	defer backend.Close()
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := pl.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go miniProxy(t, c, bl.Addr().String())
		}
	}()
	base := "http://" + pl.Addr().String()
	cl := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	get := func(method, path string, body io.Reader) (*http.Response, []byte) {
		req, _ := http.NewRequest(method, base+path, body)
		if body != nil && method == "POST" && path == "/echo" {
			req.ContentLength = -1 // chunked
		}
		res, err := cl.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%s %s body: %v", method, path, err)
		}
		return res, b
	}
	for i := 0; i < 3; i++ {
		res, b := get("GET", "/", nil)
		if res.StatusCode != 200 || string(b) != "ok" || res.Header.Get("X-Seen-XFF") != "192.0.2.9" {
			t.Fatalf("GET /: %d %q %v", res.StatusCode, b, res.Header)
		}
	}
	res, b := get("POST", "/echo", strings.NewReader(strings.Repeat("x", 100000)))
	if res.StatusCode != 200 || len(b) != 100000 {
		t.Fatalf("POST chunked: %d %d", res.StatusCode, len(b))
	}
	res, b = get("GET", "/chunked", nil)
	if string(b) != "part1-part2" || len(res.TransferEncoding) == 0 {
		t.Fatalf("chunked response: %q %v", b, res.TransferEncoding)
	}
	res, b = get("HEAD", "/", nil)
	if res.StatusCode != 200 || len(b) != 0 {
		t.Fatalf("HEAD: %d %q", res.StatusCode, b)
	}
	res, b = get("GET", "/big", nil)
	if sha256.Sum256(b) != bigSum {
		t.Fatalf("big body: %d bytes, checksum differs", len(b))
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d client connections for keep-alive requests", n)
	}
	// A smuggling attempt is refused with HAProxy's 400.
	c, err := net.Dial("tcp", pl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"))
	out, _ := io.ReadAll(c)
	c.Close()
	if !bytes.Equal(out, RawError(400)) {
		t.Fatalf("smuggling attempt answered %q", out)
	}
}
