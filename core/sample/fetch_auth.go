package sample

import (
	"errors"
	"fmt"
)

// Authentication against userlists: http_auth(<userlist>) says whether
// the request's Basic credentials are a user's of the list;
// http_auth_group(<userlist>) gives the user's name when they are, and as
// an ACL matches when the user belongs to one of the groups written as
// patterns (HAProxy's pat_match_auth).

// Userlist is a userlist section as these fetches read it; the process
// hands them its sections through Env.Userlists.
type Userlist interface {
	// Check says whether pass is user's password.
	Check(user, pass []byte) bool
	// HasGroup says whether the list declares group.
	HasGroup(group string) bool
	// InGroup says whether user belongs to group.
	InGroup(user []byte, group string) bool
}

// RefError is an argument that names something the configuration does
// not have. HAProxy resolves such arguments once every section is read
// and words the error after where the fetch is used, which only the
// caller knows: "<What> in arg <Arg> of ACL keyword '<Kw>' in proxy ...".
type RefError struct {
	What string // "unable to find userlist 'x' referenced", "missing userlist name"
	Arg  int    // from 1
	Kw   string // the fetch
	ACL  bool   // in an ACL (or an anonymous one in a condition) rather than an expression
}

func (e *RefError) Error() string {
	return fmt.Sprintf("%s in arg %d of sample fetch keyword '%s'", e.What, e.Arg, e.Kw)
}

// GroupError is an http_auth_group ACL whose patterns are not groups of
// its userlist; HAProxy words each as "proxy <p>: acl <name> <Kw>(): <msg>".
type GroupError struct {
	Kw   string
	Msgs []string
}

func (e *GroupError) Error() string { return e.Kw + "(): " + e.Msgs[0] }

// asRef returns err itself when it is a RefError, so that wrapping
// messages do not hide it from the caller.
func asRef(err error) (*RefError, bool) {
	var re *RefError
	ok := errors.As(err, &re)
	return re, ok
}

func init() {
	RegisterFetches(
		Fetch{Name: "http_auth", Max: 1, Out: TBool, Need: NeedReqHdr, Check: userlistArg("http_auth"), Fn: fetchHTTPAuth},
		Fetch{Name: "http_auth_group", Max: 1, Out: TStr, Need: NeedReqHdr, Check: userlistArg("http_auth_group"), Fn: fetchHTTPAuthGroup},
	)
}

// userlistArg resolves the userlist name. Without the process's lists
// (a configuration read before its userlist sections, a test) the name is
// left for the process to resolve.
func userlistArg(kw string) func(env *Env, a []Arg) error {
	return func(env *Env, a []Arg) error {
		if env == nil || env.Userlists == nil {
			return nil
		}
		if len(a) == 0 || a[0].S == "" {
			return &RefError{What: "missing userlist name", Arg: 1, Kw: kw}
		}
		ul, ok := env.Userlists[a[0].S]
		if !ok {
			return &RefError{What: fmt.Sprintf("unable to find userlist '%s' referenced", a[0].S), Arg: 1, Kw: kw}
		}
		a[0].V = ul
		return nil
	}
}

// authUser returns the request's Basic credentials when they are a user's
// of the argument's list.
func authUser(r *Request, a []Arg) (ul Userlist, user []byte, ok bool) {
	if len(a) == 0 {
		return nil, nil, false
	}
	ul, _ = a[0].V.(Userlist)
	if ul == nil {
		return nil, nil, false
	}
	kind, user, pass, _ := httpAuth(r)
	if kind != authBasic {
		return nil, nil, false
	}
	return ul, user, ul.Check(user, pass)
}

func fetchHTTPAuth(r *Request, a []Arg, s *Sample) bool {
	ul, _, ok := authUser(r, a)
	if ul == nil {
		return false
	}
	s.setBool(ok)
	return true
}

func fetchHTTPAuthGroup(r *Request, a []Arg, s *Sample) bool {
	_, user, ok := authUser(r, a)
	if !ok {
		return false
	}
	s.setStr(user)
	return true
}

// authTerm prepares an http_auth_group criterion: it matches by group,
// and its patterns must be groups of its list. With an explicit -m the
// method matches the user's name instead, and HAProxy still checks the
// patterns as groups: those it indexes in a tree (str, beg) it does not
// see, and reports none.
func (t *Term) authTerm(explicit bool, patterns []string) error {
	if t.expr.fetch.Name != "http_auth_group" || len(t.expr.args) == 0 {
		return nil
	}
	ul, _ := t.expr.args[0].V.(Userlist)
	if ul == nil {
		return nil
	}
	if !explicit {
		t.auth = ul
	}
	ge := &GroupError{Kw: "http_auth_group"}
	if len(patterns) == 0 || explicit && (t.match == matchStr || t.match == matchBeg) {
		return &GroupError{Kw: "http_auth_group", Msgs: []string{"no groups specified."}}
	}
	for _, g := range patterns {
		if !ul.HasGroup(g) {
			ge.Msgs = append(ge.Msgs, fmt.Sprintf("invalid group '%s'.", g))
		}
	}
	if len(ge.Msgs) > 0 {
		return ge
	}
	return nil
}

// matchGroups says whether the user in s belongs to one of the term's
// patterns.
func (t *Term) matchGroups(s *Sample) bool {
	for _, x := range t.refs {
		x.m.mu.RLock()
		for g, l := range x.keys {
			if x.current(l) != nil && t.auth.InGroup(s.B, g) {
				x.m.mu.RUnlock()
				return true
			}
		}
		x.m.mu.RUnlock()
	}
	return false
}
