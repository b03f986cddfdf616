//go:build regtest

package security

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// recordOrigin reads each request with its body, chunked framing read
// leniently (CRLF or a bare LF) so that what the proxy sent can be
// inspected, and answers with the request's path.
func recordOrigin(o *origin, sc *sconn) {
	for {
		h, err := sc.readHead(false)
		if err != nil {
			return
		}
		if strings.Contains(strings.ToLower(h.hdr["transfer-encoding"]), "chunked") {
			for {
				l, err := sc.br.ReadString('\n')
				if err != nil {
					return
				}
				sz := strings.TrimRight(l, "\r\n")
				if i := strings.IndexAny(sz, "; \t"); i >= 0 {
					sz = sz[:i]
				}
				n, err := strconv.ParseInt(sz, 16, 64)
				if err != nil {
					return
				}
				if n == 0 {
					for {
						l, err := sc.br.ReadString('\n')
						if err != nil {
							return
						}
						if strings.TrimRight(l, "\r\n") == "" {
							break
						}
					}
					break
				}
				b := make([]byte, n)
				if _, err := io.ReadFull(sc.br, b); err != nil {
					return
				}
				if _, err := sc.br.ReadString('\n'); err != nil {
					return
				}
			}
		} else if _, err := io.CopyN(io.Discard, sc.br, int64(h.contentLength())); err != nil {
			return
		}
		sc.respond(h, "")
	}
}

// bareLF returns the offset of the first LF not preceded by a CR in s,
// or -1.
func bareLF(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			return i
		}
	}
	return -1
}

// Vectors on which goha differed from HAProxy 2.6 in the differential
// corpus, with HAProxy's outcome: the status, and the version of the
// request line the server receives. A chunked body reaches the server
// with CRLF line ends only, whatever the client used.
func TestFramingVectors(t *testing.T) {
	chunked := "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	vecs := []struct {
		name, raw string
		status    int
		version   string // of the request line the server receives
	}{
		{"cl-trailing-comma", "POST /c HTTP/1.1\r\nHost: a\r\nContent-Length: 5,\r\n\r\nhello", 400, ""},
		{"cl-leading-comma", "POST /c HTTP/1.1\r\nHost: a\r\nContent-Length: ,5\r\n\r\nhello", 400, ""},
		{"cl-empty-element", "POST /c HTTP/1.1\r\nHost: a\r\nContent-Length: 5,,5\r\n\r\nhello", 400, ""},
		{"cl-list", "POST /c HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello", 200, "HTTP/1.1"},
		{"version-2.0", "GET /c HTTP/2.0\r\nHost: a\r\n\r\n", 200, "HTTP/1.1"},
		{"version-1.9", "GET /c HTTP/1.9\r\nHost: a\r\n\r\n", 200, "HTTP/1.1"},
		{"version-9.9", "GET /c HTTP/9.9\r\nHost: a\r\n\r\n", 200, "HTTP/1.1"},
		{"version-0.9", "GET /c HTTP/0.9\r\nHost: a\r\n\r\n", 200, "HTTP/0.9"},
		{"chunk-size-lf", chunked + "5\nhello\r\n0\r\n\r\n", 200, "HTTP/1.1"},
		{"chunk-ext-lf", chunked + "5;a=b\nhello\r\n0\r\n\r\n", 200, "HTTP/1.1"},
		{"chunk-blank-lf", chunked + "5 \nhello\r\n0\r\n\r\n", 200, "HTTP/1.1"},
		{"chunk-data-lf", chunked + "5\r\nhello\n0\r\n\r\n", 200, "HTTP/1.1"},
		{"last-chunk-lf", chunked + "5\r\nhello\r\n0\n\n", 200, "HTTP/1.1"},
		{"trailer-lf", chunked + "5\r\nhello\r\n0\r\nX: y\n\r\n", 200, "HTTP/1.1"},
		{"end-lf", chunked + "5\r\nhello\r\n0\r\nX: y\r\n\n", 200, "HTTP/1.1"},
	}
	each(t, baseCfg, recordOrigin, func(t *testing.T, addr string, o *origin) {
		for _, v := range vecs {
			before := o.numConns()
			cl := dial(t, addr)
			cl.send(v.raw)
			st, body := cl.response()
			cl.c.Close()
			if st != v.status {
				t.Errorf("%s: %d, want %d", v.name, st, v.status)
				continue
			}
			if st != 200 {
				if o.numConns() != before {
					t.Errorf("%s: refused, yet the server was contacted", v.name)
				}
				continue
			}
			if body != "/c" {
				t.Errorf("%s: answered %q", v.name, body)
			}
			got := o.received(o.numConns())
			line, _, _ := strings.Cut(got, "\r\n")
			if !strings.HasSuffix(line, " "+v.version) {
				t.Errorf("%s: the server received the request line %q, want version %s", v.name, line, v.version)
			}
			if i := bareLF(got); i >= 0 {
				t.Errorf("%s: the server received a bare LF at %d: %q", v.name, i, got)
			}
		}
	})
}

// A chunked response with bare LF line ends reaches the client with CRLF
// ones, as HAProxy re-encodes it.
func TestChunkedResponseBareLF(t *testing.T) {
	h := func(o *origin, sc *sconn) {
		if _, err := sc.readHead(false); err != nil {
			return
		}
		io.WriteString(sc.c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\n3;x\nabc\r\n0\nX: y\n\n")
	}
	each(t, baseCfg, h, func(t *testing.T, addr string, o *origin) {
		cl := dial(t, addr)
		cl.send("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		b, _ := io.ReadAll(cl.br)
		got := string(b)
		if !strings.HasPrefix(got, "HTTP/1.1 200") || !strings.Contains(got, "hi") || !strings.Contains(got, "abc") {
			t.Fatalf("response %q", got)
		}
		if i := bareLF(got); i >= 0 {
			t.Errorf("the client received a bare LF at %d: %q", i, got)
		}
	})
}
