package runtime

import (
	"goha/core/sample"
)

func init() {
	Register(&Command{Words: []string{"get", "var"}, Usage: "get var <name>",
		Help: "retrieve contents of a process-wide variable", Run: cmdGetVar})
}

// cmdGetVar prints a process variable as 2.6 does: its type and its value
// as text (a binary sample shows nothing, as in 2.6).
func cmdGetVar(c *Ctx) {
	if c.Arg(2) == "" {
		c.Err("Missing process-wide variable identifier.\n")
		return
	}
	n, err := sample.ParseVarName(c.Arg(2))
	var s sample.Sample
	if err != nil || n.Scope != sample.ScopeProc || !c.Proc.ProcVars().Get(n.Name, &s) {
		c.Err("Variable not found.\n")
		return
	}
	value := ""
	if s.T != sample.TBin {
		value = string(sample.AppendText(nil, &sample.Request{}, &s))
	}
	c.Printf("%s: type=%s value=<%s>\n", c.Arg(2), s.T, value)
}
