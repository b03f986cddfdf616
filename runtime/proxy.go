package runtime

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"goha/core"
	"goha/core/stream"
)

// Commands acting on proxies, process limits and streams.
func init() {
	Register(
		&Command{Words: []string{"show", "backend"}, Usage: "show backend", Help: "list backends in the current running config", Run: cmdShowBackend},
		&Command{Words: []string{"disable", "frontend"}, Usage: "disable frontend <frontend>", Help: "temporarily disable specific frontend",
			Level: LevelAdmin, Run: cmdDisableFrontend},
		&Command{Words: []string{"enable", "frontend"}, Usage: "enable frontend <frontend>", Help: "re-enable specific frontend",
			Level: LevelAdmin, Run: cmdEnableFrontend},
		&Command{Words: []string{"shutdown", "frontend"}, Usage: "shutdown frontend <frontend>", Help: "stop a specific frontend",
			Level: LevelAdmin, Run: cmdShutdownFrontend},
		&Command{Words: []string{"set", "maxconn", "frontend"}, Usage: "set maxconn frontend <frontend> <value>",
			Help: "change a frontend's maxconn setting", Level: LevelAdmin, Run: cmdSetMaxConnFrontend},
		&Command{Words: []string{"set", "maxconn", "global"}, Usage: "set maxconn global <value>",
			Help: "change the per-process maxconn setting", Level: LevelAdmin, Run: cmdSetMaxConnGlobal},
		&Command{Words: []string{"set", "rate-limit"}, Usage: "set rate-limit <setting> <value>",
			Help: "change a rate limiting value", Level: LevelAdmin, Run: cmdSetRateLimit},
		&Command{Words: []string{"clear", "counters"}, Usage: "clear counters [all]",
			Help: "clear max statistics counters (or all counters)", Level: LevelOperator, Run: cmdClearCounters},
		&Command{Words: []string{"show", "errors"}, Usage: "show errors [<px>] [request|response]",
			Help: "report last request and/or response errors for each proxy", Level: LevelOperator, Run: cmdShowErrors},
		&Command{Words: []string{"show", "sess"}, Usage: "show sess [id]",
			Help: "report the list of current sessions or dump this exact session", Level: LevelOperator, Run: cmdShowSess},
		&Command{Words: []string{"shutdown", "session"}, Usage: "shutdown session [id]", Help: "kill a specific session",
			Level: LevelAdmin, Run: cmdShutdownSession},
	)
}

func cmdShowBackend(c *Ctx) {
	c.WriteString("# name\n")
	for _, p := range c.Proc.Conf.Proxies {
		if p.IsBackend() {
			c.WriteString(p.Name + "\n")
		}
	}
}

// findFrontend resolves a frontend by name or `#<id>`.
func findFrontend(c *Ctx, arg string) *core.Proxy {
	if arg == "" {
		c.Err("A frontend name is expected.")
		return nil
	}
	var p *core.Proxy
	if strings.HasPrefix(arg, "#") {
		if id, err := strconv.Atoi(arg[1:]); err == nil {
			p = c.Proc.Conf.FindProxyID(id)
		}
		if p != nil && !p.IsFrontend() {
			p = nil
		}
	} else {
		p = c.Proc.Conf.FindProxy(arg, core.CapFE)
	}
	if p == nil {
		c.Err("No such frontend.")
	}
	return p
}

func cmdDisableFrontend(c *Ctx) {
	p := findFrontend(c, c.Arg(2))
	if p == nil {
		return
	}
	if p.Disabled || p.FrontendShut() {
		c.Notice("Frontend was previously shut down, cannot disable.")
		return
	}
	if p.DisableFrontend() != nil {
		c.Notice("All sockets are already disabled.")
	}
}

func cmdEnableFrontend(c *Ctx) {
	p := findFrontend(c, c.Arg(2))
	if p == nil {
		return
	}
	if p.Disabled || p.FrontendShut() {
		c.Notice("Frontend was previously shut down, cannot enable.")
		return
	}
	if p.EnableFrontend() != nil {
		c.Notice("All sockets are already enabled.")
	}
}

