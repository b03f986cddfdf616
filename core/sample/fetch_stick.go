package sample

import (
	"fmt"
	"strings"

	"goha/core/stick"
)

// The stick-table fetches and converters (HAProxy's sections 7.3.2 and
// 7.3.1): sc_*, sc0_* to sc2_* read what the stream tracks, src_* the
// entry of the client's address, table_* the entry of the input sample;
// table_avl and table_cnt a table's room and use.

// StickCounters is implemented by a Stream that tracks entries
// (track-sc0 to track-sc2).
type StickCounters interface {
	// Tracked returns what track-sc<n> tracks: the stream's entry, else
	// its session's; nil when none.
	Tracked(n int) (*stick.Table, *stick.Entry)
}

// TableSet finds the configuration's stick tables by name.
type TableSet interface {
	StickTable(name string) *stick.Table
}

// MaxTracked is the number of track-sc counters (HAProxy's
// MAX_SESS_STKCTR).
const MaxTracked = 3

// resolveTable compiles a table argument: the table named, or the
// proxy's own when the name is empty. Without tables in env (a
// configuration being read) it leaves it for the process to resolve.
func resolveTable(env *Env, a *Arg, pos int, kind, kw string) error {
	if env == nil || env.Tables == nil {
		return nil
	}
	name := a.S
	if name == "" {
		name = env.Proxy
	}
	t := env.Tables.StickTable(name)
	if t == nil {
		return fmt.Errorf("unable to find table '%s' referenced in arg %d of %s keyword '%s'", name, pos, kind, kw)
	}
	a.V = t
	return nil
}

func tableOf(a []Arg, i int) *stick.Table {
	if i < len(a) {
		t, _ := a[i].V.(*stick.Table)
		return t
	}
	return nil
}

// counterOp is what a fetch or converter does with an entry's data.
type counterOp struct {
	name string
	kind opKind
	dt   stick.DataType
	// alt is the array a gpc0/gpc1/gpt0 operation falls back on, at
	// index altIdx, when the table stores the array and not the value,
	// as HAProxy 2.6 does.
	alt    stick.DataType
	altIdx int
	// rate is the rate an inc also counts in (and altRate its array).
	rate, altRate stick.DataType
	indexed       bool // takes an array index as first argument
}

type opKind uint8

const (
	opRead opKind = iota
	opKbytes
	opInc
	opClr
	opTrackers
	opTracked
)

const none = stick.NumTypes

var counterOps = []counterOp{
	{name: "bytes_in_rate", dt: stick.BytesInRate, alt: none},
	{name: "bytes_out_rate", dt: stick.BytesOutRate, alt: none},
	{name: "conn_cnt", dt: stick.ConnCnt, alt: none},
	{name: "conn_cur", dt: stick.ConnCur, alt: none},
	{name: "conn_rate", dt: stick.ConnRate, alt: none},
	{name: "sess_cnt", dt: stick.SessCnt, alt: none},
	{name: "sess_rate", dt: stick.SessRate, alt: none},
	{name: "http_req_cnt", dt: stick.HTTPReqCnt, alt: none},
	{name: "http_req_rate", dt: stick.HTTPReqRate, alt: none},
	{name: "http_err_cnt", dt: stick.HTTPErrCnt, alt: none},
	{name: "http_err_rate", dt: stick.HTTPErrRate, alt: none},
	{name: "http_fail_cnt", dt: stick.HTTPFailCnt, alt: none},
	{name: "http_fail_rate", dt: stick.HTTPFailRate, alt: none},
	{name: "kbytes_in", kind: opKbytes, dt: stick.BytesInCnt, alt: none},
	{name: "kbytes_out", kind: opKbytes, dt: stick.BytesOutCnt, alt: none},
	{name: "get_gpt0", dt: stick.GPT0, alt: stick.GPT},
	{name: "get_gpc0", dt: stick.GPC0, alt: stick.GPC},
	{name: "get_gpc1", dt: stick.GPC1, alt: stick.GPC, altIdx: 1},
	{name: "gpc0_rate", dt: stick.GPC0Rate, alt: stick.GPCRate},
	{name: "gpc1_rate", dt: stick.GPC1Rate, alt: stick.GPCRate, altIdx: 1},
	{name: "inc_gpc0", kind: opInc, dt: stick.GPC0, alt: stick.GPC, rate: stick.GPC0Rate, altRate: stick.GPCRate},
	{name: "inc_gpc1", kind: opInc, dt: stick.GPC1, alt: stick.GPC, altIdx: 1, rate: stick.GPC1Rate, altRate: stick.GPCRate},
	{name: "clr_gpc0", kind: opClr, dt: stick.GPC0, alt: stick.GPC},
	{name: "clr_gpc1", kind: opClr, dt: stick.GPC1, alt: stick.GPC, altIdx: 1},
	{name: "get_gpt", dt: stick.GPT, alt: none, indexed: true},
	{name: "get_gpc", dt: stick.GPC, alt: none, indexed: true},
	{name: "gpc_rate", dt: stick.GPCRate, alt: none, indexed: true},
	{name: "inc_gpc", kind: opInc, dt: stick.GPC, alt: none, rate: stick.GPCRate, altRate: none, indexed: true},
	{name: "clr_gpc", kind: opClr, dt: stick.GPC, alt: none, indexed: true},
	{name: "trackers", kind: opTrackers, alt: none},
	{name: "tracked", kind: opTracked, alt: none},
	{name: "updt_conn_cnt", kind: opInc, dt: stick.ConnCnt, alt: none, rate: stick.ConnRate, altRate: none},
}

