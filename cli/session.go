package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// Exit statuses of the gohactl runners.
const (
	ExitOK        = 0 // every command succeeded
	ExitReplyErr  = 1 // the server answered at least one command with an error
	ExitUsage     = 2 // bad command line or syntax
	ExitTransport = 3 // the socket could not be reached, or broke, or is not a stats socket
)

// Session keeps one prompt-mode connection across commands and reconnects
// when the server has gone away: after a restart, or after the server's
// idle timeout ("stats timeout", 10s by default) has closed it. Not safe
// for concurrent use, except Abort and Interrupt.
type Session struct {
	Opts Options
	// Notice receives one-line messages about the connection (lost,
	// reconnecting). Nil discards them.
	Notice io.Writer

	mu   sync.Mutex // guards conn, for Abort from a signal handler
	conn *Conn

	interrupted atomic.Bool // set by Interrupt, read once by the command it broke

	// Completion data, loaded lazily and dropped after commands that may
	// change it.
	tree       *cmdNode
	backends   []string
	servers    []string            // "backend/server"
	columns    map[string][]string // header of a show command, for pipe stages
	namesStale bool
}

// NewSession prepares a session; nothing is dialled before the first command.
func NewSession(opts Options) *Session { return &Session{Opts: opts, namesStale: true} }

func (s *Session) notice(format string, args ...any) {
	if s.Notice != nil {
		fmt.Fprintf(s.Notice, "gohactl: "+format+"\n", args...)
	}
}

// Connect dials now if there is no live connection.
func (s *Session) Connect() error {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		if c.Alive() {
			return nil
		}
		s.notice("the server closed the connection (restarted, or idle past its timeout); reconnecting to %s", s.Opts.Addr)
		s.drop()
	}
	nc, err := Dial(s.Opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.conn = nc
	s.mu.Unlock()
	return nil
}

func (s *Session) drop() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.Abort()
	}
}

// Abort breaks the current exchange, if any; the next command reconnects.
// Safe from another goroutine.
func (s *Session) Abort() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.Abort()
	}
}

// Interrupt abandons the command in progress at the operator's request; it
// reports "interrupted" instead of a broken connection. Safe from another
// goroutine.
func (s *Session) Interrupt() {
	s.interrupted.Store(true)
	s.Abort()
}

// Close ends the session.
func (s *Session) Close() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Exec sends one encoded command, connecting first if needed. A broken
// connection is dropped so that the next command reconnects.
func (s *Session) Exec(cmd string, payload []string) (Reply, error) {
	if err := s.Connect(); err != nil {
		return Reply{}, err
	}
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	r, err := c.Exec(cmd, payload)
	if err != nil {
		s.drop()
		if errors.Is(err, ErrConnLost) || errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w (the next command reconnects)", err)
		}
		return r, err
	}
	if changesNames(cmd) {
		s.namesStale = true
	}
	return r, nil
}

// changesNames says whether a command may add or remove names, or change
// the level and so the command list, that completion offers.
func changesNames(cmd string) bool {
	first, _, _ := strings.Cut(cmd, " ")
	switch first {
	case "show", "get", "help", "set", "enable", "disable", "clear":
		return false
	}
	return true
}

// Run executes one parsed command with its pipe stages, writing the result
// to out and errors to errOut, and returns an exit status.
func (s *Session) Run(cmd Command, payload []string, out, errOut io.Writer) int {
	if cmd.Words[0] == "prompt" {
		// The session depends on prompt mode; toggling it off would make
		// the server close the connection after the next reply.
		fmt.Fprintf(errOut, "gohactl: prompt mode is managed by gohactl\n")
		return ExitUsage
	}
	line, err := EncodeWords(cmd.Words)
	if err != nil {
		fmt.Fprintf(errOut, "%s\n", Message(err))
		return ExitUsage
	}
	text, code := s.runText(line, payload, cmd.Stages)
	if code == ExitOK {
		io.WriteString(out, text)
	} else {
		io.WriteString(errOut, text)
	}
	return code
}

// runText returns what a command prints, and its status.
func (s *Session) runText(line string, payload []string, stages [][]string) (string, int) {
	s.interrupted.Store(false)
	r, err := s.Exec(line, payload)
	if err != nil {
		if s.interrupted.Swap(false) {
			return "gohactl: interrupted (the next command reconnects)\n", ExitTransport
		}
		return Message(err) + "\n", ExitTransport
	}
	if r.IsError() {
		return r.Text, ExitReplyErr
	}
	text, err := ApplyStages(r.Text, stages)
	if err != nil {
		return Message(err) + "\n", ExitUsage
	}
	return text, ExitOK
}
