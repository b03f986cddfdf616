package stream

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Idle keep-alive client connections are parked: after a connection has
// waited for its next request for parkAfter, its goroutine, buffers and
// parser state go back to their pools and a single epoll set per process
// watches the socket; when the next request arrives a new goroutine takes
// the connection up again. An idle connection then costs its socket and a
// small record instead of a goroutine stack and a 16 KB buffer, which is
// what lets tens of thousands of idle clients stay within HAProxy's memory.
//
// The socket stays open while parked, so its descriptor number cannot be
// reused under the watcher. Go's own poller keeps its registration; data
// that arrives while parked is read by the resumed goroutine, which always
// tries a read before waiting.

const parkAfter = 250 * time.Millisecond

type parked struct {
	c        net.Conn
	fd       int
	deadline time.Time // keep-alive timeout: closed when reached
	resume   func()
	expire   func() // the connection timed out while parked
}

// parker watches parked connections; mu guards conns and next.
type parker struct {
	epfd  int
	mu    sync.Mutex
	next  uint32
	conns map[uint32]*parked
	done  chan struct{}

	// show activity's loops, poll_io and poll_exp for this event loop.
	loops, pollIO, pollExp atomic.Uint32
}

func newParker() (*parker, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	p := &parker{epfd: fd, conns: map[uint32]*parked{}, done: make(chan struct{})}
	go p.loop()
	return p, nil
}

// park hands c to the watcher. It returns false when c cannot be parked
// (not a plain socket, e.g. TLS, or the watcher is closed); the caller then
// keeps waiting on it itself.
func (p *parker) park(c net.Conn, deadline time.Time, resume, expire func()) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	e := &parked{c: c, deadline: deadline, resume: resume, expire: expire}
	return p.add(rc, e) != 0
}

// add lists e and watches its descriptor for one event. It returns the
// entry's id, 0 when the watcher is closed or epoll refused it.
func (p *parker) add(rc syscall.RawConn, e *parked) uint32 {
	// The entry is complete (its fd set) and listed before the descriptor
	// is watched, all under mu: an event, a sweep or closeAll that finds
	// the entry finds it whole, and the watcher, which takes mu for every
	// event, cannot see an event before the entry is listed.
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return 0
	}
	p.next++
	if p.next == 0 {
		p.next++
	}
	id := p.next
	var cerr error
	err := rc.Control(func(fd uintptr) {
		e.fd = int(fd)
		p.conns[id] = e
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(id)}
		if cerr = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev); cerr != nil {
			delete(p.conns, id)
		}
	})
	if err != nil || cerr != nil {
		return 0
	}
	return id
}

// watchClose has the watcher call abort if the peer of c closes or resets
// the connection before unwatch is called: what option abortonclose looks
// for while a request waits. Data the client sends meanwhile (a pipelined
// request) is left unread and is not a close. It returns 0 when c cannot
// be watched.
func (p *parker) watchClose(c net.Conn, abort func()) uint32 {
	sc, ok := socketOf(c).(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	e := &parked{c: c, expire: func() {}}
	e.resume = func() {
		if peerClosed(rc) {
			abort()
		}
	}
	return p.add(rc, e)
}

// unwatch stops a watchClose, unless its event came first.
func (p *parker) unwatch(id uint32) {
	if id != 0 {
		p.take(id)
	}
}

// peerClosed peeks at the socket: an end of stream or an error means the
// peer is gone. Control holds the descriptor, so a connection closed
// meanwhile is not mistaken for another that reused its number.
func peerClosed(rc syscall.RawConn) bool {
	closed := false
	rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case err == unix.EAGAIN || err == unix.EINTR:
		default:
			closed = true
		}
	})
	return closed
}

// socketOf is the socket under c's wrappers (raw I/O, PROXY protocol,
// TLS: a client that closes closes the TCP connection under its TLS).
func socketOf(c net.Conn) net.Conn {
	for {
		switch x := c.(type) {
		case *rawConn:
			c = x.Conn
		case *proxyConn:
			c = x.Conn
		case *tls.Conn:
			c = x.NetConn()
		default:
			return c
		}
	}
}

// take removes a parked connection from the watcher, or returns nil when
// another path (event, sweep, close) took it first.
func (p *parker) take(id uint32) *parked {
	p.mu.Lock()
	e := p.conns[id]
	delete(p.conns, id)
	p.mu.Unlock()
	if e != nil {
		unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, e.fd, nil)
	}
	return e
}

func (p *parker) loop() {
	// The watcher owns the epoll descriptor: it closes it when it stops,
	// so that a program running process after process does not keep one
	// per process.
	defer unix.Close(p.epfd)
	events := make([]unix.EpollEvent, 256)
	lastSweep := time.Now()
	for {
		n, err := unix.EpollWait(p.epfd, events, 250)
		select {
		case <-p.done:
			return
		default:
		}
		if err != nil && err != unix.EINTR {
			return
		}
		p.loops.Add(1)
		if n > 0 {
			p.pollIO.Add(1)
		} else if err == nil {
			p.pollExp.Add(1)
		}
		for i := 0; i < n; i++ {
			if e := p.take(uint32(events[i].Fd)); e != nil {
				go e.resume()
			}
		}
		if now := time.Now(); now.Sub(lastSweep) >= 250*time.Millisecond {
			lastSweep = now
			p.sweep(now)
		}
	}
}

// sweep closes the parked connections whose keep-alive timeout passed.
func (p *parker) sweep(now time.Time) {
	var ids []uint32
	p.mu.Lock()
	for id, e := range p.conns {
		if !e.deadline.IsZero() && now.After(e.deadline) {
			ids = append(ids, id)
		}
	}
	p.mu.Unlock()
	for _, id := range ids {
		if e := p.take(id); e != nil {
			e.expire()
		}
	}
}

// closeAll ends every parked connection (soft or hard stop) and stops the
// watcher.
func (p *parker) closeAll() {
	// The parker closes and empties in one step, under mu: a park racing
	// with it is either taken here or refused, never left behind.
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, e := range conns {
		unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, e.fd, nil)
		e.expire()
	}
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}
