package stream

import (
	"fmt"
	"strings"

	"goha/core"
	"goha/core/diag"
	"goha/core/sample"
	"goha/ring"
)

// Variables in rules (set-var, set-var-fmt, unset-var) and the tcp-request
// rules that carry them.

// varAction is a compiled set-var, set-var-fmt or unset-var.
type varAction struct {
	name  sample.VarName
	conds sample.VarCond
	unset bool
	expr  *sample.SampleExpr // set-var
	fmt   *sample.Expr       // set-var-fmt
}

// compileVarAction reads "set-var(<scope>.<name>[,<cond>...])" and its
// argument, as HAProxy's parse_store: a process variable it names exists
// from now on, even when its expression turns out to be wrong.
func compileVarAction(env *sample.Env, words []string) (*varAction, error) {
	key, inner, _ := strings.Cut(words[0], "(")
	inner, closed := strings.CutSuffix(inner, ")")
	if !closed {
		return nil, fmt.Errorf("missing closing ')' after the variable name")
	}
	name, conds, _ := strings.Cut(inner, ",")
	a := &varAction{unset: key == "unset-var"}
	if conds != "" && a.unset {
		return nil, fmt.Errorf("unset-var does not expect parameters after the variable name. Only \"set-var\" and \"set-var-fmt\" manage conditions")
	}
	for _, c := range strings.Split(conds, ",") {
		if c == "" {
			break
		}
		f, err := sample.ParseVarCond(c)
		if err != nil {
			return nil, err
		}
		a.conds |= f
	}
	var err error
	if a.name, err = sample.CheckVarName(name, words[0][len(key)+1+len(name):]); err != nil {
		return nil, err
	}
	if a.name.Scope == sample.ScopeProc && env != nil {
		env.Proc.Declare(a.name.Name)
	}
	if a.unset {
		return a, nil
	}
	if len(words) < 2 {
		return nil, fmt.Errorf("missing fetch method")
	}
	if key == "set-var-fmt" {
		a.fmt, err = sample.CompileLF(env, words[1])
	} else {
		a.expr, err = sample.CompileExpr(env, words[1])
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// apply runs the action for the message v; smp is the caller's scratch
// sample, buf its scratch bytes.
func (a *varAction) apply(v *sample.Request, smp *sample.Sample, buf *[]byte) {
	if a.unset {
		v.Vars.Unset(a.name)
		return
	}
	if a.fmt != nil {
		*buf = a.fmt.AppendTo((*buf)[:0], v)
		*smp = sample.Sample{T: sample.TStr, B: *buf}
	} else if !a.expr.Eval(v, smp) {
		return
	}
	v.Vars.SetCond(a.name, smp, a.conds)
}

// tcpRule is a compiled tcp-request or tcp-response rule.
type tcpRule struct {
	act  string             // accept, reject, close, var, stick, log-level, mark, tos, noop, addr
	addr ruleAction         // addr: actSetSrc, actSetDst or their ports
	expr *sample.SampleExpr // addr: the new address or port
	v    *varAction
	sa   *stickAction
	val  int // set-log-level's level (as streamInfo.logLevel), set-mark's and set-tos's value
	cond *sample.Cond
	pos  diag.Pos
}

// tcpRules are a proxy's tcp-request rules by stage, and its
// tcp-response content rules.
type tcpRules struct {
	conn, sess, content []*tcpRule
	resp                []*tcpRule
}

// compileTCPRules compiles p's tcp-request and tcp-response rules.
func (proc *Process) compileTCPRules(p *proxy, named map[string][]*sample.Term, d *diag.Collector) {
	for _, r := range p.TCPReqRules {
		n, _ := core.TCPRuleArity(r.Words)
		cond, err := sample.CompileCond(proc.env, r.Words[n:], named)
		if err != nil {
			d.Alertf(r.Pos, "error detected while parsing a 'tcp-request %s' condition : %v.", r.Stage, err)
			continue
		}
		t := &tcpRule{act: r.Words[0], cond: cond, pos: r.Pos}
		sa, ok, err := compileStickAction(proc.env, r.Words[:n])
		if err != nil {
			d.Alertf(r.Pos, "'tcp-request %s %s' : %v", r.Stage, r.Words[0], err)
			continue
		}
		if ok {
			t.act, t.sa = "stick", sa
		} else if a, ok := addrActions[r.Words[0]]; ok {
			t.act, t.addr = "addr", a
			if t.expr, err = sample.CompileExpr(proc.env, r.Words[1]); err != nil {
				d.Alertf(r.Pos, "'tcp-request %s %s' : %v.", r.Stage, r.Words[0], err)
				continue
			}
		} else if k, _, _ := strings.Cut(r.Words[0], "("); k != r.Words[0] {
			t.act = "var"
			if t.v, err = compileVarAction(proc.env, r.Words[:n]); err != nil {
				d.Alertf(r.Pos, "'tcp-request %s %s' : %v.", r.Stage, k, err)
				continue
			}
		}
		switch r.Stage {
		case "connection":
			p.tcp.conn = append(p.tcp.conn, t)
		case "session":
			p.tcp.sess = append(p.tcp.sess, t)
		default:
			p.tcp.content = append(p.tcp.content, t)
		}
	}
	for _, r := range p.TCPRespRules {
		n, _ := core.TCPRespRuleArity(r.Words)
		cond, err := sample.CompileCond(proc.env, r.Words[n:], named)
		if err != nil {
			d.Alertf(r.Pos, "'tcp-response content %s' : error detected in %s '%s' while parsing '%s' condition : %s", r.Words[0], core.CapName(p.Cap), p.Name, r.Words[n], strings.TrimSuffix(err.Error(), "."))
			continue
		}
		t, err := compileTCPRespAction(proc.env, r.Words[:n])
		if err != nil {
			d.Alertf(r.Pos, "%v", err)
			continue
		}
		t.cond, t.pos = cond, r.Pos
		p.tcp.resp = append(p.tcp.resp, t)
	}
}

// compileTCPRespAction compiles a tcp-response content action; the
// configuration checked its words.
func compileTCPRespAction(env *sample.Env, args []string) (*tcpRule, error) {
	t := &tcpRule{act: args[0]}
	switch args[0] {
	case "set-log-level":
		t.act, t.val = "log-level", logSilent
		if l, ok := ring.ParseLevel(args[1]); ok {
			t.val = l + 1
		}
	case "set-mark", "set-tos":
		t.act = strings.TrimPrefix(args[0], "set-")
		v, _ := parseUintC(args[1])
		t.val = int(v)
	case "set-nice":
		// Streams are not scheduled by priority in goha.
		t.act = "noop"
	default:
		if strings.Contains(args[0], "(") {
			t.act = "var"
			v, err := compileVarAction(env, args)
			if err != nil {
				return nil, err
			}
			t.v = v
		}
	}
	return t, nil
}

// ruleScratch is what running rules needs besides the message.
type ruleScratch struct {
	smp sample.Sample
	buf []byte
	// tr is what the stream's stick counters are, and trackIn where its
	// track-sc rules track: the session's counters in connection and
	// session rules, the stream's in content rules. nil: no tracking.
	tr      *tracking
	trackIn *stkCounters
	// expectProxy says a connection rule asked for a PROXY header
	// (expect-proxy layer4); switchHTTP that a content rule switched a
	// tcp stream to HTTP (switch-mode http).
	expectProxy, switchHTTP bool
}

// runTCPRules runs rules for v: false when one rejects. An accept ends
// the stage's rules.
func runTCPRules(rules []*tcpRule, v *sample.Request, sc *ruleScratch) bool {
	for _, r := range rules {
		if !r.cond.Eval(v) {
			continue
		}
		switch r.act {
		case "accept":
			decided(v, &r.pos)
			return true
		case "reject":
			decided(v, &r.pos)
			return false
		case "var":
			r.v.apply(v, &sc.smp, &sc.buf)
		case "addr":
			r.setAddr(v, &sc.smp)
		case "stick":
			sc.stick(r.sa, v)
		case "expect-proxy":
			sc.expectProxy = true
		case "switch-mode":
			// Already HTTP: the stream was switched, or is an HTTP
			// one; it ends the rules as an accept.
			decided(v, &r.pos)
			return true
		}
	}
	return true
}

// addrActions are the actions that change the client's or the local
// address or port.
var addrActions = map[string]ruleAction{"set-src": actSetSrc, "set-src-port": actSetSrcPort, "set-dst": actSetDst, "set-dst-port": actSetDstPort}

// setAddr runs set-src, set-dst or their ports for v: the addresses of
// the connection, the session or the stream, as the stage of the rule
// says, as HAProxy keeps them apart (fc_src against src).
func (r *tcpRule) setAddr(v *sample.Request, s *sample.Sample) {
	a, ok := newAddr(r.addr, r.expr, v, s)
	if !ok {
		return
	}
	src := r.addr == actSetSrc || r.addr == actSetSrcPort
	if src {
		v.Client = a
	} else {
		v.Local = a
	}
	if ss, ok := v.Stream.(*sampleStream); ok {
		if src {
			ss.si.client = a
		}
		if hc := ss.si.hc; hc != nil {
			if src {
				hc.addrs.src = a
			} else {
				hc.addrs.dst = a
			}
		}
	}
}

// stick runs a stick-table action of a tcp-request rule.
func (sc *ruleScratch) stick(a *stickAction, v *sample.Request) {
	if sc.tr != nil {
		a.run(v, sc.tr, sc.trackIn, &sc.smp, false, 0)
	}
}
