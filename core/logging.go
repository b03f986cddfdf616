package core

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"goha/core/config"
	"goha/core/diag"
	"goha/ring"
)

// Logging: `log` lines, `ring` and `log-forward` sections, and the access
// logs of the data path, built on the ring package. The ring package parses
// and formats; core places the loggers on proxies and feeds them.

func init() {
	registerSection("ring", parseRingSection)
	registerSection("log-forward", parseLogForwardSection)
	registerPostCheck(openLogTargets)
}

func (c *Config) logs() *logState {
	if c.logging == nil {
		c.logging = &logState{reg: ring.NewRegistry()}
	}
	return c.logging
}

// LogRegistry is the configuration's rings, for `show events`.
func (c *Config) LogRegistry() *ring.Registry { return c.logs().reg }

func parseLogLine(c *kwCtx, args []string) error {
	if c.neg {
		if err := ring.ParseNoLog(append([]string{"log"}, args...)); err != nil {
			return err
		}
		if c.p != nil {
			c.p.NoLog, c.p.Logs, c.p.LogGlobal = true, nil, false
		}
		return nil
	}
	if len(args) > 0 {
		// The target is an address: variables expand even unquoted, as
		// HAProxy's address parser does.
		args = append([]string{config.ExpandEnv(args[0], c.env)}, args[1:]...)
	}
	l, err := ring.ParseLogArgs(args, c.p == nil)
	if err != nil {
		return logErr(err)
	}
	if c.p == nil {
		c.g.Logs = append(c.g.Logs, LineDef{c.pos, args})
		return nil
	}
	if l.Inherit {
		c.p.LogGlobal = true
		return nil
	}
	c.p.Logs = append(c.p.Logs, LineDef{c.pos, args})
	return nil
}

// logErr words a log line's error as HAProxy does, after the keyword.
func logErr(err error) error {
	var w *diag.Warn
	if errors.As(err, &w) {
		return err
	}
	return errf("log : %v", err)
}

func parseRingSection(b *builder, s *config.Section) {
	st := b.cfg.logs()
	r, err := st.reg.ParseRing(append([]string{"ring", s.Name}, s.Args...))
	if err != nil {
		b.report(s.Pos, err)
		return
	}
	for _, ln := range s.Lines {
		if w := ln.Words; w[0] == "server" && len(w) > 3 && !b.checkServerParams(ln, s.Name, w[1], w[3:]) {
			continue
		}
		if err := ring.ParseRingKeyword(r, ln.Words); err != nil {
			b.reportRing(ln, err, ring.RingKeywords, "ring")
		}
	}
}

func parseLogForwardSection(b *builder, s *config.Section) {
	st := b.cfg.logs()
	lf, err := ring.ParseLogForward(append([]string{"log-forward", s.Name}, s.Args...))
	if err != nil {
		b.report(s.Pos, err)
		return
	}
	for _, ln := range s.Lines {
		if err := checkLogForwardArgs(ln.Words); err != nil {
			b.report(ln.Pos, err)
			continue
		}
		if err := lf.ParseKeyword(ln.Words); err != nil {
			if ln.Words[0] == "log" {
				err = logErr(err)
			}
			b.reportRing(ln, err, ring.LogForwardKeywords, "log-forward")
		}
	}
	st.forwards = append(st.forwards, lf)
}

// checkLogForwardArgs refuses the words after a log-forward keyword's
// arguments that HAProxy refuses; the ring package reads only what it
// needs.
func checkLogForwardArgs(w []string) error {
	switch w[0] {
	case "maxconn", "backlog":
		if len(w) > 2 {
			return errf("'%s' cannot handle unexpected argument '%s'.", w[0], w[2])
		}
	case "bind", "dgram-bind":
		if len(w) < 3 {
			return nil
		}
		if kw := unknownBindParam(w[2:]); kw != "" {
			if w[0] == "dgram-bind" {
				return errf("unknown keyword '%s' in 'log-forward' section.", kw)
			}
			return errf("'bind %s' in section 'log-forward': unknown keyword '%s'.", w[1], kw)
		}
	}
	return nil
}

