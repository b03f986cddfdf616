package stream

import (
	"fmt"
	"strings"

	"goha/core"
	"goha/core/diag"
	"goha/core/sample"
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

// tcpRule is a compiled tcp-request rule.
type tcpRule struct {
	act  string // accept, reject, var, stick
	v    *varAction
	sa   *stickAction
	cond *sample.Cond
}

// tcpRules are a proxy's tcp-request rules by stage.
type tcpRules struct {
	conn, sess, content []*tcpRule
}

// compileTCPRules compiles p's tcp-request rules.
func (proc *Process) compileTCPRules(p *proxy, named map[string][]*sample.Term, d *diag.Collector) {
	for _, r := range p.TCPReqRules {
		n, _ := core.TCPRuleArity(r.Words)
		cond, err := sample.CompileCond(proc.env, r.Words[n:], named)
		if err != nil {
			d.Alertf(r.Pos, "error detected while parsing a 'tcp-request %s' condition : %v.", r.Stage, err)
			continue
		}
		t := &tcpRule{act: r.Words[0], cond: cond}
		sa, ok, err := compileStickAction(proc.env, r.Words[:n])
		if err != nil {
			d.Alertf(r.Pos, "'tcp-request %s %s' : %v", r.Stage, r.Words[0], err)
			continue
		}
		if ok {
			t.act, t.sa = "stick", sa
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
			return true
		case "reject":
			return false
		case "var":
			r.v.apply(v, &sc.smp, &sc.buf)
		case "stick":
			sc.stick(r.sa, v)
		}
	}
	return true
}

// stick runs a stick-table action of a tcp-request rule.
func (sc *ruleScratch) stick(a *stickAction, v *sample.Request) {
	if sc.tr != nil {
		a.run(v, sc.tr, sc.trackIn, &sc.smp, false, 0)
	}
}
