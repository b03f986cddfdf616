//go:build regtest

package proxy

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// tlv is one PROXY protocol version 2 TLV.
func tlv(typ byte, v string) string {
	return string(append([]byte{typ, byte(len(v) >> 8), byte(len(v))}, v...))
}

// proxyV2TLVs builds a version 2 PROXY header for TCP over IPv4 followed by
// tlvs; crc adds a CRC32C TLV last, right (good) or wrong.
func proxyV2TLVs(tlvs string, crc, good bool) string {
	body := []byte{192, 0, 2, 1, 127, 0, 0, 1, 0x11, 0x5c, 0, 80}
	body = append(body, tlvs...)
	if crc {
		body = append(body, 0x03, 0, 4, 0, 0, 0, 0)
	}
	b := []byte("\r\n\r\n\x00\r\nQUIT\n\x21\x11")
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	b = append(b, body...)
	if crc {
		sum := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
		if !good {
			sum++
		}
		binary.BigEndian.PutUint32(b[len(b)-4:], sum)
	}
	return string(b)
}

// TestProxyTLVs sends version 2 PROXY headers with TLVs to goha and to
// HAProxy: fc_pp_authority and fc_pp_unique_id give the AUTHORITY and
// UNIQUE_ID TLVs, fc_rcvd_proxy tells that a header came; a CRC32C that
// does not match, a TLV running past the header or a value longer than
// HAProxy keeps (255 for AUTHORITY, 128 for UNIQUE_ID) refuse the
// connection.
func TestProxyTLVs(t *testing.T) {
	const req = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	long := strings.Repeat("u", 128)
	cases := []struct {
		name, header, want string // want "": refused
	}{
		{"none", proxyV2TLVs("", false, false), "1 a= u="},
		{"unique-id", proxyV2TLVs(tlv(5, "12345"), false, false), "1 a= u=3132333435"},
		{"authority", proxyV2TLVs(tlv(2, "example.com"), false, false), "1 a=example.com u="},
		{"both-unknown-crc", proxyV2TLVs(tlv(0xe0, "zz")+tlv(2, "h")+tlv(5, "\x00\x01"), true, true), "1 a=h u=0001"},
		{"unique-id-128", proxyV2TLVs(tlv(5, long), false, false), "1 a= u=" + strings.Repeat("75", 128)},
		{"empty-unique-id", proxyV2TLVs(tlv(5, ""), false, false), "1 a= u="},
		{"bad-crc", proxyV2TLVs(tlv(5, "1"), true, false), ""},
		{"unique-id-129", proxyV2TLVs(tlv(5, long+"u"), false, false), ""},
		{"authority-256", proxyV2TLVs(tlv(2, strings.Repeat("a", 256)), false, false), ""},
		{"truncated-tlv", proxyV2TLVs("\x05\x00\x09abc", false, false), ""},
		{"short-tlv-header", proxyV2TLVs("\x05\x00", false, false), ""},
		{"v1", "PROXY TCP4 192.0.2.7 127.0.0.1 5555 80\r\n", "1 a= u="},
	}
	xpp := regexp.MustCompile(`(?m)^x-pp: (.*)\r$`)
	for name, prog := range map[string]string{"goha": bin.Path(t, "goha"), "haproxy": bin.HAProxy(t)} {
		t.Run(name, func(t *testing.T) {
			h := harness.Start(t, prog, `
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}" accept-proxy
    http-request return status 200 hdr x-pp "%[fc_rcvd_proxy] a=%[fc_pp_authority] u=%[fc_pp_unique_id,hex]"
`, "fe")
			for _, tc := range cases {
				reply := harness.RawRequest(t, h.Addrs["fe"], tc.header+req, harness.Patience)
				got := ""
				if m := xpp.FindStringSubmatch(reply); m != nil {
					got = m[1]
				}
				if got != tc.want {
					t.Errorf("%s: x-pp %q, want %q (reply %q)", tc.name, got, tc.want, reply)
				}
			}
			h.Stop()
		})
	}
}

