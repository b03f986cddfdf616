package http1

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"testing"
)

func mustParse(t testing.TB, raw string) (*Head, []byte, int) {
	t.Helper()
	buf := []byte(raw)
	h := &Head{}
	n, err := h.ParseRequest(buf)
	if err != nil || n == 0 {
		t.Fatalf("parse %q: %d %v", raw, n, err)
	}
	return h, buf, n
}

func TestRewriteVerbatim(t *testing.T) {
	h, buf, n := mustParse(t, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	var rw Rewriter
	if rw.Modified(h) {
		t.Fatal("untouched head reported modified")
	}
	if got := rw.Head(h); &got[0] != &buf[0] || len(got) != n {
		t.Fatal("untouched head was copied")
	}
}

func TestRewriteHead(t *testing.T) {
	h, _, _ := mustParse(t, "POST  /a?b  HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n"+
		"Upgrade: h2c\r\nX-Drop: 1\r\nContent-Length: 2, 2\r\nx-drop: 2\r\nContent-Length: 2\r\nHost: A\r\n\r\nhi")
	var rw Rewriter
	if n := h.Del("x-drop"); n != 2 {
		t.Fatalf("deleted %d", n)
	}
	rw.SetConnection(h, ConnClose)
	rw.AddForwardedFor("", netip.MustParseAddr("::ffff:192.0.2.7"))
	rw.Set(h, "Host", []byte("b"))
	want := "POST /a?b HTTP/1.1\r\nConnection: Upgrade\r\nContent-Length: 2\r\n" +
		"X-Forwarded-For: 192.0.2.7\r\nHost: b\r\nConnection: close\r\n\r\n"
	// The upgrade with a body lost its Upgrade field at parse time.
	if got := string(rw.Head(h)); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	rw.Reset()
	rw.SetURI([]byte("/new"))
	if got := string(rw.Head(h)); !bytes.HasPrefix([]byte(got), []byte("POST /new HTTP/1.1\r\n")) {
		t.Fatalf("set-uri: %q", got)
	}
}

func TestRewriteResponse(t *testing.T) {
	buf := []byte("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
	var h Head
	if _, err := h.ParseResponse(buf, MethodGET); err != nil {
		t.Fatal(err)
	}
	var rw Rewriter
	rw.SetConnection(&h, ConnKeepAlive)
	if got := string(rw.Head(&h)); got != "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n" {
		t.Fatalf("%q", got)
	}
}

// TestWriteToOneSyscall checks, on a real socket, that each message leaves
// with a single write: the peer sees the whole message in its first read.
func TestWriteToOneSyscall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("z"), 10000)
	h, buf, n := mustParse(t, "POST / HTTP/1.1\r\nContent-Length: 10000\r\n\r\n"+string(body))
	var rw Rewriter
	// Verbatim: head and body adjacent in the read buffer, one Write.
	if _, err := rw.WriteTo(c, h, buf[n:]); err != nil {
		t.Fatal(err)
	}
	// Rewritten with a large body: writev.
	rw.AddForwardedFor("", netip.MustParseAddr("10.0.0.1"))
	if _, err := rw.WriteTo(c, h, buf[n:]); err != nil {
		t.Fatal(err)
	}
	// Rewritten with a small body: copied behind the head.
	if _, err := rw.WriteTo(c, h, buf[n:n+10]); err != nil {
		t.Fatal(err)
	}
	c.Close()
	out := <-got
	want := string(buf) + string(buf[:n-2]) + "X-Forwarded-For: 10.0.0.1\r\n\r\n" + string(body) +
		string(buf[:n-2]) + "X-Forwarded-For: 10.0.0.1\r\n\r\n" + string(body[:10])
	if string(out) != want {
		t.Fatalf("peer got %d bytes, want %d", len(out), len(want))
	}
}

func TestRewriteNoAlloc(t *testing.T) {
	h, buf, n := mustParse(t, browserRequest+"body")
	var rw Rewriter
	ip := netip.MustParseAddr("192.0.2.1")
	run := func() {
		if _, err := h.ParseRequest(buf); err != nil {
			t.Fatal(err)
		}
		rw.Reset()
		h.Del("cookie")
		rw.SetConnection(h, ConnClose)
		rw.AddForwardedFor("", ip)
		if _, err := rw.WriteTo(io.Discard, h, buf[n:]); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Fatalf("%v allocs per rewrite", a)
	}
}

