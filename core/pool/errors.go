package pool

import "errors"

// Errors returned when a pool is configured with values HAProxy would
// refuse. The configuration layer turns them into its own diagnostics.
var (
	ErrThreads    = errors.New("pool: thread count must be at least 1")
	ErrLowConn    = errors.New("pool: pool-low-conn must be 0 or more")
	ErrMaxConn    = errors.New("pool: pool-max-conn must be -1 or more")
	ErrPurgeDelay = errors.New("pool: pool-purge-delay must not be negative")
	ErrMaxReuse   = errors.New("pool: max-reuse must be -1 or more")
	ErrMode       = errors.New("pool: http-reuse must be one of never, safe, aggressive, always")
	ErrLimit      = errors.New("pool: global limits must not be negative")
)
