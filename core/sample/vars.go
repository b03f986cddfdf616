package sample

import (
	"fmt"
	"net/netip"
	"strings"
)

// Variables: var(<scope>.<name>) reads what set-var wrote. The scopes are
// HAProxy's: proc (the process), sess (the client connection), txn (the
// transaction: request and response), req and res (one direction), check.

// Scope is a variable's scope.
type Scope uint8

const (
	ScopeProc Scope = iota
	ScopeSess
	ScopeTxn
	ScopeReq
	ScopeRes
	ScopeCheck
	numScopes
)

var scopeNames = [numScopes]string{"proc", "sess", "txn", "req", "res", "check"}

// VarName is a parsed variable name.
type VarName struct {
	Scope Scope
	Name  string
}

// ParseVarName reads "<scope>.<name>".
func ParseVarName(s string) (VarName, error) {
	scope, name, ok := strings.Cut(s, ".")
	if ok {
		for i, n := range scopeNames {
			if n == scope && name != "" {
				return VarName{Scope(i), name}, nil
			}
		}
	}
	return VarName{}, fmt.Errorf("invalid variable name '%s'. A variable name must be start by its scope. The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'", s)
}

func (v VarName) String() string { return scopeNames[v.Scope] + "." + v.Name }

// VarCond is a set of set-var conditions (ifexists, ifgt, ...).
type VarCond uint16

const (
	CondIfExists VarCond = 1 << iota
	CondIfNotExists
	CondIfEmpty
	CondIfNotEmpty
	CondIfSet
	CondIfNotSet
	CondIfGt
	CondIfLt
)

var varCondNames = []struct {
	name string
	c    VarCond
}{
	{"ifexists", CondIfExists}, {"ifnotexists", CondIfNotExists}, {"ifempty", CondIfEmpty},
	{"ifnotempty", CondIfNotEmpty}, {"ifset", CondIfSet}, {"ifnotset", CondIfNotSet},
	{"ifgt", CondIfGt}, {"iflt", CondIfLt},
}

// ParseVarCond reads one condition's name, as HAProxy's error words it
// when it is unknown.
func ParseVarCond(s string) (VarCond, error) {
	for _, c := range varCondNames {
		if c.name == s {
			return c.c, nil
		}
	}
	return 0, fmt.Errorf("unknown condition \"%s\"", s)
}

// Vars holds a stream's variables. Proc points to the process's, shared
// by every stream (its owner guards it; see ProcVars).
type Vars struct {
	scopes [numScopes]varScope
	Proc   *ProcVars
}

// varScope is a scope's variables in the order they were first set. A
// stream sets a handful: comparing names (most of them the very strings
// the configuration holds) beats hashing them, and a slice is cleared
// without a map's walk.
type varScope []varEntry

type varEntry struct {
	name string
	varValue
}

// find returns name's entry, or nil; the pointer is valid until the
// scope grows.
func (sc varScope) find(name string) *varValue {
	for i := range sc {
		if sc[i].name == name {
			return &sc[i].varValue
		}
	}
	return nil
}

// entry returns name's entry, adding one that does not exist.
func (sc *varScope) entry(name string) *varValue {
	if v := sc.find(name); v != nil {
		return v
	}
	*sc = append(*sc, varEntry{name: name})
	return &(*sc)[len(*sc)-1].varValue
}

// varValue owns its bytes. An entry outlives the variable (exists false
// once it is unset or its scope ends), so that the next value reuses its
// bytes: a warm stream sets variables without allocating. A variable may
// exist without a value (set false), HAProxy's variable of type "any": a
// declared process variable, or one a failed conditional set created.
type varValue struct {
	t      Type
	i      int64
	b      []byte
	ip     netip.Addr
	set    bool
	exists bool
}

func (v *varValue) sample(s *Sample) { *s = Sample{T: v.t, I: v.i, B: v.b, IP: v.ip} }

