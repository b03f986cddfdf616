package ring

import (
	"net"
	"net/netip"
	"syscall"
	"unsafe"
)

// dgramBatch is how many datagrams one recvmmsg call may return. Each
// slot holds a whole datagram (64 KiB), so a batch costs 512 KiB per
// `dgram-bind`.
const dgramBatch = 8

// mmsghdr is struct mmsghdr: Go lays it out as C does on every Linux
// architecture (msg_len after the msghdr, padded to its alignment).
type mmsghdr struct {
	hdr syscall.Msghdr
	n   uint32
}

// batchReader receives up to dgramBatch datagrams per system call
// (recvmmsg) from a UDP socket, through the runtime's poller, so that a
// relay under load spends one system call per batch instead of one per
// message. The call never blocks (MSG_DONTWAIT), so it is made without the
// scheduler's system call bookkeeping, as rawWriter's are.
type batchReader struct {
	rc    syscall.RawConn
	recv  func(fd uintptr) bool // b.recvmmsg, bound once: a closure per read would allocate
	n     int                   // datagrams received by the last recv
	errno syscall.Errno         // error of the last recv
	bufs  []byte
	hdrs  [dgramBatch]mmsghdr
	iovs  [dgramBatch]syscall.Iovec
	names [dgramBatch]syscall.RawSockaddrAny
}

// newBatchReader returns nil when c offers no raw access (then the caller
// reads one datagram at a time).
func newBatchReader(c *net.UDPConn) *batchReader {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	b := &batchReader{rc: rc, bufs: make([]byte, dgramBatch*65536)}
	b.recv = b.recvmmsg
	for i := range b.hdrs {
		b.iovs[i].Base = &b.bufs[i*65536]
		b.iovs[i].SetLen(65536)
		b.hdrs[i].hdr.Iov = &b.iovs[i]
		b.hdrs[i].hdr.Iovlen = 1
		b.hdrs[i].hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
	}
	return b
}

// read waits for at least one datagram and returns how many it received;
// datagram i is msg(i). The messages stay valid until the next read.
func (b *batchReader) read() (int, error) {
	if err := b.rc.Read(b.recv); err != nil {
		return 0, err
	}
	if b.errno != 0 {
		return 0, b.errno
	}
	return b.n, nil
}

// recvmmsg is the callback of RawConn.Read: it reports false to wait
// until the socket is readable.
func (b *batchReader) recvmmsg(fd uintptr) bool {
	for i := range b.hdrs {
		// The kernel shortens the name length to the address it
		// stored; give every slot the full room again.
		b.hdrs[i].hdr.Namelen = uint32(unsafe.Sizeof(b.names[i]))
		b.hdrs[i].hdr.Flags = 0
	}
	for {
		r, _, e := syscall.RawSyscall6(syscall.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])),
			dgramBatch, syscall.MSG_DONTWAIT, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e == syscall.EAGAIN {
			return false
		}
		b.n, b.errno = int(r), e
		return true
	}
}

// msg returns datagram i of the last read and its sender's address (the
// zero Addr when the kernel gave none).
func (b *batchReader) msg(i int) ([]byte, netip.Addr) {
	h := &b.hdrs[i]
	data := b.bufs[i*65536 : i*65536+int(min(h.n, 65536))]
	var src netip.Addr
	if h.hdr.Namelen == 0 {
		return data, src
	}
	switch b.names[i].Addr.Family {
	case syscall.AF_INET:
		sa := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&b.names[i]))
		src = netip.AddrFrom4(sa.Addr)
	case syscall.AF_INET6:
		sa := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&b.names[i]))
		src = netip.AddrFrom16(sa.Addr)
	}
	return data, src
}
