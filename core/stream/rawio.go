package stream

import (
	"encoding/binary"
	"goha/core"
	"io"
	"iter"
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
// The calls are recvfrom and sendto rather than read and write: on a socket
// they do the same, without the file layer's position lock and
// notification hooks that read and write go through.
//
// A rawIO serves one reader and one writer at a time (the read and write
// halves have separate state), which is how a stream uses a connection.
type rawIO struct {
	rc syscall.RawConn

	rbuf  []byte
	rn    int
	rerr  syscall.Errno
	reof  bool
	rmore bool // readMsgFD: the socket holds more (bytes or a FIN)

	// readMsgFD's arguments to recvmsg, kept here so that a read
	// allocates nothing.
	msg  syscall.Msghdr
	iov  syscall.Iovec
	cmsg [syscall.SizeofCmsghdr + 8]byte

	wbuf []byte
	wn   int
	werr syscall.Errno

	// A write that waits for the next read (see deferWrite): deferNext
	// says the next write is to wait, pend holds it until then.
	deferNext bool
	pend      []byte

	rfn, wfn, wrfn func(uintptr) bool // method values, bound once

	sess readSession
}

// A read session runs a client connection's request loop inside a single
// read callback, the loop being a coroutine (iter.Pull) that the callback
// resumes. Waiting for data is then returning false from that callback:
// the poller sleeps until the socket is readable, without the attempt
// every fresh read must make first (the poller forgets readiness from
// before a read starts; within one read it remembers everything since).
// Between keep-alive requests that attempt nearly always came back empty:
// one system call (about 1.2 us here) replaced by a coroutine switch
// (about 70 ns).
//
// Everything in the session runs on the coroutine except the waiting, and
// only one goroutine at a time runs, so the fields need no lock. The
// session ends when the loop ends or leaves it (a tunnel reads the client
// from another goroutine), or when the wait fails (deadline, close); the
// loop then goes on outside, with ordinary reads.
//
// A short read does not prove the socket empty: a FIN that came with the
// data (or before the read) was announced by the same readiness, and the
// read stops short of it. Waiting then would sleep through the client's
// close until a timeout. So the session asks the kernel to report, with
// each read, what is still queued, a FIN included (TCP_INQ): no extra
// system call. Where the kernel cannot, every read that returned data is
// followed by another before the session waits.
type readSession struct {
	active  bool    // reads go through the session
	mustTry bool    // the socket may hold data whose readiness was consumed
	inq     bool    // reads report what is left queued (TCP_INQ is on)
	leaving bool    // the loop asked to leave the session
	fd      uintptr // valid while active
	err     error   // why the session's wait ended, for the waiting read
	yield   func(struct{}) bool
}

// runSession runs loop in a read session when r has raw access, and
// directly otherwise; it returns loop's result.
func (r *rawIO) runSession(loop func() bool) bool {
	if r.rc == nil {
		return loop()
	}
	s := &r.sess
	*s = readSession{}
	var result bool
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		s.yield = yield
		result = loop()
	})
	defer stop()
	s.active, s.mustTry = true, true
	first := true
	err := r.rc.Read(func(fd uintptr) bool {
		if first {
			first = false
			s.inq = enableInq(fd)
		}
		s.fd = fd
		if _, more := next(); !more || s.leaving {
			return true
		}
		return false
	})
	s.active, s.fd = false, 0
	s.err = err
	// The loop goes on (or learns why the wait ended) outside.
	for {
		if _, more := next(); !more {
			return result
		}
	}
}

// wait hands control to the session's callback until the socket is
// readable, or the session has ended.
func (s *readSession) wait() error {
	if !s.yield(struct{}{}) {
		return net.ErrClosed
	}
	s.mustTry = true
	if !s.active {
		if err := s.err; err != nil {
			s.err = nil
			return err
		}
	}
	return nil
}

// leaveSession ends the read session, if one is running; the caller goes
// on outside it.
func (r *rawIO) leaveSession() {
	s := &r.sess
	if !s.active {
		return
	}
	s.leaving = true
	s.yield(struct{}{})
	s.leaving = false
}

// sessionRead is read inside a session. A read after which the socket
// holds nothing (no bytes, no FIN) lets the next one wait first: new data
// wakes it.
func (r *rawIO) sessionRead(c net.Conn, p []byte) (int, error) {
	s := &r.sess
	for {
		if !s.mustTry {
			if err := s.wait(); err != nil {
				return 0, rawOpError("read", c, err)
			}
			if !s.active {
				return r.read(c, p)
			}
		}
		r.rbuf, r.rn, r.rerr, r.reof = p, 0, 0, false
		var done bool
		if s.inq {
			done = r.readMsgFD(s.fd)
		} else {
			done = r.readFD(s.fd)
			r.rmore = r.rn > 0
		}
		if !done {
			s.mustTry = false
			continue
		}
		r.rbuf = nil
		s.mustTry = r.rmore
		return r.readResult(c, nil)
	}
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
		r.wrfn = r.writeThenReadFD
	}
	r.deferNext, r.pend = false, nil
	return true
}

func (r *rawIO) readFD(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&r.rbuf[0])), uintptr(len(r.rbuf)), 0, 0, 0)
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

// tcpInq is Linux's TCP_INQ, both the socket option and the type of the
// control message that carries the count.
const tcpInq = 36

// enableInq asks the kernel to report after each recvmsg on fd how much
// is left to read; false when it cannot.
func enableInq(fd uintptr) bool {
	one := int32(1)
	_, _, e := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, fd, syscall.IPPROTO_TCP, tcpInq, uintptr(unsafe.Pointer(&one)), 4, 0)
	return e == 0
}

