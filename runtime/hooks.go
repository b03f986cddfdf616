package runtime

import (
	"io"
	"time"

	"goha/core"
)

// Hook points for data that other packages own. Each is nil until the
// program wires it; a nil hook gives HAProxy's answer for "nothing there
// yet" (no idle connections, no check result, no sessions, no events).
// Hooks are set once at start, before Serve, and only read afterwards.
var (
	// ServerConns reports a server's connection pool (show servers conn,
	// the *_conn_cur columns of show stat).
	ServerConns func(s *core.Server) ConnStats
	// CheckInfo reports the last health check and agent check results.
	CheckInfo func(s *core.Server) CheckResult
	// Activity reports per-thread activity counters (show activity);
	// every slice has one value per thread.
	Activity func() []ActivityCounter
	// ClearActivity resets the activity counters (clear counters).
	ClearActivity func()
	// Pools reports goha's buffer and object pools (show pools).
	Pools func() []PoolInfo
	// Sessions lists the streams being served (show sess).
	Sessions func() []SessionInfo
	// ShutdownSession kills the stream with that id; false if none.
	ShutdownSession func(id uint64) bool
	// Errors lists captured protocol errors (show errors).
	Errors func() []ErrorCapture
	// Sinks lists the event sinks (show events).
	Sinks func() []SinkInfo
	// ShowEvents dumps a sink's messages to w (show events <sink>). With
	// wait, it keeps dumping new ones until stop is closed. It returns
	// false when no sink has that name.
	ShowEvents func(name string, w io.Writer, flush func() error, skipOld, wait bool, stop <-chan struct{}) (found bool, isBuffer bool)
	// StartupLogs returns what was logged during start-up.
	StartupLogs func() string
	// Totals gives process-wide counters for show info.
	Totals func() ProcessTotals
)

// ConnStats is a server's pool state, as 2.6's show servers conn prints it.
type ConnStats struct {
	UsedCur, UsedMax, NeedEst int
	Unsafe, Safe, IdleCur     int
	PerThread                 []int // idle connections per thread
}

// CheckResult is what show stat reports about a server's checks.
type CheckResult struct {
	Status      string        // L4OK, L4CON, L7OK, ... ("" before the first check)
	Code        int           // layer 7 status code, 0 for none
	Duration    time.Duration // of the last check; -1 for none
	Desc        string        // "Layer4 check passed", ...
	Last        time.Time     // zero before the first check
	LastChk     string        // last check's detail ("Connection refused")
	LastAgt     string        // last agent check's detail
	AgentStat   string
	AgentCode   int
	AgentDur    time.Duration
	AgentDesc   string
	AgentRise   int
	AgentFall   int
	AgentHealth int
}

// ActivityCounter is one line of show activity.
type ActivityCounter struct {
	Name      string
	PerThread []uint32
	Avg       bool // the total is the rounded mean (avg_loop_us)
}

// PoolInfo describes one pool.
type PoolInfo struct {
	Name                string
	Size                int // bytes per object
	Allocated, Used     int
	NeededAvg, Failures int
	Users               int
	Shared              bool
}

// SessionInfo is one line of show sess.
type SessionInfo struct {
	ID       uint64
	Proto    string // tcpv4, tcpv6, unix_stream
	Src      string
	Frontend string
	Backend  string
	Server   string
	Age      time.Duration
	Calls    int
	FD       int
}

// ErrorCapture is one captured invalid request or response.
type ErrorCapture struct {
	When      time.Time
	Proxy     *core.Proxy
	Response  bool
	Backend   string
	BackendID int
	Server    string
	ServerID  int
	Event     int
	Src       string
	Buf       []byte
	ErrPos    int
}

// SinkInfo is one event sink.
type SinkInfo struct {
	Name, Type, Desc string
	Dropped          uint64
}

// ProcessTotals are process-wide counters.
type ProcessTotals struct {
	CurrConns, CumConns, CumReq int64
	ConnRate, SessRate          int64
	MaxConnRate, MaxSessRate    int64
	TotalBytesOut               int64
	BytesOutRate                int64
	Tasks, Jobs, Listeners      int64
	DroppedLogs, CumRecvLogs    int64
}
