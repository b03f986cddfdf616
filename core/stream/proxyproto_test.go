package stream

import (
	"net"
	"testing"
)

// FuzzProxyHeader reads arbitrary bytes as a PROXY protocol header: no
// panic, and a header it accepts keeps TLV values within HAProxy's limits.
func FuzzProxyHeader(f *testing.F) {
	v2 := "\r\n\r\n\x00\r\nQUIT\n\x21\x11"
	addrs := "\xc0\x00\x02\x01\x7f\x00\x00\x01\x11\x5c\x00\x50"
	for _, s := range []string{
		"PROXY TCP4 192.0.2.7 127.0.0.1 5555 80\r\n",
		"PROXY UNKNOWN\r\n",
		v2 + "\x00\x0c" + addrs,
		v2 + "\x00\x14" + addrs + "\x05\x00\x0512345",
		v2 + "\x00\x14" + addrs + "\x02\x00\x05hosts",
		v2 + "\x00\x13" + addrs + "\x03\x00\x04\x00\x00\x00\x00",
		v2 + "\x00\x0e" + addrs + "\x05\x00",
		"\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c1, c2 := net.Pipe()
		go func() {
			c2.Write(in)
			c2.Close()
		}()
		c, err := readProxyHeader(c1)
		c1.Close()
		if err != nil {
			return
		}
		pc := c.(*proxyConn)
		if len(pc.uniqueID) > pp2UniqueIDMax || len(pc.authority) > pp2AuthorityMax {
			t.Fatalf("kept %d and %d bytes", len(pc.uniqueID), len(pc.authority))
		}
	})
}

// TestProxyHeaderTLVs checks the TLVs kept from a version 2 header
// (HAProxy 2.6's conn_recv_proxy; its reg-test
// stream/unique-id-from-proxy.vtc sends the first).
func TestProxyHeaderTLVs(t *testing.T) {
	v2 := "\r\n\r\n\x00\r\nQUIT\n\x21\x11"
	addrs := "\xc0\x00\x02\x01\x7f\x00\x00\x01\x11\x5c\x00\x50"
	for _, c := range []struct {
		in, auth, uid string
		ok            bool
	}{
		{v2 + "\x00\x14" + addrs + "\x05\x00\x0512345", "", "12345", true},
		{v2 + "\x00\x18" + addrs + "\x02\x00\x01h\xee\x00\x00\x05\x00\x02ab", "h", "ab", true},
		// A CRC32C of zero, which is not the header's.
		{v2 + "\x00\x13" + addrs + "\x03\x00\x04\x00\x00\x00\x00", "", "", false},
		{v2 + "\x00\x0e" + addrs + "\x05\x00", "", "", false},
		{v2 + "\x00\x11" + addrs + "\x05\x00\x09abc", "", "", false},
	} {
		c1, c2 := net.Pipe()
		go func() {
			c2.Write([]byte(c.in))
			c2.Close()
		}()
		conn, err := readProxyHeader(c1)
		c1.Close()
		if (err == nil) != c.ok {
			t.Errorf("%q: error %v", c.in, err)
			continue
		}
		if err != nil {
			continue
		}
		pc := conn.(*proxyConn)
		if string(pc.authority) != c.auth || string(pc.uniqueID) != c.uid {
			t.Errorf("%q: authority %q unique id %q", c.in, pc.authority, pc.uniqueID)
		}
	}
}
