package runtime

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"goha/core/stream"
	"io"
	"net"
	"strings"
	"time"
)

// maxArgs is HAProxy's MAX_CLI_ARGS: words past it are ignored (2.6).
const maxArgs = 64

// Severity output modes of `set severity-output`.
const (
	sevNone = iota
	sevNumber
	sevString
)

// Syslog levels used for message prefixes.
const (
	sevErr     = 3
	sevWarning = 4
	sevNotice  = 5
	sevInfo    = 6
)

var sevNames = [...]string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

// tooBig is HAProxy 3.2's answer to a line longer than the buffer; 2.6
// reset the connection silently.
const tooBig = "The command line is too big for the buffer size. Please change 'tune.bufsize' in the configuration to use a bigger command.\n"

// session is one client connection on a stats socket. It is owned by the
// goroutine that serves the connection.
type session struct {
	srv      *Server
	sock     *socketInfo
	conn     net.Conn
	r        *bufio.Reader
	w        *bufio.Writer
	level    Level
	prompt   bool // interactive with a prompt
	modes    Mode // expert-mode, experimental-mode
	severity int
	timeout  time.Duration
	quit     bool
	thread   int
	id       uint64    // as show sess prints it
	start    time.Time // for show sess's age
}

// Ctx is what a command handler gets: its words, an optional payload, the
// process, and the writers for its reply.
type Ctx struct {
	Args    []string // every word of the command, keywords included
	Payload string   // the text after `<<`, when the command ended with it
	Proc    *stream.Process
	W       io.Writer // data output: written as is, no severity prefix
	s       *session
}

// Arg returns the i-th word, or "" past the end.
func (c *Ctx) Arg(i int) string {
	if i < len(c.Args) {
		return c.Args[i]
	}
	return ""
}

// Level is the session's current level.
func (c *Ctx) Level() Level { return c.s.level }

// Thread is the shard (0-based) serving this session.
func (c *Ctx) Thread() int { return c.s.thread }

// Printf writes data output.
func (c *Ctx) Printf(format string, a ...any) { fmt.Fprintf(c.s.w, format, a...) }

// Write writes data output.
func (c *Ctx) Write(b []byte) (int, error) { return c.s.w.Write(b) }

// WriteString writes data output.
func (c *Ctx) WriteString(s string) (int, error) { return c.s.w.WriteString(s) }

// Msg, Warn, Notice and Err write a message: the severity prefix when the
// session asked for one, the text, and exactly one LF (HAProxy 3.x's rule,
// which 2.6 did not follow for every message).
func (c *Ctx) Msg(text string)    { c.s.message(sevInfo, text) }
func (c *Ctx) Warn(text string)   { c.s.message(sevWarning, text) }
func (c *Ctx) Notice(text string) { c.s.message(sevNotice, text) }
func (c *Ctx) Err(text string)    { c.s.message(sevErr, text) }

// Need checks that the session has level l, writing "Permission denied"
// when it has not.
func (c *Ctx) Need(l Level) bool {
	if c.s.level >= l {
		return true
	}
	c.Err("Permission denied")
	return false
}

func (s *session) message(sev int, text string) {
	switch s.severity {
	case sevNumber:
		fmt.Fprintf(s.w, "[%d]: ", sev)
	case sevString:
		fmt.Fprintf(s.w, "[%s]: ", sevNames[sev])
	}
	s.w.WriteString(strings.TrimRight(text, "\n"))
	s.w.WriteByte('\n')
}

// serve runs the session until the client quits, closes, idles past the
// timeout, or a non-interactive line has been answered. It does not close
// the connection: the caller does, once the session is unlisted.
func (s *session) serve() {
	for !s.quit {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				s.w.WriteString(tooBig)
				s.flush()
			}
			return
		}
		s.runLine(line)
		// Pipelined commands are answered in one write once the input
		// already received has been run.
		if s.prompt && !s.quit && s.lineBuffered() {
			continue
		}
		if !s.flush() {
			return
		}
		if s.quit {
			return
		}
		if !s.prompt {
			// 2.6 also runs complete lines that are already buffered.
			if s.lineBuffered() {
				continue
			}
			return
		}
	}
}

