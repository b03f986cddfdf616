package cli

import (
	"errors"
	"strings"
)

// Sentinels callers test with errors.Is; the wrapping error carries the detail.
var (
	// ErrNoSocket: neither -S, a "stats socket" in the -f configuration, nor
	// GOHA_SOCKET names a socket.
	ErrNoSocket = errors.New("cli: no stats socket given")
	// ErrNotStatsSocket: the peer did not answer "prompt" the way a stats socket does.
	ErrNotStatsSocket = errors.New("cli: not a stats socket")
	// ErrConnLost: the server closed the connection or the connection broke.
	ErrConnLost = errors.New("cli: connection lost")
	// ErrTimeout: the server stopped sending before the reply was complete.
	ErrTimeout = errors.New("cli: timeout waiting for the server")
	// ErrReplyTooLarge: a reply grew past Options.MaxReply.
	ErrReplyTooLarge = errors.New("cli: reply too large")
	// ErrNotTable: a pipe stage was given a reply that has no "# " header line.
	ErrNotTable = errors.New("cli: reply is not a table")
	// ErrSyntax: the command line could not be split into words.
	ErrSyntax = errors.New("cli: syntax error")
)

// Message renders an error for the operator: "gohactl: " and the error
// without this package's own prefix.
func Message(err error) string {
	return "gohactl: " + strings.TrimPrefix(err.Error(), "cli: ")
}
