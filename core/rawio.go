package core

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a TCP socket with raw system calls made inside
// the poller's RawConn callbacks. The poller still does the waiting, the
// deadlines and the descriptor's reference counting; what goes away is
// the runtime's syscall bookkeeping around each call. That bookkeeping is
// not free on a proxy whose every request is two reads and two writes: a
// write on loopback runs the peer's receive path too and often lasts
// long enough for the runtime's monitor to hand the P to another thread,
// which then has to be woken and put back to sleep. A read or write on a
// non-blocking socket never blocks, so holding the P through it is what
// an event loop's thread does anyway.
//
// A rawIO serves one reader and one writer at a time (the read and write
// halves have separate state), which is how a stream uses a connection.
type rawIO struct {
	rc syscall.RawConn

	rbuf []byte
	rn   int
	rerr syscall.Errno
	reof bool

	wbuf []byte
	wn   int
	werr syscall.Errno

	rfn, wfn func(uintptr) bool // method values, bound once
}

// initRaw prepares raw I/O on c; false when c is not a TCP socket.
func (r *rawIO) initRaw(c net.Conn) bool {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		r.rc = nil
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		r.rc = nil
		return false
	}
	r.rc = rc
	if r.rfn == nil {
		r.rfn = r.readFD
		r.wfn = r.writeFD
	}
	return true
}

func (r *rawIO) readFD(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rbuf[0])), uintptr(len(r.rbuf)))
		switch e {
		case 0:
			r.rn = int(n)
			r.reof = n == 0
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.rerr = e
		return true
	}
}

func (r *rawIO) writeFD(fd uintptr) bool {
	for r.wn < len(r.wbuf) {
		p := r.wbuf[r.wn:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case 0:
			r.wn += int(n)
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.werr = e
		return true
	}
	return true
}

// read has net.Conn.Read's contract and error values.
func (r *rawIO) read(c net.Conn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rbuf, r.rn, r.rerr, r.reof = p, 0, 0, false
	err := r.rc.Read(r.rfn)
	r.rbuf = nil
	switch {
	case err != nil:
		return 0, rawOpError("read", c, err)
	case r.rerr != 0:
		return 0, rawOpError("read", c, os.NewSyscallError("read", r.rerr))
	case r.reof:
		return 0, io.EOF
	}
	return r.rn, nil
}

// write has net.Conn.Write's contract and error values.
func (r *rawIO) write(c net.Conn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.wbuf, r.wn, r.werr = p, 0, 0
	err := r.rc.Write(r.wfn)
	r.wbuf = nil
	n := r.wn
	switch {
	case err != nil:
		return n, rawOpError("write", c, err)
	case r.werr != 0:
		return n, rawOpError("write", c, os.NewSyscallError("write", r.werr))
	}
	return n, nil
}

func rawOpError(op string, c net.Conn, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// rawConn is a client or server connection whose Read and Write go
// through rawIO once io.initRaw has accepted it (a TCP socket), and to the
// underlying connection otherwise (TLS); everything else is the underlying
// connection's.
type rawConn struct {
	net.Conn
	io rawIO
}

func (c *rawConn) Read(p []byte) (int, error) {
	if c.io.rc == nil {
		return c.Conn.Read(p)
	}
	return c.io.read(c.Conn, p)
}

func (c *rawConn) Write(p []byte) (int, error) {
	if c.io.rc == nil {
		return c.Conn.Write(p)
	}
	return c.io.write(c.Conn, p)
}

// CloseWrite half-closes the underlying TCP connection.
func (c *rawConn) CloseWrite() error {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return c.Conn.Close()
}

// asRaw returns c with raw reads and writes when it is a TCP socket, c
// itself otherwise.
func asRaw(c net.Conn) net.Conn {
	r := &rawConn{Conn: c}
	if r.io.initRaw(c) {
		return r
	}
	return c
}