func cmdShutdownFrontend(c *Ctx) {
	p := findFrontend(c, c.Arg(2))
	if p == nil {
		return
	}
	if p.Disabled || p.FrontendShut() {
		c.Notice("Frontend was already shut down.")
		return
	}
	p.ShutdownFrontend()
}

func cmdSetMaxConnFrontend(c *Ctx) {
	p := findFrontend(c, c.Arg(3))
	if p == nil {
		return
	}
	if c.Arg(4) == "" {
		c.Err("Integer value expected.")
		return
	}
	v := core.Atoi(c.Arg(4))
	if v < 0 {
		c.Err("Value out of range.")
		return
	}
	p.SetLiveMaxConn(v)
}

func cmdSetMaxConnGlobal(c *Ctx) {
	if c.Arg(3) == "" {
		c.Err("Expects an integer value.")
		return
	}
	conf := c.Proc.Conf
	v := core.Atoi(c.Arg(3))
	if v > conf.HardMaxConn() {
		c.Err("Value out of range.")
		return
	}
	conf.SetGlobalMaxConn(v)
}

const rateLimitUsage = "'set rate-limit' only supports :\n" +
	"   - 'connections global' to set the per-process maximum connection rate\n" +
	"   - 'sessions global' to set the per-process maximum session rate\n" +
	"   - 'ssl-sessions global' to set the per-process maximum SSL session rate\n" +
	"   - 'http-compression global' to set the per-process maximum compression speed in kB/s"

func cmdSetRateLimit(c *Ctx) {
	which, ok := map[string]int{"connections": core.RateConnections, "sessions": core.RateSessions,
		"ssl-sessions": core.RateSSLSessions, "http-compression": core.RateCompression}[c.Arg(2)]
	if !ok || c.Arg(3) != "global" {
		c.Err(rateLimitUsage)
		return
	}
	if c.Arg(4) == "" {
		c.Err("Expects an integer value.")
		return
	}
	v := core.Atoi(c.Arg(4))
	if v < 0 {
		c.Err("Value out of range.")
		return
	}
	c.Proc.Conf.SetRateLimit(which, v)
}

// cmdClearCounters resets the maxima (operator), or every counter with
// `all` (admin); any other third word is a plain clear, as in HAProxy.
func cmdClearCounters(c *Ctx) {
	all := c.Arg(2) == "all"
	if all && !c.Need(LevelAdmin) {
		return
	}
	clear := (*core.Counters).Clear
	if all {
		clear = (*core.Counters).ClearAll
	}
	for _, p := range c.Proc.Conf.Proxies {
		clear(&p.FE)
		clear(&p.BE)
		for _, b := range p.Binds {
			clear(&b.Counters)
		}
		for _, s := range p.ServerList() {
			clear(&s.Counters)
			if all {
				s.ChkFail.Store(0)
				s.ChkDown.Store(0)
			}
		}
	}
	c.Proc.ClearActivity()
}

// haDate formats t as HAProxy's log dates: 30/Nov/2026:00:06:07.795.
func haDate(t time.Time) string {
	return fmt.Sprintf("%02d/%s/%04d:%02d:%02d:%02d.%03d", t.Day(), t.Month().String()[:3], t.Year(),
		t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1e6)
}

func cmdShowErrors(c *Ctx) {
	var only *core.Proxy
	if a := c.Arg(2); a != "" && a != "request" && a != "response" {
		only = c.Proc.Conf.FindProxy(a, core.CapFE|core.CapBE)
		if only == nil {
			if id, err := strconv.Atoi(a); err == nil {
				only = c.Proc.Conf.FindProxyID(id)
			}
		}
		if only == nil {
			c.Err("No such proxy.")
			return
		}
	}
	dir := c.Arg(3)
	if only == nil {
		dir = c.Arg(2)
	}
	var caps []ErrorCapture
	for _, e := range errorCaptures(c.Proc) {
		if only != nil && e.Proxy != only {
			continue
		}
		if (dir == "request" && e.Response) || (dir == "response" && !e.Response) {
			continue
		}
		caps = append(caps, e)
	}
	c.Printf("Total events captured on [%s] : %d\n", haDate(time.Now()), len(caps))
	for _, e := range caps {
		kind, side := "request", "frontend"
		if e.Response {
			kind, side = "response", "backend"
		}
		c.Printf(" \n[%s] %s %s (#%d): invalid %s\n", haDate(e.When), side, e.Proxy.Name, e.Proxy.ID, kind)
		c.Printf("  backend %s (#%d), server %s (#%d), event #%d, src %s\n", orNone(e.Backend), e.BackendID,
			orNone(e.Server), e.ServerID, e.Event, e.Src)
		c.Printf("  buffer starts at 0 (including 0 out), %d free,\n", max(0, 16384-len(e.Buf)))
		c.Printf("  len %d, wraps at %d, error at position %d\n", len(e.Buf), 16336, e.ErrPos)
		c.WriteString("  \n")
		dumpText(c, e.Buf)
	}
}

