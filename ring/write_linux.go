package ring

import (
	"net"
	"syscall"
	"unsafe"
)

// rawWriter writes to a stream socket with plain non-blocking system calls
// made through the runtime's poller, without the scheduler's system call
// bookkeeping: a loopback write that takes a few tens of microseconds then
// does not hand the forwarder's processor to another thread and back (the
// data path's connections write the same way).
type rawWriter struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool // w.send, bound once
	p     []byte                // what is left to write
	errno syscall.Errno
}

// newRawWriter returns nil when c offers no raw access.
func newRawWriter(c net.Conn) *rawWriter {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &rawWriter{rc: rc}
	w.fn = w.send
	return w
}

// write writes all of p, waiting for room in the socket buffer as needed,
// within the connection's write deadline.
func (w *rawWriter) write(p []byte) error {
	w.p, w.errno = p, 0
	err := w.rc.Write(w.fn)
	w.p = nil
	if err != nil {
		return err
	}
	if w.errno != 0 {
		return w.errno
	}
	return nil
}

// send is the callback of RawConn.Write: it reports false to wait until
// the socket is writable. MSG_NOSIGNAL turns a write to a reset
// connection into EPIPE without a signal.
func (w *rawWriter) send(fd uintptr) bool {
	for len(w.p) > 0 {
		n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&w.p[0])), uintptr(len(w.p)),
			syscall.MSG_NOSIGNAL|syscall.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			w.p = w.p[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			w.errno = e
			return true
		}
	}
	return true
}
