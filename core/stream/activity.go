package stream

import "sync/atomic"

// threadActivity holds, for one thread (shard), the show activity counters
// of the events goha has. HAProxy's scheduler loops, polls and task
// switches are the Go runtime's, with two exceptions counted here: the
// streams processed, and the parker, goha's own event loop over idle
// client connections (reported on the first thread).
type threadActivity struct {
	accepted    atomic.Uint32 // connections accepted (frontends and stats socket)
	streamCalls atomic.Uint32 // streams processed: HTTP exchanges, tcp streams
}

// CountAccepted counts a connection accepted on thread (a frontend's or
// the stats socket's), as HAProxy's show activity does per thread.
func (proc *Process) CountAccepted(thread int) {
	if len(proc.act) > 0 {
		proc.act[thread%len(proc.act)].accepted.Add(1)
	}
}

func (proc *Process) countStreamCall(thread int) {
	if len(proc.act) > 0 {
		proc.act[thread%len(proc.act)].streamCalls.Add(1)
	}
}

// Activity returns show activity's counters that goha keeps, by HAProxy's
// name, one value per thread: accepted, stream_calls, fd_takeover, and the
// parker's loops, poll_io (a wait that returned events) and poll_exp (one
// that timed out).
func (proc *Process) Activity() map[string][]uint32 {
	n := len(proc.act)
	out := map[string][]uint32{
		"accepted":     make([]uint32, n),
		"stream_calls": make([]uint32, n),
		"loops":        make([]uint32, n),
		"poll_io":      make([]uint32, n),
		"poll_exp":     make([]uint32, n),
		"fd_takeover":  proc.FDTakeover(),
	}
	for i := range proc.act {
		out["accepted"][i] = proc.act[i].accepted.Load()
		out["stream_calls"][i] = proc.act[i].streamCalls.Load()
	}
	if pk := proc.idle; pk != nil && n > 0 {
		out["loops"][0] = pk.loops.Load()
		out["poll_io"][0] = pk.pollIO.Load()
		out["poll_exp"][0] = pk.pollExp.Load()
	}
	return out
}

// ClearActivity resets the counters (clear counters all).
func (proc *Process) ClearActivity() {
	for i := range proc.act {
		proc.act[i].accepted.Store(0)
		proc.act[i].streamCalls.Store(0)
	}
	if pk := proc.idle; pk != nil {
		pk.loops.Store(0)
		pk.pollIO.Store(0)
		pk.pollExp.Store(0)
	}
	proc.ClearFDTakeover()
}
