package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"goha/core"
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
	v := atoi(c.Arg(4))
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
	v := atoi(c.Arg(3))
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
	v := atoi(c.Arg(4))
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
	c.Proc.ClearAccepted()
	c.Proc.ClearFDTakeover()
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

func cmdShowSess(c *Ctx) {
	var list []SessionInfo
	if c.s.srv != nil {
		list = append(list, c.s.srv.cliSessions()...)
	}
	for _, s := range list {
		c.Printf("0x%x: proto=%s src=%s fe=%s be=%s srv=%s ts=00 epoch=0 age=%s calls=%d rate=0 cpu=0 lat=0 rq[f=0h,i=0,an=00h,rx=,wx=,ax=] rp[f=0h,i=0,an=00h,rx=,wx=,ax=] scf=[8,0h,fd=%d] scb=[8,0h,fd=-1] exp= rc=0 c_exp=\n",
			s.ID, s.Proto, s.Src, s.Frontend, orNone(s.Backend), srvName(s.Server), humanAge(s.Age), s.Calls, s.FD)
	}
}

func srvName(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// humanAge formats a duration as HAProxy's human_time: 5s, 1m30s, 2h3m, 1d2h.
func humanAge(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s/60%60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s/3600%24)
}

func cmdShutdownSession(c *Ctx) {
	id, err := strconv.ParseUint(c.Arg(2), 0, 64)
	if err != nil || id == 0 {
		c.Err("Session pointer expected (use 'show sess').")
		return
	}
	if c.s.srv != nil && c.s.srv.closeCLISession(id) {
		return
	}
	c.Err("No such session (use 'show sess').")
}
