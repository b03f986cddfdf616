package sample

import (
	"strings"
	"testing"
)

// TestVarSetConditions follows HAProxy 2.6's var_set step by step; the
// expected values are those of its reg-test sample_fetches/cond_set_var.vtc
// plus the cases it leaves out (a failed ifset still creates the variable,
// a process variable survives unset-var).
func TestVarSetConditions(t *testing.T) {
	str := func(s string) *Sample { return &Sample{T: TStr, B: []byte(s)} }
	sint := func(i int64) *Sample { return &Sample{T: TSint, I: i} }
	conds := func(s string) VarCond {
		var c VarCond
		for _, w := range strings.Split(s, ",") {
			if w != "" {
				f, err := ParseVarCond(w)
				if err != nil {
					t.Fatal(err)
				}
				c |= f
			}
		}
		return c
	}
	type step struct {
		op     string // set, unset, declare
		name   string
		conds  string
		s      *Sample
		stored bool
		want   string // the value after the step, "-" for none
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"ifexists", []step{
			{"declare", "proc.p", "", nil, false, "-"},
			{"set", "proc.p", "ifexists", sint(12), true, "12"},
			{"set", "proc.q", "ifexists", sint(12), false, "-"},
			{"set", "sess.s", "ifexists", sint(5), false, "-"},
			{"set", "res.r", "ifexists", str("toto"), false, "-"},
		}},
		{"ifnotexists", []step{
			{"declare", "proc.p", "", nil, false, "-"},
			{"set", "proc.p", "ifnotexists", sint(12), false, "-"},
			{"set", "sess.s", "ifnotexists", sint(5), true, "5"},
			{"set", "sess.s", "ifnotexists", sint(6), false, "5"},
		}},
		{"ifempty", []step{
			{"set", "txn.a", "", str("x"), true, "x"},
			{"set", "txn.a", "ifempty", sint(12), false, "x"},
			{"set", "txn.a", "ifempty", &Sample{T: TBool, I: 0}, false, "x"},
			{"set", "txn.a", "ifempty", str("toto"), false, "x"},
			{"set", "txn.a", "ifempty", str(""), true, ""},
			{"set", "txn.i", "", sint(5), true, "5"},
			{"set", "txn.i", "ifempty", sint(7), false, "5"},
		}},
		{"ifnotempty", []step{
			{"set", "txn.a", "ifnotempty", str("toto"), true, "toto"},
			{"set", "txn.a", "ifnotempty", str(""), false, "toto"},
			{"set", "txn.a", "ifnotempty", sint(7), true, "7"},
		}},
		{"ifset after unset", []step{
			{"set", "res.a", "", str("a"), true, "a"},
			{"set", "res.a", "ifset", sint(123), true, "123"},
			{"unset", "res.a", "", nil, false, "-"},
			{"set", "res.a", "ifset", sint(123), false, "-"},
			// The failed ifset created it, without a value.
			{"set", "res.a", "ifnotexists", sint(1), false, "-"},
			{"set", "res.a", "ifnotset", sint(2), true, "2"},
		}},
		{"ifnotset", []step{
			{"set", "proc.a", "", str("a"), true, "a"},
			{"set", "proc.a", "ifnotset", str("toto"), false, "a"},
			{"unset", "proc.a", "", nil, false, "-"},
			// A process variable still exists once unset.
			{"set", "proc.a", "ifexists,ifnotset", str("toto"), true, "toto"},
		}},
		{"ifgt iflt", []step{
			{"set", "res.s", "", str("ifgt_res"), true, "ifgt_res"},
			{"set", "res.s", "ifgt", sint(55), true, "55"},
			{"set", "res.i", "", sint(5), true, "5"},
			{"set", "res.i", "ifgt", str("text"), true, "text"},
			{"set", "res.j", "", sint(5), true, "5"},
			{"set", "res.j", "ifgt", sint(55), false, "5"},
			{"set", "res.j", "ifgt", sint(2), true, "2"},
			{"set", "res.j", "iflt", sint(1), false, "2"},
			{"set", "res.j", "iflt", sint(3), true, "3"},
			{"set", "res.b", "", &Sample{T: TBool, I: 1}, true, "1"},
			{"set", "res.b", "ifgt", sint(9), true, "9"},
		}},
		{"combined", []step{
			{"set", "res.c", "", sint(5), true, "5"},
			{"set", "res.c", "ifset,iflt", sint(55), true, "55"},
			{"set", "txn.c", "ifnotset,ifnotempty", str("toto"), true, "toto"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := &Vars{Proc: &ProcVars{}}
			for i, st := range c.steps {
				n, err := ParseVarName(st.name)
				if err != nil {
					t.Fatal(err)
				}
				switch st.op {
				case "declare":
					vs.Proc.Declare(n.Name)
				case "unset":
					vs.Unset(n)
				default:
					if got := vs.SetCond(n, st.s, conds(st.conds)); got != st.stored {
						t.Errorf("step %d: stored %v, want %v", i, got, st.stored)
					}
				}
				got := "-"
				var s Sample
				if vs.Get(n, &s) {
					got = string(AppendText(nil, &Request{}, &s))
				}
				if got != st.want {
					t.Errorf("step %d: %s is %q, want %q", i, st.name, got, st.want)
				}
			}
		})
	}
}

