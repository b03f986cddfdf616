package sample

import "fmt"

// set-var and unset-var as converters: they store (or forget) the sample
// on its way and pass it on. set-var's conditions are HAProxy's; when they
// stop the store, the converter gives no sample, as HAProxy's does.

type varCond uint16

const (
	condIfExists varCond = 1 << iota
	condIfNotExists
	condIfEmpty
	condIfNotEmpty
	condIfSet
	condIfNotSet
	condIfGt
	condIfLt
)

var varCondNames = []struct {
	name string
	c    varCond
}{
	{"ifexists", condIfExists}, {"ifnotexists", condIfNotExists}, {"ifempty", condIfEmpty},
	{"ifnotempty", condIfNotEmpty}, {"ifset", condIfSet}, {"ifnotset", condIfNotSet},
	{"ifgt", condIfGt}, {"iflt", condIfLt},
}

// varConvArgs compiles <name>[,<cond>...]: the name in a[0].V, the
// conditions in a[0].I.
func varConvArgs(env *Env, a []Arg) error {
	n, err := checkVarName(arg(a, 0).S)
	if err != nil {
		return err
	}
	var conds varCond
	for _, x := range a[1:] {
		found := false
		for _, c := range varCondNames {
			if c.name == x.S {
				conds |= c.c
				found = true
			}
		}
		if !found {
			return fmt.Errorf("unknown condition \"%s\"", x.S)
		}
	}
	a[0].V, a[0].I = n, int64(conds)
	return nil
}

func init() {
	RegisterConvs(
		Conv{Name: "set-var", Max: 5, In: TAny, Out: TAny, Check: varConvArgs, Fn: func(r *Request, a []Arg, s *Sample) bool {
			n := a[0].V.(VarName)
			if r.Vars == nil || !varCondsHold(r, n, varCond(a[0].I), s) {
				return false
			}
			r.Vars.Set(n, s)
			return true
		}},
		Conv{Name: "unset-var", Max: 1, In: TAny, Out: TAny, Check: varConvArgs, Fn: func(r *Request, a []Arg, s *Sample) bool {
			if r.Vars == nil {
				return false
			}
			r.Vars.Unset(a[0].V.(VarName))
			return true
		}},
	)
}

// varCondsHold says whether set-var's conditions let s be stored in n.
func varCondsHold(r *Request, n VarName, c varCond, s *Sample) bool {
	if c == 0 {
		return true
	}
	var old Sample
	exists := r.Vars.Get(n, &old)
	switch {
	case c&condIfExists != 0 && !exists,
		c&condIfNotExists != 0 && exists,
		c&condIfSet != 0 && !exists,
		c&condIfNotSet != 0 && exists:
		return false
	}
	isBytes := s.T == TStr || s.T == TBin
	if c&condIfEmpty != 0 && (!isBytes || len(s.B) != 0) {
		return false
	}
	if c&condIfNotEmpty != 0 && isBytes && len(s.B) == 0 {
		return false
	}
	if s.T == TSint && exists && old.T == TSint {
		if c&condIfGt != 0 && !(old.I > s.I) || c&condIfLt != 0 && !(old.I < s.I) {
			return false
		}
	}
	return true
}
