package sample

// set-var and unset-var as converters: they store (or forget) the sample
// on its way and pass it on. set-var's conditions are HAProxy's; when they
// stop the store, the converter gives no sample, as HAProxy's does.

// varConvArgs compiles <name>[,<cond>...]: the name in a[0].V, the
// conditions in a[0].I.
func varConvArgs(env *Env, a []Arg) error {
	n, err := checkVarName(env, arg(a, 0).S)
	if err != nil {
		return err
	}
	var conds VarCond
	for _, x := range a[1:] {
		c, err := ParseVarCond(x.S)
		if err != nil {
			return err
		}
		conds |= c
	}
	a[0].V, a[0].I = n, int64(conds)
	return nil
}

func init() {
	RegisterConvs(
		Conv{Name: "set-var", Max: 5, In: TAny, Out: TAny, Check: varConvArgs, Fn: func(r *Request, a []Arg, s *Sample) bool {
			return r.Vars.SetCond(a[0].V.(VarName), s, VarCond(a[0].I))
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
