package check

import "errors"

// Warning is returned by configuration parsers for a problem that does not
// prevent startup. Use errors.As to tell it from an alert.
type Warning struct{ Msg string }

func (w *Warning) Error() string { return w.Msg }

func warnf(msg string) error { return &Warning{Msg: msg} }

var (
	// ErrStopped is returned when a stopped scheduler is asked to run checks.
	ErrStopped = errors.New("check: scheduler stopped")
	// ErrNoRules is returned when a check has no ruleset to run.
	ErrNoRules = errors.New("check: no ruleset")
)
