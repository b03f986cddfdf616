package stream

import (
	"testing"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
	"goha/core/sample"
)

// TestSetProcVarEveryFetch runs the CLI's set var with every fetch, bare,
// with empty parentheses and in a format: an error or a value, never a
// panic (the CLI has no stream, no connection, no message).
func TestSetProcVarEveryFetch(t *testing.T) {
	d := &diag.Collector{}
	cfg := core.Build(config.Parse("unit.cfg", []byte("global\n    set-var proc.a int(1)\n"), config.Options{}, d), d)
	proc := New(cfg)
	proc.Prepare(d)
	if d.HasAlert() {
		t.Fatal(d.All())
	}
	for _, f := range sample.FetchNames() {
		for _, text := range []string{f, f + "()", f + "(proc.a)"} {
			proc.SetProcVar("proc.x", false, text)
			proc.SetProcVar("proc.x", true, "%["+text+"]")
		}
	}
	// The name exists once the command names it (ifexists holds), as in
	// HAProxy.
	var s sample.Sample
	if err := proc.SetProcVar("proc.y,ifexists", false, "var(proc.a),add(proc.a)"); err != nil {
		t.Fatal(err)
	}
	if !proc.ProcVars().Get("y", &s) || s.T != sample.TSint || s.I != 2 {
		t.Fatalf("proc.y = %+v", s)
	}
}
