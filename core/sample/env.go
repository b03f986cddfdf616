package sample

import "goha/core/diag"

// Env is what compiling an expression may need beyond its words: the
// process's map files, which map converters and ACL -M files share with the
// runtime commands that change them. A nil Env compiles with a private
// set (configuration checks, tests).
type Env struct {
	Maps *MapSet
	// Userlists are the configuration's userlist sections, by name, for
	// http_auth and http_auth_group. Nil leaves the names unresolved
	// (a configuration still being read); the process always sets it.
	Userlists map[string]Userlist
	// Proc are the process's variables: naming one (var(proc.x),
	// set-var(proc.x)) makes it exist, as in HAProxy, which set-var's
	// ifexists sees.
	Proc *ProcVars
	// Tables are the configuration's stick tables; nil leaves table
	// arguments unresolved (a configuration still being read). Proxy is
	// the proxy whose expressions are compiled: its table is the one a
	// fetch uses when it names none.
	Tables TableSet
	Proxy  string
	// JWTKeys are the public keys jwt_verify reads at start-up, shared by
	// the process's expressions (a key path in a variable is looked up
	// there). Nil: each expression has its own.
	JWTKeys *JWTKeys
	// Servers is told of the servers expressions name (srv_conn(be/s),
	// srv_sess_rate(s)...), which HAProxy then refuses to delete at run
	// time; nil tells no one (a configuration still being read).
	Servers ServerReferrer
	// Pos is where the expression being compiled is written: HAProxy
	// names the map and pattern references it creates after it.
	Pos diag.Pos
}

// ServerReferrer marks a server as referenced by the configuration.
// backend is the expression's own proxy when it names none.
type ServerReferrer interface {
	ReferenceServer(backend, server string)
}

// where is the position references made now are named after.
func (e *Env) where() diag.Pos {
	if e == nil {
		return diag.Pos{}
	}
	return e.Pos
}

// maps returns the Env's map set, or a new private one.
func (e *Env) maps() *MapSet {
	if e == nil || e.Maps == nil {
		return &MapSet{}
	}
	return e.Maps
}
