package stream

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"goha/core/http1"
	"goha/core/sample"
)

// Content inspection: with an inspect-delay, a tcp stream's tcp-request
// content rules run as the client's first bytes arrive, and its backend's
// tcp-response content rules as the server's first bytes do, until one decides
// (a final accept or reject, or the end of the rules) or the delay is
// over, when they run once more on what is there (WAIT_END true). The
// bytes read go to the server first, unchanged, once it is connected.

// inspection holds the bytes read while content rules waited.
type inspection struct {
	buf     []byte     // read so far; its capacity is the limit
	partial bool       // more may come: rules are not final
	eof     bool       // the peer closed or failed: nothing more comes
	err     error      // what ended the reads, when not an end of file
	httpReq bool       // a client's bytes: HTTP fetches read the request head in them
	head    http1.Head // that request head, once whole
	parsed  bool       // head holds it
}

var _ sample.Inspection = (*sampleStream)(nil)

// Payload is what the client (res false) or the server sent while content
// rules ran; tcp streams without inspection and HTTP streams have none, as
// in HAProxy.
func (ss *sampleStream) Payload(res bool) ([]byte, bool) {
	in := ss.insp
	if res {
		in = ss.resInsp
	}
	if in == nil {
		return nil, false
	}
	return in.buf, true
}

// Partial says that the client's or the server's bytes may still grow.
func (ss *sampleStream) Partial(res bool) bool {
	in := ss.insp
	if res {
		in = ss.resInsp
	}
	return in != nil && in.partial
}

// inspectLimit is how much a stream buffers for its content rules: a
// buffer less its reserve, as HAProxy's channel_full sees it.
func (proc *Process) inspectLimit() int {
	g := proc.Conf.Global
	return max(g.BufSize-g.MaxRewrite, 1)
}

// verdict is what content rules decided.
type verdict uint8

const (
	verdictAccept verdict = iota // an accept, or the end of the rules
	verdictReject
	verdictClose // tcp-response close: the server's side is shut
	verdictMiss  // a condition cannot be decided yet
	verdictAbort // the stream ended while the rules waited
)

// inspect runs tcp-request content rules on the bytes of c; false when a
// rule rejects.
func (proc *Process) inspect(c net.Conn, in *inspection, rules []*tcpRule, delay time.Duration, v *sample.Request, sc *ruleScratch) bool {
	in.httpReq = true
	return proc.inspectConn(c, in, rules, delay, v, sc, nil) != verdictReject
}

// inspectConn runs rules on the bytes of c, reading more while a
// condition cannot be decided and the delay runs. The delay starts now;
// with none the rules run once, on what was read before. stop, when set,
// ends the wait (the stream is aborted).
func (proc *Process) inspectConn(c net.Conn, in *inspection, rules []*tcpRule, delay time.Duration, v *sample.Request, sc *ruleScratch, stop *atomic.Bool) verdict {
	if in.buf == nil && delay > 0 {
		in.buf = make([]byte, 0, proc.inspectLimit())
	}
	deadline := time.Now().Add(delay)
	defer func() { in.partial = false }()
	for {
		in.partial = delay > 0 && !in.eof && len(in.buf) < cap(in.buf) && time.Now().Before(deadline)
		if in.httpReq && v.Head == nil && !in.parsed && len(in.buf) > 0 {
			// HTTP fetches read a tcp stream's request as HAProxy's
			// do, once its head is whole.
			if n, err := in.head.ParseRequest(in.buf); err == nil && n > 0 {
				in.parsed, v.Head = true, &in.head
			}
		}
		if vd := runContentRules(rules, v, sc); vd != verdictMiss {
			return vd
		}
		// Only a partial evaluation misses: read more, or end the delay.
		c.SetReadDeadline(deadline)
		n, err := c.Read(in.buf[len(in.buf):cap(in.buf)])
		in.buf = in.buf[:len(in.buf)+n]
		switch {
		case err == nil:
		case isTimeout(err):
			if stop != nil && stop.Load() {
				return verdictAbort
			}
			deadline = time.Now()
		case errors.Is(err, io.EOF):
			in.eof = true
		default:
			in.eof, in.err = true, err
		}
		c.SetReadDeadline(time.Time{})
	}
}

