package runtime

import (
	"errors"

	"goha/core/sample"
	"goha/core/stream"
)

func init() {
	Register(
		&Command{Words: []string{"get", "var"}, Usage: "get var <name>",
			Help: "retrieve contents of a process-wide variable", Level: LevelOperator, Run: cmdGetVar},
		&Command{Words: []string{"set", "var"}, Usage: "set var <name> [fmt|expr] {<fmt>|<expr>}",
			Help: "set variable from an expression or a format", Level: LevelOperator, Mode: ModeExperimental, Run: cmdSetVar},
	)
}

// cmdGetVar prints a process variable as 2.6 does: its type and its value
// as text, unprintable bytes as dots (a binary sample shows nothing, as in
// 2.6).
func cmdGetVar(c *Ctx) {
	if c.Arg(2) == "" {
		c.Err("Missing process-wide variable identifier.")
		return
	}
	n, err := sample.ParseVarName(c.Arg(2))
	var s sample.Sample
	if err != nil || n.Scope != sample.ScopeProc || !c.Proc.ProcVars().Get(n.Name, &s) {
		c.Err("Variable not found.")
		return
	}
	var value []byte
	if s.T != sample.TBin {
		value = sample.AppendText(nil, &sample.Request{}, &s)
	}
	for i, b := range value {
		if b < 0x20 || b > 0x7e {
			value[i] = '.'
		}
	}
	c.Printf("%s: type=%s value=<%s>\n", c.Arg(2), s.T, value)
}

// cmdSetVar is `set var <name> [fmt|expr] <text>`: the global section's
// set-var (or set-var-fmt) on a process variable, with 2.6's errors.
func cmdSetVar(c *Ctx) {
	name, text := c.Arg(2), c.Arg(3)
	if name == "" {
		c.Err("Missing process-wide variable identifier.")
		return
	}
	if text == "" {
		c.Err("Missing either 'expr', 'fmt' or expression.")
		return
	}
	useFmt := false
	if c.Arg(4) != "" {
		switch text {
		case "fmt":
			useFmt = true
		case "expr":
		default:
			c.Err("'set var': arg type must be either 'expr' or 'fmt' but got '" + text + "'.")
			return
		}
		text = c.Arg(4)
	}
	err := c.Proc.SetProcVar(name, useFmt, text)
	if errors.Is(err, stream.ErrNotProcScope) {
		c.Err("'set var': cannot set variable '" + name + "', only scope 'proc' is permitted here.")
		return
	}
	if err != nil {
		c.Err(err.Error())
	}
}
