package stream

import (
	"crypto/tls"
	"net"
	"syscall"
	"unsafe"
)

// peeker looks at a socket's receive queue without taking anything from
// it: what core/pool asks of an idle server connection before handing it
// out (pool.Quieter). A TLS connection is looked at through its TCP
// socket: a record waiting there is as unexpected as plain bytes.
type peeker struct {
	rc  syscall.RawConn
	fn  func(uintptr) // peekFD, bound once so that a peek allocates nothing
	n   int
	err syscall.Errno
	b   [1]byte
}

func (p *peeker) init(c net.Conn) {
	p.rc = nil
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.rc = rc
	if p.fn == nil {
		p.fn = p.peekFD
	}
}

func (p *peeker) peekFD(fd uintptr) {
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p.b[0])), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		p.n, p.err = int(n), e
		return
	}
}

// quiet reports whether the socket has nothing to read and its peer has
// not closed: the peek would block. Bytes waiting, an end of stream or an
// error all say the connection must not carry another request. Without a
// socket to look at, it answers true.
func (p *peeker) quiet() bool {
	if p.rc == nil {
		return true
	}
	p.n, p.err = 0, 0
	if err := p.rc.Control(p.fn); err != nil {
		return false
	}
	return p.err == syscall.EAGAIN
}