func (b *builder) reportRing(ln config.Line, err error, kws []string, section string) {
	msg := err
	if strings.HasPrefix(err.Error(), "unknown keyword '"+ln.Words[0]+"'") {
		if best := SuggestFunc(ln.Words[0], kws); best != "" {
			msg = fmt.Errorf("%s; did you mean '%s' maybe ?", strings.TrimSuffix(err.Error(), "."), best)
		}
	}
	b.report(ln.Pos, msg)
}

// openLogTargets builds every logger and resolves ring names once every
// section is read (a ring may be declared after the lines that use it).
func openLogTargets(b *builder) {
	st := b.cfg.logs()
	build := func(d LineDef, global bool) *ring.Logger {
		l, err := ring.ParseLogArgs(d.Words, global)
		if err != nil {
			return nil // reported when the line was read
		}
		l.File, l.Line = d.Pos.File, d.Pos.Line
		if err := l.Open(st.reg); err != nil {
			b.report(d.Pos, err)
			return nil
		}
		return l
	}
	for _, d := range b.cfg.Global.Logs {
		if l := build(d, true); l != nil {
			st.global = append(st.global, l)
		}
	}
	g := &b.cfg.Global
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, p := range b.cfg.Proxies {
		for _, d := range p.Logs {
			if l := build(d, false); l != nil {
				p.loggers = append(p.loggers, l)
			}
		}
		if p.LogGlobal {
			p.loggers = append(p.loggers, st.global...)
		}
		tag := p.LogTag
		if tag == "" {
			tag = g.LogTag
		}
		if tag == "" {
			tag = "haproxy"
		}
		p.logMeta = ring.Meta{Facility: -1, Level: ring.LevelInfo, Tag: []byte(tag), PID: pid}
		if g.Hostname != "" {
			p.logMeta.Host = []byte(g.Hostname)
		}
	}
	for _, lf := range st.forwards {
		if err := lf.Open(st.reg); err != nil {
			b.d.Add(diag.Diag{Sev: diag.Alert, Msg: err.Error()})
		}
	}
}

// sendLog hands an access log message to the frontend's loggers.
func (p *Proxy) SendLog(msg []byte, level int) {
	if len(p.loggers) == 0 {
		return
	}
	m := p.logMeta
	m.Level = level
	p.loggers.Send(&m, msg)
}

// LogTotals returns the log lines dropped by datagram targets that had no
// room for them (show info's DroppedLogs) and the messages log-forward
// sections received (CumRecvLogs).
func (c *Config) LogTotals() (dropped, received uint64) {
	c.eachLogger(func(l *ring.Logger) { dropped += l.Dropped() })
	for _, lf := range c.logs().forwards {
		received += lf.Received()
	}
	return dropped, received
}

// eachLogger calls fn once for every logger of the configuration (global
// loggers appear in every proxy that says `log global`).
func (c *Config) eachLogger(fn func(*ring.Logger)) {
	st := c.logs()
	seen := map[*ring.Logger]bool{}
	each := func(ls ring.Loggers) {
		for _, l := range ls {
			if !seen[l] {
				seen[l] = true
				fn(l)
			}
		}
	}
	each(st.global)
	for _, p := range c.Proxies {
		each(p.loggers)
	}
	for _, lf := range st.forwards {
		each(lf.Loggers)
	}
}

// checkServerParams refuses the first word after the address of a server
// that is not a proxy's (a peer, a ring's server) and is no server
// keyword, naming the server owner/name as HAProxy does; it reports and
// returns false on the first.
func (b *builder) checkServerParams(ln config.Line, owner, name string, params []string) bool {
	for i := 0; i < len(params); i++ {
		k, ok := serverKeywords[params[i]]
		if !ok {
			b.d.Add(diag.Diag{Sev: diag.Alert, Pos: ln.Pos, Msg: fmt.Sprintf("'server %s/%s' : unknown keyword '%s'.", owner, name, params[i])})
			return false
		}
		i += k.Args
	}
	return true
}
