package stream

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"goha/core/sample"
	"goha/core/stick"
)

// Stick tables in the running process: the tables of the configuration,
// what sessions and streams track (track-sc0 to track-sc2), the counters
// their events update, and the rule actions that act on tracked entries.

// StickTable is the table named name (a proxy's), or nil.
func (proc *Process) StickTable(name string) *stick.Table { return proc.tables[name] }

// StickTables lists the tables as show table does: HAProxy lists the
// last declared first.
func (proc *Process) StickTables() []*stick.Table {
	var ts []*stick.Table
	for i := len(proc.proxies) - 1; i >= 0; i-- {
		if t := proc.tables[proc.proxies[i].Name]; t != nil {
			ts = append(ts, t)
		}
	}
	return ts
}

// makeTables builds the configuration's stick tables.
func (proc *Process) makeTables() {
	// A table that stick rules use stores the server, as in HAProxy.
	sticky := map[string]bool{}
	for _, p := range proc.proxies {
		for _, r := range p.StickRules {
			if r.Table == "" {
				sticky[p.Name] = true
			} else {
				sticky[r.Table] = true
			}
		}
	}
	proc.tables = map[string]*stick.Table{}
	for name, c := range proc.Conf.StickTables() {
		cfg := *c
		if sticky[name] {
			cfg.Store = slices.Clone(cfg.Store)
			for _, dt := range []stick.DataType{stick.ServerID, stick.ServerKey} {
				if !slices.ContainsFunc(cfg.Store, func(s stick.Stored) bool { return s.Type == dt }) {
					cfg.Store = append(cfg.Store, stick.Stored{Type: dt, N: 1})
				}
			}
		}
		proc.tables[name] = stick.New(cfg)
	}
	proc.env.Tables = proc
}

// stkCtr is one tracked entry.
type stkCtr struct {
	t *stick.Table
	e *stick.Entry
}

// stkCounters are what a session (tcp-request connection and session
// rules) or a stream (content and HTTP rules) tracks.
type stkCounters [sample.MaxTracked]stkCtr

// tracking is a stream's view of its counters and its session's: for
// each counter number the stream's entry wins, as in HAProxy.
type tracking struct {
	strm stkCounters
	sess *stkCounters // nil: none (tests)
}

// at returns the entry counter n updates: the stream's, else the
// session's.
func (tr *tracking) at(n int) *stkCtr {
	if tr.strm[n].e != nil {
		return &tr.strm[n]
	}
	if tr.sess != nil && tr.sess[n].e != nil {
		return &tr.sess[n]
	}
	return nil
}

// Tracked implements sample.StickCounters for a stream.
func (ss *sampleStream) Tracked(n int) (*stick.Table, *stick.Entry) {
	if ss.trk == nil {
		return nil, nil
	}
	return ss.trk.Tracked(n)
}

// Tracked implements sample.StickCounters.
func (tr *tracking) Tracked(n int) (*stick.Table, *stick.Entry) {
	if c := tr.at(n); c != nil {
		return c.t, c.e
	}
	return nil, nil
}

// track starts tracking key in t as counter n unless n tracks already:
// the entry counts a connection (conn_cur, conn_cnt, conn_rate), as
// HAProxy's stream_start_counters does.
func (cs *stkCounters) track(n int, t *stick.Table, key []byte) *stick.Entry {
	if cs[n].e != nil {
		return nil
	}
	now := stick.Now()
	e := t.Get(key, now)
	if e == nil {
		return nil
	}
	t.Add(e, stick.ConnCur, 0, 1, now)
	t.Add(e, stick.ConnCnt, 0, 1, now)
	t.Add(e, stick.ConnRate, 0, 1, now)
	t.Touch(e, now)
	cs[n] = stkCtr{t: t, e: e}
	return e
}

// release ends the tracking: the connection leaves conn_cur and the
// entry's expiry starts over.
func (cs *stkCounters) release() {
	now := int64(0)
	for i := range cs {
		c := &cs[i]
		if c.e == nil {
			continue
		}
		if now == 0 {
			now = stick.Now()
		}
		c.t.Dec(c.e, stick.ConnCur)
		c.t.Release(c.e, now, true)
		*c = stkCtr{}
	}
}

