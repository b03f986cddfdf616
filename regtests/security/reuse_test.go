//go:build regtest

package security

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// http10 follows HTTP/1.0's rules: it knows no Transfer-Encoding (a
// chunked body is just more bytes, in which it looks for the next
// request line), reads a Content-Length body, and keeps a connection
// only when asked with "Connection: keep-alive".
func http10(o *origin, sc *sconn) {
	for {
		h, err := sc.readHead(true)
		if err != nil {
			return
		}
		if _, err := io.CopyN(io.Discard, sc.br, int64(h.contentLength())); err != nil {
			return
		}
		keep := strings.Contains(strings.ToLower(h.hdr["connection"]), "keep-alive")
		extra := ""
		if keep {
			extra = "Connection: keep-alive\r\n"
		}
		fmt.Fprintf(sc.c, "HTTP/1.0 200 OK\r\nContent-Length: %d\r\n%s\r\n%s", len(h.path), extra, h.path)
		if !keep {
			return
		}
	}
}

// An HTTP/1.0 request with a chunked body is sent to the server without
// keep-alive and its server connection is never used again: a server
// that follows HTTP/1.0 takes the chunks for a next request, whose
// response would otherwise reach the next client on that connection.
func TestHTTP10ChunkedNotReused(t *testing.T) {
	hidden := "GET /hidden HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
	chunks := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(hidden), hidden)
	for _, withCL := range []bool{false, true} {
		name, cl := "chunked", ""
		if withCL {
			// The proxy drops this Content-Length; the server still
			// gets a chunked body it does not understand.
			name, cl = "chunked and content-length", fmt.Sprintf("Content-Length: %d\r\n", len(chunks))
		}
		req := "POST /a HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n" + cl + "Transfer-Encoding: chunked\r\n\r\n" + chunks
		t.Run(name, func(t *testing.T) {
			each(t, baseCfg, http10, func(t *testing.T, addr string, o *origin) {
				a := dial(t, addr)
				a.send(req)
				if st, body := a.response(); st != 200 || body != "/a" {
					t.Fatalf("POST /a answered %d %q", st, body)
				}
				if !a.closed(3 * time.Second) {
					t.Errorf("the client connection stayed open after an HTTP/1.0 chunked request")
				}
				head := strings.ToLower(o.received(1))
				head, _, _ = strings.Cut(head, "\r\n\r\n")
				if strings.Contains(head, "keep-alive") {
					t.Errorf("the HTTP/1.0 chunked request went to the server as keep-alive:\n%s", head)
				}
				for i := 0; i < 3; i++ {
					b := dial(t, addr)
					b.send("GET /b HTTP/1.1\r\nHost: a\r\n\r\n")
					if st, body := b.response(); st != 200 || body != "/b" {
						t.Fatalf("another client's GET /b answered %d %q", st, body)
					}
				}
				if got := o.received(1); strings.Contains(got, "/b") {
					t.Errorf("the server connection of the HTTP/1.0 chunked request carried another request:\n%s", got)
				}
			})
		})
	}
}

const stray = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray"

// A server connection that received bytes while idle, or whose response
// was followed by more bytes than it announced, is closed: those bytes
// answer no request, and reusing the connection would deliver them as
// the next request's response.
func TestIdleServerDataNotReused(t *testing.T) {
	cases := []struct {
		name string
		// together: the stray response comes in the same write as the
		// real one; otherwise once the client has its response.
		together bool
	}{
		{"arrives while idle", false},
		{"left over after the response", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			send := make(chan chan struct{})
			h := func(o *origin, sc *sconn) {
				for {
					h, err := sc.readHead(false)
					if err != nil {
						return
					}
					switch {
					case h.path != "/1":
						sc.respond(h, "")
					case tc.together:
						fmt.Fprintf(sc.c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n/1%s", stray)
					default:
						sc.respond(h, "")
						done := <-send
						io.WriteString(sc.c, stray)
						close(done)
					}
				}
			}
			each(t, baseCfg, h, func(t *testing.T, addr string, o *origin) {
				cl := dial(t, addr)
				cl.send("GET /1 HTTP/1.1\r\nHost: a\r\n\r\n")
				if st, body := cl.response(); st != 200 || body != "/1" {
					t.Fatalf("GET /1 answered %d %q", st, body)
				}
				if !tc.together {
					// Once the origin's write has returned, the bytes
					// are in the proxy's receive queue (loopback).
					done := make(chan struct{})
					send <- done
					<-done
				}
				cl.send("GET /2 HTTP/1.1\r\nHost: a\r\n\r\n")
				if st, body := cl.response(); st != 200 || body != "/2" {
					t.Errorf("GET /2 answered %d %q: the bytes the server sent while idle reached the client", st, body)
				}
				if got := o.received(1); strings.Contains(got, "/2") {
					t.Errorf("the connection that held unread bytes carried the next request")
				}
			})
		})
	}
}

// A request with both Content-Length and Transfer-Encoding is framed by
// its chunks: the server gets it without the Content-Length, so both
// ends agree on where it stops, and the client connection closes after
// the response. The server connection itself is then as clean as any:
// HAProxy 2.6 pools it, and with "http-reuse always" the next client's
// request follows the chunked body on it, which goha does as well.
func TestContentLengthAndChunkedServerReuse(t *testing.T) {
	for _, c := range []struct {
		reuse string
		conns int // server connections once both clients are answered
	}{
		// "safe" gives a client's first request a connection of its own.
		{"safe", 2},
		{"always", 1},
	} {
		t.Run(c.reuse, func(t *testing.T) {
			// One thread: HAProxy may not take an idle connection over
			// from another thread, which would blur the count.
			cfg := "global\n    nbthread 1\n" + baseCfg + "    http-reuse " + c.reuse + "\n"
			each(t, cfg, recordOrigin, func(t *testing.T, addr string, o *origin) {
				a := dial(t, addr)
				a.send("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 15\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
				if st, body := a.response(); st != 200 || body != "/a" {
					t.Fatalf("POST /a answered %d %q", st, body)
				}
				if !a.closed(3 * time.Second) {
					t.Errorf("the client connection stayed open after a request with Content-Length and Transfer-Encoding")
				}
				if got := strings.ToLower(o.received(1)); strings.Contains(got, "content-length") {
					t.Errorf("the server received the Content-Length:\n%s", got)
				}
				b := dial(t, addr)
				b.send("GET /b HTTP/1.1\r\nHost: a\r\n\r\n")
				if st, body := b.response(); st != 200 || body != "/b" {
					t.Fatalf("GET /b answered %d %q", st, body)
				}
				if n := o.numConns(); n != c.conns {
					t.Errorf("%d server connections, want %d", n, c.conns)
				}
				if got := o.requestLines(); fmt.Sprint(got) != fmt.Sprint([]string{"POST /a HTTP/1.1", "GET /b HTTP/1.1"}) {
					t.Errorf("the server parsed the requests %q", got)
				}
			})
		})
	}
}
