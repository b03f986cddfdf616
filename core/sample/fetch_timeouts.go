package sample

import "time"

// The server and tunnel timeouts a stream runs with: those set-timeout left
// (the backend's when it changed nothing), in milliseconds.

// TimeoutInfo is what the running process tells of a stream's timeouts;
// ok false before the backend is known.
type TimeoutInfo interface {
	Timeouts() (feClient, beServer, beTunnel, curServer, curTunnel time.Duration, ok bool)
}

func init() {
	RegisterFetches(
		timeoutFetch("cur_server_timeout", func(fc, bs, bt, cs, ct time.Duration) time.Duration { return cs }),
		timeoutFetch("cur_tunnel_timeout", func(fc, bs, bt, cs, ct time.Duration) time.Duration { return ct }),
	)
}

func timeoutFetch(name string, pick func(fc, bs, bt, cs, ct time.Duration) time.Duration) Fetch {
	return Fetch{Name: name, Out: TSint, Need: NeedNothing, Fn: func(r *Request, a []Arg, s *Sample) bool {
		ti, ok := r.Stream.(TimeoutInfo)
		if !ok {
			return false
		}
		fc, bs, bt, cs, ct, ok := ti.Timeouts()
		if !ok {
			return false
		}
		s.setInt(int64(pick(fc, bs, bt, cs, ct) / time.Millisecond))
		return true
	}}
}
