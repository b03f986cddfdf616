//go:build regtest

package security

import (
	"io"
	"strings"
	"testing"
	"time"
)

// An HTTP/1.0 response with a chunked body ends the client connection
// once it is forwarded, with no Connection field added: HTTP/1.0 knows no
// chunked, so whoever reads the response as HTTP/1.0 can only find its
// end at the close, and HAProxy closes rather than promise keep-alive.
func TestHTTP10ChunkedResponseClosesClient(t *testing.T) {
	for _, srvConn := range []string{"", "Connection: keep-alive\r\n"} {
		name := "plain"
		if srvConn != "" {
			name = "server keep-alive"
		}
		t.Run(name, func(t *testing.T) {
			h := func(o *origin, sc *sconn) {
				if _, err := sc.readHead(false); err != nil {
					return
				}
				io.WriteString(sc.c, "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n"+srvConn+"\r\n2\r\nhi\r\n0\r\n\r\n")
				sc.waitEOF(10 * time.Second)
			}
			each(t, baseCfg, h, func(t *testing.T, addr string, o *origin) {
				cl := dial(t, addr)
				cl.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
				var head []string
				for {
					l, err := cl.br.ReadString('\n')
					if err != nil {
						t.Fatalf("head %q: %v", head, err)
					}
					l = strings.TrimRight(l, "\r\n")
					if l == "" {
						break
					}
					head = append(head, l)
				}
				if len(head) == 0 || !strings.HasPrefix(head[0], "HTTP/1.0 200") {
					t.Fatalf("head %q", head)
				}
				for _, l := range head[1:] {
					if k, _, _ := strings.Cut(l, ":"); strings.EqualFold(k, "connection") {
						t.Errorf("the response carries %q", l)
					}
				}
				body := make([]byte, len("2\r\nhi\r\n0\r\n\r\n"))
				if _, err := io.ReadFull(cl.br, body); err != nil || string(body) != "2\r\nhi\r\n0\r\n\r\n" {
					t.Fatalf("body %q: %v", body, err)
				}
				if !cl.closed(3 * time.Second) {
					t.Errorf("the client connection stayed open after an HTTP/1.0 chunked response")
				}
			})
		})
	}
}
