// Package diag carries configuration and start-up diagnostics: a severity,
// a position (file:line) and a message, collected in one pass and rendered
// in HAProxy's shape. It sits at the bottom of the import graph so that every
// package can report problems without an import cycle.
package diag

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Severity orders diagnostics. An Alert refuses start-up; a Warning does not.
type Severity int

const (
	Notice Severity = iota
	Warning
	Alert
)

// Diagnostic is below Notice: HAProxy prints it as [DIAG] and only in
// diagnostic mode (-dD), e.g. for the .diag directive.
const Diagnostic Severity = -1

// Tag is the bracketed word HAProxy prints, padded to the same width.
func (s Severity) Tag() string {
	switch s {
	case Alert:
		return "[ALERT]   "
	case Warning:
		return "[WARNING] "
	case Diagnostic:
		return "[DIAG]    "
	default:
		return "[NOTICE]  "
	}
}

func (s Severity) String() string {
	switch s {
	case Alert:
		return "ALERT"
	case Warning:
		return "WARNING"
	case Diagnostic:
		return "DIAG"
	default:
		return "NOTICE"
	}
}

// Pos is a place in a configuration file. The zero Pos means "no position".
type Pos struct {
	File string
	Line int
}

func (p Pos) IsZero() bool { return p.File == "" && p.Line == 0 }

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// Diag is one diagnostic. Parsing says whether HAProxy would print
// "parsing [file:line]" (keyword parsers) or just "[file:line]" (checks
// done on an object after its line was read, such as server keywords).
type Diag struct {
	Sev     Severity
	Pos     Pos
	Parsing bool
	// Tight drops the blank before the colon after the position, as
	// HAProxy's file reader (tokenizer, .if blocks, directives) prints it:
	// "parsing [f:1]: msg" where keyword parsers print "parsing [f:1] : msg".
	Tight bool
	// Continue marks an alert HAProxy prints and then goes on with:
	// it does not refuse start-up ("user/uid already specified.
	// Continuing.").
	Continue bool
	Msg      string
}

// Text renders the diagnostic without the severity tag and pid:
// "config : parsing [f:1] : msg".
func (d Diag) Text() string {
	var b strings.Builder
	b.WriteString("config : ")
	if !d.Pos.IsZero() {
		if d.Parsing {
			b.WriteString("parsing ")
		}
		b.WriteString("[")
		b.WriteString(d.Pos.String())
		if d.Tight {
			b.WriteString("]: ")
		} else {
			b.WriteString("] : ")
		}
	}
	b.WriteString(d.Msg)
	return b.String()
}

// Line renders the full line as HAProxy prints it on stderr.
func (d Diag) Line(pid int) string {
	return fmt.Sprintf("%s (%d) : %s", d.Sev.Tag(), pid, d.Text())
}

// Warn is an error value a keyword parser returns to report a warning
// rather than an alert; the dispatcher recognises it with errors.As.
type Warn struct{ Msg string }

func (w *Warn) Error() string { return w.Msg }

// Warnf builds a *Warn.
func Warnf(format string, args ...any) error { return &Warn{Msg: fmt.Sprintf(format, args...)} }

// Collector gathers diagnostics from one configuration load.
// Safe for concurrent use; mu guards list.
type Collector struct {
	mu   sync.Mutex
	list []Diag
}

func (c *Collector) Add(d Diag) {
	c.mu.Lock()
	c.list = append(c.list, d)
	c.mu.Unlock()
}

// Alertf reports a parsing alert at pos.
func (c *Collector) Alertf(pos Pos, format string, args ...any) {
	c.Add(Diag{Sev: Alert, Pos: pos, Parsing: true, Msg: fmt.Sprintf(format, args...)})
}

// Warnf reports a parsing warning at pos.
func (c *Collector) Warnf(pos Pos, format string, args ...any) {
	c.Add(Diag{Sev: Warning, Pos: pos, Parsing: true, Msg: fmt.Sprintf(format, args...)})
}

// Noticef reports a notice at pos.
func (c *Collector) Noticef(pos Pos, format string, args ...any) {
	c.Add(Diag{Sev: Notice, Pos: pos, Parsing: true, Msg: fmt.Sprintf(format, args...)})
}

// All returns a copy of the diagnostics in the order they were reported.
func (c *Collector) All() []Diag {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Diag(nil), c.list...)
}

// Count returns how many diagnostics of severity s were reported.
func (c *Collector) Count(s Severity) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, d := range c.list {
		if d.Sev == s {
			n++
		}
	}
	return n
}

// HasAlert says whether start-up must be refused.
func (c *Collector) HasAlert() bool { return c.FatalAlerts() > 0 }

// FatalAlerts counts the alerts that refuse start-up (all but those marked
// Continue).
func (c *Collector) FatalAlerts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, d := range c.list {
		if d.Sev == Alert && !d.Continue {
			n++
		}
	}
	return n
}

// Print writes every diagnostic to w, one line each.
func (c *Collector) Print(w io.Writer, pid int) {
	for _, d := range c.All() {
		fmt.Fprintln(w, d.Line(pid))
	}
}

// PrintFrom writes the diagnostics of severity min or above to w. HAProxy
// shows Diagnostic messages (the .diag directive, section order remarks)
// only in diagnostic mode (-dD): pass Notice normally, Diagnostic with -dD.
func (c *Collector) PrintFrom(w io.Writer, pid int, min Severity) {
	for _, d := range c.All() {
		if d.Sev >= min {
			fmt.Fprintln(w, d.Line(pid))
		}
	}
}

// Stderr is where start-up diagnostics go unless a caller says otherwise.
var Stderr io.Writer = os.Stderr