// readMsgFD is readFD that also learns whether the socket holds more
// (rmore): bytes beyond the buffer, or a FIN not yet read as one.
func (r *rawIO) readMsgFD(fd uintptr) bool {
	r.iov.Base = &r.rbuf[0]
	r.iov.SetLen(len(r.rbuf))
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	r.msg.Control = &r.cmsg[0]
	for {
		r.msg.SetControllen(len(r.cmsg))
		n, _, e := syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
		switch e {
		case 0:
			r.rn = int(n)
			r.reof = n == 0
			r.rmore = r.rn == len(r.rbuf) || r.queued() > 0
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

// queued is the count of the TCP_INQ control message recvmsg left in
// r.cmsg, 1 when none came (the caller then tries again rather than wait).
func (r *rawIO) queued() int32 {
	const hdr = syscall.SizeofCmsghdr
	if r.msg.Controllen < hdr+4 {
		return 1
	}
	level := binary.NativeEndian.Uint32(r.cmsg[8:])
	typ := binary.NativeEndian.Uint32(r.cmsg[12:])
	if level != syscall.SOL_TCP || typ != tcpInq {
		return 1
	}
	return int32(binary.NativeEndian.Uint32(r.cmsg[hdr:]))
}

func (r *rawIO) writeFD(fd uintptr) bool {
	for r.wn < len(r.wbuf) {
		p := r.wbuf[r.wn:]
		n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
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

// deferWrite makes the next write wait for the read that follows it, so
// that both happen in one read callback: the write is made after the
// poller has been armed for the reply. A plain read arms the poller
// first and then must try the socket once before it may sleep, since
// readiness that arrived before the arming is forgotten; that try comes
// back empty whenever the reply is still on its way, which for a request
// just sent to a server is nearly always. Arming first and then sending
// lets the read sleep at once: the reply cannot come before the request.
//
// The bytes handed to that write must stay unchanged until the read.
func (r *rawIO) deferWrite() {
	if r.rc != nil {
		r.deferNext = true
	}
}

// writeThenReadFD is the read callback while a deferred write is pending:
// the first call sends it and waits; later calls read.
func (r *rawIO) writeThenReadFD(fd uintptr) bool {
	if r.wbuf == nil {
		return r.readFD(fd)
	}
	if !r.writeFD(fd) || r.werr != 0 {
		// The send buffer is full, or the write failed: read sorts
		// it out outside the callback.
		return true
	}
	r.wbuf = nil
	return false
}

// read has net.Conn.Read's contract and error values.
func (r *rawIO) read(c net.Conn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rbuf, r.rn, r.rerr, r.reof = p, 0, 0, false
	var err error
	if r.pend != nil {
		r.wbuf, r.wn, r.werr = r.pend, 0, 0
		r.pend = nil
		err = r.rc.Read(r.wrfn)
		if err == nil && r.werr == 0 && r.wbuf != nil {
			// Rare: the request did not fit in the socket's send
			// buffer. Finish it, then read as usual.
			if err = r.rc.Write(r.wfn); err == nil && r.werr == 0 {
				err = r.rc.Read(r.rfn)
			}
		}
		r.wbuf = nil
		if err == nil && r.werr != 0 {
			r.rbuf = nil
			return 0, rawOpError("write", c, os.NewSyscallError("write", r.werr))
		}
	} else {
		err = r.rc.Read(r.rfn)
	}
	r.rbuf = nil
	return r.readResult(c, err)
}

// readResult turns the outcome of readFD (or of the poller's wait, err)
// into net.Conn.Read's values.
func (r *rawIO) readResult(c net.Conn, err error) (int, error) {
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
	if r.deferNext {
		r.deferNext = false
		r.pend = p
		return len(p), nil
	}
	if r.pend != nil {
		// A second write before the read: the first goes out now.
		q := r.pend
		r.pend = nil
		if _, err := r.writeNow(c, q); err != nil {
			return 0, err
		}
	}
	return r.writeNow(c, p)
}

func (r *rawIO) writeNow(c net.Conn, p []byte) (int, error) {
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
	// Bytes read and written since the owner last took them (takeBytes):
	// plain counters, each moved by the one goroutine that reads, or
	// writes, the connection. sIn and sOut are the part of them that
	// was spliced (spliceCopy), likewise.
	nIn, nOut int64
	sIn, sOut int64
}

func (c *rawConn) Read(p []byte) (n int, err error) {
	switch {
	case c.io.rc == nil:
		n, err = c.Conn.Read(p)
	case c.io.sess.active && len(p) > 0:
		n, err = c.io.sessionRead(c.Conn, p)
	default:
		n, err = c.io.read(c.Conn, p)
	}
	c.nIn += int64(n)
	return n, err
}

func (c *rawConn) Write(p []byte) (n int, err error) {
	if c.io.rc == nil {
		n, err = c.Conn.Write(p)
	} else {
		n, err = c.io.write(c.Conn, p)
	}
	c.nOut += int64(n)
	return n, err
}

// takeBytes adds the bytes moved since the last call to cs's HTTP/1
// byte counters.
func (c *rawConn) takeBytes(cs *core.Counters) {
	if c.nIn != 0 {
		cs.H1BytesIn.Add(c.nIn)
	}
	if c.nOut != 0 {
		cs.H1BytesOut.Add(c.nOut)
	}
	if c.sIn != 0 {
		cs.H1SplicedBytesIn.Add(c.sIn)
	}
	if c.sOut != 0 {
		cs.H1SplicedBytesOut.Add(c.sOut)
	}
	c.nIn, c.nOut, c.sIn, c.sOut = 0, 0, 0, 0
}

// CloseWrite half-closes the underlying connection: a TCP socket's
// sending side, a TLS session's (close_notify); anything else is closed.
func (c *rawConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		if err := cw.CloseWrite(); err == nil {
			return nil
		}
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
