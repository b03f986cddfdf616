package check

import (
	"fmt"

	"goha/core/http1"
	"goha/core/sample"
)

// Check rules compile their expressions and log-format strings with
// goha's sample engine and evaluate them against the probe: its check
// variables, what the server sent since the last send (res.payload,
// res.len, res.payload_lv), for http-check the parsed response head
// (res.hdr, res.fhdr, status), and the backend and server names.

// needOK says whether a fetch that reads n may be used in a check: a check
// has a response and a server connection, never a request.
func needOK(n sample.Need) bool {
	switch n {
	case sample.NeedReqHdr, sample.NeedReq, sample.NeedReqBuf:
		return false
	}
	return true
}

// compileLF compiles a log-format string of a check rule.
func compileLF(s string) (*sample.Expr, error) {
	e, err := sample.CompileLF(nil, s)
	if err != nil {
		return nil, err
	}
	if err := e.CheckNeeds(s, needOK); err != nil {
		return nil, err
	}
	return e, nil
}

// compileExpr compiles the sample expression of a set-var or a
// status-code; HAProxy names what in the error of a fetch that cannot be
// used here (for set-var, the action rather than the fetch).
func compileExpr(s, what string) (*sample.SampleExpr, error) {
	x, err := sample.CompileExpr(nil, s)
	if err != nil {
		return nil, err
	}
	if !needOK(x.Need()) {
		lead := ""
		if what == "" {
			// HAProxy's status-code message has a space more here.
			what, lead = x.FetchName(), " "
		}
		return nil, fmt.Errorf("%sfetch method '%s' extracts information from '%s', none of which is available here", lead, what, x.Need())
	}
	return x, nil
}

// checkStream is the probe as the sample engine's Stream sees it.
type checkStream probe

func (c *checkStream) Frontend() (string, int)      { return "", 0 }
func (c *checkStream) Backend() (string, int, bool) { return c.target.Backend, 0, true }
func (c *checkStream) Server() (string, int, bool)  { return c.target.Server, 0, true }

// Payload is what the server sent since the last send; a check has no
// request buffer.
func (c *checkStream) Payload(res bool) ([]byte, bool) {
	if !res {
		return nil, false
	}
	return c.in, true
}

// view prepares the Request the probe's expressions evaluate with.
func (p *probe) view() *sample.Request {
	r := &p.smp
	r.Clear()
	r.Stream = (*checkStream)(p)
	r.Vars = &p.vars
	if p.rules != nil && p.rules.Proto == ProtoHTTP {
		r.Head = p.responseHead()
	}
	return r
}

// responseHead parses the HTTP response head received so far, once per
// change of the receive buffer (see inChanged); nil while it is incomplete or when it is malformed.
func (p *probe) responseHead() *http1.Head {
	if p.headDone {
		if p.headOK {
			return &p.head
		}
		return nil
	}
	p.headDone, p.headOK = true, false
	// The parser rewrites obs-folds in place: parse a copy, so that the
	// expects still see the bytes as received.
	p.headBuf = append(p.headBuf[:0], p.in...)
	p.head.Reset()
	if n, err := p.head.ParseResponse(p.headBuf, http1.MethodOther); n > 0 && err == nil {
		p.headOK = true
		return &p.head
	}
	return nil
}

// lf evaluates a log-format string of a rule.
func (p *probe) lf(e *sample.Expr) []byte {
	if e == nil {
		return nil
	}
	return e.AppendCString(nil, p.view())
}

// initVars sets the ruleset's and the target's preset check variables.
func (p *probe) initVars() {
	var s sample.Sample
	set := func(k, v string) {
		n, err := sample.ParseVarName(k)
		if err != nil {
			return
		}
		s = sample.Sample{T: sample.TStr, B: []byte(v)}
		p.vars.Set(n, &s)
	}
	for k, v := range p.rules.Vars {
		set(k, v)
	}
	for k, v := range p.target.Vars {
		set(k, v)
	}
}

// inChanged forgets the parsed response head: the receive buffer changed.
func (p *probe) inChanged() { p.headDone = false }
