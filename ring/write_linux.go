package ring

import (
	"net"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// rawWriter writes to a stream socket with plain non-blocking system calls
// made through the runtime's poller, without the scheduler's system call
// bookkeeping: a loopback write that takes a few tens of microseconds then
// does not hand the forwarder's processor to another thread and back (the
// data path's connections write the same way).
//
// The write deadline is armed only when the socket buffer is full, from
// the moment the write stalls, and cleared once it moves again: `timeout
// server` is exactly the time without progress, at no cost for the writes
// that do not wait.
type rawWriter struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool // w.send, bound once
	p     []byte                // what is left to write
	wait  bool                  // send may wait for room (no progress yet)
	errno syscall.Errno
}

// rawAccess returns c's raw descriptor access, nil when it has none.
func rawAccess(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// newRawWriter returns nil when c offers no raw access.
func newRawWriter(c net.Conn) *rawWriter {
	rc := rawAccess(c)
	if rc == nil {
		return nil
	}
	w := &rawWriter{rc: rc}
	w.fn = w.send
	return w
}

// write writes all of p to c, waiting for room in the socket buffer as
// needed, and fails once no byte could be written for timeout (0: never).
func (w *rawWriter) write(p []byte, c net.Conn, timeout time.Duration) error {
	w.p, w.errno = p, 0
	defer func() { w.p = nil }()
	armed := false
	// Attempts alternate: one that takes what the socket has room for,
	// then, if anything is left, one that waits for room under a deadline
	// armed as the stall starts.
	for wait := false; ; wait = !wait {
		if wait && timeout > 0 {
			if err := c.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
				return err
			}
			armed = true
		}
		w.wait = wait
		if err := w.rc.Write(w.fn); err != nil {
			return err
		}
		if w.errno != 0 {
			return w.errno
		}
		if len(w.p) == 0 {
			break
		}
	}
	if armed {
		// A deadline left in the past would fail the next write before
		// it even tried.
		return c.SetWriteDeadline(time.Time{})
	}
	return nil
}

// send is the callback of RawConn.Write. It writes what the socket takes
// and reports false (wait until the socket is writable) only when w.wait
// is set and nothing could be written. MSG_NOSIGNAL turns a write to a
// reset connection into EPIPE without a signal.
func (w *rawWriter) send(fd uintptr) bool {
	progress := false
	for len(w.p) > 0 {
		n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&w.p[0])), uintptr(len(w.p)),
			syscall.MSG_NOSIGNAL|syscall.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			w.p = w.p[n:]
			progress = true
		case syscall.EINTR:
		case syscall.EAGAIN:
			return progress || !w.wait
		default:
			w.errno = e
			return true
		}
	}
	return true
}

// dgramSender sends one datagram per call without ever waiting: a datagram
// the socket cannot take at once (a UNIX datagram receiver that does not
// keep up) is dropped, as HAProxy drops a log line rather than delay the
// stream that emits it. Safe for concurrent use.
type dgramSender struct {
	rc syscall.RawConn
}

// dgramCall carries one send through RawConn.Write without allocating.
type dgramCall struct {
	p     []byte
	errno syscall.Errno
	fn    func(fd uintptr) bool // c.send, bound once
}

var dgramCalls = sync.Pool{New: func() any {
	c := &dgramCall{}
	c.fn = c.send
	return c
}}

func (c *dgramCall) send(fd uintptr) bool {
	for {
		_, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(unsafe.SliceData(c.p))), uintptr(len(c.p)),
			syscall.MSG_NOSIGNAL|syscall.MSG_DONTWAIT, 0, 0)
		if e != syscall.EINTR {
			c.errno = e
			return true
		}
	}
}

// newDgramSender returns nil when c offers no raw access.
func newDgramSender(c net.Conn) *dgramSender {
	rc := rawAccess(c)
	if rc == nil {
		return nil
	}
	return &dgramSender{rc: rc}
}

// send sends p as one datagram. It returns errLogDropped when the socket
// had no room.
func (s *dgramSender) send(p []byte) error {
	c := dgramCalls.Get().(*dgramCall)
	c.p, c.errno = p, 0
	err := s.rc.Write(c.fn)
	errno := c.errno
	c.p = nil
	dgramCalls.Put(c)
	switch {
	case err != nil:
		return err
	case errno == syscall.EAGAIN:
		return errLogDropped
	case errno != 0:
		return errno
	}
	return nil
}
