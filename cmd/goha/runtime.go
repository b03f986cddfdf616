package main

import (
	"net"
	"strings"

	"goha/core"
	"goha/ring"
	"goha/runtime"
)

// startRuntime connects the runtime API to the data path's counters and
// opens the stats sockets of the configuration.
func startRuntime(proc *core.Process, startup *ring.Ring) error {
	runtime.Events = proc.Conf.LogRegistry().ShowEvents
	runtime.StartupLogs = func() string {
		var b strings.Builder
		startup.Dump(&b, false, false, ring.FrameLF, nil)
		return b.String()
	}
	runtime.ServerConns = func(s *core.Server) runtime.ConnStats {
		st, ok := s.PoolStats()
		if !ok {
			return runtime.ConnStats{PerThread: make([]int, proc.Threads)}
		}
		cs := runtime.ConnStats{
			UsedCur: int(st.Used), UsedMax: int(st.UsedMax), NeedEst: int(st.NeedEst),
			Unsafe: int(st.IdleNb), Safe: int(st.SafeNb), IdleCur: int(st.IdleCur),
		}
		for _, n := range st.IdlePerThread {
			cs.PerThread = append(cs.PerThread, int(n))
		}
		return cs
	}
	prev := runtime.Activity
	runtime.Activity = func() []runtime.ActivityCounter {
		var out []runtime.ActivityCounter
		if prev != nil {
			out = prev()
		}
		return append(out, runtime.ActivityCounter{Name: "fd_takeover", PerThread: proc.FDTakeover()})
	}
	runtime.ClearActivity = proc.ClearFDTakeover
	runtime.Errors = func() []runtime.ErrorCapture {
		var out []runtime.ErrorCapture
		for _, c := range proc.ErrorCaptures() {
			e := runtime.ErrorCapture{When: c.When, Proxy: c.Proxy, Response: c.Response, Event: c.EventID, Buf: c.Data, ErrPos: c.Offset}
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
	runtime.CheckInfo = func(s *core.Server) runtime.CheckResult {
		var cr runtime.CheckResult
		cr.Duration = -1
		cr.AgentDur = -1
		h, a := s.CheckSnapshots()
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
	_, err := runtime.Serve(proc)
	return err
}
