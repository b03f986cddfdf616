package ring

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"time"
)

// Proto is a server's `log-proto`: how events are framed on its TCP stream
// (RFC 6587).
type Proto uint8

const (
	// ProtoLegacy is non-transparent framing: each event ends with LF.
	ProtoLegacy Proto = iota
	// ProtoOctetCount is octet counting: "LEN SP event", no LF.
	ProtoOctetCount
)

func (p Proto) String() string {
	if p == ProtoOctetCount {
		return "octet-count"
	}
	return "legacy"
}

// forwardBufSize bounds one write to a server, like HAProxy's bufsize: an
// event whose frame is larger can never be sent and is skipped.
const forwardBufSize = 16384

// reconnectDelay is the minimum time between two connection attempts.
const reconnectDelay = time.Second

// Server is a ring `server` line: a TCP syslog receiver that gets a full
// copy of the ring through its own reader.
type Server struct {
	Name string
	Addr string // host:port, or a path for "unix"
	// Network is "tcp" (the default when empty), "tcp4", "tcp6" or "unix".
	Network string
	Proto   Proto

	connected atomic.Bool
	connects  atomic.Uint64 // successful connections
	sent      atomic.Uint64 // events written to the socket
}

// Connected reports whether the server's connection is up.
func (s *Server) Connected() bool { return s.connected.Load() }

// Connects returns the number of connections established so far.
func (s *Server) Connects() uint64 { return s.connects.Load() }

// Sent returns the number of events written to the server's sockets.
func (s *Server) Sent() uint64 { return s.sent.Load() }

// Start launches one forwarder per server. They run until ctx is done;
// Wait returns once they all stopped. Only the first call does anything.
func (r *Ring) Start(ctx context.Context) {
	if r.started.Swap(true) {
		return
	}
	for _, s := range r.Servers {
		r.fwd.Add(1)
		go func() {
			defer r.fwd.Done()
			s.run(ctx, r)
		}()
	}
}

// Wait blocks until the forwarders launched by Start have stopped.
func (r *Ring) Wait() { r.fwd.Wait() }

// run connects, forwards and reconnects at most once per reconnectDelay.
// The reader is attached at the first successful connection (so a server
// that never answered holds nothing back) and kept until ctx is done, so
// that a backlog is sent in order after a reconnection.
func (s *Server) run(ctx context.Context, r *Ring) {
	var rd *Reader
	defer func() {
		if rd != nil {
			rd.Close()
		}
	}()
	buf := make([]byte, 0, forwardBufSize+32)
	var last time.Time
	for ctx.Err() == nil {
		if !last.IsZero() {
			if wait := reconnectDelay - time.Since(last); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}
		last = time.Now()
		d := net.Dialer{Timeout: r.TimeoutConnect}
		network := s.Network
		if network == "" {
			network = "tcp"
		}
		conn, err := d.DialContext(ctx, network, s.Addr)
		if err != nil {
			continue
		}
		if rd == nil {
			if rd, err = r.Attach(false); err != nil {
				rd = nil
				conn.Close()
				continue
			}
		}
		s.connects.Add(1)
		s.connected.Store(true)
		if s.Proto == ProtoOctetCount {
			buf = s.serve(ctx, conn, r, rd, buf, FrameOctet)
		} else {
			buf = s.serve(ctx, conn, r, rd, buf, FrameLF)
		}
		s.connected.Store(false)
	}
}

// serve drains the reader into conn with the framing chosen for this
// connection until the connection fails or ctx is done. It closes conn.
func (s *Server) serve(ctx context.Context, conn net.Conn, r *Ring, rd *Reader, buf []byte, frame FrameFunc) []byte {
	// Whatever the server sends is discarded; its end of stream tells
	// that the connection is gone before we write more into it.
	dead := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		close(dead)
	}()
	defer func() {
		conn.Close()
		<-dead
	}()
	raw := newRawWriter(conn)
	for {
		select {
		case <-dead:
			return buf
		case <-ctx.Done():
			return buf
		default:
		}
		out, n, next, err := rd.Peek(buf[:0], forwardBufSize, frame)
		buf = out[:0]
		if err != nil {
			return buf
		}
		if len(out) == 0 {
			rd.Advance(next) // past events too large to ever send
			select {
			case <-rd.Wake():
			case <-dead:
				return buf
			case <-ctx.Done():
				return buf
			}
			// The writer that woke us made us its scheduler successor,
			// so we would run before the goroutines about to log more
			// and send one event per write. Letting them run first
			// gathers what they write into the next write, the way
			// HAProxy's forwarding applet sends what its loop produced.
			runtime.Gosched()
			continue
		}
		if raw != nil {
			err = raw.write(out, conn, r.TimeoutServer)
		} else {
			if r.TimeoutServer > 0 {
				_ = conn.SetWriteDeadline(time.Now().Add(r.TimeoutServer))
			}
			_, err = conn.Write(out)
		}
		if err != nil {
			return buf
		}
		rd.Advance(next)
		s.sent.Add(uint64(n))
	}
}