// runContentRules runs content rules as runTCPRules does, and stops with
// verdictMiss when a condition cannot be decided yet: the rules run
// again, from the first, once more bytes are there.
func runContentRules(rules []*tcpRule, v *sample.Request, sc *ruleScratch) verdict {
	for _, r := range rules {
		m, miss := r.cond.EvalPartial(v)
		if miss {
			return verdictMiss
		}
		if !m {
			continue
		}
		switch r.act {
		case "accept":
			decided(v, &r.pos)
			return verdictAccept
		case "reject":
			decided(v, &r.pos)
			return verdictReject
		case "close":
			decided(v, &r.pos)
			return verdictClose
		case "switch-mode":
			// The stream goes on as HTTP (see serveTCP): an accept.
			decided(v, &r.pos)
			sc.switchHTTP = true
			return verdictAccept
		case "var":
			r.v.apply(v, &sc.smp, &sc.buf)
		case "addr":
			r.setAddr(v, &sc.smp)
		case "log-level", "mark", "tos":
			if ss, ok := v.Stream.(*sampleStream); ok {
				ss.applyTCP(r)
			}
		case "stick":
			if r.sa.kind == 't' {
				if _, miss := r.sa.key.EvalPartial(v, &sc.smp); miss {
					// The key may come with more bytes.
					return verdictMiss
				}
			}
			sc.stick(r.sa, v)
		}
	}
	return verdictAccept
}

// applyTCP runs a tcp rule's action on the stream: set-log-level, and
// set-mark and set-tos on the client's socket, as in HAProxy.
func (ss *sampleStream) applyTCP(r *tcpRule) {
	switch r.act {
	case "log-level":
		ss.si.logLevel = int8(r.val)
	case "mark":
		setClientSockopt(ss.conn, unix.SOL_SOCKET, unix.SO_MARK, r.val)
	case "tos":
		setClientSockopt(ss.conn, unix.IPPROTO_IP, unix.IP_TOS, r.val)
	}
}

// resInspect is a tcp stream's tcp-response content inspection.
type resInspect struct {
	proc  *Process
	in    inspection
	rules []*tcpRule
	delay time.Duration
	v     *sample.Request
	rs    *ruleScratch
}

// run reads the server's first bytes from sc while the rules wait for
// them, then sends them to c unless a rule rejects. n is what it read
// (reject) or sent; err a failure of either side, wrote saying that it
// was c's.
func (ri *resInspect) run(c, sc net.Conn, stop *atomic.Bool) (vd verdict, n int64, err error, wrote bool) {
	vd = ri.proc.inspectConn(sc, &ri.in, ri.rules, ri.delay, ri.v, ri.rs, stop)
	switch vd {
	case verdictAbort:
		return vd, 0, nil, false
	case verdictReject:
		return vd, int64(len(ri.in.buf)), nil, false
	}
	if len(ri.in.buf) > 0 {
		w, werr := c.Write(ri.in.buf)
		if werr != nil {
			return vd, int64(w), werr, true
		}
		n = int64(w)
	}
	return vd, n, ri.in.err, false
}

// ended says that the server's side ended while its bytes were
// inspected: nothing more comes from it.
func (ri *resInspect) ended() bool { return ri != nil && ri.in.eof }

// forwardInspected sends the bytes inspected to the server, first.
func forwardInspected(in *inspection, sc net.Conn) (int64, error) {
	if in == nil || len(in.buf) == 0 {
		return 0, nil
	}
	n, err := sc.Write(in.buf)
	return int64(n), err
}
