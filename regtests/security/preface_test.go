//go:build regtest

package security

import (
	"io"
	"strings"
	"testing"
	"time"
)

// The HTTP/2 connection preface in the middle of an HTTP/1 connection
// gets a 400 and never reaches the server, as on HAProxy, which refuses
// the PRI method in any spelling. (As a connection's first bytes, HAProxy
// takes the preface as the start of HTTP/2, which goha does not speak: it
// answers 400 there too.)
func TestH2PrefaceOnH1Bind(t *testing.T) {
	const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	for _, tail := range []string{"", "\x00\x00\x12\x04\x00\x00\x00\x00\x00"} {
		each(t, baseCfg, recordOrigin, func(t *testing.T, addr string, o *origin) {
			cl := dial(t, addr)
			cl.send("GET /a HTTP/1.1\r\nHost: a\r\n\r\n")
			if st, body := cl.response(); st != 200 || body != "/a" {
				t.Fatalf("GET /a answered %d %q", st, body)
			}
			cl.send(preface + tail)
			cl.c.SetReadDeadline(time.Now().Add(3 * time.Second))
			b, _ := io.ReadAll(cl.br)
			if !strings.HasPrefix(string(b), "HTTP/1.1 400 ") {
				t.Errorf("preface%s answered %q", map[bool]string{true: " with a SETTINGS frame"}[tail != ""], b)
			}
			if got := o.received(1); strings.Contains(got, "PRI") {
				t.Errorf("the server received %q", got)
			}
		})
	}
}
