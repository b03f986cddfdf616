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

// Vars holds a stream's variables. Proc points to the process's, shared
// by every stream (its owner guards it; see ProcVars).
type Vars struct {
	scopes [numScopes]map[string]varValue
	Proc   *ProcVars
}

// varValue owns its bytes. An entry outlives the variable (set false
// once it is unset or its scope ends), so that the next value reuses its
// bytes: a warm stream sets variables without allocating.
type varValue struct {
	t   Type
	i   int64
	b   []byte
	ip  netip.Addr
	set bool
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
	v, ok := vs.scopes[store(n.Scope)][n.Name]
	if !ok || !v.set {
		return false
	}
	*s = Sample{T: v.t, I: v.i, B: v.b, IP: v.ip}
	return true
}

// Set stores s, copying its bytes.
func (vs *Vars) Set(n VarName, s *Sample) {
	if vs == nil {
		return
	}
	if n.Scope == ScopeProc {
		vs.Proc.set(n.Name, s)
		return
	}
	m := vs.scopes[store(n.Scope)]
	if m == nil {
		m = map[string]varValue{}
		vs.scopes[store(n.Scope)] = m
	}
	old := m[n.Name]
	m[n.Name] = varValue{t: s.T, i: s.I, ip: s.IP, b: append(old.b[:0], s.B...), set: true}
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
	m := vs.scopes[store(n.Scope)]
	if v, ok := m[n.Name]; ok {
		v.set = false
		m[n.Name] = v
	}
}

// Clear forgets the variables of the scopes given (txn, req and res at the
// end of a transaction; all of them at the end of a session).
func (vs *Vars) Clear(scopes ...Scope) {
	for _, sc := range scopes {
		m := vs.scopes[store(sc)]
		for k, v := range m {
			if v.set {
				v.set = false
				m[k] = v
			}
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
	n, err := ParseVarName(a[0].S)
	if err != nil {
		return err
	}
	a[0].V = n
	return nil
}
