package stream

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"goha/core/http1"

	"golang.org/x/sys/unix"
)

// Kernel splicing (option splice-request, splice-response, splice-auto):
// bytes go from one socket into a pipe and from the pipe into the other
// socket with splice(2), without being copied into the process, as
// HAProxy's raw_sock rcv_pipe and snd_pipe do. The calls are made inside
// the poller's RawConn callbacks with SPLICE_F_NONBLOCK, so that an
// EAGAIN is a wait on the poller, under the connection's deadlines, like
// any read or write. Splicing needs both ends to be plain TCP sockets
// with raw access (rawConn): TLS, unix sockets and bytes already read
// into a buffer go the ordinary way, the buffered bytes first.

// spliceMode is what a stream's proxies ask of one direction.
type spliceMode uint8

const (
	spliceOff  spliceMode = iota
	spliceOn              // splice-request / splice-response
	spliceAuto            // splice-auto: once the direction streams fast
)

// spliceModes returns the modes of the request and response directions
// of a stream through fe and be: a direction splices when either proxy
// asks, as in HAProxy.
func spliceModes(fe, be *proxy, global bool) (req, resp spliceMode) {
	if !global {
		return spliceOff, spliceOff
	}
	auto := fe.SpliceAuto || be.SpliceAuto
	pick := func(on bool) spliceMode {
		switch {
		case on:
			return spliceOn
		case auto:
			return spliceAuto
		}
		return spliceOff
	}
	return pick(fe.SpliceRequest || be.SpliceRequest), pick(fe.SpliceResponse || be.SpliceResponse)
}

// splicing says whether the process may splice at all.
func (proc *Process) splicing() bool { return true }

// countSpliced adds what a tcp stream's connections sent by splicing to
// the process's total (show info's TotalSplicdedBytesOut); an HTTP
// stream's is in its proxies' h1 counters.
func (proc *Process) countSpliced(conns ...net.Conn) {
	for _, c := range conns {
		if r := rawOf(c); r != nil && r.sOut != 0 {
			proc.splicedOut.Add(r.sOut)
			r.sOut = 0
		}
	}
}

// SplicedBytesOut is what tcp streams sent by splicing.
func (proc *Process) SplicedBytesOut() int64 { return proc.splicedOut.Load() }

// PipeStats returns the kernel pipes in use for splicing and the idle
// ones kept for reuse.
func PipeStats() (used, free int64) { return pipes.stats() }

// fastReads is how many reads in a row that fill a buffer make a
// direction a fast streamer, which splice-auto splices (HAProxy's
// CF_STREAMER_FAST).
const fastReads = 3

// kpipe is a kernel pipe and what it holds.
type kpipe struct {
	r, w int
	n    int // bytes in the pipe, not yet sent
}

// pipePool keeps empty pipes for reuse: making one is two descriptors and
// a system call. Pipes still holding data are closed, not kept.
type pipePool struct {
	mu   sync.Mutex // guards free
	free []*kpipe
	used atomic.Int64 // pipes handed out and not yet returned
}

// maxFreePipes bounds the pipes kept idle.
const maxFreePipes = 64

var pipes pipePool

// get returns an empty pipe, nil when none can be made (out of
// descriptors): the caller copies instead.
func (pp *pipePool) get() *kpipe {
	pp.mu.Lock()
	if n := len(pp.free); n > 0 {
		p := pp.free[n-1]
		pp.free = pp.free[:n-1]
		pp.mu.Unlock()
		pp.used.Add(1)
		return p
	}
	pp.mu.Unlock()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return nil
	}
	pp.used.Add(1)
	return &kpipe{r: fds[0], w: fds[1]}
}

func (pp *pipePool) put(p *kpipe) {
	pp.used.Add(-1)
	if p.n == 0 {
		pp.mu.Lock()
		if len(pp.free) < maxFreePipes {
			pp.free = append(pp.free, p)
			pp.mu.Unlock()
			return
		}
		pp.mu.Unlock()
	}
	unix.Close(p.r)
	unix.Close(p.w)
}

// stats returns the pipes in use and the idle ones (show info's PipesUsed
// and PipesFree).
func (pp *pipePool) stats() (used, free int64) {
	pp.mu.Lock()
	free = int64(len(pp.free))
	pp.mu.Unlock()
	return pp.used.Load(), free
}

// spliceChunk is the most one splice moves into the pipe: a default
// pipe's capacity. The pipe is emptied before it is filled again, so a
// fill never finds it full and an EAGAIN always means an empty socket.
const spliceChunk = 64 << 10

// splicer moves bytes between two raw sockets through a pipe. The
// callbacks are bound once; the fields carry their results.
type splicer struct {
	p        *kpipe
	want     int   // the read's limit
	got      int   // bytes the read moved into the pipe
	eof      bool  // the read found the end of the stream
	out      int64 // bytes the write moved out of the pipe
	rerr     syscall.Errno
	werr     syscall.Errno
	rfn, wfn func(uintptr) bool
}

