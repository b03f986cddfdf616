package stream

import (
	"errors"
	"fmt"

	"goha/core/diag"
	"goha/core/sample"
)

// ProcVars are the process's variables (scope proc), which the global
// section's set-var lines set and `get var` reads.
func (proc *Process) ProcVars() *sample.ProcVars { return proc.procVars }

// ErrNotProcScope is SetProcVar's error for a variable of another scope
// than proc: the global section and the CLI word it their own way.
var ErrNotProcScope = errors.New("only scope 'proc' is permitted")

// constOnly says what the global section's and the CLI's set-var may
// fetch: nothing that needs a connection or a message.
func constOnly(n sample.Need) bool { return n == sample.NeedNothing }

// compileProcVar compiles `<kw> <name> <text>` (kw set-var or
// set-var-fmt) as HAProxy's parse_store does for the global section and
// the CLI, with their errors.
func (proc *Process) compileProcVar(kw, name, text string) (*varAction, error) {
	a, err := compileVarAction(proc.env, []string{kw + "(" + name + ")", text})
	if err != nil {
		return nil, err
	}
	if a.expr != nil && !constOnly(a.expr.Need()) {
		return nil, fmt.Errorf("fetch method '%s(%s)' extracts information from '%s', none of which is available here", kw, name, a.expr.Need())
	}
	if a.fmt != nil {
		if err := a.fmt.CheckNeeds(text, constOnly); err != nil {
			return nil, err
		}
	}
	if a.name.Scope != sample.ScopeProc {
		return nil, ErrNotProcScope
	}
	return a, nil
}

// SetProcVar runs `set-var <name> <expr>` (fmt false) or `set-var-fmt
// <name> <fmt>` (fmt true) on the process variables, as the CLI's
// `set var` does. The name may carry set-var's conditions.
func (proc *Process) SetProcVar(name string, fmt bool, text string) error {
	kw := "set-var"
	if fmt {
		kw = "set-var-fmt"
	}
	a, err := proc.compileProcVar(kw, name, text)
	if err != nil {
		return err
	}
	var sc ruleScratch
	a.apply(&sample.Request{Vars: &sample.Vars{Proc: proc.procVars}}, &sc.smp, &sc.buf)
	return nil
}

// setGlobalVars runs the global section's set-var and set-var-fmt lines,
// in order, when the process starts.
func (proc *Process) setGlobalVars(d *diag.Collector) {
	for _, l := range proc.Conf.Global.SetVars {
		kw, name, text := l.Words[0], l.Words[1], l.Words[2]
		a, err := proc.compileProcVar(kw, name, text)
		if err == ErrNotProcScope {
			err = fmt.Errorf("'%s': cannot set variable '%s', only scope 'proc' is permitted in the global section.", kw, name)
		}
		if err != nil {
			d.Alertf(l.Pos, "%v", err)
			continue
		}
		var sc ruleScratch
		a.apply(&sample.Request{Vars: &sample.Vars{Proc: proc.procVars}}, &sc.smp, &sc.buf)
	}
}
