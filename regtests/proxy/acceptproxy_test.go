//go:build regtest

package proxy

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// proxyV2 builds a PROXY protocol version 2 header for TCP over IPv4.
func proxyV2(src, dst string, sport, dport uint16) string {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c")
	b = append(b, net.ParseIP(src).To4()...)
	b = append(b, net.ParseIP(dst).To4()...)
	b = binary.BigEndian.AppendUint16(b, sport)
	b = binary.BigEndian.AppendUint16(b, dport)
	return string(b)
}

// TestAcceptProxy sends requests behind PROXY protocol headers to an
// accept-proxy bind of goha and of HAProxy: the header's source is the
// client the server learns of (X-Forwarded-For), a LOCAL or UNKNOWN header
// leaves the connection's own, and a connection without a valid header
// never reaches the server.
func TestAcceptProxy(t *testing.T) {
	const req = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	cases := []struct {
		name, header, xff string // xff "": no request may reach the server
	}{
		{"v1-tcp4", "PROXY TCP4 192.0.2.7 127.0.0.1 5555 80\r\n", "192.0.2.7"},
		{"v1-tcp6", "PROXY TCP6 2001:db8::7 ::1 5555 80\r\n", "2001:db8::7"},
		{"v1-unknown", "PROXY UNKNOWN\r\n", "127.0.0.1"},
		{"v2-tcp4", proxyV2("198.51.100.9", "127.0.0.1", 4444, 80), "198.51.100.9"},
		{"v2-local", "\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00", "127.0.0.1"},
		{"none", "", ""},
		{"v1-truncated", "PROXY TCP4 192.0.2.7\r\n", ""},
		{"v1-bad-protocol", "PROXY UDP4 192.0.2.7 127.0.0.1 5555 80\r\n", ""},
	}
	for name, prog := range map[string]string{"goha": bin.Path(t, "goha"), "haproxy": bin.HAProxy(t)} {
		t.Run(name, func(t *testing.T) {
			seen := make(chan string, len(cases))
			o := harness.NewOrigin(t, "s1", func(w http.ResponseWriter, r *http.Request) {
				seen <- r.Header.Get("X-Forwarded-For")
			})
			h := harness.Start(t, prog, `
defaults
    mode http
    option forwardfor
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}" accept-proxy
    default_backend be
backend be
    server s1 `+o.Addr+`
`, "fe")
			for _, tc := range cases {
				reply := harness.RawRequest(t, h.Addrs["fe"], tc.header+req, harness.Patience)
				if tc.xff == "" {
					if strings.HasPrefix(reply, "HTTP/1.1 200") {
						t.Errorf("%s: served: %q", tc.name, reply)
					}
					continue
				}
				select {
				case got := <-seen:
					if got != tc.xff {
						t.Errorf("%s: server saw X-Forwarded-For %q, want %q", tc.name, got, tc.xff)
					}
				case <-time.After(harness.Patience):
					t.Fatalf("%s: no request reached the server; client got %q", tc.name, reply)
				}
			}
			if len(seen) != 0 {
				t.Errorf("a connection without a valid header reached the server: %q", <-seen)
			}
			h.Stop()
		})
	}
}

// TestAcceptProxyTCP checks that in tcp mode the bytes after a PROXY
// header, sent with it, reach the server intact, and that the client's
// end of stream still reaches it too.
func TestAcceptProxyTCP(t *testing.T) {
	echo := harness.TCPServer(t, func(c net.Conn) {
		defer c.Close()
		io.Copy(c, c)
	})
	for name, prog := range map[string]string{"goha": bin.Path(t, "goha"), "haproxy": bin.HAProxy(t)} {
		t.Run(name, func(t *testing.T) {
			h := harness.Start(t, prog, `
defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s
listen l
    bind "fd@${l}" accept-proxy
    server s1 `+echo+`
`, "l")
			c, err := net.Dial("tcp", h.Addrs["l"])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(harness.Patience))
			io.WriteString(c, proxyV2("192.0.2.1", "127.0.0.1", 1000, 80)+"hello, world")
			c.(*net.TCPConn).CloseWrite()
			b, err := io.ReadAll(c)
			if string(b) != "hello, world" {
				t.Errorf("echoed %q (%v), want %q", b, err, "hello, world")
			}
			h.Stop()
		})
	}
}
