//go:build regtest

package proxy

import (
	"encoding/binary"
	"hash/crc32"
	"regexp"
	"strings"
	"testing"

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
