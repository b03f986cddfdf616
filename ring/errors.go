package ring

import "errors"

// Errors returned at run time. The texts the stats socket prints for them
// are chosen by the runtime package, not here.
var (
	// ErrTooManyReaders: a ring accepts at most MaxReaders attached readers.
	ErrTooManyReaders = errors.New("ring: too many readers")
	// ErrReaderClosed: the reader was detached from its ring.
	ErrReaderClosed = errors.New("ring: reader detached")
	// ErrNoSuchSink: `show events <name>` names no known sink.
	ErrNoSuchSink = errors.New("ring: no such event sink")
	// ErrNothingToReport: `show events` on an fd sink (stdout, stderr).
	ErrNothingToReport = errors.New("ring: nothing to report for this sink")
	// ErrUnknownOption: `show events <ring>` with an option other than -w, -n, -0, -nw, -wn.
	ErrUnknownOption = errors.New("ring: unknown option")
	// ErrUnknownRing: a `log ring@<name>` line names a ring that was never declared.
	ErrUnknownRing = errors.New("ring: unknown ring")
	// ErrFraming: a log-forward stream carried a frame that is neither
	// octet-counted nor LF-terminated.
	ErrFraming = errors.New("ring: bad syslog framing")
	// ErrFrameTooLarge: an incoming frame is larger than the receive buffer.
	ErrFrameTooLarge = errors.New("ring: syslog frame too large")

	// errLogDropped: a datagram log target had no room for the line, which
	// was dropped rather than delay the data path.
	errLogDropped = errors.New("ring: log line dropped")
)

// ConfigError is a configuration error whose text is HAProxy's message for
// the same mistake, so that the configuration loader can print it after
// "parsing [file:line] : " unchanged.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }
