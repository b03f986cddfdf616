package ring

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// A UDP log target's datagrams are gathered for a short while and sent
// together, with one sendmmsg call, by a goroutine of the logger's own
// (or by the line's sender itself when the batch is full).
// One datagram per request costs the proxy far more than its system call:
// on loopback the sender also runs the receiver's side, and waking a
// syslog daemon that had drained its socket costs several times the send
// (about 10 us per request in all on this machine, against 3.5 us when the
// receiver was already awake). Sent together, the datagrams of a batch
// wake the receiver once. HAProxy sends each line at once; here a line
// leaves at most batchDelay later, in order. Nothing waits for the socket:
// what it has no room for is dropped and counted, as a line sent alone.
const (
	batchMax   = 64                     // datagrams per sendmmsg
	batchBytes = 256 << 10              // bytes gathered at most (a line is at most 64 KiB)
	batchDelay = 500 * time.Microsecond // how long a batch gathers
)

type udpBatcher struct {
	rc      syscall.RawConn
	dropped *atomic.Uint64

	mu     sync.Mutex // guards buf, ends and closed
	buf    []byte     // the gathered datagrams, back to back
	ends   []int      // where each datagram of buf ends
	closed bool

	wake chan struct{}      // a batch has begun, or is half full
	sync chan chan struct{} // send what is gathered now, then answer
	done chan struct{}      // closed by close; the sender flushes and exits
	exit chan struct{}      // closed by the sender when it has exited

	fmu     sync.Mutex // guards the sending side below; taken before mu
	out     []byte
	outEnds []int
	hdrs    [batchMax]mmsghdr
	iovs    [batchMax]syscall.Iovec
}

// newUDPBatcher starts the sender of a connected UDP socket; nil when c
// offers no raw access.
func newUDPBatcher(c net.Conn, dropped *atomic.Uint64) *udpBatcher {
	rc := rawAccess(c)
	if sysSendmmsg == 0 || rc == nil {
		return nil
	}
	b := &udpBatcher{
		rc: rc, dropped: dropped,
		buf: make([]byte, 0, batchBytes), ends: make([]int, 0, batchMax),
		out: make([]byte, 0, batchBytes), outEnds: make([]int, 0, batchMax),
		wake: make(chan struct{}, 1), sync: make(chan chan struct{}), done: make(chan struct{}), exit: make(chan struct{}),
	}
	go b.run()
	return b
}

// add queues one datagram; it never waits for the socket. A full batch
// is sent first, by the caller.
func (b *udpBatcher) add(p []byte) {
	b.mu.Lock()
	for !b.closed && (len(b.ends) == batchMax || len(b.buf)+len(p) > batchBytes) {
		b.mu.Unlock()
		b.flush()
		b.mu.Lock()
	}
	if b.closed {
		b.mu.Unlock()
		b.dropped.Add(1)
		return
	}
	b.buf = append(b.buf, p...)
	b.ends = append(b.ends, len(b.buf))
	n := len(b.ends)
	b.mu.Unlock()
	if n == 1 || n == batchMax/2 {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// flushNow sends what is gathered and returns once it is sent.
func (b *udpBatcher) flushNow() {
	ack := make(chan struct{})
	select {
	case b.sync <- ack:
		<-ack
	case <-b.exit:
	}
}

// close sends what is gathered and stops the sender.
func (b *udpBatcher) close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	close(b.done)
	<-b.exit
}

func (b *udpBatcher) run() {
	defer close(b.exit)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-b.wake:
		case ack := <-b.sync:
			b.flush()
			close(ack)
			continue
		case <-b.done:
			b.flush()
			return
		}
		b.mu.Lock()
		n := len(b.ends)
		b.mu.Unlock()
		if n < batchMax/2 {
			// Let the batch gather; a half-full one goes at once.
			t.Reset(batchDelay)
			select {
			case <-t.C:
			case <-b.wake:
				t.Stop()
			case <-b.done:
				t.Stop()
			}
		}
		b.flush()
	}
}

// flush sends the gathered datagrams. Flushes are serialised, and each
// takes the batch under fmu, so batches leave in the order they filled.
func (b *udpBatcher) flush() {
	b.fmu.Lock()
	defer b.fmu.Unlock()
	b.mu.Lock()
	b.buf, b.out = b.out[:0], b.buf
	b.ends, b.outEnds = b.outEnds[:0], b.ends
	b.mu.Unlock()
	n := len(b.outEnds)
	if n == 0 {
		return
	}
	start := 0
	for i, end := range b.outEnds {
		b.iovs[i].Base = &b.out[start]
		b.iovs[i].SetLen(end - start)
		b.hdrs[i] = mmsghdr{}
		b.hdrs[i].hdr.Iov = &b.iovs[i]
		b.hdrs[i].hdr.Iovlen = 1
		start = end
	}
	sent := 0
	retried := false
	_ = b.rc.Control(func(fd uintptr) {
		for sent < n {
			r, _, e := syscall.RawSyscall6(sysSendmmsg, fd, uintptr(unsafe.Pointer(&b.hdrs[sent])),
				uintptr(n-sent), syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, 0, 0)
			switch e {
			case 0:
				sent += int(r)
				continue
			case syscall.EINTR:
				continue
			case syscall.ECONNREFUSED:
				// The report of an earlier datagram refused
				// (ICMP port unreachable): this batch was not
				// sent yet.
				if !retried {
					retried = true
					continue
				}
			}
			// No room (EAGAIN), or an error such as ECONNREFUSED
			// when nothing listens: the rest of the batch is lost,
			// as a datagram sent alone would be.
			if e == syscall.EAGAIN {
				b.dropped.Add(uint64(n - sent))
			}
			return
		}
	})
}