// count adds n to a counter and its rate in every entry the stream
// updates.
func (tr *tracking) count(cnt, rate stick.DataType, n int64) {
	now := int64(0)
	for i := 0; i < sample.MaxTracked; i++ {
		c := tr.at(i)
		if c == nil {
			continue
		}
		if now == 0 {
			now = stick.Now()
		}
		c.t.Add(c.e, cnt, 0, n, now)
		c.t.Add(c.e, rate, 0, n, now)
		c.t.Touch(c.e, now)
	}
}

// countSession counts an accepted session in what the session tracks.
func (cs *stkCounters) countSession() {
	tr := tracking{sess: cs}
	tr.count(stick.SessCnt, stick.SessRate, 1)
}

// countStatus counts a response's status: a 4xx is an HTTP error, a 5xx
// other than 501 and 505 a failure.
func (tr *tracking) countStatus(status int) {
	switch {
	case status >= 400 && status < 500:
		tr.count(stick.HTTPErrCnt, stick.HTTPErrRate, 1)
	case status >= 500 && status < 600 && status != 501 && status != 505:
		tr.count(stick.HTTPFailCnt, stick.HTTPFailRate, 1)
	}
}

// endStream counts what the stream moved and ends its own tracking.
func (tr *tracking) endStream(in, out int64) {
	if tr.any() {
		tr.count(stick.BytesInCnt, stick.BytesInRate, in)
		tr.count(stick.BytesOutCnt, stick.BytesOutRate, out)
	}
	tr.strm.release()
}

// any says whether the stream updates any entry.
func (tr *tracking) any() bool {
	for i := 0; i < sample.MaxTracked; i++ {
		if tr.at(i) != nil {
			return true
		}
	}
	return false
}

// endTracking counts an HTTP exchange's status and bytes in what it
// tracks, then ends the stream's own tracking, once per exchange: a
// reply that goes out in one write ends it before that write, so that
// what the client does next sees the entries released, as with
// HAProxy's single thread.
func (hc *hconn) endTracking(si *streamInfo) {
	if hc.trackEnded {
		return
	}
	hc.trackEnded = true
	// A server's status counts; of goha's own replies, the 4xx (a deny,
	// a bad request) and the 5xx of a failed server, as HAProxy counts
	// them, not a 503 for want of a server.
	switch {
	case si.gotResp, si.status >= 400 && si.status < 500:
		hc.track.countStatus(si.status)
	case si.status >= 500 && si.srv != nil && (si.term[0] == 'S' || si.term[0] == 's'):
		hc.track.countStatus(si.status)
	}
	hc.track.endStream(si.bytesIn, si.bytesOut)
}

// stickAction is a compiled track-sc*, sc-inc-gpc* or sc-set-gpt*.
type stickAction struct {
	kind  byte // 't'rack, 'i'nc, 's'et
	ctr   int
	idx   int          // the array index of sc-inc-gpc(idx,n), sc-set-gpt(idx,n); -1: gpc0/gpt0
	alt   int          // sc-inc-gpc1: the gpc array index gpc1 falls back on
	table *stick.Table // track-sc
	key   *sample.SampleExpr
	val   *sample.SampleExpr // sc-set-gpt with an expression
	ival  int64
	cnt   stick.DataType // sc-inc: the counter and its rate
	rate  stick.DataType
}