func orNone(s string) string {
	if s == "" {
		return "<NONE>"
	}
	return s
}

// dumpText writes a capture as HAProxy does: 5-digit offsets, one line per
// LF, non-printable bytes escaped.
func dumpText(c *Ctx, b []byte) {
	var line strings.Builder
	start := 0
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch {
		case ch == '\r':
			line.WriteString(`\r`)
		case ch == '\n':
			line.WriteString(`\n`)
		case ch == '\t':
			line.WriteString(`\t`)
		case ch == '\\':
			line.WriteString(`\\`)
		case ch < 0x20 || ch >= 0x7f:
			fmt.Fprintf(&line, `\x%02x`, ch)
		default:
			line.WriteByte(ch)
		}
		if ch == '\n' || line.Len() >= 64 || i == len(b)-1 {
			c.Printf("  %05d  %s\n", start, line.String())
			line.Reset()
			start = i + 1
		}
	}
}

// sessRow is one stream as show sess prints it: a data-path stream or a
// CLI session, in HAProxy 2.6's terms. Flag words are the values HAProxy
// 2.6 shows for a stream in the same state (captured), since goha has no
// such flags; timers are computed from the timeouts in force.
type sessRow struct {
	id, uniq uint64
	epoch    uint32
	start    time.Time
	proto    string
	src      string // src= of the list: ip:port, or unix:<listener id>
	fe       string
	feID     int
	feMode   string
	lsName   string // listener's name, "?" without one
	lsID     int
	lsAddr   string // the address the client reached
	be       string // "" for none
	beID     int
	beMode   string
	beAddr   string // local address of the server connection, "" for none
	srv      string
	srvID    int
	srvAddr  string
	calls    uint32
	thread   int
	nice     int
	flags    uint32 // the stream's (SF_*)
	http     bool
	ssl      bool

	rq, rp         chanState
	scf, scb       scState
	exp, connExp   time.Duration // < 0: not armed
	cli            bool          // a CLI session: the back side is an applet
	scbConn        bool          // the back side has a connection to show
	scfFD, scbFD   int
	scbMux, scfMux string
}

// chanState is a channel's (rq or rp) flags, analysers and read timer.
type chanState struct {
	f, an uint32
	rx    time.Duration // < 0: not armed
	tofwd int
}

// scState is a stream connector's state (SC_ST_*) and flags.
type scState struct {
	st    int
	flags uint32
}

// The stream connector states of HAProxy 2.6 that goha's streams go through.
const (
	scIni = 0
	scCon = 5
	scEst = 8
)

var scStateNames = [...]string{"INI", "REQ", "QUE", "TAR", "ASS", "CON", "CER", "RDY", "EST", "DIS", "CLO"}

// left is what remains of timeout t started at since, or -1 when t is not
// set.
func left(t time.Duration, since time.Time, now time.Time) time.Duration {
	if t <= 0 {
		return -1
	}
	return max(t-now.Sub(since), 0)
}

