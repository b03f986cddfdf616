package stream

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"strconv"
	"strings"
	"time"

	"goha/core"
	"goha/core/diag"
	"goha/core/http1"
	"goha/core/sample"
)

// The statistics page a proxy answers itself (`stats enable`, `stats
// uri`, ...), as HAProxy 2.6's stats applet: HTML, CSV, JSON or typed
// output of show stat's rows, and the admin form's POST, which changes
// servers and redirects to the page with the outcome (;st=DONE, ...).
// The reply goes through the http-after-response rules and is logged
// with <STATS> as the server.

// statsPage is a proxy's compiled page.
type statsPage struct {
	conf  *core.StatsConf
	admin []*sample.Cond // stats admin if|unless
	rules []*httpRule    // stats http-request
	// challenge is the 401 of `stats auth`; nil without users.
	challenge *http1.Reply
}

// compileStats compiles p's page: its admin conditions, and its 401
// challenge (p's 401 error file, else HAProxy's message, with the realm).
func (proc *Process) compileStats(p *proxy, named map[string][]*sample.Term, d *diag.Collector) {
	sc := p.Stats
	if sc == nil {
		return
	}
	pg := &statsPage{conf: sc}
	for _, a := range sc.Admin {
		c, err := sample.CompileCond(proc.envAt(a.Pos), a.Words, named)
		if err != nil {
			d.Alertf(a.Pos, "error detected while parsing a 'stats admin' rule : %v.", err)
			continue
		}
		pg.admin = append(pg.admin, c)
	}
	for _, r := range sc.HTTPRequest {
		rule, err := compileRule(proc.envAt(r.Pos), r.Words, named, false)
		switch {
		case authError(d, p, r.Pos, "", "http-request", err):
		case err != nil:
			d.Alertf(r.Pos, "%s", ruleError(p, "http-request", r.Words, err))
		default:
			rule.pos = r.Pos
			pg.rules = append(pg.rules, rule)
		}
	}
	proc.authReplies(p, pg.rules, d)
	if len(sc.Users) > 0 {
		realm := sc.Realm
		if realm == "" {
			realm = core.DefaultStatsRealm
		}
		pg.challenge = p.challengeReply(realm, d)
	}
	p.stats = pg
}

// statsTarget is the part of the request target HAProxy compares with the
// page's prefix: from the path on when the prefix starts with '/' (an
// absolute-form target's authority skipped), else the whole target.
func statsTarget(prefix string, req *http1.Head) []byte {
	u := req.URI()
	if strings.HasPrefix(prefix, "/") && len(u) > 0 && u[0] != '/' {
		if i := bytes.Index(u, []byte("://")); i >= 0 {
			rest := u[i+3:]
			if j := bytes.IndexByte(rest, '/'); j >= 0 {
				return rest[j:]
			}
			return nil
		}
	}
	return u
}

// isStatsRequest says whether req asks for px's page: a GET, HEAD or POST
// whose target starts with the page's prefix.
func isStatsRequest(px *proxy, req *http1.Head) bool {
	if px.stats == nil {
		return false
	}
	switch req.Method {
	case http1.MethodGET, http1.MethodHEAD, http1.MethodPOST:
	default:
		return false
	}
	return bytes.HasPrefix(statsTarget(px.stats.conf.URI, req), []byte(px.stats.conf.URI))
}

// Output formats of the page.
const (
	statsHTML = iota
	statsCSV
	statsJSON
	statsTyped
)

// statsQuery is what the target says after the page's prefix, read as
// HAProxy reads it: each option is found anywhere in it.
type statsQuery struct {
	format    int
	up        bool // ;up: servers down or in maintenance hidden
	noMaint   bool // ;no-maint
	noRefresh bool // ;norefresh
	// st is the outcome a POST's redirect reports (;st=XXXX), "" when
	// none, "UNKN" for a code HAProxy does not know.
	st string
	// scope is the scope= text: only proxies whose name contains it,
	// whatever the case.
	scope string
}

// statsCodes are the outcomes HAProxy's POST handling reports.
var statsCodes = []string{"DENY", "DONE", "ERRP", "EXCD", "NONE", "PART", "UNKN", "IVAL"}

