package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Default limits; Options overrides them.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultMaxReply = 64 << 20
)

// prompt is what a stats socket in prompt mode writes after every reply.
const prompt = "> "

// Options says where and how to reach a stats socket.
type Options struct {
	// Addr is a socket path, host:port, or an HAProxy-style address
	// (unix@, abns@, ipv4@, ipv6@); see SplitAddr.
	Addr string
	// Timeout bounds the connect, and each wait for more bytes of a reply.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxReply bounds the size of one reply. Zero means DefaultMaxReply.
	MaxReply int
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) maxReply() int {
	if o.MaxReply > 0 {
		return o.MaxReply
	}
	return DefaultMaxReply
}

// Conn is one stats socket session in prompt mode with numeric severity
// output, so that several commands share a connection and every reply says
// whether it is an error. Not safe for concurrent use, except Close.
type Conn struct {
	opts Options
	c    net.Conn
	buf  []byte // read scratch, reused across replies
}

// Dial connects and switches the session to prompt mode. A peer that does
// not answer like a stats socket gives an error wrapping ErrNotStatsSocket.
func Dial(opts Options) (*Conn, error) {
	network, address, err := SplitAddr(opts.Addr)
	if err != nil {
		return nil, err
	}
	nc, err := net.DialTimeout(network, address, opts.timeout())
	if err != nil {
		return nil, fmt.Errorf("cli: cannot connect to %s: %w", opts.Addr, unwrapOp(err))
	}
	c := &Conn{opts: opts, c: nc, buf: make([]byte, 64*1024)}
	if err := c.handshake(); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// handshake sends "prompt" and checks the answer byte by byte: anything but
// an empty reply followed by the prompt means the peer is something else.
func (c *Conn) handshake() error {
	// A peer that talks first and hangs up makes this write fail; what it
	// said is still worth reading for the error message.
	sendErr := c.send("prompt\n")
	want := "\n" + prompt
	var got []byte
	for len(got) < len(want) {
		if err := c.c.SetReadDeadline(time.Now().Add(c.opts.timeout())); err != nil {
			return err
		}
		n, err := c.c.Read(c.buf[:64])
		got = append(got, c.buf[:n]...)
		if len(got) > len(want) || !strings.HasPrefix(want, string(got)) {
			return fmt.Errorf("%w: %s answered %s to \"prompt\"", ErrNotStatsSocket, c.opts.Addr, quoteStart(got))
		}
		if err != nil {
			if isTimeout(err) {
				return fmt.Errorf("%w: %s did not answer \"prompt\" within %v", ErrNotStatsSocket, c.opts.Addr, c.opts.timeout())
			}
			if sendErr != nil {
				err = sendErr
			}
			return fmt.Errorf("%w: %s closed the connection during the greeting: %v", ErrNotStatsSocket, c.opts.Addr, unwrapOp(err))
		}
	}
	// A server without severity output still works; only error detection
	// is then limited to "Unknown command".
	_, err := c.Exec("set severity-output number", nil)
	return err
}

// Exec sends one command (already in socket syntax: words escaped, no
// unescaped ';') and returns its reply. When payload is not nil the command
// must end with "<<" and the payload lines follow it, ended by an empty line.
// After an error wrapping ErrConnLost, ErrTimeout or ErrReplyTooLarge the
// connection is unusable and must be closed.
func (c *Conn) Exec(cmd string, payload []string) (Reply, error) {
	var b strings.Builder
	b.WriteString(cmd)
	b.WriteByte('\n')
	plus := 0
	if payload != nil {
		for _, l := range payload {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		plus = len(payload) + 1
	}
	if err := c.send(b.String()); err != nil {
		return Reply{}, err
	}
	raw, err := c.readReply()
	if err != nil {
		return Reply{Text: string(raw)}, err
	}
	return ParseReply(splitBody(string(raw), prompt, plus)), nil
}

func (c *Conn) send(s string) error {
	if err := c.c.SetWriteDeadline(time.Now().Add(c.opts.timeout())); err != nil {
		return err
	}
	if _, err := io.WriteString(c.c, s); err != nil {
		if isTimeout(err) {
			return fmt.Errorf("%w: the server accepted no data for %v", ErrTimeout, c.opts.timeout())
		}
		return fmt.Errorf("%w: %v", ErrConnLost, unwrapOp(err))
	}
	return nil
}

// readReply reads until the data ends with an empty line's newline and the
// prompt. A reply never contains "\n> " followed by nothing else unless it is
// complete: data lines do not start with "> ", and the server writes the
// prompt with the end of the reply.
func (c *Conn) readReply() ([]byte, error) {
	var out bytes.Buffer
	end := []byte("\n" + prompt)
	limit := c.opts.maxReply()
	for {
		if err := c.c.SetReadDeadline(time.Now().Add(c.opts.timeout())); err != nil {
			return nil, err
		}
		n, err := c.c.Read(c.buf)
		out.Write(c.buf[:n])
		if bytes.HasSuffix(out.Bytes(), end) {
			return out.Bytes(), nil
		}
		if out.Len() > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrReplyTooLarge, limit)
		}
		if err != nil {
			if isTimeout(err) {
				return out.Bytes(), fmt.Errorf("%w: nothing received for %v after %d bytes of reply", ErrTimeout, c.opts.timeout(), out.Len())
			}
			if out.Len() > 0 {
				return out.Bytes(), fmt.Errorf("%w: closed in the middle of a reply, after %d bytes", ErrConnLost, out.Len())
			}
			return nil, fmt.Errorf("%w: %v", ErrConnLost, unwrapOp(err))
		}
	}
}

// Alive reports whether the server still has the connection open, without
// waiting: a server restarted, or one whose idle timeout expired, has closed
// it, and a command sent now would be lost. It peeks at the socket rather
// than reading with a deadline, which a busy machine can let expire before
// the read is even tried.
func (c *Conn) Alive() bool {
	sc, ok := c.c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	err = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		// Nothing to read yet: the session is idle and open. End of
		// stream, an error, or unsolicited bytes (the session would be out
		// of step) all mean the connection is done for.
		alive = rerr == unix.EAGAIN
		return true
	})
	return err == nil && alive
}

// Close ends the session politely, then closes the connection.
func (c *Conn) Close() error {
	c.c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	io.WriteString(c.c, "quit\n")
	return c.c.Close()
}

// Abort closes the connection at once; a pending Exec returns ErrConnLost.
// Safe to call from another goroutine.
func (c *Conn) Abort() { c.c.Close() }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// unwrapOp drops net.OpError's repetition of addresses, which the caller's
// message already names.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		var se *os.SyscallError
		if errors.As(op.Err, &se) {
			return se.Err
		}
		return op.Err
	}
	if errors.Is(err, io.EOF) {
		return errors.New("closed by the server")
	}
	if errors.Is(err, syscall.ECONNRESET) {
		return errors.New("reset by the server")
	}
	return err
}

// quoteStart shows the first bytes of unexpected data, quoted.
func quoteStart(b []byte) string {
	const max = 40
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
