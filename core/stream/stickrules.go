package stream

import (
	"strconv"

	"goha/core"
	"goha/core/diag"
	"goha/core/sample"
	"goha/core/stick"
)

// Persistence by stick table: stick on, stick match, stick store-request
// and stick store-response. Match rules pick the server an entry names
// (its server_key, by name or address as the table's srvkey says, else its
// server_id) before load balancing; store rules record the server that
// served the stream, once it has answered, as HAProxy does.

// stickRule is a compiled stick line.
type stickRule struct {
	match, store, resp bool // what the line does: on is match and store
	expr               *sample.SampleExpr
	table              *stick.Table
	cond               *sample.Cond
}

// pendingStore is a key a store rule took, kept until the server answers.
type pendingStore struct {
	t   *stick.Table
	key []byte
}

// maxStores is how many store rules a stream applies (HAProxy's
// MAX_SESS_STKCTR... its store array holds eight).
const maxStores = 8

func (proc *Process) compileStickRules(p *proxy, named map[string][]*sample.Term, d *diag.Collector) {
	for _, r := range p.StickRules {
		name := r.Table
		if name == "" {
			name = p.Name
		}
		t := proc.tables[name]
		if t == nil {
			d.Add(diag.Diag{Sev: diag.Alert, Msg: "Proxy '" + p.Name + "': unable to find stick-table '" + name + "'."})
			continue
		}
		env := proc.envAt(r.Pos)
		expr, err := sample.CompileExpr(env, r.Expr)
		if err != nil {
			d.Alertf(r.Pos, "'stick': %v.", err)
			continue
		}
		cond, err := sample.CompileCond(env, r.Cond, named)
		if err != nil {
			d.Alertf(r.Pos, "'stick': error detected while parsing sticking condition : %v.", err)
			continue
		}
		sr := &stickRule{expr: expr, table: t, cond: cond}
		switch r.Kind {
		case "on":
			sr.match, sr.store = true, true
		case "match":
			sr.match = true
		case "store-request":
			sr.store = true
		default:
			sr.store, sr.resp = true, true
		}
		p.stickRules = append(p.stickRules, sr)
	}
}

// stickServer finds the server an entry of t names in be.
func stickServer(be *proxy, t *stick.Table, e *stick.Entry) *server {
	id, key, ok := t.Server(e)
	servers := *be.rt.byIdx.Load()
	if key != "" {
		for _, s := range servers {
			if s != nil && key == srvKey(t, s) {
				return s
			}
		}
	}
	if !ok || id <= 0 {
		return nil
	}
	for _, s := range servers {
		if s != nil && s.ID == id {
			return s
		}
	}
	return nil
}

// srvKey is a server's key in t: its name, or with srvkey addr its
// address as HAProxy writes it (ip:port).
func srvKey(t *stick.Table, s *server) string {
	if t.SrvKey != "addr" {
		return s.Name
	}
	a := s.Addr()
	if a == nil || !a.IP.IsValid() {
		return ""
	}
	return a.IP.String() + ":" + strconv.Itoa(a.Port)
}

// stickRequest runs a backend's match and store-request rules for the
// request view describes: it returns the server a match rule found
// (unless want is already set by a cookie or use-server), and keeps the
// keys to store in pend.
func stickRequest(be *proxy, v *sample.Request, smp *sample.Sample, want *server, pend []pendingStore) (*server, []pendingStore) {
	now := stick.Now()
	for _, r := range be.stickRules {
		if r.resp || !r.cond.Eval(v) {
			continue
		}
		if !r.expr.Eval(v, smp) {
			continue
		}
		key, ok := sample.TableKey(v, r.table, smp)
		if !ok {
			continue
		}
		if r.match && want == nil {
			if e := r.table.Lookup(key, now); e != nil {
				s := stickServer(be, r.table, e)
				r.table.Release(e, now, false)
				if s != nil && (s.OpState() != core.OpStopped || be.Persist) {
					want = s
				}
			}
		}
		if r.store {
			pend = addStore(pend, r.table, key)
		}
	}
	return want, pend
}

// stickResponse keeps the keys of a backend's store-response rules.
func stickResponse(be *proxy, v *sample.Request, smp *sample.Sample, pend []pendingStore) []pendingStore {
	for _, r := range be.stickRules {
		if !r.resp || !r.cond.Eval(v) || !r.expr.Eval(v, smp) {
			continue
		}
		if key, ok := sample.TableKey(v, r.table, smp); ok {
			pend = addStore(pend, r.table, key)
		}
	}
	return pend
}

// addStore keeps the first key of each table, up to maxStores, as
// HAProxy applies only a table's first store rule.
func addStore(pend []pendingStore, t *stick.Table, key []byte) []pendingStore {
	if len(pend) >= maxStores {
		return pend
	}
	for _, p := range pend {
		if p.t == t {
			return pend
		}
	}
	i := len(pend)
	if i < cap(pend) {
		pend = pend[:i+1]
		pend[i].t, pend[i].key = t, append(pend[i].key[:0], key...)
		return pend
	}
	return append(pend, pendingStore{t: t, key: append([]byte(nil), key...)})
}

// commitStores records srv in the entries of the keys kept, and empties
// pend.
func commitStores(pend []pendingStore, srv *server) []pendingStore {
	if srv == nil {
		return pend[:0]
	}
	now := stick.Now()
	for _, p := range pend {
		e := p.t.Get(p.key, now)
		if e == nil {
			continue
		}
		p.t.SetServer(e, srv.ID, srvKey(p.t, srv))
		p.t.Release(e, now, true)
	}
	return pend[:0]
}
