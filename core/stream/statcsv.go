package stream

import (
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"goha/core"
)

// show stat's rows, shared by the stats socket and the stats page: the
// columns of HAProxy 2.6 in CSV, typed and JSON output.

type statField struct {
	name        string
	fe, be, srv string // "tags:type" for each row kind
}

const (
	nStatic = 103 // 2.6's static columns; the module columns follow a "-"
	nFields = len(statFields)
)

// Row kinds and their type numbers (show stat's `type` column).
const (
	objFE = 0
	objBE = 1
	objSV = 2
	objLI = 3
)

// fval is one cell of a row.
type fval struct {
	set bool
	str bool
	n   int64
	s   string
	b   []byte // used instead of s when not nil (scratch text, no allocation)
}

type statRow [nFields]fval

func (r *statRow) u(i int, v int64)    { r[i] = fval{set: true, n: v} }
func (r *statRow) str(i int, v string) { r[i] = fval{set: true, str: true, s: v} }

// StatFilter is show stat's optional `<iid> <type> <sid>` filter and flags.
type StatFilter struct {
	Bound   bool
	IID     int // -1 = every proxy
	Types   int // bit mask: 1 frontend, 2 backend, 4 server; -1 = all
	SID     int // -1 = every server
	Typed   bool
	JSON    bool
	Desc    bool
	Up      bool // hide servers down or in maintenance
	NoMaint bool // hide servers in maintenance
	// The stats page's proxies: Scope is its scope= text, which a name
	// must contain, whatever the case; Scopes its `stats scope` names
	// ("." is Self), one of which a name must be when there are any.
	Scope  string
	Scopes []string
	Self   *core.Proxy
}