// lineBuffered reports whether a complete line is already buffered.
func (s *session) lineBuffered() bool {
	if s.r.Buffered() == 0 {
		return false
	}
	b, _ := s.r.Peek(s.r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// readLine reads one line, without its LF (nor a CR before it). A line
// that does not end before EOF is dropped, as HAProxy 2.6 does.
func (s *session) readLine() (string, error) {
	s.conn.SetReadDeadline(time.Now().Add(s.timeout))
	b, err := s.r.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return string(b), nil
}

func (s *session) flush() bool {
	s.conn.SetWriteDeadline(time.Now().Add(s.timeout))
	return s.w.Flush() == nil
}

// runLine runs every `;`-separated command of a line.
func (s *session) runLine(line string) {
	// Replies larger than the write buffer reach the connection before
	// the next flush: give them the full timeout too.
	s.conn.SetWriteDeadline(time.Now().Add(s.timeout))
	cmds := splitCommands(line)
	for i, cmd := range cmds {
		args := splitWords(cmd)
		payload := ""
		if i == len(cmds)-1 && len(args) > 0 && args[len(args)-1] == "<<" {
			args = args[:len(args)-1]
			p, ok := s.readPayload()
			if !ok {
				s.quit = true
				return
			}
			payload = p
		}
		s.run(args, payload)
		if s.quit {
			return
		}
		if s.prompt {
			s.w.WriteString("\n> ")
		} else {
			s.w.WriteByte('\n')
		}
	}
}

// readPayload reads lines up to the first empty one.
func (s *session) readPayload() (string, bool) {
	var b strings.Builder
	for {
		if s.prompt {
			s.w.WriteString("+ ")
			if !s.flush() {
				return "", false
			}
		}
		ln, err := s.readLine()
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				s.w.WriteString(tooBig)
				s.flush()
			}
			return "", false
		}
		if ln == "" {
			return b.String(), true
		}
		// The payload must fit in one buffer, as the command line does.
		if b.Len()+len(ln) >= s.r.Size() {
			s.w.WriteString(tooBig)
			s.flush()
			return "", false
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(ln)
	}
}

func (s *session) run(args []string, payload string) {
	c := &Ctx{Args: args, Payload: payload, Proc: s.srv.proc, W: s.w, s: s}
	if len(args) == 0 || args[0] == "" {
		s.message(sevInfo, usageText(nil, false, s.modes))
		return
	}
	cmd := lookup(args)
	if cmd == nil {
		s.message(sevInfo, usageText(args, false, s.modes))
		return
	}
	// 2.6 checks the modes before the level.
	if cmd.Mode&ModeExpert != 0 && s.modes&ModeExpert == 0 {
		c.Err("This command is restricted to expert mode only.")
		return
	}
	if cmd.Mode&ModeExperimental != 0 && s.modes&ModeExperimental == 0 {
		c.Err("This command is restricted to experimental mode only.")
		return
	}
	if !c.Need(cmd.Level) {
		return
	}
	cmd.Run(c)
}

// splitCommands cuts a line at unescaped semicolons. Backslashes stay for
// splitWords to remove.
func splitCommands(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case ';':
			out = append(out, line[start:i])
			start = i + 1
		}
	}
	return append(out, line[start:])
}

// splitWords cuts a command into words at runs of blanks, a backslash
// escaping the next byte. Quotes are not special. At most maxArgs words
// are kept.
func splitWords(cmd string) []string {
	var out []string
	var w []byte
	in := false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\\':
			// A backslash at the very end escapes nothing and is dropped.
			if i+1 < len(cmd) {
				in = true
				i++
				w = append(w, cmd[i])
			}
		case c == ' ' || c == '\t':
			if in {
				out = append(out, string(w))
				w, in = w[:0], false
				if len(out) == maxArgs {
					return out
				}
			}
		default:
			in = true
			w = append(w, c)
		}
	}
	if in {
		out = append(out, string(w))
	}
	return out
}
