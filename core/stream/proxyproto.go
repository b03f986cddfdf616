package stream

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// proxyConn is a client connection that began with a PROXY protocol
// header: its addresses are the header's, and its bytes those after it.
type proxyConn struct {
	net.Conn
	r        io.Reader
	src, dst net.Addr // nil: the connection's own (LOCAL, UNKNOWN)
	// The version 2 header's AUTHORITY and UNIQUE_ID TLVs, which HAProxy
	// keeps with the connection (fc_pp_authority, fc_pp_unique_id); nil
	// when absent.
	authority, uniqueID []byte
}

// PROXY protocol version 2 TLV types that HAProxy 2.6 reads, and the
// longest values it accepts (PP2_AUTHORITY_MAX, UNIQUEID_LEN).
const (
	pp2TypeAuthority = 0x02
	pp2TypeCRC32C    = 0x03
	pp2TypeUniqueID  = 0x05

	pp2AuthorityMax = 255
	pp2UniqueIDMax  = 128
)

// readProxyHeader reads a PROXY protocol header, version 1 or 2, from the
// start of c (accept-proxy) and returns c as the header describes it.
func readProxyHeader(c net.Conn) (net.Conn, error) {
	br := bufio.NewReaderSize(c, 256)
	pc := &proxyConn{Conn: c, r: br}
	first, err := br.Peek(1)
	if err != nil {
		return nil, err
	}
	if first[0] == 'P' {
		line, err := br.ReadSlice('\n')
		// 107 bytes is the longest a version 1 header may be.
		if err != nil || len(line) > 107 || !bytes.HasSuffix(line, []byte("\r\n")) {
			return nil, errProxyHeader
		}
		f := strings.Fields(string(line))
		if len(f) < 2 || f[0] != "PROXY" {
			return nil, errProxyHeader
		}
		if f[1] == "UNKNOWN" {
			return pc, nil
		}
		if len(f) != 6 || f[1] != "TCP4" && f[1] != "TCP6" {
			return nil, errProxyHeader
		}
		src, err1 := netip.ParseAddr(f[2])
		dst, err2 := netip.ParseAddr(f[3])
		sp, err3 := strconv.ParseUint(f[4], 10, 16)
		dp, err4 := strconv.ParseUint(f[5], 10, 16)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || src.Is4() != (f[1] == "TCP4") || dst.Is4() != src.Is4() {
			return nil, errProxyHeader
		}
		pc.src = net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, uint16(sp)))
		pc.dst = net.TCPAddrFromAddrPort(netip.AddrPortFrom(dst, uint16(dp)))
		return pc, nil
	}
	hdr := make([]byte, 16)
	if _, err := io.ReadFull(br, hdr); err != nil || !bytes.Equal(hdr[:12], proxyV2Sig) || hdr[12]>>4 != 2 {
		return nil, errProxyHeader
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[14:]))
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, errProxyHeader
	}
	switch hdr[12] & 0xf {
	case 0: // LOCAL: the connection speaks for itself.
		return pc, nil
	case 1:
	default:
		return nil, errProxyHeader
	}
	var n int
	switch hdr[13] >> 4 {
	case 1:
		n = 4
	case 2:
		n = 16
	default: // AF_UNSPEC, AF_UNIX: no address goha can use.
		return pc, nil
	}
	if len(body) < 2*n+4 {
		return nil, errProxyHeader
	}
	src, _ := netip.AddrFromSlice(body[:n])
	dst, _ := netip.AddrFromSlice(body[n : 2*n])
	pc.src = net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, binary.BigEndian.Uint16(body[2*n:])))
	pc.dst = net.TCPAddrFromAddrPort(netip.AddrPortFrom(dst, binary.BigEndian.Uint16(body[2*n+2:])))
	if err := pc.readTLVs(hdr, body, 2*n+4); err != nil {
		return nil, err
	}
	return pc, nil
}