func firstSet(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// streamRow describes a data-path stream. The flag words are those HAProxy
// 2.6 printed for its streams in the same phase.
func streamRow(s stream.SessionInfo, now time.Time) sessRow {
	fe := s.Frontend
	r := sessRow{
		id: s.ID, uniq: s.UniqID, epoch: s.Epoch, start: s.Start, proto: s.Proto,
		fe: fe.Name, feID: fe.ID, feMode: fe.Mode.String(), lsName: "?", lsID: 1,
		calls: s.Calls, thread: s.Thread, http: fe.Mode == core.ModeHTTP, ssl: s.TLS,
		exp: -1, connExp: -1, scfFD: s.FD, scbFD: s.SrvFD,
	}
	for i, b := range fe.Binds {
		if b == s.Bind {
			r.lsID = i + 1
		}
	}
	if s.Bind != nil && s.Bind.Name != "" {
		r.lsName = s.Bind.Name
	}
	r.src, r.lsAddr = addrText(s.Src, r.lsID), addrText(s.Dst, r.lsID)
	to := fe.Timeouts
	var beTO core.Timeouts
	if be := s.Backend; be != nil {
		r.be, r.beID, r.beMode, beTO = be.Name, be.ID, be.Mode.String(), be.Timeouts
	}
	if sv := s.Server; sv != nil {
		r.srv, r.srvID = sv.Name, sv.ID
	}
	if s.SrvLocal != nil {
		r.beAddr, r.srvAddr = addrText(s.SrvLocal, 0), addrText(s.SrvRemote, 0)
		r.scbConn = true
	}
	r.scfMux, r.scbMux = "PASS", "PASS"
	if r.http {
		r.scfMux, r.scbMux = "H1", "H1"
	}
	r.flags = 0x8 // SF_ADDR_SET
	if r.srv != "" {
		r.flags = 0x4a // and SF_ASSIGNED, SF_CURR_SESS
	}
	if r.http {
		r.flags |= 0xc00 // SF_REDIRECTABLE, SF_HTX
	}
	r.rq = chanState{rx: -1}
	r.rp = chanState{rx: -1}
	connect := firstSet(beTO.Connect, 5*time.Second)
	since := s.PhaseStart
	switch {
	case s.Phase == stream.PhaseRequest:
		// HAProxy has no stream between requests: an established client
		// side and a back side not begun.
		wait := firstSet(to.HTTPRequest, to.Client)
		if s.Calls > 1 {
			wait = firstSet(to.HTTPKeepAlive, to.HTTPRequest, to.Client)
		}
		r.rq = chanState{f: 0x808000, rx: left(wait, since, now)}
		r.rp = chanState{f: 0x80000000, rx: -1}
		r.scf, r.scb = scState{scEst, 0}, scState{scIni, 0x1}
		r.exp = r.rq.rx
	case s.Phase == stream.PhaseConnect && r.http:
		r.rq = chanState{f: 0x4dc00000, an: 0x8000, rx: -1}
		r.rp = chanState{f: 0x80000000, rx: -1}
		r.scf, r.scb = scState{scEst, 0x280}, scState{scCon, 0x11}
		r.connExp = left(connect, since, now)
		r.exp = r.connExp
	case s.Phase == stream.PhaseConnect:
		r.rq = chanState{f: 0x808000, rx: left(to.Client, since, now), tofwd: -1}
		r.rp = chanState{f: 0x80000000, rx: -1}
		r.scf, r.scb = scState{scEst, 0}, scState{scCon, 0x1}
		r.connExp = left(connect, since, now)
		r.exp = r.connExp
	case s.Phase == stream.PhaseResponse:
		r.rq = chanState{f: 0x49c40000, an: 0x8000, rx: -1}
		r.rp = chanState{f: 0x80400000, an: 0x1400000, rx: left(beTO.Server, since, now)}
		r.scf, r.scb = scState{scEst, 0x80}, scState{scEst, 0x11}
		r.exp = r.rp.rx
	case s.Phase == stream.PhaseBody:
		r.rq = chanState{f: 0x49c40000, an: 0x8000, rx: -1}
		r.rp = chanState{f: 0x80040000, an: 0x4000000, rx: left(beTO.Server, since, now)}
		r.scf, r.scb = scState{scEst, 0x80}, scState{scEst, 0x11}
		r.exp = r.rp.rx
	default: // PhaseTunnel
		// Inactivity timeouts re-armed by every read: goha prints them
		// whole, not what is left since the last one.
		cli, srv := to.Client, beTO.Server
		if beTO.Tunnel > 0 {
			cli, srv = beTO.Tunnel, beTO.Tunnel
		}
		r.rq = chanState{f: 0x848000, rx: left(cli, now, now), tofwd: -1}
		r.rp = chanState{f: 0x80008000, rx: left(srv, now, now), tofwd: -1}
		r.scf, r.scb = scState{scEst, 0}, scState{scEst, 0x1}
		if r.http {
			r.scf.flags, r.scb.flags = 0x80, 0x11
		}
		r.exp = r.rq.rx
		if r.rp.rx >= 0 && (r.exp < 0 || r.rp.rx < r.exp) {
			r.exp = r.rp.rx
		}
	}
	return r
}

// cliRow describes a CLI session, as HAProxy's GLOBAL frontend streams.
func cliRow(s SessionInfo, timeout time.Duration, now time.Time) sessRow {
	r := sessRow{
		id: s.ID, start: now.Add(-s.Age), proto: s.Proto, src: s.Src, fe: "GLOBAL", feMode: "tcp",
		lsName: "?", lsID: 1, lsAddr: s.Src, calls: uint32(s.Calls), nice: -64, flags: 0x8, cli: true,
		exp: timeout, connExp: -1, scfFD: s.FD, scbFD: -1, scfMux: "PASS",
		rq: chanState{f: 0xc08000, rx: -1, tofwd: -1}, rp: chanState{f: 0x80008002, rx: -1, tofwd: -1},
		scf: scState{scEst, 0}, scb: scState{scEst, 0x1},
	}
	if r.src == "" {
		r.src = "unix:1"
	}
	return r
}

// addrText prints an address as HAProxy's show sess does: ip:port (no
// brackets around IPv6), or unix:<listener id>.
func addrText(a net.Addr, lsID int) string {
	switch a := a.(type) {
	case *net.TCPAddr:
		ip := a.IP
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		return ip.String() + ":" + strconv.Itoa(a.Port)
	case nil:
		return ""
	}
	if lsID == 0 {
		return "unix"
	}
	return "unix:" + strconv.Itoa(lsID)
}

// humanTime is HAProxy's human_time: at most two units, 0s for nothing:
// 28s, 1m30s, 1m, 2h3m, 1d2h.
func humanTime(d time.Duration) string {
	t := int64(d / time.Second)
	if t < 0 {
		return "?"
	}
	var b []byte
	n := 2
	if t >= 86400 {
		b = fmt.Appendf(b, "%dd", t/86400)
		n--
	}
	if n > 0 && t%86400/3600 != 0 {
		b = fmt.Appendf(b, "%dh", t%86400/3600)
		n--
	}
	if n > 0 && t%3600/60 != 0 {
		b = fmt.Appendf(b, "%dm", t%3600/60)
		n--
	}
	if (n > 0 && t%60 != 0) || t == 0 {
		b = fmt.Appendf(b, "%ds", t%60)
	}
	return string(b)
}

// timer prints an armed timer's time left for the list, "" when not armed.
func timer(d time.Duration) string {
	if d < 0 {
		return ""
	}
	return humanTime(d)
}

// timerLong prints it for the detailed dump.
func timerLong(d time.Duration) string {
	if d < 0 {
		return "<NEVER>"
	}
	return humanTime(d)
}

// hexAlt is C's %#x: 0 has no prefix.
func hexAlt(v uint32) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}