// slot finds where op's value is in t: the type itself, or the array
// that stands for it, and the index.
func (op *counterOp) slot(t *stick.Table, idx int) (stick.DataType, int, bool) {
	if op.indexed {
		return op.dt, idx, t.ArraySize(op.dt) > idx
	}
	if t.Stores(op.dt) {
		return op.dt, 0, true
	}
	if op.alt != none && t.ArraySize(op.alt) > op.altIdx {
		return op.alt, op.altIdx, true
	}
	return 0, 0, false
}

func (op *counterOp) rateSlot(t *stick.Table, idx int) (stick.DataType, int, bool) {
	if op.rate == 0 && op.kind != opInc {
		return 0, 0, false
	}
	if op.indexed {
		return op.rate, idx, t.ArraySize(op.rate) > idx
	}
	if t.Stores(op.rate) {
		return op.rate, 0, true
	}
	if op.altRate != none && t.ArraySize(op.altRate) > op.altIdx {
		return op.altRate, op.altIdx, true
	}
	return 0, 0, false
}

// apply runs op on e of t (nil e: the key is not in the table) and says
// whether there is a sample. temp says the caller holds e only for this
// (src_*, table_*): it does not count among the trackers then.
func (op *counterOp) apply(t *stick.Table, e *stick.Entry, idx int, temp bool, s *Sample) bool {
	now := stick.Now()
	switch op.kind {
	case opTracked:
		s.setBool(e != nil)
		return true
	case opTrackers:
		n := int64(0)
		if e != nil {
			n = int64(t.Refs(e))
			if temp {
				n--
			}
		}
		s.setInt(n)
		return true
	}
	s.setInt(0)
	if e == nil {
		return true
	}
	dt, i, ok := op.slot(t, idx)
	switch op.kind {
	case opInc:
		rdt, ri, rok := op.rateSlot(t, idx)
		if !ok && !rok {
			return true
		}
		if rok {
			t.Add(e, rdt, ri, 1, now)
			s.I = t.Current(e, rdt, ri)
		}
		if ok {
			s.I, _ = t.Add(e, dt, i, 1, now)
		}
		t.Touch(e, now)
		return true
	case opClr:
		if !ok {
			return false
		}
		s.I, _ = t.Value(e, dt, i, now)
		t.Set(e, dt, i, 0, now)
		t.Touch(e, now)
		return true
	}
	if !ok {
		return false
	}
	s.I, _ = t.Value(e, dt, i, now)
	if op.kind == opKbytes {
		s.I >>= 10
	}
	return true
}

// creates says whether a src_* form of op makes the entry when missing.
func (op *counterOp) creates() bool { return op.kind == opInc || op.kind == opClr }

