package stream

import (
	"errors"
	"io"
	"net"
	"time"

	"goha/core/sample"
)

// tcp-request content inspection: with an inspect-delay, a tcp stream's
// content rules run as the client's first bytes arrive, until one decides
// (a final accept or reject, or the end of the rules) or the delay is
// over, when they run once more on what is there (WAIT_END true). The
// bytes read go to the server first, unchanged, once it is connected.

// inspection holds the client's bytes read while content rules waited.
type inspection struct {
	buf     []byte // read so far; its capacity is the limit
	partial bool   // more may come: rules are not final
	eof     bool   // the client closed or failed: nothing more comes
}

var _ sample.Inspection = (*sampleStream)(nil)

// Payload is what the client sent while content rules ran; tcp streams
// without inspection and HTTP streams have none, as in HAProxy.
func (ss *sampleStream) Payload(res bool) ([]byte, bool) {
	if res || ss.insp == nil {
		return nil, false
	}
	return ss.insp.buf, true
}

// Partial says that the client's bytes may still grow.
func (ss *sampleStream) Partial(res bool) bool {
	return !res && ss.insp != nil && ss.insp.partial
}

// inspectLimit is how much a stream buffers for its content rules: a
// buffer less its reserve, as HAProxy's channel_full sees it.
func (proc *Process) inspectLimit() int {
	g := proc.Conf.Global
	return max(g.BufSize-g.MaxRewrite, 1)
}

// inspect runs rules on the bytes of c, reading more while a condition
// cannot be decided and the delay runs; false when a rule rejects. The
// delay starts now; with none the rules run once, on what was read before.
func (proc *Process) inspect(c net.Conn, in *inspection, rules []*tcpRule, delay time.Duration, v *sample.Request, sc *ruleScratch) bool {
	if in.buf == nil && delay > 0 {
		in.buf = make([]byte, 0, proc.inspectLimit())
	}
	deadline := time.Now().Add(delay)
	defer func() { in.partial = false }()
	for {
		in.partial = delay > 0 && !in.eof && len(in.buf) < cap(in.buf) && time.Now().Before(deadline)
		reject, miss := runContentRules(rules, v, sc)
		if !miss {
			return !reject
		}
		// Only a partial evaluation misses: read more, or end the delay.
		c.SetReadDeadline(deadline)
		n, err := c.Read(in.buf[len(in.buf):cap(in.buf)])
		in.buf = in.buf[:len(in.buf)+n]
		switch {
		case err == nil:
		case isTimeout(err):
			deadline = time.Now()
		case errors.Is(err, io.EOF):
			in.eof = true
		default:
			in.eof = true
		}
		c.SetReadDeadline(time.Time{})
	}
}

// runContentRules runs content rules as runTCPRules does, and stops with
// miss when a condition cannot be decided yet: the rules run again, from
// the first, once more bytes are there.
func runContentRules(rules []*tcpRule, v *sample.Request, sc *ruleScratch) (reject, miss bool) {
	for _, r := range rules {
		m, miss := r.cond.EvalPartial(v)
		if miss {
			return false, true
		}
		if !m {
			continue
		}
		switch r.act {
		case "accept":
			return false, false
		case "reject":
			return true, false
		case "var":
			r.v.apply(v, &sc.smp, &sc.cur, &sc.buf)
		case "stick":
			sc.stick(r.sa, v)
		}
	}
	return false, false
}

// forwardInspected sends the bytes inspected to the server, first.
func forwardInspected(in *inspection, sc net.Conn) (int64, error) {
	if in == nil || len(in.buf) == 0 {
		return 0, nil
	}
	n, err := sc.Write(in.buf)
	return int64(n), err
}