func orNoneLower(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// appendSessLine appends r as one line of show sess, in 2.6's keys and
// order. rate, cpu and lat are 0: goha counts no wake-up rate and runs
// without task profiling, as HAProxy does by default.
func appendSessLine(b []byte, r sessRow, now time.Time) []byte {
	b = fmt.Appendf(b, "0x%x: proto=%s src=%s fe=%s be=%s srv=%s ts=00 epoch=%s age=%s calls=%d rate=0 cpu=0 lat=0",
		r.id, r.proto, r.src, r.fe, orNone(r.be), orNoneLower(r.srv), hexAlt(r.epoch), humanTime(time.Duration(now.Unix()-r.start.Unix())*time.Second), r.calls)
	for _, ch := range []struct {
		name string
		c    chanState
	}{{"rq", r.rq}, {"rp", r.rp}} {
		b = fmt.Appendf(b, " %s[f=%06xh,i=0,an=%02xh,rx=%s,wx=,ax=]", ch.name, ch.c.f, ch.c.an, timer(ch.c.rx))
	}
	b = fmt.Appendf(b, " scf=[%d,%xh,fd=%d] scb=[%d,%xh,fd=%d] exp=%s rc=0 c_exp=%s\n",
		r.scf.st, r.scf.flags, r.scfFD, r.scb.st, r.scb.flags, r.scbFD, timer(r.exp), timer(r.connExp))
	return b
}

// appendSessDetail appends r as show sess <id> dumps it, in 2.6's layout.
// goha's objects have no addresses: the stream's own is its id, the
// others print as (nil); fields goha does not have print HAProxy's value
// for an idle stream (0, <NEVER>).
func appendSessDetail(b []byte, r sessRow, now time.Time) []byte {
	t := r.start
	b = fmt.Appendf(b, "0x%x: [%02d/%s/%04d:%02d:%02d:%02d.%06d] id=%d proto=%s source=%s\n",
		r.id, t.Day(), t.Month().String()[:3], t.Year(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000,
		r.uniq, r.proto, r.src)
	srvConn := "(nil)"
	b = fmt.Appendf(b, "  flags=0x%x, conn_retries=0, conn_exp=%s conn_et=0x000 srv_conn=%s, pend_pos=(nil) waiting=0 epoch=%s\n",
		r.flags, timerLong(r.connExp), srvConn, hexAlt(r.epoch))
	b = fmt.Appendf(b, "  frontend=%s (id=%d mode=%s), listener=%s (id=%d) addr=%s\n", r.fe, r.feID, r.feMode, r.lsName, r.lsID, r.lsAddr)
	if r.be == "" {
		b = append(b, "  backend=<NONE> (id=-1 mode=-)"...)
	} else {
		b = fmt.Appendf(b, "  backend=%s (id=%d mode=%s)", r.be, r.beID, r.beMode)
	}
	if r.beAddr != "" {
		b = fmt.Appendf(b, " addr=%s", r.beAddr)
	}
	b = append(b, '\n')
	if r.srv == "" {
		b = append(b, "  server=<NONE> (id=-1)"...)
	} else {
		b = fmt.Appendf(b, "  server=%s (id=%d)", r.srv, r.srvID)
	}
	if r.srvAddr != "" {
		b = fmt.Appendf(b, " addr=%s", r.srvAddr)
	}
	b = append(b, '\n')
	tmask := uint64(1) << (r.thread % 64)
	b = fmt.Appendf(b, "  task=(nil) (state=0x00 nice=%d calls=%d rate=0 exp=%s tmask=%#x age=%s)\n",
		r.nice, r.calls, timerLong(r.exp), tmask, humanTime(time.Duration(now.Unix()-r.start.Unix())*time.Second))
	xprt := "RAW"
	if r.ssl {
		xprt = "SSL"
	}
	b = fmt.Appendf(b, "  scf=(nil) flags=0x%08x state=%s endp=CONN,(nil),0x00000000 sub=0\n", r.scf.flags, scStateNames[r.scf.st])
	b = fmt.Appendf(b, "      co0=(nil) ctrl=%s xprt=%s mux=%s data=STRM target=LISTENER:(nil)\n", r.proto, xprt, r.scfMux)
	b = fmt.Appendf(b, "      flags=0x00000300 fd=%d fd.state=00 updt=0 fd.tmask=%#x\n", r.scfFD, tmask)
	switch {
	case r.cli:
		b = fmt.Appendf(b, "  scb=(nil) flags=0x%08x state=%s endp=APPCTX,(nil),0x00000000 sub=0\n", r.scb.flags, scStateNames[r.scb.st])
		b = fmt.Appendf(b, "      app1=(nil) st0=0 st1=0 st2=0 applet=<CLI> tmask=%#x nice=%d calls=%d rate=0 cpu=0 lat=0\n", tmask, r.nice, r.calls)
	default:
		b = fmt.Appendf(b, "  scb=(nil) flags=0x%08x state=%s endp=CONN,(nil),0x00000000 sub=0\n", r.scb.flags, scStateNames[r.scb.st])
		if r.scbConn {
			ctrl := "tcpv4"
			if strings.Count(r.srvAddr, ":") > 1 {
				ctrl = "tcpv6"
			} else if r.srvAddr == "unix" {
				ctrl = "unix_stream"
			}
			b = fmt.Appendf(b, "      co1=(nil) ctrl=%s xprt=RAW mux=%s data=STRM target=SERVER:(nil)\n", ctrl, r.scbMux)
			b = fmt.Appendf(b, "      flags=0x00000300 fd=%d fd.state=00 updt=0 fd.tmask=%#x\n", r.scbFD, tmask)
		}
	}
	for _, ch := range []struct {
		name string
		c    chanState
	}{{"req", r.rq}, {"res", r.rp}} {
		b = fmt.Appendf(b, "  %s=(nil) (f=0x%06x an=0x%x pipe=0 tofwd=%d total=0)\n", ch.name, ch.c.f, ch.c.an, ch.c.tofwd)
		b = fmt.Appendf(b, "      an_exp=<NEVER> rex=%s wex=<NEVER>\n", timerLong(ch.c.rx))
		b = append(b, "      buf=(nil) data=(nil) o=0 p=0 i=0 size=0\n"...)
		if r.http {
			b = append(b, "      htx=(nil) flags=0x0 size=0 data=0 used=0 wrap=NO extra=0\n"...)
		}
	}
	return b
}

// strtoul reads a number as C's strtoul(s, NULL, 0) does, which is how
// HAProxy reads a session pointer: 0x for hex, a leading 0 for octal, the
// longest valid prefix, and 0 for none.
func strtoul(s string) uint64 {
	s = strings.TrimLeft(s, " \t")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && strings.ContainsRune("0123456789abcdefABCDEF", rune(s[2])):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := uint64(36)
		switch ch := s[i]; {
		case ch >= '0' && ch <= '9':
			d = uint64(ch - '0')
		case ch >= 'a' && ch <= 'z':
			d = uint64(ch-'a') + 10
		case ch >= 'A' && ch <= 'Z':
			d = uint64(ch-'A') + 10
		}
		if d >= base {
			break
		}
		v = v*base + d
	}
	if neg {
		v = -v
	}
	return v
}

// sessRows lists the data path's streams, then the CLI's sessions, as
// HAProxy lists its frontends' streams and its CLI's.
func sessRows(c *Ctx, now time.Time) []sessRow {
	var rows []sessRow
	for _, s := range c.Proc.Sessions() {
		rows = append(rows, streamRow(s, now))
	}
	if c.s.srv != nil {
		for _, s := range c.s.srv.cliSessions() {
			rows = append(rows, cliRow(s, c.s.timeout, now))
		}
	}
	return rows
}

// cmdShowSess lists the streams in flight, or dumps the one whose id is
// given ("all", or -1 as 2.6 reads it: every one). As in 2.6, an argument
// that reads as 0 lists them, and each call advances the stream epoch.
func cmdShowSess(c *Ctx) {
	c.Proc.NextSessEpoch()
	now := time.Now()
	rows := sessRows(c, now)
	arg := c.Arg(2)
	var b []byte
	id := strtoul(arg)
	switch {
	case arg == "all" || id == ^uint64(0):
		for _, r := range rows {
			b = appendSessDetail(b, r, now)
		}
	case id != 0:
		for _, r := range rows {
			if r.id == id {
				b = appendSessDetail(b, r, now)
			}
		}
		if b == nil {
			b = append(b, "Session not found.\n"...)
		}
	default:
		for _, r := range rows {
			b = appendSessLine(b, r, now)
		}
	}
	c.Write(b)
}

// cmdShutdownSession kills a data-path stream or a CLI session. As in
// 2.6, an id that reads as 0 is refused as such, any other that names no
// stream is "No such session".
func cmdShutdownSession(c *Ctx) {
	id := strtoul(c.Arg(2))
	if id == 0 {
		c.Err("Session pointer expected (use 'show sess').")
		return
	}
	if c.Proc.ShutdownSession(id) {
		return
	}
	if c.s.srv != nil && c.s.srv.closeCLISession(id) {
		return
	}
	c.Err("No such session (use 'show sess').")
}
