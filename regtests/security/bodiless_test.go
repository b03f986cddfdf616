//go:build regtest

package security

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// naive answers every request in order and honours Content-Length on
// every request, CONNECT included, the way a server that answers before
// reading the body does: it refuses CONNECT with a 405 and only then
// reads (and drops) the body the request announced.
func naive(o *origin, sc *sconn) {
	for {
		h, err := sc.readHead(false)
		if err != nil {
			return
		}
		if h.method == "CONNECT" {
			io.WriteString(sc.c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		}
		if _, err := io.CopyN(io.Discard, sc.br, int64(h.contentLength())); err != nil {
			return
		}
		if h.method != "CONNECT" {
			sc.respond(h, "")
		}
	}
}

// A CONNECT request has no body whatever its Content-Length says: the
// proxy must not forward that length, or a server that honours it takes
// the head of the client's next request as that body, and what follows
// runs as a request the proxy's rules never saw.
func TestConnectContentLengthSmuggling(t *testing.T) {
	hidden := "GET /admin HTTP/1.1\r\nHost: a\r\n\r\n"
	post := fmt.Sprintf("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n", len(hidden))
	for _, te := range []bool{false, true} {
		name := "content-length"
		connect := fmt.Sprintf("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: %d\r\n\r\n", len(post))
		if te {
			name = "chunked"
			connect = "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nTransfer-Encoding: chunked\r\n\r\n"
		}
		t.Run(name, func(t *testing.T) {
			each(t, baseCfg, naive, func(t *testing.T, addr string, o *origin) {
				cl := dial(t, addr)
				cl.send(connect)
				st, _ := cl.response()
				if st != 405 {
					t.Fatalf("CONNECT answered %d, want the server's 405", st)
				}
				cl.send(post + hidden)
				st, body := cl.response()
				for _, l := range o.requestLines() {
					if strings.Contains(l, "/admin") {
						t.Errorf("the server ran %q, a request the rules never saw", l)
					}
				}
				if body == "/admin" {
					t.Errorf("the client got the answer to the hidden request")
				}
				// HAProxy drops Content-Length; it passes Transfer-Encoding
				// on (goha drops it too) but then closes the server side.
				head := strings.ToLower(o.received(1))
				head, _, _ = strings.Cut(head, "\r\n\r\n")
				if strings.Contains(head, "content-length") {
					t.Errorf("the CONNECT head reached the server with its Content-Length:\n%s", head)
				}
				if te && strings.Contains(o.received(1), "POST") {
					t.Errorf("the server connection of a CONNECT with Transfer-Encoding carried the next request:\n%s", o.received(1))
				}
				if st != 200 || body != "/x" {
					t.Errorf("POST /x answered %d %q, want 200 \"/x\"", st, body)
				}
			})
		})
	}
}

// After a 2xx answer to CONNECT the proxy tunnels bytes both ways, the
// ones the client sent right behind its request included.
func TestConnectTunnel(t *testing.T) {
	tunnelOrigin := func(o *origin, sc *sconn) {
		h, err := sc.readHead(false)
		if err != nil || h.method != "CONNECT" {
			return
		}
		io.WriteString(sc.c, "HTTP/1.1 200 Connection established\r\n\r\n")
		buf := make([]byte, 256)
		for {
			n, err := sc.br.Read(buf)
			if n > 0 {
				fmt.Fprintf(sc.c, "echo:%s", buf[:n])
			}
			if err != nil {
				return
			}
		}
	}
	each(t, baseCfg, tunnelOrigin, func(t *testing.T, addr string, o *origin) {
		cl := dial(t, addr)
		cl.send("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n")
		line, _ := cl.br.ReadString('\n')
		if !strings.HasPrefix(line, "HTTP/1.1 200 ") {
			t.Fatalf("CONNECT answered %q", line)
		}
		for {
			l, err := cl.br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if l == "\r\n" {
				break
			}
		}
		cl.send("ping")
		got := make([]byte, len("echo:ping"))
		if _, err := io.ReadFull(cl.br, got); err != nil || string(got) != "echo:ping" {
			t.Fatalf("through the tunnel: %q, %v", got, err)
		}
		cl.send("pong")
		if _, err := io.ReadFull(cl.br, got); err != nil || string(got) != "echo:pong" {
			t.Fatalf("through the tunnel: %q, %v", got, err)
		}

		// Bytes sent right behind the request, before the answer, go
		// into the tunnel once it opens.
		cl = dial(t, addr)
		cl.send("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\nearly")
		if st, _ := readHeadOnly(cl); st != 200 {
			t.Fatalf("CONNECT with early bytes answered %d", st)
		}
		got = make([]byte, len("echo:early"))
		if _, err := io.ReadFull(cl.br, got); err != nil || string(got) != "echo:early" {
			t.Fatalf("early bytes through the tunnel: %q, %v", got, err)
		}
	})
}

// Responses that have no body by definition (204, 304, 1xx, a HEAD's
// 200) but announce one, or are followed by bytes anyway: the proxy frames
// them by status and method, never by Content-Length, and the bytes that
// follow reach no client.
func TestBodilessResponses(t *testing.T) {
	h := func(o *origin, sc *sconn) {
		for {
			h, err := sc.readHead(false)
			if err != nil {
				return
			}
			switch h.path {
			case "/204":
				io.WriteString(sc.c, "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
			case "/304":
				io.WriteString(sc.c, "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n")
			case "/head":
				io.WriteString(sc.c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
			case "/head-body":
				io.WriteString(sc.c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")
			case "/204-body":
				io.WriteString(sc.c, "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")
			case "/100":
				io.WriteString(sc.c, "HTTP/1.1 100 Continue\r\nContent-Length: 5\r\n\r\n")
				sc.respond(h, "")
			default:
				sc.respond(h, "")
			}
		}
	}
	each(t, baseCfg, h, func(t *testing.T, addr string, o *origin) {
		cl := dial(t, addr)
		for _, c := range []struct{ method, path string }{{"GET", "/204"}, {"GET", "/304"}, {"HEAD", "/head"}, {"GET", "/100"}, {"HEAD", "/head-body"}, {"GET", "/204-body"}} {
			cl.send(c.method + " " + c.path + " HTTP/1.1\r\nHost: a\r\n\r\n")
			st, _ := readHeadOnly(cl)
			if c.path == "/100" {
				// The interim response, then the final one.
				st, _ = readHeadOnly(cl)
				b := make([]byte, 4)
				io.ReadFull(cl.br, b)
			}
			if st == 0 {
				t.Fatalf("%s %s: no response", c.method, c.path)
			}
			cl.send("GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
			st, body := cl.response()
			if st != 200 || body != "/next" {
				t.Fatalf("after %s %s: the next request got %d %q", c.method, c.path, st, body)
			}
		}
	})
}

// readHeadOnly reads a response head and returns its status and raw text.
func readHeadOnly(cl *client) (int, string) {
	cl.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var raw strings.Builder
	st := 0
	for {
		l, err := cl.br.ReadString('\n')
		if err != nil {
			return 0, raw.String()
		}
		if raw.Len() == 0 {
			fmt.Sscanf(l, "HTTP/1.1 %d", &st)
		}
		raw.WriteString(l)
		if l == "\r\n" {
			return st, raw.String()
		}
	}
}

// framing lists the Content-Length and Transfer-Encoding fields of a raw
// head, lower-cased, in order.
func framing(head string) string {
	var out []string
	for _, l := range strings.Split(head, "\r\n") {
		k, v, ok := strings.Cut(l, ":")
		k = strings.ToLower(strings.TrimSpace(k))
		if ok && (k == "content-length" || k == "transfer-encoding") {
			out = append(out, k+": "+strings.TrimSpace(v))
		}
	}
	return strings.Join(out, ", ")
}

// The framing fields a server puts on a response that has no body by
// definition reach the client as HAProxy 2.6 lets them: a 1xx's (101
// included) or a 204's Content-Length and Transfer-Encoding are removed (a client or a
// cache that trusts them would read what follows as a body), a 304's and
// a HEAD response's are kept, since they describe the representation.
func TestBodilessResponseFraming(t *testing.T) {
	cases := []struct {
		method, resp string
		want         []string // framing of each head the client gets
	}{
		{"GET", "HTTP/1.1 204 No Content\r\nContent-Length: 59\r\n\r\n", []string{""}},
		{"GET", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", []string{""}},
		{"GET", "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n", []string{""}},
		{"HEAD", "HTTP/1.1 204 No Content\r\nContent-Length: 59\r\n\r\n", []string{""}},
		{"GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 59\r\n\r\n", []string{"content-length: 59"}},
		{"GET", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", []string{"transfer-encoding: chunked"}},
		{"GET", "HTTP/1.1 100 Continue\r\nContent-Length: 59\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", []string{"", "content-length: 0"}},
		{"GET", "HTTP/1.1 103 Early Hints\r\nTransfer-Encoding: chunked\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", []string{"", "content-length: 0"}},
		{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 59\r\n\r\n", []string{"content-length: 59"}},
		{"HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", []string{"transfer-encoding: chunked"}},
		{"HEAD", "HTTP/1.1 304 Not Modified\r\nContent-Length: 59\r\n\r\n", []string{"content-length: 59"}},
		// Last: the connection becomes a tunnel.
		{"GET", "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nContent-Length: 59\r\n\r\n", []string{""}},
	}
	const upgrade = "Connection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	h := func(o *origin, sc *sconn) {
		for {
			h, err := sc.readHead(false)
			if err != nil {
				return
			}
			var i int
			if _, err := fmt.Sscanf(h.path, "/r/%d", &i); err == nil && i < len(cases) {
				io.WriteString(sc.c, cases[i].resp)
				continue
			}
			sc.respond(h, "")
		}
	}
	each(t, baseCfg, h, func(t *testing.T, addr string, o *origin) {
		cl := dial(t, addr)
		for i, c := range cases {
			tunnel := strings.HasPrefix(c.resp, "HTTP/1.1 101")
			extra := ""
			if tunnel {
				extra = upgrade
			}
			cl.send(fmt.Sprintf("%s /r/%d HTTP/1.1\r\nHost: a\r\n%s\r\n", c.method, i, extra))
			var got []string
			for range c.want {
				st, head := readHeadOnly(cl)
				if st == 0 {
					t.Fatalf("%s %q: no response", c.method, c.resp)
				}
				got = append(got, framing(head))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s %q: the client got framing %q, want %q", c.method, c.resp, got, c.want)
			}
			if tunnel {
				break
			}
			cl.send("GET /next HTTP/1.1\r\nHost: a\r\n\r\n")
			if st, body := cl.response(); st != 200 || body != "/next" {
				t.Fatalf("after %s %q: the next request got %d %q", c.method, c.resp, st, body)
			}
		}
	})
}

// The framing fields a 1xx or 204 response loses on the way to the
// client still count in the server's bytes out, which HAProxy counts as
// the response came.
func TestBodilessFramingCounted(t *testing.T) {
	h := func(o *origin, sc *sconn) {
		h, err := sc.readHead(false)
		if err != nil {
			return
		}
		io.WriteString(sc.c, "HTTP/1.1 100 Continue\r\nContent-Length: 59\r\n\r\n")
		if h.path == "/204" {
			io.WriteString(sc.c, "HTTP/1.1 204 No Content\r\nContent-Length: 59\r\nTransfer-Encoding: chunked\r\n\r\n")
		}
	}
	bout := map[string]string{}
	for _, p := range proxies(t) {
		sock := t.TempDir() + "/stats.sock"
		o := newOrigin(t, h)
		cfg := "global\n    stats socket " + sock + " level admin\n" + strings.ReplaceAll(baseCfg, "${SRV}", o.addr)
		px := harness.Start(t, p[1], cfg, "fe")
		harness.WaitListening(t, px.Addrs["fe"], 5*time.Second)
		harness.WaitCLI(t, sock)
		cl := dial(t, px.Addrs["fe"])
		cl.send("GET /204 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		if st, _ := readHeadOnly(cl); st != 100 {
			t.Fatalf("%s: got %d, want the 100 first", p[0], st)
		}
		if st, _ := readHeadOnly(cl); st != 204 {
			t.Fatalf("%s: got %d, want 204", p[0], st)
		}
		harness.Eventually(t, p[0]+" counting the response", func() bool {
			bout[p[0]] = harness.ParseStat(harness.MustSocket(t, sock, "show stat"))["be/s1"]["bout"]
			return bout[p[0]] != "" && bout[p[0]] != "0"
		})
	}
	if len(bout) == 2 && bout["goha"] != bout["haproxy"] {
		t.Errorf("server bytes out: goha %s, haproxy %s", bout["goha"], bout["haproxy"])
	}
}