// TestVarsClearForgetsExistence: a scope that ends takes its variables
// with it, so that ifnotexists holds again in the next transaction.
func TestVarsClearForgetsExistence(t *testing.T) {
	vs := &Vars{}
	n := VarName{ScopeTxn, "x"}
	vs.SetCond(n, &Sample{T: TStr, B: []byte("a")}, CondIfSet) // creates it, unset
	if vs.SetCond(n, &Sample{T: TSint, I: 1}, CondIfNotExists) {
		t.Fatal("ifnotexists stored over an existing variable")
	}
	vs.Clear(ScopeTxn)
	if !vs.SetCond(n, &Sample{T: TSint, I: 1}, CondIfNotExists) {
		t.Fatal("ifnotexists did not store after the scope ended")
	}
}

// TestVarSetNoAlloc: a warm stream stores a string without allocating.
func TestVarSetNoAlloc(t *testing.T) {
	vs := &Vars{}
	n := VarName{ScopeTxn, "x"}
	s := &Sample{T: TStr, B: []byte("hello")}
	vs.Set(n, s)
	if a := testing.AllocsPerRun(100, func() {
		vs.Clear(ScopeTxn)
		vs.SetCond(n, s, CondIfNotExists)
	}); a != 0 {
		t.Fatalf("%v allocations", a)
	}
}

// TestVarNameDeclares: naming a process variable in an expression makes
// it exist, as HAProxy's vars_check_arg does.
func TestVarNameDeclares(t *testing.T) {
	pv := &ProcVars{}
	env := &Env{Proc: pv}
	for _, e := range []string{"var(proc.a)", "str(x),set-var(proc.b)", "int(1),add(proc.c)", "str(x),concat(,proc.d,)"} {
		if _, err := CompileExpr(env, e); err != nil {
			t.Fatal(e, err)
		}
	}
	vs := &Vars{Proc: pv}
	for _, name := range []string{"a", "b", "c", "d"} {
		if !vs.SetCond(VarName{ScopeProc, name}, &Sample{T: TSint, I: 1}, CondIfExists) {
			t.Errorf("proc.%s was not declared", name)
		}
	}
	if vs.SetCond(VarName{ScopeProc, "e"}, &Sample{T: TSint, I: 1}, CondIfExists) {
		t.Error("proc.e exists without being named")
	}
}

func TestCheckVarName(t *testing.T) {
	for _, c := range []struct{ in, rest, err string }{
		{"proc.x", ")", ""},
		{"txn.a.b_c9", ")", ""},
		{"proc.x-y", ",ifexists)", "invalid syntax at char '-y,ifexists)'"},
		{"x", ")", "invalid variable name 'x'. A variable name must be start by its scope. The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'"},
		{"proc.", ")", "invalid variable name 'proc.'. A variable name must be start by its scope. The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'"},
		{"", ")", "Empty variable name cannot be accepted"},
	} {
		_, err := CheckVarName(c.in, c.rest)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("%q: %q, want %q", c.in, got, c.err)
		}
	}
}
