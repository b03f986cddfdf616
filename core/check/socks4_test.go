package check

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"
)

// socks4Proxy is a small SOCKS4 proxy on loopback. In "grant" mode it
// connects to the requested destination and relays both ways; the other
// modes fail the handshake in one way each. It records the requests.
type socks4Proxy struct {
	*responder
	mu   sync.Mutex
	reqs [][]byte
}

func newSocks4Proxy(t testing.TB, mode string) *socks4Proxy {
	p := &socks4Proxy{}
	p.responder = newResponder(t, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(3 * time.Second))
		if mode == "reset-at-once" {
			c.(*net.TCPConn).SetLinger(0)
			return
		}
		req := make([]byte, 16)
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		p.mu.Lock()
		p.reqs = append(p.reqs, req)
		p.mu.Unlock()
		switch mode {
		case "grant":
			if req[0] != 4 || req[1] != 1 || !bytes.Equal(req[8:], []byte("HAProxy\x00")) {
				c.Write([]byte{0, 91, 0, 0, 0, 0, 0, 0})
				return
			}
			ip := netip.AddrFrom4([4]byte(req[4:8]))
			dst, err := net.Dial("tcp", netip.AddrPortFrom(ip, binary.BigEndian.Uint16(req[2:4])).String())
			if err != nil {
				c.Write([]byte{0, 91, 0, 0, 0, 0, 0, 0})
				return
			}
			defer dst.Close()
			c.Write([]byte{0, 90, 0, 0, 0, 0, 0, 0})
			go func() { io.Copy(dst, c); dst.(*net.TCPConn).CloseWrite() }()
			io.Copy(c, dst)
		case "deny":
			c.Write([]byte{0, 91, 0, 0, 0, 0, 0, 0})
			readSome(c)
		case "identd":
			c.Write([]byte{0, 92, 0, 0, 0, 0, 0, 0})
		case "close":
		case "reset":
			c.(*net.TCPConn).SetLinger(0)
		case "partial":
			c.Write([]byte{0, 90, 0})
		case "silent":
			readSome(c)
		}
	})
	return p
}

func (p *socks4Proxy) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port()) }

func (p *socks4Proxy) requests() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.reqs...)
}

func TestSocks4Request(t *testing.T) {
	for _, c := range []struct {
		dst  string
		want string
	}{
		{"127.0.0.2:8080", "04011f907f000002484150726f787900"},
		{"[::ffff:10.0.0.1]:80", "040100500a000001484150726f787900"},
		// SOCKS4 has no room for IPv6: the first non-zero word is sent.
		{"[::1]:80", "0401005000000001484150726f787900"},
		{"[2001:db8::1]:443", "040101bb20010db8484150726f787900"},
	} {
		got := fmt.Sprintf("%x", socks4Request(netip.MustParseAddrPort(c.dst)))
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.dst, got, c.want)
		}
	}
}

func TestSocks4Check(t *testing.T) {
	http := newResponder(t, func(c net.Conn) {
		readSome(c)
		io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\n")
	})
	httpchk := backendRules(t, w("option", "httpchk"))
	plain := backendRules(t)
	tcpchk := backendRules(t, w("option", "tcp-check"), w("tcp-check", "connect", "via-socks4", "comment", "socks"),
		w("tcp-check", "send", "GET / HTTP/1.0\r\n\r\n"), w("tcp-check", "expect", "string", "200 OK"))
	to := Timeouts{Inter: 300 * time.Millisecond}
	target := func(proxy string, via bool) *Target {
		return &Target{Addr: "127.0.0.1", Port: http.port(), Socks4: proxy, ViaSocks4: via}
	}

	grant := newSocks4Proxy(t, "grant")
	wantOutcome(t, run(t, httpchk, target(grant.addr(), true), to), StatusL7OK, 200, "")
	wantOutcome(t, run(t, plain, target(grant.addr(), true), to), StatusL4OK, 0, "")
	wantOutcome(t, run(t, tcpchk, target(grant.addr(), false), to), StatusL7OK, 0, "(tcp-check)")
	want := fmt.Sprintf("0401%04x7f000001484150726f787900", http.port())
	for _, r := range grant.requests() {
		if fmt.Sprintf("%x", r) != want {
			t.Fatalf("proxy got %x, want %s", r, want)
		}
	}
	if n := len(grant.requests()); n != 3 {
		t.Fatalf("proxy saw %d requests, want 3", n)
	}
	// Without check-via-socks4 the default connect goes straight.
	wantOutcome(t, run(t, httpchk, target(grant.addr(), false), to), StatusL7OK, 200, "")
	if n := len(grant.requests()); n != 3 {
		t.Fatalf("direct check went through the proxy (%d requests)", n)
	}

	cases := []struct {
		mode string
		st   Status
		desc string
	}{
		{"deny", StatusSockErr, "SOCKS4 Proxy deny the request"},
		{"identd", StatusSockErr, "SOCKS4 Proxy deny the request"},
		{"close", StatusSockErr, "SOCKS4 Proxy read error during handshake"},
		{"reset", StatusSockErr, "SOCKS4 Proxy handshake aborted by server (Connection reset by peer)"},
		{"reset-at-once", StatusSockErr, "SOCKS4 Proxy handshake aborted by server (Connection reset by peer)"},
		{"partial", StatusL7TOut, ""},
		{"silent", StatusL7TOut, ""},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			px := newSocks4Proxy(t, c.mode)
			wantOutcome(t, run(t, httpchk, target(px.addr(), true), to), c.st, 0, c.desc)
			wantOutcome(t, run(t, plain, target(px.addr(), true), to), c.st, 0, c.desc)
			desc := c.desc + " at step 1 of tcp-check (connect) comment: 'socks'"
			wantOutcome(t, run(t, tcpchk, target(px.addr(), false), to), c.st, 0, desc)
		})
	}
	wantOutcome(t, run(t, httpchk, target("127.0.0.1:"+itoa(closedPort(t)), true), to), StatusL4Con, 0, "Connection refused")
}

// As in HAProxy, check-via-socks4 sends the agent check through the proxy
// too.
func TestSocks4AgentCheck(t *testing.T) {
	agent := newResponder(t, func(c net.Conn) { io.WriteString(c, "down #via proxy\n") })
	px := newSocks4Proxy(t, "grant")
	o := ServerOptions{Check: true, AgentCheck: true}
	o.Health.Socks4, o.Health.ViaSocks4 = px.addr(), true
	o.Agent.Port = agent.port()
	cfg := o.Config("be", "s", "127.0.0.1", closedPort(t), nil, Timeouts{})
	s := NewServer(cfg, nil)
	r, tg := s.Agent.targetLocked()
	out := run(t, r, &tg, shortTO)
	if out.Agent == nil || !out.Agent.HealthDown() {
		t.Fatalf("agent reply not read through the proxy: %+v", out)
	}
	want := fmt.Sprintf("0401%04x7f000001484150726f787900", agent.port())
	if reqs := px.requests(); len(reqs) != 1 || fmt.Sprintf("%x", reqs[0]) != want {
		t.Fatalf("proxy requests %x, want one %s", reqs, want)
	}
}
