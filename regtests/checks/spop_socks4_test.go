//go:build regtest

package checks

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// spoa is an SPOE agent answering each HAPROXY-HELLO with the current
// reply frame (hex).
type spoa struct {
	addr  string
	reply atomic.Value // string
}

func newSPOA(t *testing.T, reply string) *spoa {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &spoa{addr: ln.Addr().String()}
	a.reply.Store(reply)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(2 * time.Second))
				var hdr [4]byte
				if _, err := io.ReadFull(c, hdr[:]); err != nil {
					return
				}
				if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(hdr[:]))); err != nil {
					return
				}
				b, _ := hex.DecodeString(a.reply.Load().(string))
				c.Write(b)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return a
}

// The AGENT-HELLO of HAProxy's spop-check reg-test, and an
// AGENT-DISCONNECT with status-code 8 ("unsupported version").
const (
	spoaHello  = "00000036650000000100000776657273696F6E0803322E300E6D61782D6672616D652D73697A6503FCF0060C6361706162696C69746965730800"
	spoaDiscon = "0000001f66000000010000" + "0b7374617475732d636f6465" + "0308" + "076d657373616765" + "0800"
)

// TestSPOPCheck: option spop-check against a real SPOE agent: a good
// AGENT-HELLO brings the server UP (L7OK, no info left, as HAProxy), a
// DISCONNECT takes it DOWN with SPOP's reason.
func TestSPOPCheck(t *testing.T) {
	evs, views := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		a := newSPOA(t, spoaHello)
		r := start(t, pr, fmt.Sprintf(`
backend be
    mode tcp
    option spop-check
    server s1 %s check inter 200 rise 2 fall 1
`, a.addr))
		up := r.waitView("be", "s1", 3*time.Second, "L7OK", func(v view) bool { return v.CheckStatus == "L7OK" })
		upInfo := r.stat("be", "s1")["last_chk"]
		a.reply.Store(spoaDiscon)
		down := r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("Server be/s1 is DOWN", time.Second)
		downInfo := r.stat("be", "s1")["last_chk"]
		if upInfo != "" || downInfo != "unsupported version" {
			t.Errorf("%s: last_chk %q then %q, want \"\" then \"unsupported version\"", pr.name, upInfo, downInfo)
		}
		ev := strings.Join(r.events(), "\n")
		want := `Server be/s1 is DOWN, reason: Layer7 invalid response, info: "unsupported version", check duration: Xms. 0 active and 0 backup servers left.`
		if !strings.Contains(ev, want) {
			t.Errorf("%s: missing state line %q in\n%s", pr.name, want, ev)
		}
		evs[pr.name] = ev
		views[pr.name] = up.String() + " / " + down.String() + " / " + upInfo + " / " + downInfo
		r.p.Stop()
	}
	compare(t, "state lines", evs)
	compare(t, "views", views)
}

// socks4Proxy is a SOCKS4 proxy relaying to the requested destination
// (127.0.0.2 standing for 127.0.0.1) while granting; it denies (code 91) when deny is set. It counts the
// requests.
type socks4Proxy struct {
	addr  string
	deny  atomic.Bool
	count atomic.Int64
}

func newSocks4Proxy(t *testing.T) *socks4Proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &socks4Proxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req := make([]byte, 16)
				if _, err := io.ReadFull(c, req); err != nil || req[0] != 4 || req[1] != 1 || string(req[8:]) != "HAProxy\x00" {
					return
				}
				p.count.Add(1)
				// The server's address, 127.0.0.2, has no listener: only
				// what comes through the proxy reaches the origin.
				ip := netip.AddrFrom4([4]byte(req[4:8]))
				if ip == netip.MustParseAddr("127.0.0.2") {
					ip = netip.MustParseAddr("127.0.0.1")
				}
				dst := netip.AddrPortFrom(ip, binary.BigEndian.Uint16(req[2:4]))
				s, err := net.Dial("tcp", dst.String())
				if err != nil || p.deny.Load() {
					c.Write([]byte{0, 91, 0, 0, 0, 0, 0, 0})
					return
				}
				defer s.Close()
				c.Write([]byte{0, 90, 0, 0, 0, 0, 0, 0})
				go func() { io.Copy(s, c); s.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, s)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return p
}

// TestSocks4: a server behind a SOCKS4 proxy: its HTTP check (with
// check-via-socks4) and its traffic go through the proxy; when the proxy
// denies, the check fails with HAProxy's SOCKERR.
func TestSocks4(t *testing.T) {
	views := map[string]string{}
	for _, pr := range proxies(t) {
		o := newSwitchable(t, "s1")
		px := newSocks4Proxy(t)
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    option httpchk GET /health
    server s1 127.0.0.2:%s socks4 %s check-via-socks4 check inter 200 rise 1 fall 1
`, port(o.addr), px.addr))
		up := r.waitView("be", "s1", 3*time.Second, "L7OK", func(v view) bool { return v.CheckStatus == "L7OK" })
		if m := r.hits(4); m["s1"] != 4 {
			t.Errorf("%s: traffic %v", pr.name, m)
		}
		px.deny.Store(true)
		down := r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		info := r.stat("be", "s1")["last_chk"]
		// HAProxy may append a stale system error in parentheses.
		if !strings.HasPrefix(info, "SOCKS4 Proxy deny the request") {
			t.Errorf("%s: last_chk %q", pr.name, info)
		}
		if m := r.hits(1); m["503"] != 1 {
			t.Errorf("%s: traffic with the proxy denying: %v", pr.name, m)
		}
		views[pr.name] = up.String() + " / " + down.String()
		r.p.Stop()
	}
	compare(t, "views", views)
}
