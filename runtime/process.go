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

// serverConns reports a server's connection pool (show servers conn, the
// *_conn_cur columns of show stat); a server the process does not serve
// has an empty one.
func serverConns(proc *stream.Process, s *core.Server) ConnStats {
	st, ok := proc.ServerPool(s)
	if !ok {
		return ConnStats{PerThread: make([]int, proc.Threads)}
	}
	cs := ConnStats{
		UsedCur: int(st.Used), UsedMax: int(st.UsedMax), NeedEst: int(st.NeedEst),
		Unsafe: int(st.IdleNb), Safe: int(st.SafeNb), IdleCur: int(st.IdleCur),
	}
	for _, n := range st.IdlePerThread {
		cs.PerThread = append(cs.PerThread, int(n))
	}
	return cs
}

// checkInfo reports the last health check and agent check results.
func checkInfo(proc *stream.Process, s *core.Server) CheckResult {
	cr := CheckResult{Duration: -1, AgentDur: -1}
	h, a := proc.CheckSnapshots(s)
	if h != nil {
		st, _, _, desc, last := h.StatColumns(false)
		cr.Status, cr.Code, cr.Duration, cr.Desc, cr.LastChk = st, h.Code, h.Duration, desc, last
	}
	if a != nil {
		st, _, _, desc, last := a.StatColumns(true)
		cr.AgentStat, cr.AgentCode, cr.AgentDur, cr.AgentDesc, cr.LastAgt = st, a.Code, a.Duration, desc, last
		cr.AgentRise, cr.AgentFall, cr.AgentHealth = a.Rise, a.Fall, a.Health
	}
	return cr
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