// TestSendProxyV2Options has goha and HAProxy send a version 2 PROXY header
// with every proxy-v2-options TLV to a server that records it, for a TLS
// client with SNI and a certificate: the TLVs come in the same order with
// the same values (the cipher name aside, which each library picks), the
// CRC32C covers the header, and a second request on the client's
// connection opens a new server connection with its own unique id.
func TestSendProxyV2Options(t *testing.T) {
	crt := selfSigned(t)
	headers := make(chan []byte, 4)
	srv := harness.TCPServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		fixed := make([]byte, 16)
		if _, err := io.ReadFull(br, fixed); err != nil {
			return
		}
		rest := make([]byte, binary.BigEndian.Uint16(fixed[14:]))
		if _, err := io.ReadFull(br, rest); err != nil {
			return
		}
		headers <- append(fixed, rest...)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	})
	pair, err := tls.LoadX509KeyPair(crt, crt)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string][]string{}
	for _, name := range []string{"goha", "haproxy"} {
		prog := bin.Path(t, "goha")
		if name == "haproxy" {
			prog = bin.HAProxy(t)
		}
		h := harness.Start(t, prog, `
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}" ssl crt `+crt+` ca-file `+crt+` verify optional
    unique-id-format id-%[req.hdr(x-n)]
    default_backend be
backend be
    server s1 `+srv+` send-proxy-v2 proxy-v2-options crc32c,authority,unique-id,ssl,cert-cn,cert-key,cert-sig,ssl-cipher
`, "fe")
		c, err := tls.Dial("tcp", h.Addrs["fe"], &tls.Config{ServerName: "pp.example", InsecureSkipVerify: true,
			Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		br := bufio.NewReader(c)
		for _, n := range []string{"1", "2"} {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nx-n: "+n+"\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: request %s: %v", name, n, err)
			}
			resp.Body.Close()
			select {
			case hdr := <-headers:
				results[name] = append(results[name], describePPv2(t, hdr))
			case <-time.After(harness.Patience):
				t.Fatalf("%s: request %s: no new server connection", name, n)
			}
		}
		c.Close()
		h.Stop()
	}
	for i := range results["haproxy"] {
		if results["goha"][i] != results["haproxy"][i] {
			t.Errorf("header %d:\n goha    %v\n haproxy %v", i+1, results["goha"], results["haproxy"])
			break
		}
	}
	if want := "id-2"; !strings.Contains(results["goha"][1], want) {
		t.Errorf("second header %q lacks %q", results["goha"][1], want)
	}
}

// describePPv2 renders a version 2 header's TLVs, SSL sub-TLVs included,
// checking its CRC32C; the cipher's name is left out.
func describePPv2(t *testing.T, hdr []byte) string {
	var out []string
	var walk func(b []byte, sub bool)
	walk = func(b []byte, sub bool) {
		for len(b) >= 3 {
			typ, n := b[0], int(binary.BigEndian.Uint16(b[1:]))
			if 3+n > len(b) {
				t.Errorf("TLV %#x runs past the header", typ)
				return
			}
			v := b[3 : 3+n]
			switch {
			case typ == 0x03:
				want := binary.BigEndian.Uint32(v)
				cp := append([]byte(nil), hdr...)
				off := len(hdr) - len(b) + 3
				copy(cp[off:off+4], []byte{0, 0, 0, 0})
				if got := crc32.Checksum(cp, crc32.MakeTable(crc32.Castagnoli)); got != want {
					t.Errorf("CRC32C %08x, header sums to %08x", want, got)
				}
				out = append(out, "crc32c")
			case typ == 0x20 && !sub:
				out = append(out, fmt.Sprintf("ssl(client=%d verify=%d)", v[0], binary.BigEndian.Uint32(v[1:5])))
				walk(v[5:], true)
			case typ == 0x23:
				out = append(out, fmt.Sprintf("%#x=<cipher %t>", typ, n > 0))
			default:
				out = append(out, fmt.Sprintf("%#x=%q", typ, v))
			}
			b = b[3+n:]
		}
		if len(b) != 0 {
			t.Errorf("%d bytes left after the TLVs", len(b))
		}
	}
	walk(hdr[16+12:], false)
	return strings.Join(out, " ")
}