// maxStatsScope is the longest scope= text HAProxy keeps.
const maxStatsScope = 31

// parseStatsQuery reads the options in q, the target after the prefix.
func parseStatsQuery(q string, refresh bool) statsQuery {
	var sq statsQuery
	sq.up = strings.Contains(q, ";up")
	sq.noMaint = strings.Contains(q, ";no-maint")
	sq.noRefresh = refresh && strings.Contains(q, ";norefresh")
	if strings.Contains(q, ";csv") {
		sq.format = statsCSV
	}
	if strings.Contains(q, ";typed") {
		sq.format = statsTyped
	}
	if strings.Contains(q, ";json") {
		sq.format = statsJSON
	}
	// The code takes four characters and, as in HAProxy, the option is
	// looked for only where eight would fit.
	if i := strings.Index(q, ";st="); i >= 0 && i <= len(q)-8 {
		sq.st = "UNKN"
		for _, c := range statsCodes {
			if q[i+4:i+8] == c {
				sq.st = c
				break
			}
		}
	}
	if i := strings.Index(q, "scope="); i >= 0 && i <= len(q)-8 {
		v := q[i+6:]
		if j := strings.IndexAny(v, ";& "); j >= 0 {
			v = v[:j]
		}
		if len(v) > maxStatsScope {
			v = v[:maxStatsScope]
		}
		if validProxyChars(v) {
			sq.scope = v
		}
	}
	return sq
}

// statsAuthorized says whether the request carries one of the page's
// `stats auth` accounts as Basic credentials.
func statsAuthorized(sc *core.StatsConf, req *http1.Head) bool {
	v, ok := req.Get("authorization")
	if !ok {
		return false
	}
	sp := bytes.IndexByte(v, ' ')
	if sp < 0 || !strings.EqualFold(string(v[:sp]), "basic") {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(v[sp+1:])))
	if err != nil {
		return false
	}
	user, pass, ok := bytes.Cut(dec, []byte(":"))
	if !ok {
		return false
	}
	for _, u := range sc.Users {
		if u.Name == string(user) && subtle.ConstantTimeCompare([]byte(u.Password), pass) == 1 {
			return true
		}
	}
	return false
}