// condSet is HAProxy 2.6's var_set on one entry: it creates the variable
// when it does not exist (unless ifexists), then checks the conditions
// and stores s. It reports whether s was stored; the entry may have been
// created even when it was not. fresh gives the bytes of a stored value
// their own slice (readers of process variables may hold the old one).
func (v *varValue) condSet(s *Sample, c VarCond, fresh bool) bool {
	if v.exists && c&CondIfNotExists != 0 || !v.exists && c&CondIfExists != 0 {
		return false
	}
	if !v.exists {
		v.exists, v.set = true, false
	}
	if c&CondIfSet != 0 && !v.set || c&CondIfNotSet != 0 && v.set {
		return false
	}
	bytesType := s.T == TStr || s.T == TBin || s.T == TAny
	if c&CondIfEmpty != 0 && !bytesType {
		return false
	}
	// ifgt and iflt only compare two integers; otherwise they let it be.
	if s.T == TSint && v.set && v.t == TSint &&
		(c&CondIfGt != 0 && !(v.i > s.I) || c&CondIfLt != 0 && !(v.i < s.I)) {
		return false
	}
	if (s.T == TStr || s.T == TBin) &&
		(c&CondIfNotEmpty != 0 && len(s.B) == 0 || c&CondIfEmpty != 0 && len(s.B) != 0) {
		return false
	}
	b := v.b[:0]
	if fresh {
		b = nil
	}
	*v = varValue{t: s.T, i: s.I, ip: s.IP, b: append(b, s.B...), set: s.T != TAny, exists: true}
	return true
}

// store is where a scope's variables live: req and res share one, as in
// HAProxy, where res.x and req.x are the same variable.
func store(sc Scope) Scope {
	if sc == ScopeRes {
		return ScopeReq
	}
	return sc
}

// Get reads a variable into s.
func (vs *Vars) Get(n VarName, s *Sample) bool {
	if vs == nil {
		return false
	}
	if n.Scope == ScopeProc {
		return vs.Proc.get(n.Name, s)
	}
	v := vs.scopes[store(n.Scope)].find(n.Name)
	if v == nil || !v.set {
		return false
	}
	v.sample(s)
	return true
}

// Set stores s, copying its bytes.
func (vs *Vars) Set(n VarName, s *Sample) { vs.SetCond(n, s, 0) }

// SetCond stores s if the conditions c let it, as set-var(<name>,<cond>...)
// does, and reports whether it did.
func (vs *Vars) SetCond(n VarName, s *Sample, c VarCond) bool {
	if vs == nil {
		return false
	}
	if n.Scope == ScopeProc {
		return vs.Proc.setCond(n.Name, s, c)
	}
	return vs.scopes[store(n.Scope)].entry(n.Name).condSet(s, c, false)
}

// Has says whether the variable is set.
func (vs *Vars) Has(n VarName) bool {
	var s Sample
	return vs.Get(n, &s)
}

// Unset removes a variable.
func (vs *Vars) Unset(n VarName) {
	if vs == nil {
		return
	}
	if n.Scope == ScopeProc {
		vs.Proc.unset(n.Name)
		return
	}
	if v := vs.scopes[store(n.Scope)].find(n.Name); v != nil {
		v.set, v.exists = false, false
	}
}

// Clear forgets the variables of the scopes given (txn, req and res at the
// end of a transaction; all of them at the end of a session).
func (vs *Vars) Clear(scopes ...Scope) {
	for _, sc := range scopes {
		vars := vs.scopes[store(sc)]
		for i := range vars {
			vars[i].set, vars[i].exists = false, false
		}
	}
}

func init() {
	RegisterFetches(Fetch{Name: "var", Min: 1, Max: 2, Out: TAny, Check: varArgs, Fn: func(r *Request, a []Arg, s *Sample) bool {
		if r.Vars.Get(a[0].V.(VarName), s) {
			return true
		}
		if len(a) > 1 {
			// The default, a string.
			s.setStr([]byte(a[1].S))
			return true
		}
		return false
	}})
}

func varArgs(env *Env, a []Arg) error {
	n, err := checkVarName(env, a[0].S)
	if err != nil {
		return err
	}
	a[0].V = n
	return nil
}