func BenchmarkRewriteForwardFor(b *testing.B) {
	h, buf, n := mustParse(b, browserRequest)
	var rw Rewriter
	ip := netip.MustParseAddr("192.0.2.1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := h.ParseRequest(buf); err != nil {
			b.Fatal(err)
		}
		rw.Reset()
		rw.SetConnection(h, ConnNone)
		rw.AddForwardedFor("", ip)
		if _, err := rw.WriteTo(io.Discard, h, buf[n:]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWritevTCP measures the rewritten-head writev path on a real
// socket: it must not allocate.
func BenchmarkWritevTCP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(io.Discard, c)
		c.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	body := bytes.Repeat([]byte("z"), 8192)
	h, _, _ := mustParse(b, "POST / HTTP/1.1\r\nContent-Length: 8192\r\n\r\n")
	var rw Rewriter
	rw.AddForwardedFor("", netip.MustParseAddr("10.0.0.1"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rw.WriteTo(c, h, body); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSetConnectionTokens(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a,b", "Connection: a,b\r\n"},
		{"a,b,c,d,e,f,g,h,i,j,close", "Connection: a,b,c,d,e,f,g,h,i,j\r\n"},
		{"close,a,b,c,d,e,f,g,h,i,j", "Connection: a,b,c,d,e,f,g,h,i,j\r\n"},
		{"Keep-Alive ,  TE,close", "Connection: TE\r\n"},
		{"close", ""},
		{" , ", "Connection:  , \r\n"}, // untouched: sent verbatim
	}
	for _, tt := range tests {
		h, _, _ := mustParse(t, "GET / HTTP/1.1\r\nConnection: "+tt.in+"\r\nX: y\r\n\r\n")
		var rw Rewriter
		rw.SetConnection(h, ConnNone)
		got := string(rw.Head(h))
		want := "GET / HTTP/1.1\r\n" + tt.want + "X: y\r\n\r\n"
		if got != want {
			t.Errorf("%q: got %q, want %q", tt.in, got, want)
		}
	}
}

func TestConnFor(t *testing.T) {
	req10, _, _ := mustParse(t, "GET / HTTP/1.0\r\n\r\n")
	req11, _, _ := mustParse(t, "GET / HTTP/1.1\r\n\r\n")
	upg, _, _ := mustParse(t, "GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: x\r\n\r\n")
	for _, c := range []struct {
		req  *Head
		ka   bool
		want ConnValue
	}{
		{req10, true, ConnKeepAlive}, {req10, false, ConnNone},
		{req11, true, ConnNone}, {req11, false, ConnClose},
		{upg, false, ConnNone},
	} {
		if got := ConnForRequest(c.req, c.ka); got != c.want {
			t.Errorf("request %q ka=%v: %v, want %v", c.req.Version(), c.ka, got, c.want)
		}
	}
	var resp11, resp10 Head
	resp11.ParseResponse([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), MethodGET)
	resp10.ParseResponse([]byte("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), MethodGET)
	for _, c := range []struct {
		resp, req *Head
		ka        bool
		want      ConnValue
	}{
		// As observed on HAProxy 2.6.12: an HTTP/1.0 client kept alive
		// gets "connection: keep-alive" on an HTTP/1.1 response.
		{&resp11, req10, true, ConnKeepAlive},
		{&resp11, req11, true, ConnNone},
		{&resp11, req10, false, ConnClose},
		{&resp10, req11, true, ConnKeepAlive},
		{&resp10, req11, false, ConnNone},
	} {
		if got := ConnForResponse(c.resp, c.req, c.ka); got != c.want {
			t.Errorf("response %q to %q ka=%v: %v, want %v", c.resp.Version(), c.req.Version(), c.ka, got, c.want)
		}
	}
}

// TestKeepClient pins what HAProxy 2.6.12 was seen to do for each pair.
func TestKeepClient(t *testing.T) {
	tests := []struct {
		req, resp string
		client    bool
		server    bool
	}{
		{"GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\nhi", false, false},
		{"GET / HTTP/1.1\r\n\r\n", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n", true, true},
		{"GET / HTTP/1.0\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", false, true},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", true, true},
		{"GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n", true, false},
		{"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", false, true},
	}
	for _, tt := range tests {
		req, _, _ := mustParse(t, tt.req)
		var resp Head
		if _, err := resp.ParseResponse([]byte(tt.resp), req.Method); err != nil {
			t.Fatal(err)
		}
		if KeepClient(req, &resp) != tt.client || KeepServer(&resp) != tt.server {
			t.Errorf("%q / %q: client %v server %v", tt.req, tt.resp, KeepClient(req, &resp), KeepServer(&resp))
		}
	}
}