// serveStats answers a request for px's page; it says whether the
// client's connection goes on.
func (proc *Process) serveStats(px *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, hlen int) bool {
	si := &hc.si
	fe := si.fe
	req := &hc.req
	pg := px.stats
	sc := pg.conf
	si.term = [2]byte{'L', 'R'}
	// HAProxy's stats applet stands where a server would: no queue, an
	// immediate "connection", its timers at 0.
	si.applet = "<STATS>"
	si.connected = true
	if pg.challenge != nil && !statsAuthorized(sc, req) {
		if px == fe {
			fe.FE.Intercepted.Add(1)
		}
		whole, _ := hc.wholeRequest(cbuf, hlen)
		mode := hc.replyConn(whole)
		si.status = 401
		b := pg.challenge.Bytes(mode)
		si.bytesOut = int64(pg.challenge.LogSize)
		// HAProxy 2.6 closes the connection after the page's challenge
		// (the stats applet it set up aborts), without saying so.
		proc.endStats(px, c, hc, b, false)
		return false
	}
	q := string(statsTarget(sc.URI, req)[len(sc.URI):])
	sq := parseStatsQuery(q, sc.Refresh > 0)
	admin := false
	for _, cond := range pg.admin {
		if cond.Eval(&hc.view) {
			admin = true
			break
		}
	}
	if len(pg.rules) > 0 {
		if done, _ := proc.applyReqRules(px, pg.rules, &hc.view, hc, c, cbuf, hlen, si); done {
			// A deny or a challenge here aborts HAProxy's stats applet,
			// which closes the connection, as after `stats auth`'s.
			return false
		}
	}
	if px == fe {
		fe.FE.Intercepted.Add(1)
	}
	if req.Method == http1.MethodPOST {
		st := "DENY"
		if admin {
			if !hc.ss.bodyOK && !proc.bufferBody(fe, c, cbuf, hc, hlen, si) {
				return false
			}
			st = proc.statsPost(hc.ss.body)
		}
		whole, reqLen := hc.wholeRequest(cbuf, hlen)
		mode := hc.replyConn(whole)
		keep := mode != http1.ConnClose
		if keep {
			cbuf.Discard(reqLen)
		}
		loc := sc.URI + ";st=" + st
		if sq.up {
			loc += ";up"
		}
		if sq.noRefresh {
			loc += ";norefresh"
		}
		if sq.scope != "" {
			loc += "?scope=" + sq.scope
		}
		b := []byte("HTTP/1.1 303 See Other\r\ncache-control: no-cache\r\ncontent-type: text/plain\r\ncontent-length: 0\r\nlocation: ")
		b = append(b, loc...)
		b = append(b, "\r\n"...)
		b = endLocalHead(b, mode)
		si.status = 303
		si.bytesOut = int64(len(b))
		return proc.endStats(px, c, hc, b, keep)
	}
	whole, reqLen := hc.wholeRequest(cbuf, hlen)
	mode := hc.replyConn(whole)
	chunked := req.Flags&http1.FlagVer11 != 0 && req.Method != http1.MethodHEAD
	if !chunked && req.Method != http1.MethodHEAD {
		// Without chunks, the close ends the body.
		mode = http1.ConnClose
	}
	keep := mode != http1.ConnClose
	if keep {
		cbuf.Discard(reqLen)
	}
	var body []byte
	if req.Method != http1.MethodHEAD {
		body = proc.statsBody(px, sq, admin, q)
	}
	ctype := "text/plain"
	switch sq.format {
	case statsHTML:
		ctype = "text/html"
	case statsJSON:
		ctype = "application/json"
	}
	b := make([]byte, 0, len(body)+256)
	b = append(b, "HTTP/1.1 200 OK\r\ncache-control: no-cache\r\ncontent-type: "...)
	b = append(b, ctype...)
	b = append(b, "\r\n"...)
	if sc.Refresh > 0 && !sq.noRefresh {
		b = append(b, "refresh: "...)
		b = strconv.AppendInt(b, int64(sc.Refresh/time.Second), 10)
		b = append(b, "\r\n"...)
	}
	if chunked {
		b = append(b, "transfer-encoding: chunked\r\n"...)
	}
	b = endLocalHead(b, mode)
	headLen := len(b)
	if chunked {
		if len(body) > 0 {
			b = strconv.AppendInt(b, int64(len(body)), 16)
			b = append(b, "\r\n"...)
			b = append(b, body...)
			b = append(b, "\r\n"...)
		}
		b = append(b, "0\r\n\r\n"...)
	} else {
		b = append(b, body...)
	}
	si.status = 200
	si.bytesOut = int64(headLen + len(body))
	return proc.endStats(px, c, hc, b, keep)
}

// endStats sends the page's reply b through the http-after-response
// rules, counts and logs the exchange.
func (proc *Process) endStats(px *proxy, c net.Conn, hc *hconn, b []byte, keep bool) bool {
	si := &hc.si
	si.gotResp = si.status != 401
	b = hc.afterLocal(si.fe, px, b, si)
	proc.sendLocal(c, hc, si, b, si.status)
	return keep
}

// statsBody is the page in the format asked.
func (proc *Process) statsBody(px *proxy, sq statsQuery, admin bool, q string) []byte {
	f := StatFilter{IID: -1, Types: -1, SID: -1, Up: sq.up, NoMaint: sq.noMaint}
	switch sq.format {
	case statsJSON:
		f.JSON = true
	case statsTyped:
		f.Typed = true
	}
	f.Scope = sq.scope
	f.Scopes = px.stats.conf.Scopes
	f.Self = px.Proxy
	var w bytes.Buffer
	if sq.format != statsHTML {
		DumpStats(proc, &w, f, px.stats.conf.Legends, time.Now())
		return w.Bytes()
	}
	p := htmlPage{proc: proc, px: px, sq: sq, admin: admin, flt: f, now: time.Now()}
	return p.render()
}

// validProxyChars says whether s has only the characters HAProxy allows
// in proxy names, as its scope= text must.
func validProxyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}
