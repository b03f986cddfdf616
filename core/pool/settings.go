package pool

import (
	"fmt"
	"time"
)

// Mode is the backend's http-reuse setting.
type Mode uint8

// The values follow HAProxy's order, so that "at least aggressive" is a
// comparison.
const (
	ReuseNever Mode = iota
	ReuseSafe
	ReuseAggressive
	ReuseAlways
)

var modeNames = [...]string{"never", "safe", "aggressive", "always"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode parses the argument of "http-reuse". Matching is exact, as in
// HAProxy.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("%w, got %q", ErrMode, s)
}

// DefaultPurgeDelay is HAProxy's pool-purge-delay default.
const DefaultPurgeDelay = 5 * time.Second

// Settings are one server's pool keywords plus the backend's http-reuse.
// The zero value is not HAProxy's default; start from DefaultSettings.
type Settings struct {
	// LowConn is pool-low-conn: below this many idle connections on the
	// server, a shard may not take one over from a sibling (unless file
	// descriptors run short), and it is the slack of the keep rule.
	LowConn int
	// MaxConn is pool-max-conn: the cap on idle connections (idle and
	// safe together). -1 means unlimited; 0 disables pooling.
	MaxConn int
	// PurgeDelay is pool-purge-delay, the purge period. 0 means no
	// connection is ever kept idle.
	PurgeDelay time.Duration
	// MaxReuse is max-reuse: a connection carries at most MaxReuse+1
	// requests. -1 means no limit, 0 disables keep-alive.
	MaxReuse int
	// Mode is the backend's http-reuse.
	Mode Mode
	// IdleTimeout closes a pooled connection that has been idle longer
	// than this when Get comes across it. 0 disables the check. It has
	// no HAProxy keyword: HAProxy relies on the server closing and on the
	// poller noticing.
	IdleTimeout time.Duration
}

// DefaultSettings returns HAProxy's defaults: pool-low-conn 0,
// pool-max-conn -1, pool-purge-delay 5s, max-reuse -1, http-reuse safe.
func DefaultSettings() Settings {
	return Settings{LowConn: 0, MaxConn: -1, PurgeDelay: DefaultPurgeDelay, MaxReuse: -1, Mode: ReuseSafe}
}

func (st Settings) validate() error {
	switch {
	case st.LowConn < 0:
		return ErrLowConn
	case st.MaxConn < -1:
		return ErrMaxConn
	case st.PurgeDelay < 0 || st.IdleTimeout < 0:
		return ErrPurgeDelay
	case st.MaxReuse < -1:
		return ErrMaxReuse
	case st.Mode > ReuseAlways:
		return ErrMode
	}
	return nil
}

// Scan selects where a takeover starts looking among the siblings.
type Scan uint8

const (
	// ScanRoundRobin starts at the server's rotating next_takeover, the
	// thread after the last one a connection was found on (HAProxy 2.2).
	ScanRoundRobin Scan = iota
	// ScanFromZero always starts at shard 0, the behaviour before the
	// round-robin fix; it drains the first shards first. Kept for
	// comparison in benchmarks.
	ScanFromZero
)

// Options are the process-wide settings of a Set.
type Options struct {
	// Threads is nbthread, the number of shards. Required.
	Threads int
	// MaxIdle caps idle connections over all servers of the set together.
	// 0 means no global cap.
	MaxIdle int
	// UsedFDs reports the number of file descriptors in use in the
	// process (HAProxy's ha_used_fds). Nil means 0, which disables both
	// watermarks below.
	UsedFDs func() int
	// LowFDs is tune.pool-low-fd-ratio applied to maxsock: from this many
	// used descriptors on, a connection is kept only if its shard has
	// none for the server, and takeover ignores pool-low-conn. 0 disables.
	LowFDs int
	// HighFDs is tune.pool-high-fd-ratio applied to maxsock: from this
	// many used descriptors on, nothing new is kept idle. 0 disables.
	HighFDs int
	// NoShare is "tune.idle-pool.shared off": shards never take over.
	NoShare bool
	// Scan selects the takeover scan order.
	Scan Scan
}

func (o Options) validate() error {
	if o.Threads < 1 {
		return ErrThreads
	}
	if o.MaxIdle < 0 || o.LowFDs < 0 || o.HighFDs < 0 {
		return ErrLimit
	}
	return nil
}