// readTLVs reads the TLVs that follow the addresses, at body[off:], as
// HAProxy 2.6's conn_recv_proxy: each must fit in the header, a CRC32C
// must match the whole header's (hdr and body, the CRC zeroed), AUTHORITY
// and UNIQUE_ID are kept, the others skipped.
func (pc *proxyConn) readTLVs(hdr, body []byte, off int) error {
	for off < len(body) {
		if off+3 > len(body) {
			return errProxyHeader
		}
		typ, n := body[off], int(binary.BigEndian.Uint16(body[off+1:]))
		off += 3
		if off+n > len(body) {
			return errProxyHeader
		}
		v := body[off : off+n : off+n]
		switch typ {
		case pp2TypeCRC32C:
			if n != 4 {
				return errProxyHeader
			}
			want := binary.BigEndian.Uint32(v)
			clear(v)
			crc := crc32.Update(crc32.Checksum(hdr, castagnoli), castagnoli, body)
			binary.BigEndian.PutUint32(v, want)
			if crc != want {
				return errProxyHeader
			}
		case pp2TypeAuthority:
			if n > pp2AuthorityMax {
				return errProxyHeader
			}
			pc.authority = v
		case pp2TypeUniqueID:
			if n > pp2UniqueIDMax {
				return errProxyHeader
			}
			pc.uniqueID = v
		}
		off += n
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (c *proxyConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes the socket, so that tcp mode forwards a client's
// end of stream as it does without the header.
func (c *proxyConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

func (c *proxyConn) RemoteAddr() net.Addr {
	if c.src != nil {
		return c.src
	}
	return c.Conn.RemoteAddr()
}

func (c *proxyConn) LocalAddr() net.Addr {
	if c.dst != nil {
		return c.dst
	}
	return c.Conn.LocalAddr()
}

var (
	proxyV2Sig     = []byte("\r\n\r\n\x00\r\nQUIT\n")
	errProxyHeader = errors.New("received something which does not look like a PROXY protocol header")
)

// appendProxyHeader appends the PROXY protocol header (v2: version 2,
// else a version 1 line) a send-proxy server gets for a stream of
// addresses src and dst: UNKNOWN (v1) or LOCAL (v2) unless both are TCP
// addresses of one family.
func appendProxyHeader(b []byte, v2 bool, src, dst net.Addr, tlvs []byte) []byte {
	s, sok := addrPortOf(src)
	d, dok := addrPortOf(dst)
	ok := sok && dok && s.Addr().Is4() == d.Addr().Is4()
	if !v2 {
		if !ok {
			return append(b, "PROXY UNKNOWN\r\n"...)
		}
		fam := "PROXY TCP4 "
		if !s.Addr().Is4() {
			fam = "PROXY TCP6 "
		}
		b = append(b, fam...)
		b = s.Addr().AppendTo(b)
		b = append(b, ' ')
		b = d.Addr().AppendTo(b)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(s.Port()), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(d.Port()), 10)
		return append(b, "\r\n"...)
	}
	start := len(b)
	b = append(b, proxyV2Sig...)
	switch {
	case !ok:
		// LOCAL, no address.
		b = append(b, 0x20, 0x00)
		b = binary.BigEndian.AppendUint16(b, uint16(len(tlvs)))
	case s.Addr().Is4():
		b = append(b, 0x21, 0x11)
		b = binary.BigEndian.AppendUint16(b, uint16(12+len(tlvs)))
		s4, d4 := s.Addr().As4(), d.Addr().As4()
		b = append(b, s4[:]...)
		b = append(b, d4[:]...)
	default:
		b = append(b, 0x21, 0x21)
		b = binary.BigEndian.AppendUint16(b, uint16(36+len(tlvs)))
		s16, d16 := s.Addr().As16(), d.Addr().As16()
		b = append(b, s16[:]...)
		b = append(b, d16[:]...)
	}
	if ok {
		b = binary.BigEndian.AppendUint16(b, s.Port())
		b = binary.BigEndian.AppendUint16(b, d.Port())
	}
	at := len(b)
	b = append(b, tlvs...)
	if len(tlvs) >= 7 && tlvs[0] == pp2TypeCRC32C {
		// The checksum covers the whole header, its own field zero.
		binary.BigEndian.PutUint32(b[at+3:], crc32.Checksum(b[start:], castagnoli))
	}
	return b
}