func (s *splicer) readFD(fd uintptr) bool {
	for {
		n, err := unix.Splice(int(fd), nil, s.p.w, nil, s.want, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
		switch err {
		case nil:
			s.got = int(n)
			s.eof = n == 0
			s.p.n += int(n)
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		s.rerr = errnoOf(err)
		return true
	}
}

func (s *splicer) writeFD(fd uintptr) bool {
	for s.p.n > 0 {
		n, err := unix.Splice(s.p.r, nil, int(fd), nil, s.p.n, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
		switch err {
		case nil:
			s.p.n -= int(n)
			s.out += n
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		s.werr = errnoOf(err)
		return true
	}
	return true
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// rawOf returns the raw view of a stream's connection, nil when it has
// none.
func rawOf(c net.Conn) *rawConn {
	switch x := c.(type) {
	case *rawConn:
		return x
	case *srvConn:
		return &x.rawConn
	}
	return nil
}

// canSplice says whether src may be spliced to dst: both are TCP sockets
// with raw access.
func canSplice(dst, src *rawConn) bool {
	return dst != nil && src != nil && dst.io.rc != nil && src.io.rc != nil
}

// spliceCopy moves up to limit bytes from src to dst (limit < 0: until the
// end of src) through a pipe. before is called ahead of each read: it
// arms src's deadline and returns false to stop. arm, when not nil, arms
// dst's deadline ahead of each write. It returns the bytes read from src
// (in) and written to dst (out), and the error that ended the copy: io.EOF
// when src ended first, otherwise a *net.OpError whose Op says which side
// failed ("read": src, "write": dst), as net.Conn's errors do. It counts
// the bytes in the connections' counters, spliced and all. ok is false when
// no pipe could be had: nothing was moved, and the caller copies.
func spliceCopy(dst, src *rawConn, limit int64, before func() bool, arm func()) (in, out int64, err error, ok bool) {
	p := pipes.get()
	if p == nil {
		return 0, 0, nil, false
	}
	defer pipes.put(p)
	s := &splicer{p: p}
	s.rfn, s.wfn = s.readFD, s.writeFD
	// A read made inside a read session cannot wait on the poller again:
	// the copy goes on outside it.
	src.io.leaveSession()
	if q := dst.io.pend; q != nil {
		dst.io.pend = nil
		if _, err := dst.io.writeNow(dst.Conn, q); err != nil {
			return 0, 0, err, true
		}
	}
	dst.io.deferNext = false
	for limit != 0 {
		if !before() {
			return in, out, nil, true
		}
		s.want = spliceChunk
		if limit > 0 && limit < spliceChunk {
			s.want = int(limit)
		}
		s.got, s.eof, s.rerr = 0, false, 0
		rerr := src.io.rc.Read(s.rfn)
		switch {
		case rerr != nil:
			return in, out, rawOpError("read", src.Conn, rerr), true
		case s.rerr != 0:
			return in, out, rawOpError("read", src.Conn, os.NewSyscallError("splice", s.rerr)), true
		case s.eof:
			return in, out, io.EOF, true
		}
		in += int64(s.got)
		src.nIn += int64(s.got)
		src.sIn += int64(s.got)
		if limit > 0 {
			limit -= int64(s.got)
		}
		for p.n > 0 {
			if arm != nil {
				arm()
			}
			s.out, s.werr = 0, 0
			werr := dst.io.rc.Write(s.wfn)
			out += s.out
			dst.nOut += s.out
			dst.sOut += s.out
			switch {
			case werr != nil:
				return in, out, rawOpError("write", dst.Conn, werr), true
			case s.werr != 0:
				return in, out, rawOpError("write", dst.Conn, os.NewSyscallError("splice", s.werr)), true
			}
		}
	}
	return in, out, nil, true
}

// errSpliceNow stops http1.Forward before it reads: the rest of the body
// is spliced.
var errSpliceNow = errors.New("stream: splice from here")

// spliceSwitch is the reader Forward fills its buffer from while a body
// may be spliced: it hands over to splicing at once (spliceOn), or once
// fastReads reads in a row have filled the buffer (spliceAuto), which
// are then forwarded first.
type spliceSwitch struct {
	r     io.Reader
	auto  bool
	large int // reads in a row that filled at least full bytes
	full  int
}

func (s *spliceSwitch) Read(p []byte) (int, error) {
	if !s.auto || s.large >= fastReads {
		return 0, errSpliceNow
	}
	n, err := s.r.Read(p)
	if n >= s.full {
		s.large++
	} else {
		s.large = 0
	}
	return n, err
}

// forwardBody is http1.Forward that splices what it may of the body from
// src to dst when mode asks: a body with a length or one that ends with
// the connection, never a chunked one (HAProxy 2.6 does not splice
// those), once what buf holds has gone out. full is the read size that
// counts as filling the buffer, for spliceAuto.
func forwardBody(dst *activeConn, buf *http1.Buffer, src *activeConn, b *http1.Body, mode spliceMode, full int) (int64, error) {
	if mode == spliceOff {
		return http1.Forward(dst, buf, src, b)
	}
	d, s := rawOf(dst.c), rawOf(src.c)
	if _, raw := b.Raw(); !raw || !canSplice(d, s) {
		return http1.Forward(dst, buf, src, b)
	}
	sw := &spliceSwitch{r: src, auto: mode == spliceAuto, full: full}
	written, err := http1.Forward(dst, buf, sw, b)
	if err != errSpliceNow {
		return written, err
	}
	limit, raw := b.Raw()
	if !raw || buf.Len() > 0 {
		return http1.Forward(dst, buf, src, b)
	}
	before := func() bool { src.arm(); return true }
	in, out, err, ok := spliceCopy(d, s, limit, before, dst.arm)
	if !ok {
		return http1.Forward(dst, buf, src, b)
	}
	b.Moved(in)
	written += out
	if err == io.EOF {
		return written, b.EOF()
	}
	return written, err
}