// shows says whether the filter's scopes let p's rows out.
func (f *StatFilter) shows(p *core.Proxy) bool {
	if len(f.Scopes) > 0 {
		ok := false
		for _, s := range f.Scopes {
			if s == p.Name || s == "." && p == f.Self {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return f.Scope == "" || strings.Contains(strings.ToLower(p.Name), strings.ToLower(f.Scope))
}

// ParseStatArgs reads show stat's words after "show stat". The error is
// HAProxy's reply text.
func ParseStatArgs(conf *core.Config, args []string) (StatFilter, string) {
	f := StatFilter{IID: -1, Types: -1, SID: -1}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	i := 0
	if arg(0) != "" && arg(1) != "" && arg(2) != "" && !isStatFlag(arg(0)) {
		if p := conf.FindProxy(arg(0), core.CapFE|core.CapBE); p != nil {
			f.IID = p.ID
		} else {
			f.IID = core.Atoi(arg(0))
		}
		if f.IID == 0 {
			return f, "No such proxy."
		}
		f.Bound = true
		f.Types = core.Atoi(arg(1))
		f.SID = core.Atoi(arg(2))
		i = 3
	}
	for ; i < len(args); i++ {
		switch args[i] {
		case "typed":
			f.Typed = true
		case "json":
			f.JSON = true
		case "desc":
			f.Desc = true
		case "up":
			f.Up = true
		case "no-maint":
			f.NoMaint = true
		}
	}
	return f, ""
}

func isStatFlag(s string) bool {
	switch s {
	case "typed", "json", "desc", "up", "no-maint":
		return true
	}
	return false
}

type statDumper struct {
	proc    *Process
	w       io.Writer
	f       StatFilter
	now     time.Time
	legends bool // addresses, cookies and algorithms shown
	row     statRow
	buf     []byte
	scratch []byte // the addr column of the current row
	rows    int    // rows written (json separators)
}

func (d *statDumper) flush() {
	if len(d.buf) > 0 {
		d.w.Write(d.buf)
		d.buf = d.buf[:0]
	}
}

// StatHeader is show stat's CSV header line.
func StatHeader() string {
	var b strings.Builder
	b.WriteString("# ")
	for i, f := range statFields {
		if i == nStatic {
			b.WriteString("-,")
		}
		b.WriteString(f.name)
		b.WriteByte(',')
	}
	b.WriteByte('\n')
	return b.String()
}

var statHeader = StatHeader()

func (d *statDumper) dump() {
	switch {
	case d.f.JSON:
		d.buf = append(d.buf, '[')
	case d.f.Typed:
	default:
		d.buf = append(d.buf, statHeader...)
	}
	conf := d.proc.Conf
	for _, p := range conf.Proxies {
		if d.f.Bound && d.f.IID != -1 && p.ID != d.f.IID || !d.f.shows(p) {
			continue
		}
		if p.IsFrontend() && d.want(objFE) {
			d.frontendRow(p)
			d.emit(objFE, p.ID, 0)
		}
		if p.IsFrontend() && p.SocketStats && d.want(objLI) {
			d.listenerRows(p)
		}
		if p.IsBackend() {
			if d.want(objSV) {
				for _, s := range p.ServerList() {
					if d.f.Bound && d.f.SID != -1 && s.ID != d.f.SID {
						continue
					}
					adm := s.AdminState()
					if d.f.Up && (adm&core.AdminMaint != 0 || s.OpState() == core.OpStopped) {
						continue
					}
					if d.f.NoMaint && adm&core.AdminMaint != 0 {
						continue
					}
					d.serverRow(s)
					d.emit(objSV, p.ID, s.ID)
				}
			}
			if d.want(objBE) {
				d.backendRow(p)
				d.emit(objBE, p.ID, 0)
			}
		}
		if len(d.buf) > 32*1024 {
			d.flush()
		}
	}
	if d.f.JSON {
		d.buf = append(d.buf, "]\n"...)
	}
	d.flush()
}

func (d *statDumper) want(obj int) bool {
	return !d.f.Bound || d.f.Types&(1<<obj) != 0
}

var objNames = [...]string{"Frontend", "Backend", "Server", "Listener"}
var objLetters = [...]byte{'F', 'B', 'S', 'L'}

func (d *statDumper) emit(obj, iid, sid int) {
	r := &d.row
	switch {
	case d.f.JSON:
		if d.rows > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = append(d.buf, '[')
		first := true
		for i := range r {
			if !r[i].set {
				continue
			}
			if !first {
				d.buf = append(d.buf, ',')
			}
			first = false
			tags, typ := fieldTags(obj, i)
			d.buf = append(d.buf, `{"objType":"`...)
			d.buf = append(d.buf, objNames[obj]...)
			d.buf = append(d.buf, `","proxyId":`...)
			d.buf = strconv.AppendInt(d.buf, int64(iid), 10)
			d.buf = append(d.buf, `,"id":`...)
			d.buf = strconv.AppendInt(d.buf, int64(sid), 10)
			d.buf = appendJSONField(d.buf, i, statFields[i].name, tags, typ, &r[i])
		}
		d.buf = append(d.buf, ']')
	case d.f.Typed:
		for i := range r {
			if !r[i].set {
				continue
			}
			tags, typ := fieldTags(obj, i)
			d.buf = append(d.buf, objLetters[obj], '.')
			d.buf = strconv.AppendInt(d.buf, int64(iid), 10)
			d.buf = append(d.buf, '.')
			d.buf = strconv.AppendInt(d.buf, int64(sid), 10)
			d.buf = append(d.buf, '.')
			d.buf = strconv.AppendInt(d.buf, int64(i), 10)
			d.buf = append(d.buf, '.')
			d.buf = append(d.buf, statFields[i].name...)
			d.buf = append(d.buf, ".1:"...)
			d.buf = append(d.buf, tags...)
			d.buf = append(d.buf, ':')
			d.buf = append(d.buf, typ...)
			d.buf = append(d.buf, ':')
			d.buf = appendValue(d.buf, &r[i], false)
			d.buf = append(d.buf, '\n')
		}
	default:
		for i := range r {
			if i == nStatic {
				d.buf = append(d.buf, '-', ',')
			}
			if r[i].set {
				d.buf = appendValue(d.buf, &r[i], true)
			}
			d.buf = append(d.buf, ',')
		}
		d.buf = append(d.buf, '\n')
	}
	d.rows++
}

func fieldTags(obj, i int) (tags, typ string) {
	t := statFields[i].srv
	switch obj {
	case objFE:
		t = statFields[i].fe
	case objLI:
		if i != 73 {
			t = statFields[i].fe
		}
	case objBE:
		t = statFields[i].be
	}
	return t[:3], t[4:]
}

// appendValue formats a cell; csv quotes strings that need it.
func appendValue(b []byte, v *fval, csv bool) []byte {
	if !v.str {
		return strconv.AppendInt(b, v.n, 10)
	}
	if v.b != nil {
		if !csv || !bytesNeedQuote(v.b) {
			return append(b, v.b...)
		}
		v.s = string(v.b)
	}
	if csv && strings.ContainsAny(v.s, ",\"\n\r") {
		b = append(b, '"')
		b = append(b, strings.ReplaceAll(v.s, `"`, `""`)...)
		return append(b, '"')
	}
	return append(b, v.s...)
}

func bytesNeedQuote(b []byte) bool {
	for _, c := range b {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

var tagOrigin = map[byte]string{'M': "Metric", 'S': "Status", 'K': "Key", 'C': "Config", 'P': "Product"}
var tagNature = map[byte]string{'A': "Age", 'a': "Avg", 'C': "Counter", 'D': "Duration", 'G': "Gauge",
	'L': "Limit", 'M': "Max", 'N': "Name", 'O': "Output", 'R': "Rate", 'T': "Time"}
var tagScope = map[byte]string{'P': "Process", 'S': "Service", 's': "System", 'C': "Cluster"}

func appendJSONField(b []byte, pos int, name, tags, typ string, v *fval) []byte {
	b = append(b, `,"field":{"pos":`...)
	b = strconv.AppendInt(b, int64(pos), 10)
	b = append(b, `,"name":`...)
	b = AppendJSONString(b, name)
	b = append(b, `},"processNum":1,"tags":{"origin":"`...)
	b = append(b, tagOrigin[tags[0]]...)
	b = append(b, `","nature":"`...)
	b = append(b, tagNature[tags[1]]...)
	b = append(b, `","scope":"`...)
	b = append(b, tagScope[tags[2]]...)
	b = append(b, `"},"value":{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","value":`...)
	if v.str {
		if v.b != nil {
			b = AppendJSONString(b, string(v.b))
		} else {
			b = AppendJSONString(b, v.s)
		}
	} else {
		b = strconv.AppendInt(b, v.n, 10)
	}
	return append(b, "}}"...)
}

func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return append(b, '"')
}

// Module columns: ssl and h2 are reported as zero (goha terminates TLS in
// Go and speaks no HTTP/2); h1 is filled for HTTP proxies.
const (
	modSSL = 103
	modH2  = 106
	modH1  = 119
	modEnd = nFields
)

func (d *statDumper) frontendRow(p *core.Proxy) {
	r := &d.row
	*r = statRow{}
	c := &p.FE
	http := p.Mode == core.ModeHTTP
	r.str(0, p.Name)
	r.str(1, "FRONTEND")
	r.u(4, c.Scur.Load())
	r.u(5, c.Smax.Load())
	slim := p.LiveMaxConn()
	if slim <= 0 {
		slim = d.proc.Conf.GlobalMaxConn()
	}
	r.u(6, int64(slim))
	r.u(7, c.Stot.Load())
	r.u(8, c.Bin.Load())
	r.u(9, c.Bout.Load())
	r.u(10, c.Dreq.Load())
	r.u(11, c.Dresp.Load())
	r.u(12, c.Ereq.Load())
	switch {
	case p.Disabled:
		r.str(17, "STOP")
	case p.FrontendStopped():
		r.str(17, "PAUSED")
	default:
		r.str(17, "OPEN")
	}
	r.u(26, 1)
	r.u(27, int64(p.ID))
	r.u(28, 0)
	r.u(32, objFE)
	r.u(33, c.SessRate.Rate(d.now))
	r.u(34, 0)
	r.u(35, c.SessRateMax.Load())
	if http {
		for i := 0; i < 6; i++ {
			r.u(39+i, c.Hrsp[i].Load())
		}
	}
	r.u(46, c.ReqRate.Rate(d.now))
	r.u(47, c.ReqRateMax.Load())
	r.u(48, c.ReqTot.Load())
	r.u(51, c.CompIn.Load())
	r.u(52, c.CompOut.Load())
	r.u(53, c.CompByp.Load())
	r.u(54, c.CompRsp.Load())
	r.str(75, p.Mode.String())
	r.u(77, c.ConnR.Rate(d.now))
	r.u(78, c.ConnRateMax.Load())
	r.u(79, c.ConnTot.Load())
	if http {
		r.u(80, c.Intercepted.Load())
		r.u(86, c.CacheLookups.Load())
		r.u(87, c.CacheHits.Load())
	}
	r.u(81, c.Dcon.Load())
	r.u(82, c.Dses.Load())
	r.u(83, c.Wrew.Load())
	r.u(94, c.Eint.Load())
	for i := modSSL; i < modEnd; i++ {
		r.u(i, 0)
	}
	if http {
		// An HTTP frontend's h1 connections are its sessions, its
		// streams its requests (open: under way).
		r.u(modH1+0, c.Scur.Load())
		r.u(modH1+1, c.H1OpenStreams.Load())
		r.u(modH1+2, c.ConnTot.Load())
		r.u(modH1+3, c.ReqTot.Load())
		r.u(modH1+4, c.H1BytesIn.Load())
		r.u(modH1+5, c.H1BytesOut.Load())
		r.u(modH1+6, c.H1SplicedBytesIn.Load())
		r.u(modH1+7, c.H1SplicedBytesOut.Load())
	}
}

// listenerRows writes one row per listening address of p (option
// socket-stats), named after the bind's `name` or sock-<n>.
func (d *statDumper) listenerRows(p *core.Proxy) {
	n := 0
	for _, b := range p.Binds {
		for _, a := range b.Addrs {
			n++
			if d.f.Bound && d.f.SID != -1 && n != d.f.SID {
				continue
			}
			r := &d.row
			*r = statRow{}
			c := &b.Counters
			r.str(0, p.Name)
			if b.Name != "" {
				r.str(1, b.Name)
			} else {
				r.str(1, "sock-"+strconv.Itoa(n))
			}
			r.u(4, c.Scur.Load())
			r.u(5, c.Smax.Load())
			r.u(6, int64(b.MaxConn))
			r.u(7, c.Stot.Load())
			r.u(8, c.Bin.Load())
			r.u(9, c.Bout.Load())
			r.u(10, c.Dreq.Load())
			r.u(11, c.Dresp.Load())
			r.u(12, c.Ereq.Load())
			if p.FrontendShut() || p.Disabled {
				r.str(17, "STOP")
			} else {
				r.str(17, "OPEN")
			}
			r.u(26, 1)
			r.u(27, int64(p.ID))
			r.u(28, int64(n))
			r.u(32, objLI)
			if d.legends {
				addr := a
				if i := strings.IndexByte(a, ':'); i >= 0 && strings.HasPrefix(a, "tcp") {
					addr = a[i+1:]
				}
				r.str(73, addr)
			}
			r.str(75, p.Mode.String())
			r.u(81, c.Dcon.Load())
			r.u(82, c.Dses.Load())
			r.u(83, c.Wrew.Load())
			r.u(94, c.Eint.Load())
			for i := modSSL; i < modH2; i++ {
				r.u(i, 0)
			}
			d.emit(objLI, p.ID, n)
		}
	}
}

// fullConn is the backend's slim: `fullconn`, or a tenth of the maxconn
// of the frontends that route to it (at least 1), as HAProxy computes it.
func fullConn(conf *core.Config, be *core.Proxy) int64 {
	if be.FullConn > 0 {
		return int64(be.FullConn)
	}
	sum := 0
	for _, fe := range conf.Proxies {
		if !fe.IsFrontend() {
			continue
		}
		routes := fe.DefBE == be || fe == be
		for _, ub := range fe.UseBackends {
			if ub.Target == be {
				routes = true
			}
		}
		if routes {
			m := fe.MaxConn
			if m <= 0 {
				m = conf.HardMaxConn()
			}
			sum += m
		}
	}
	if sum == 0 {
		return 1
	}
	return int64((sum + 9) / 10)
}

func (d *statDumper) backendRow(p *core.Proxy) {
	r := &d.row
	*r = statRow{}
	c := &p.BE
	http := p.Mode == core.ModeHTTP
	r.str(0, p.Name)
	r.str(1, "BACKEND")
	r.u(2, c.Qcur.Load())
	r.u(3, c.Qmax.Load())
	r.u(4, c.Scur.Load())
	r.u(5, c.Smax.Load())
	r.u(6, fullConn(d.proc.Conf, p))
	r.u(7, c.Stot.Load())
	r.u(8, c.Bin.Load())
	r.u(9, c.Bout.Load())
	r.u(10, c.Dreq.Load())
	r.u(11, c.Dresp.Load())
	r.u(13, c.Econ.Load())
	r.u(14, c.Eresp.Load())
	r.u(15, c.Wretr.Load())
	r.u(16, c.Wredis.Load())
	var wact, wbck, uact, ubck, act, bck int64
	list := p.ServerList()
	for _, s := range list {
		if !s.LBUsable() {
			continue
		}
		if s.Backup {
			bck++
			wbck += int64(s.EWeight())
			ubck += int64(s.UWeight())
		} else {
			act++
			wact += int64(s.EWeight())
			uact += int64(s.UWeight())
		}
	}
	w, uw := wact, uact
	if act == 0 {
		w, uw = wbck, ubck
	}
	if p.Direct() != core.DirectNone {
		// No load balancing: the servers have no share, as in HAProxy.
		uw = 0
	}
	if w > 0 || len(list) == 0 {
		r.str(17, "UP")
	} else {
		r.str(17, "DOWN")
	}
	r.u(18, w)
	r.u(19, act)
	r.u(20, bck)
	_, last, chkdown, downtime := p.BackendState()
	r.u(22, chkdown)
	r.u(23, d.now.Unix()-last)
	r.u(24, downtime)
	r.u(26, 1)
	r.u(27, int64(p.ID))
	r.u(28, 0)
	r.u(30, c.LbTot.Load())
	r.u(32, objBE)
	r.u(33, c.SessRate.Rate(d.now))
	r.u(35, c.SessRateMax.Load())
	if http {
		for i := 0; i < 6; i++ {
			r.u(39+i, c.Hrsp[i].Load())
		}
		r.u(48, c.ReqTot.Load())
	}
	r.u(49, c.CliAbrt.Load())
	r.u(50, c.SrvAbrt.Load())
	r.u(51, c.CompIn.Load())
	r.u(52, c.CompOut.Load())
	r.u(53, c.CompByp.Load())
	r.u(54, c.CompRsp.Load())
	r.u(55, lastSess(c, d.now))
	d.times(c)
	r.str(75, p.Mode.String())
	if d.legends {
		if p.CookiePersist != nil {
			r.str(74, p.CookiePersist.Name)
		}
		r.str(76, algoName(p))
	}
	r.u(83, c.Wrew.Load())
	r.u(84, c.Connect.Load())
	r.u(85, c.Reuse.Load())
	if http {
		r.u(86, c.CacheLookups.Load())
		r.u(87, c.CacheHits.Load())
	}
	r.u(94, c.Eint.Load())
	r.u(99, uw)
	r.u(100, 0)
	r.u(101, 0)
	r.u(102, 0)
	for i := modSSL; i < modEnd; i++ {
		r.u(i, 0)
	}
	if http {
		// An HTTP backend's h1 connections are its servers' (in use
		// and idle), one stream each while in use; every forwarded
		// request was a stream on a new or a reused connection.
		var open, used int64
		for _, s := range p.Servers {
			if st, ok := d.proc.ServerPool(s); ok {
				open += st.Used + st.IdleCur
				used += st.Used
			}
		}
		r.u(modH1+0, open)
		r.u(modH1+1, used)
		r.u(modH1+2, c.Connect.Load())
		r.u(modH1+3, c.Connect.Load()+c.Reuse.Load())
		r.u(modH1+4, c.H1BytesIn.Load())
		r.u(modH1+5, c.H1BytesOut.Load())
		r.u(modH1+6, c.H1SplicedBytesIn.Load())
		r.u(modH1+7, c.H1SplicedBytesOut.Load())
	}
}

func (d *statDumper) times(c *core.Counters) {
	r := &d.row
	n := c.Stot.Load()
	r.u(58, c.Qtime.Avg(n))
	r.u(59, c.Ctime.Avg(n))
	r.u(60, c.Rtime.Avg(n))
	r.u(61, c.Ttime.Avg(n))
	r.u(90, c.QtimeMax.Load())
	r.u(91, c.CtimeMax.Load())
	r.u(92, c.RtimeMax.Load())
	r.u(93, c.TtimeMax.Load())
}

func lastSess(c *core.Counters, now time.Time) int64 {
	if ls := c.LastSess.Load(); ls > 0 {
		return now.Unix() - ls
	}
	return -1
}

// algoName is the backend's algorithm as show stat names it.
func algoName(p *core.Proxy) string {
	if p.Direct() != core.DirectNone {
		return "none"
	}
	if len(p.Balance) == 0 {
		return "roundrobin"
	}
	a := p.Balance[0]
	switch {
	case strings.HasPrefix(a, "hdr("):
		return "hdr"
	case strings.HasPrefix(a, "rdp-cookie"):
		return "rdp-cookie"
	case a == "url_param":
		return "url_param"
	}
	return a
}

// Check status names and descriptions, indexed by HAProxy's HCHK_STATUS_*.
var checkStatus = [...]struct{ name, desc string }{
	{"UNK", "Unknown"}, {"INI", "Initializing"}, {"", "* starting"}, {"CHECKED", "Check passed"},
	{"HANA", "Health analyze"}, {"SOCKERR", "Socket error"}, {"L4OK", "Layer4 check passed"},
	{"L4TOUT", "Layer4 timeout"}, {"L4CON", "Layer4 connection problem"}, {"L6OK", "Layer6 check passed"},
	{"L6TOUT", "Layer6 timeout"}, {"L6RSP", "Layer6 invalid response"}, {"L7TOUT", "Layer7 timeout"},
	{"L7RSP", "Layer7 invalid response"}, {"", "Layer5-7 data"}, {"L7OK", "Layer7 check passed"},
	{"L7OKC", "Layer7 check conditionally passed"}, {"L7STS", "Layer7 wrong status"},
	{"PROCERR", "External check error"}, {"PROCTOUT", "External check timeout"}, {"PROCOK", "External check passed"},
}

const hchkL57Data = 14
const hchkChecked = 3

// serverStatus is show stat's status column for s (HAProxy 2.6's rules).
func serverStatus(proc *Process, s *core.Server) string {
	conf := proc.Conf
	adm := s.AdminState()
	ref := s
	for i := 0; i < 16 && ref.Track != "" && ref.Proxy != nil; i++ {
		be, sv := ref.Proxy.Name, ref.Track
		if j := strings.IndexByte(sv, '/'); j >= 0 {
			be, sv = sv[:j], sv[j+1:]
		}
		_, t := conf.FindServerRef(be, sv)
		if t == nil {
			break
		}
		ref = t
	}
	switch {
	case adm&core.AdminRMaint != 0:
		return "MAINT (resolution)"
	case adm&core.AdminIMaint != 0:
		via := s.Track
		if !strings.Contains(via, "/") {
			via = s.Proxy.Name + "/" + via
		}
		return "MAINT (via " + via + ")"
	case adm&core.AdminMaint != 0:
		return "MAINT"
	}
	chk := ref.CheckState.Load()&core.ChkStEnabled != 0
	agt := ref.AgentState.Load()&core.ChkStEnabled != 0
	health := int(ref.Health.Load())
	rise, fall := ref.Rise, ref.Fall
	op := s.OpState()
	upFmt := func(word string) string {
		return word + " " + strconv.Itoa(health-rise+1) + "/" + strconv.Itoa(fall)
	}
	switch op {
	case core.OpRunning, core.OpStarting:
		goingDown := chk && health < rise+fall-1
		if adm&core.AdminDrainMask != 0 {
			switch {
			case agt:
				return "DRAIN (agent)"
			case goingDown:
				return upFmt("DRAIN")
			}
			return "DRAIN"
		}
		if goingDown {
			return upFmt("UP")
		}
		if !chk {
			return "no check"
		}
		return "UP"
	case core.OpStopping:
		if (!chk && s.Track == "") || health == rise+fall-1 {
			return "NOLB"
		}
		return upFmt("NOLB")
	}
	switch {
	case agt && agentHealth(proc, ref) == 0:
		return "DOWN (agent)"
	case chk && health == 0:
		return "DOWN"
	case agt || chk:
		return "DOWN " + strconv.Itoa(health) + "/" + strconv.Itoa(rise)
	}
	return "DOWN"
}

// agentHealth is the agent's health counter, from the check hook; an
// agent nobody reports on counts as healthy.
func agentHealth(proc *Process, s *core.Server) int {
	if h, a := proc.CheckSnapshots(s); a == nil && h == nil {
		return 1
	}
	return CheckInfo(proc, s).AgentHealth
}

func (d *statDumper) serverRow(s *core.Server) {
	r := &d.row
	*r = statRow{}
	c := &s.Counters
	p := s.Proxy
	http := p.Mode == core.ModeHTTP
	r.str(0, p.Name)
	r.str(1, s.Name)
	r.u(2, c.Qcur.Load())
	r.u(3, c.Qmax.Load())
	r.u(4, c.Scur.Load())
	r.u(5, c.Smax.Load())
	if m := s.MaxConnLive(); m > 0 {
		r.u(6, int64(m))
	}
	r.u(7, c.Stot.Load())
	r.u(8, c.Bin.Load())
	r.u(9, c.Bout.Load())
	r.u(11, c.Dresp.Load())
	r.u(13, c.Econ.Load())
	r.u(14, c.Eresp.Load())
	r.u(15, c.Wretr.Load())
	r.u(16, c.Wredis.Load())
	r.str(17, serverStatus(d.proc, s))
	r.u(18, int64(s.EWeight()))
	r.u(19, boolInt(!s.Backup))
	r.u(20, boolInt(s.Backup))
	chk := s.CheckState.Load()&core.ChkStEnabled != 0
	agt := s.AgentState.Load()&core.ChkStEnabled != 0
	if chk {
		r.u(21, s.ChkFail.Load())
		r.u(22, s.ChkDown.Load())
	}
	r.u(23, d.now.Unix()-s.LastChange())
	if chk {
		r.u(24, s.DownTimeNow(d.now.Unix()))
	}
	if s.MaxQueue > 0 {
		r.u(25, int64(s.MaxQueue))
	}
	r.u(26, 1)
	r.u(27, int64(p.ID))
	r.u(28, int64(s.ID))
	r.u(30, c.LbTot.Load())
	if s.Track != "" {
		t := s.Track
		if !strings.Contains(t, "/") {
			t = p.Name + "/" + t
		}
		r.str(31, t)
	}
	r.u(32, objSV)
	r.u(33, c.SessRate.Rate(d.now))
	r.u(35, c.SessRateMax.Load())
	var cr CheckResult
	if chk || agt {
		cr = CheckInfo(d.proc, s)
	}
	// Check details are hidden while checks are paused (maintenance).
	if chk && s.CheckState.Load()&core.ChkStPaused == 0 {
		st := int(s.CheckStatus.Load())
		name, desc := "", ""
		if st >= 0 && st < len(checkStatus) {
			name, desc = checkStatus[st].name, checkStatus[st].desc
		}
		if cr.Status != "" {
			name = cr.Status
		}
		if cr.Desc != "" {
			desc = cr.Desc
		}
		if s.CheckState.Load()&core.ChkStInProgress != 0 {
			name = "* " + name
		}
		r.str(36, name)
		if st >= hchkL57Data {
			r.u(37, int64(cr.Code))
		}
		if st >= hchkChecked {
			r.u(38, cr.Duration.Milliseconds())
		}
		r.str(56, cr.LastChk)
		r.str(65, desc)
		r.u(67, int64(s.Rise))
		r.u(68, int64(s.Fall))
		r.u(69, int64(s.Health.Load()))
	}
	if http {
		for i := 0; i < 6; i++ {
			r.u(39+i, c.Hrsp[i].Load())
		}
		r.u(48, c.ReqTot.Load())
	}
	r.u(49, c.CliAbrt.Load())
	r.u(50, c.SrvAbrt.Load())
	r.u(55, lastSess(c, d.now))
	if agt {
		r.str(57, cr.LastAgt)
		r.str(62, cr.AgentStat)
		r.u(63, int64(cr.AgentCode))
		r.u(64, cr.AgentDur.Milliseconds())
		r.str(66, cr.AgentDesc)
		r.u(70, int64(cr.AgentRise))
		r.u(71, int64(cr.AgentFall))
		r.u(72, int64(cr.AgentHealth))
	}
	d.times(c)
	if d.legends {
		d.scratch = appendServerAddr(d.scratch[:0], s)
		r[73] = fval{set: true, str: true, b: d.scratch}
		if s.Cookie != "" {
			r.str(74, s.Cookie)
		}
	}
	r.str(75, p.Mode.String())
	r.u(83, c.Wrew.Load())
	r.u(84, c.Connect.Load())
	r.u(85, c.Reuse.Load())
	cs := ServerConns(d.proc, s)
	r.u(88, int64(cs.IdleCur))
	switch {
	case s.PoolMaxConn >= 0:
		r.u(89, int64(s.PoolMaxConn))
	case s.Dynamic:
		// HAProxy 2.6 does not apply default-server to dynamic servers,
		// whose idle limit stays 0.
		r.u(89, 0)
	}
	r.u(94, c.Eint.Load())
	r.u(95, int64(cs.Unsafe))
	r.u(96, int64(cs.Safe))
	r.u(97, int64(cs.UsedCur))
	r.u(98, int64(cs.NeedEst))
	r.u(99, int64(s.UWeight()))
	for i := modSSL; i < modH2; i++ {
		r.u(i, 0)
	}
}

// appendServerAddr appends show stat's addr: ip:port, IPv6 in brackets.
func appendServerAddr(b []byte, s *core.Server) []byte {
	a := s.Addr()
	switch {
	case a == nil:
		return b
	case a.Unix != "":
		return append(b, a.Unix...)
	case !a.IP.IsValid():
		return b
	}
	if a.IP.Is6() {
		b = append(b, '[')
		b = a.IP.AppendTo(b)
		b = append(b, ']')
	} else {
		b = a.IP.AppendTo(b)
	}
	b = append(b, ':')
	return strconv.AppendInt(b, int64(a.Port), 10)
}

// ConnStats is a server's pool state, as 2.6's show servers conn prints it.
type ConnStats struct {
	UsedCur, UsedMax, NeedEst int
	Unsafe, Safe, IdleCur     int
	PerThread                 []int // idle connections per thread
}

// CheckResult is what show stat reports about a server's checks.
type CheckResult struct {
	Status      string        // L4OK, L4CON, L7OK, ... ("" before the first check)
	Code        int           // layer 7 status code, 0 for none
	Duration    time.Duration // of the last check; -1 for none
	Desc        string        // "Layer4 check passed", ...
	Last        time.Time     // zero before the first check
	LastChk     string        // last check's detail ("Connection refused")
	LastAgt     string        // last agent check's detail
	AgentStat   string
	AgentCode   int
	AgentDur    time.Duration
	AgentDesc   string
	AgentRise   int
	AgentFall   int
	AgentHealth int
}

// ServerConns reports a server's connection pool (show servers conn, the
// *_conn_cur columns of show stat); a server the process does not serve
// has an empty one.
func ServerConns(proc *Process, s *core.Server) ConnStats {
	st, ok := proc.ServerPool(s)
	if !ok {
		return ConnStats{PerThread: make([]int, proc.Threads)}
	}
	cs := ConnStats{
		UsedCur: int(st.Used), UsedMax: int(st.UsedMax), NeedEst: int(st.NeedEst),
		Unsafe: int(st.IdleNb), Safe: int(st.SafeNb), IdleCur: int(st.IdleCur),
	}
	for _, n := range st.IdlePerThread {
		cs.PerThread = append(cs.PerThread, int(n))
	}
	return cs
}

// CheckInfo reports the last health check and agent check results.
func CheckInfo(proc *Process, s *core.Server) CheckResult {
	cr := CheckResult{Duration: -1, AgentDur: -1}
	h, a := proc.CheckSnapshots(s)
	if h != nil {
		st, _, _, desc, last := h.StatColumns(false)
		cr.Status, cr.Code, cr.Duration, cr.Desc, cr.LastChk = st, h.Code, h.Duration, desc, last
	}
	if a != nil {
		st, _, _, desc, last := a.StatColumns(true)
		cr.AgentStat, cr.AgentCode, cr.AgentDur, cr.AgentDesc, cr.LastAgt = st, a.Code, a.Duration, desc, last
		cr.AgentRise, cr.AgentFall, cr.AgentHealth = a.Rise, a.Fall, a.Health
	}
	return cr
}

// DumpStats writes show stat's output for f to w; legends shows the
// addresses, cookies and algorithms (an operator's socket, or the stats
// page's `stats show-legends`).
func DumpStats(proc *Process, w io.Writer, f StatFilter, legends bool, now time.Time) {
	d := statDumper{proc: proc, w: w, f: f, now: now, legends: legends, buf: make([]byte, 0, 4096)}
	d.dump()
}

// JSONTagNames are the words show stat and show info json print for a
// field's three tag letters.
func JSONTagNames(tags string) (origin, nature, scope string) {
	return tagOrigin[tags[0]], tagNature[tags[1]], tagScope[tags[2]]
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}
