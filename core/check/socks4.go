package check

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
)

// SOCKS4 handshake failures, in HAProxy's words (its connection error
// texts).
const (
	socks4SendErr  = "SOCKS4 Proxy write error during handshake"
	socks4RecvErr  = "SOCKS4 Proxy read error during handshake"
	socks4Denied   = "SOCKS4 Proxy deny the request"
	socks4Aborted  = "SOCKS4 Proxy handshake aborted by server"
	socks4Granted  = 90
	socks4ReplyLen = 8
)

// Socks4Error is a failed SOCKS4 handshake. Incomplete is set when the
// proxy sent part of its reply and then nothing more: HAProxy then waits
// for the rest until its connect timeout.
type Socks4Error struct {
	Text       string
	Err        error // the socket error, if any
	Incomplete bool
}

func (e *Socks4Error) Error() string {
	if t := errnoText(e.Err); t != "" {
		return e.Text + " (" + t + ")"
	}
	return e.Text
}

func (e *Socks4Error) Unwrap() error { return e.Err }

// socks4Request is the CONNECT request HAProxy sends, with the user id
// "HAProxy". For an IPv6 destination, which SOCKS4 cannot carry, HAProxy
// puts the first non-zero 32-bit word of the address in the IPv4 field;
// goha does the same so that both reach the same place.
func socks4Request(dst netip.AddrPort) []byte {
	b := []byte{4, 1}
	b = binary.BigEndian.AppendUint16(b, dst.Port())
	var ip [4]byte
	a := dst.Addr().Unmap()
	if a.Is4() {
		ip = a.As4()
	} else if a.Is6() {
		s := a.As16()
		for i := 0; i < 16; i += 4 {
			if s[i]|s[i+1]|s[i+2]|s[i+3] != 0 {
				copy(ip[:], s[i:i+4])
				break
			}
		}
	}
	b = append(b, ip[:]...)
	return append(b, "HAProxy\x00"...)
}

// Socks4Connect asks the SOCKS4 proxy at the other end of c to connect to
// dst, within c's deadline. On success the next byte read from c comes
// from dst. A deadline expiring is returned as is (a timeout); any other
// failure is a *Socks4Error.
func Socks4Connect(c net.Conn, dst netip.AddrPort) error {
	if _, err := c.Write(socks4Request(dst)); err != nil {
		switch {
		case isTimeout(err):
			return err
		case errors.Is(err, syscall.ECONNRESET):
			// The proxy reset the connection before the request went
			// out; HAProxy learns it when reading the reply.
			return &Socks4Error{Text: socks4Aborted, Err: err}
		}
		return &Socks4Error{Text: socks4SendErr, Err: err}
	}
	// Exactly the reply is read: what follows belongs to dst.
	var rep [socks4ReplyLen]byte
	n, err := io.ReadFull(c, rep[:])
	switch {
	case err == nil:
	case isTimeout(err):
		return err
	case n > 0:
		return &Socks4Error{Text: socks4RecvErr, Incomplete: true}
	case errors.Is(err, io.EOF):
		return &Socks4Error{Text: socks4RecvErr}
	default:
		return &Socks4Error{Text: socks4Aborted, Err: err}
	}
	// Only the result code matters; HAProxy ignores the version byte.
	if rep[1] != socks4Granted {
		return &Socks4Error{Text: socks4Denied}
	}
	return nil
}