// compileStickAction compiles words (an action and its arguments) when
// they are a stick-table action; ok false says they are not.
func compileStickAction(env *sample.Env, words []string) (a *stickAction, ok bool, err error) {
	w := words[0]
	switch {
	case strings.HasPrefix(w, "track-sc"):
		n, err := strconv.Atoi(w[len("track-sc"):])
		if err != nil {
			return nil, false, nil
		}
		if n >= sample.MaxTracked {
			return nil, true, fmt.Errorf("%d track-sc number exceeding %d (MAX_SESS_STKCTR-1) value.", n, sample.MaxTracked-1)
		}
		if len(words) < 2 {
			return nil, true, fmt.Errorf("missing key expression.")
		}
		a = &stickAction{kind: 't', ctr: n}
		if a.key, err = sample.CompileExpr(env, words[1]); err != nil {
			return nil, true, err
		}
		name := env.Proxy
		if len(words) > 3 && words[2] == "table" {
			name = words[3]
		}
		if env.Tables != nil {
			if a.table = env.Tables.StickTable(name); a.table == nil {
				return nil, true, fmt.Errorf("unable to find table '%s' referenced by %s.", name, w)
			}
		}
		return a, true, nil
	case strings.HasPrefix(w, "sc-inc-gpc") || strings.HasPrefix(w, "sc-set-gpt"):
		key, inner, _ := strings.Cut(w, "(")
		inner, closed := strings.CutSuffix(inner, ")")
		if !closed {
			return nil, true, fmt.Errorf("missing closing ')' after the counter number")
		}
		a = &stickAction{kind: 'i', idx: -1}
		if strings.HasPrefix(key, "sc-set") {
			a.kind = 's'
		}
		parts := strings.Split(inner, ",")
		switch key {
		case "sc-inc-gpc", "sc-set-gpt":
			if len(parts) != 2 {
				return nil, true, fmt.Errorf("invalid arguments in '%s': expects <idx>,<sc-num>", w)
			}
			if a.idx, err = strconv.Atoi(parts[0]); err != nil || a.idx < 0 || a.idx >= stick.MaxArray {
				return nil, true, fmt.Errorf("invalid gpc index '%s'", parts[0])
			}
			parts = parts[1:]
			a.cnt, a.rate = stick.GPC, stick.GPCRate
			if a.kind == 's' {
				a.cnt = stick.GPT
			}
		case "sc-inc-gpc0":
			a.cnt, a.rate = stick.GPC0, stick.GPC0Rate
		case "sc-inc-gpc1":
			a.cnt, a.rate, a.alt = stick.GPC1, stick.GPC1Rate, 1
		case "sc-set-gpt0":
			a.cnt = stick.GPT0
		default:
			return nil, false, nil
		}
		if len(parts) != 1 {
			return nil, true, fmt.Errorf("invalid stick counter in '%s'", w)
		}
		if a.ctr, err = strconv.Atoi(parts[0]); err != nil || a.ctr < 0 || a.ctr >= sample.MaxTracked {
			return nil, true, fmt.Errorf("invalid stick counter expected 0..%d, found '%s'", sample.MaxTracked-1, parts[0])
		}
		if a.kind == 's' {
			if len(words) < 2 {
				return nil, true, fmt.Errorf("expects an integer or a sample expression.")
			}
			if n, err := strconv.ParseInt(words[1], 10, 64); err == nil {
				a.ival = n
			} else if a.val, err = sample.CompileExpr(env, words[1]); err != nil {
				return nil, true, err
			}
		}
		return a, true, nil
	}
	return nil, false, nil
}

// run applies the action for a stream: track in cs (the stream's or the
// session's counters), or update the entry counter ctr designates.
// reqStage says an http-request rule runs it (a new entry then counts the
// request), status is the response's in http-response rules (0 before).
func (a *stickAction) run(v *sample.Request, tr *tracking, cs *stkCounters, smp *sample.Sample, httpReq bool, status int) {
	switch a.kind {
	case 't':
		if a.table == nil || cs[a.ctr].e != nil || !a.key.Eval(v, smp) {
			return
		}
		key, ok := sample.TableKey(v, a.table, smp)
		if !ok {
			return
		}
		e := cs.track(a.ctr, a.table, key)
		if e == nil || (!httpReq && status == 0) {
			return
		}
		one := tracking{}
		one.strm[0] = cs[a.ctr]
		one.count(stick.HTTPReqCnt, stick.HTTPReqRate, 1)
		one.countStatus(status)
		return
	}
	c := tr.at(a.ctr)
	if c == nil {
		return
	}
	now := stick.Now()
	if a.kind == 'i' {
		a.inc(c.t, c.e, now)
		return
	}
	n := a.ival
	if a.val != nil {
		if !a.val.Eval(v, smp) || !sample.Cast(v, smp, sample.TSint) {
			return
		}
		n = smp.I
	}
	dt, idx := a.cnt, max(a.idx, 0)
	if a.idx < 0 && !c.t.Stores(dt) {
		dt = stick.GPT
	}
	if c.t.Set(c.e, dt, idx, n, now) {
		c.t.Touch(c.e, now)
	}
}

// inc counts one in a gpc and its rate; gpc0 and gpc1 fall back on the
// gpc array when the table stores it instead, as in HAProxy 2.6.
func (a *stickAction) inc(t *stick.Table, e *stick.Entry, now int64) {
	cnt, rate, idx := a.cnt, a.rate, max(a.idx, 0)
	ridx := idx
	if a.idx < 0 {
		if !t.Stores(cnt) {
			cnt, idx = stick.GPC, a.alt
		}
		if !t.Stores(rate) {
			rate, ridx = stick.GPCRate, a.alt
		}
	}
	t.Add(e, rate, ridx, 1, now)
	t.Add(e, cnt, idx, 1, now)
	t.Touch(e, now)
}
