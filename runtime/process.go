package runtime

// What the stats socket reads from the running process, in the shapes its
// commands print. The process is called directly (Ctx.Proc); these helpers
// only convert.

import (
	"goha/core/stream"
	"net"
	"time"

	"goha/core"
)

// ActivityCounter is one line of show activity.
type ActivityCounter struct {
	Name      string
	PerThread []uint32
	Avg       bool // the total is the rounded mean (avg_loop_us)
}

// SessionInfo is a CLI session as show sess lists it (the data path's
// streams are stream.SessionInfo).
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

// errorCaptures lists the process's captured protocol errors.
func errorCaptures(proc *stream.Process) []ErrorCapture {
	var out []ErrorCapture
	for _, c := range proc.ErrorCaptures() {
		e := ErrorCapture{When: c.When, Proxy: c.Proxy, Response: c.Response, Event: c.EventID, Buf: c.Data, ErrPos: c.Offset}
		if c.Server != nil {
			e.Server, e.ServerID = c.Server.Name, c.Server.ID
			e.Backend, e.BackendID = c.Server.Proxy.Name, c.Server.Proxy.ID
		}
		if c.Client != nil {
			if ta, ok := c.Client.(*net.TCPAddr); ok {
				e.Src = ta.String()
			} else {
				e.Src = "unix"
			}
		}
		out = append(out, e)
	}
	return out
}
