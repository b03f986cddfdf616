package check

import (
	"errors"
	"goha/core/diag"
)

// warnf is a configuration problem that does not prevent start-up: the
// configuration loader tells it from an alert with errors.As on *diag.Warn.
func warnf(msg string) error { return &diag.Warn{Msg: msg} }

var (
	// ErrStopped is returned when a stopped scheduler is asked to run checks.
	ErrStopped = errors.New("check: scheduler stopped")
	// ErrNoRules is returned when a check has no ruleset to run.
	ErrNoRules = errors.New("check: no ruleset")
)