// TableKey is the key of t for sample s: s cast to the table's key type,
// built in r's scratch space; ok is false when s does not cast.
func TableKey(r *Request, t *stick.Table, s *Sample) ([]byte, bool) { return tableKey(r, t, s) }

func tableKey(r *Request, t *stick.Table, s *Sample) ([]byte, bool) {
	dst := r.alloc(max(t.KeyLen, 16))
	switch t.Key {
	case stick.KeyIP:
		if !cast(r, s, TIPv4) {
			return nil, false
		}
		return stick.KeyFromAddr(dst, t.Key, s.IP)
	case stick.KeyIPv6:
		if !cast(r, s, TIPv6) {
			return nil, false
		}
		return stick.KeyFromAddr(dst, t.Key, s.IP)
	case stick.KeyInteger:
		if !cast(r, s, TSint) {
			return nil, false
		}
		return stick.KeyFromInt(dst, s.I), true
	case stick.KeyString:
		if !cast(r, s, TStr) {
			return nil, false
		}
	default:
		if !cast(r, s, TBin) {
			return nil, false
		}
	}
	return stick.KeyFromBytes(dst, t.Key, t.KeyLen, s.B), true
}

// scFetch is sc_<op>(ctr[,table]), scN_<op>([table]), their indexed
// forms sc_<op>(idx,ctr[,table]), scN_<op>(idx[,table]), and
// src_<op>([table]) / src_<op>(idx[,table]).
func scFetch(name string, op *counterOp, form int) Fetch {
	// form: -1 sc_, 0..2 scN_, 3 src_
	fixed := 0
	if op.indexed {
		fixed++
	}
	if form == -1 {
		fixed++
	}
	f := Fetch{Name: name, Min: fixed, Max: fixed + 1, Out: TSint, Need: NeedL4, PadArgs: form == 3}
	if op.kind == opTracked {
		f.Out = TBool
	}
	f.Check = func(env *Env, a []Arg) error {
		for i := 0; i < fixed && i < len(a); i++ {
			n, rest := readInt64(a[i].S)
			if rest != "" || a[i].S == "" {
				return &ArgError{Pos: i + 1, Msg: fmt.Sprintf("failed to parse '%s' as type 'integer' at position %d", a[i].S, i+1)}
			}
			a[i].I = n
		}
		if len(a) > fixed {
			return resolveTable(env, &a[fixed], fixed+1, "ACL", name)
		}
		return nil
	}
	f.Fn = func(r *Request, a []Arg, s *Sample) bool {
		idx := 0
		if op.indexed {
			idx = int(a[0].I)
		}
		alt := tableOf(a, fixed)
		if form == 3 {
			t := alt
			if t == nil {
				return false
			}
			var src Sample
			if !addrOf(r.Client, &src, false) {
				return false
			}
			key, ok := tableKey(r, t, &src)
			if !ok {
				return false
			}
			now := stick.Now()
			var e *stick.Entry
			if op.creates() {
				e = t.Get(key, now)
			} else {
				e = t.Lookup(key, now)
			}
			if e != nil {
				defer t.Release(e, now, false)
			}
			return op.apply(t, e, idx, true, s)
		}
		n := form
		if form == -1 {
			n = int(a[boolInt(op.indexed)].I)
		}
		sc, ok := r.Stream.(StickCounters)
		if !ok || n < 0 || n >= MaxTracked {
			return false
		}
		t, e := sc.Tracked(n)
		if e == nil {
			if op.kind == opTracked {
				s.setBool(false)
				return true
			}
			return false
		}
		if alt != nil && alt != t {
			now := stick.Now()
			ae := alt.Lookup([]byte(e.Key()), now)
			if ae != nil {
				defer alt.Release(ae, now, false)
			}
			return op.apply(alt, ae, idx, true, s)
		}
		return op.apply(t, e, idx, false, s)
	}
	return f
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inputEntry finds the entry of the input sample's key in the table of
// argument i, with a reference the caller gives back; e is nil when the
// key is not there, ok false when the table is unresolved or the sample
// does not cast to its key.
func inputEntry(r *Request, a []Arg, i int, s *Sample) (t *stick.Table, e *stick.Entry, now int64, ok bool) {
	if t = tableOf(a, i); t == nil {
		return nil, nil, 0, false
	}
	key, ok := tableKey(r, t, s)
	if !ok {
		return nil, nil, 0, false
	}
	now = stick.Now()
	return t, t.Lookup(key, now), now, true
}

// tableConv is table_<op>(table) and table_<op>(idx,table): the entry
// of the input sample's key.
func tableConv(name string, op *counterOp) Conv {
	fixed := boolInt(op.indexed)
	c := Conv{Name: name, Min: fixed + 1, Max: fixed + 1, In: TAny, Out: TSint}
	c.Check = func(env *Env, a []Arg) error {
		if op.indexed {
			n, rest := readInt64(a[0].S)
			if rest != "" || a[0].S == "" {
				return &ArgError{Pos: 1, Msg: fmt.Sprintf("failed to parse '%s' as type 'integer' at position 1", a[0].S)}
			}
			a[0].I = n
		}
		return resolveTable(env, &a[fixed], fixed+1, "conversion", name)
	}
	c.Fn = func(r *Request, a []Arg, s *Sample) bool {
		t, e, now, ok := inputEntry(r, a, fixed, s)
		if !ok {
			return false
		}
		if e != nil {
			defer t.Release(e, now, false)
		}
		idx := 0
		if op.indexed {
			idx = int(a[0].I)
		}
		return op.apply(t, e, idx, true, s)
	}
	return c
}

func init() {
	var fs []Fetch
	var cs []Conv
	for i := range counterOps {
		op := &counterOps[i]
		if op.name != "updt_conn_cnt" {
			fs = append(fs, scFetch("sc_"+op.name, op, -1))
			for n := 0; n < MaxTracked; n++ {
				fs = append(fs, scFetch(fmt.Sprintf("sc%d_%s", n, op.name), op, n))
			}
		}
		if op.kind != opTracked && op.kind != opTrackers {
			fs = append(fs, scFetch("src_"+op.name, op, 3))
		}
		if op.kind == opRead || op.kind == opKbytes || op.kind == opTrackers {
			cn := "table_" + strings.TrimPrefix(op.name, "get_")
			cs = append(cs, tableConv(cn, op))
		}
	}
	cs = append(cs, Conv{Name: "in_table", Min: 1, Max: 1, In: TAny, Out: TBool,
		Check: func(env *Env, a []Arg) error { return resolveTable(env, &a[0], 1, "conversion", "in_table") },
		Fn: func(r *Request, a []Arg, s *Sample) bool {
			t, e, now, ok := inputEntry(r, a, 0, s)
			if !ok {
				return false
			}
			if e != nil {
				t.Release(e, now, false)
			}
			s.setBool(e != nil)
			return true
		}})
	cs = append(cs, Conv{Name: "table_server_id", Min: 1, Max: 1, In: TAny, Out: TSint,
		Check: func(env *Env, a []Arg) error { return resolveTable(env, &a[0], 1, "conversion", "table_server_id") },
		Fn: func(r *Request, a []Arg, s *Sample) bool {
			t, e, now, ok := inputEntry(r, a, 0, s)
			if !ok {
				return false
			}
			s.setInt(0)
			if e == nil {
				return true
			}
			defer t.Release(e, now, false)
			id, _, ok := t.Server(e)
			s.I = int64(id)
			return ok
		}})
	tableSize := func(name string, avail bool) Fetch {
		return Fetch{Name: name, Max: 1, Out: TSint, PadArgs: true,
			Check: func(env *Env, a []Arg) error { return resolveTable(env, &a[0], 1, "ACL", name) },
			Fn: func(r *Request, a []Arg, s *Sample) bool {
				t := tableOf(a, 0)
				if t == nil {
					return false
				}
				n := t.Used()
				if avail {
					n = t.Size - n
				}
				s.setInt(int64(n))
				return true
			}}
	}
	fs = append(fs, tableSize("table_avl", true), tableSize("table_cnt", false))
	RegisterFetches(fs...)
	RegisterConvs(cs...)
}
