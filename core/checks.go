package core

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strconv"

	"goha/core/check"
	"goha/core/diag"
	"goha/ring"
)

// Health checks: the check package runs probes and keeps rise/fall state;
// core builds the rulesets after validation (check options may follow the
// server lines, so HAProxy initialises checks only then), applies verdicts
// to server states and reports them in logs.

func init() {
	registerPostCheck(buildChecks)
	startHooks = append(startHooks, startChecks)
	AddServerHook(checkSettingsChanged)
	registerKeywords(
		option("log-health-checks", scopeDefaults|scopeBE, func(p *Proxy) *bool { return &p.LogHealthChecks }),
	)
}

// buildChecks builds every backend's check rules and every checked
// server's check configuration.
func buildChecks(b *builder) {
	cbs := map[*Proxy]*check.Backend{}
	var backendOf func(p *Proxy) *check.Backend
	backendOf = func(p *Proxy) *check.Backend {
		if cb, ok := cbs[p]; ok {
			return cb
		}
		cb := check.NewBackend(p.Name, p.Cap&CapDefaults != 0)
		if p.tmpl != nil {
			cb.InheritFrom(backendOf(p.tmpl))
		}
		for _, r := range p.CheckRules {
			var err error
			words := r.Words
			switch words[0] {
			case "tcp-check":
				err = cb.TCPCheck(words)
			case "http-check":
				err = cb.HTTPCheck(words)
			default:
				err = cb.Option(words)
			}
			if err != nil {
				var w *check.Warning
				if errors.As(err, &w) {
					b.d.Warnf(r.Pos, "%s", err.Error())
				} else {
					b.d.Alertf(r.Pos, "%s", err.Error())
				}
			}
		}
		cbs[p] = cb
		return cb
	}
	for _, p := range b.cfg.Proxies {
		if !p.IsBackend() {
			continue
		}
		cb := backendOf(p)
		rules, warns, err := cb.Finalize(capName(p.Cap))
		for _, w := range warns {
			b.d.Add(diag.Diag{Sev: diag.Warning, Pos: p.Pos, Msg: w})
		}
		if err != nil {
			b.d.Add(diag.Diag{Sev: diag.Alert, Pos: p.Pos, Msg: err.Error()})
			continue
		}
		p.checkRules = rules
	}
}

// checkReporter receives a server's check results.
type checkReporter struct {
	s    *Server
	node string // global "node", or the host name, for send-state
}

// checkSettings turns a server's configuration into the check package's.
func (s *Server) checkConfig() check.ServerConfig {
	p := s.Proxy
	hs := check.Settings{
		Inter: s.Inter, FastInter: s.FastInter, DownInter: s.DownInter,
		Rise: s.Rise, Fall: s.Fall, Addr: s.CheckAddr, Port: s.CheckPort,
		SSL: s.CheckSSL || (s.SSL == 1 && s.CheckPort == 0 && s.CheckAddr == ""),
		SNI: s.CheckSNI, SendProxy: s.CheckSendProxy || ((s.SendProxy || s.SendProxyV2) && s.CheckPort == 0 && s.CheckAddr == ""),
	}
	if hs.SSL {
		hs.TLS = &tls.Config{InsecureSkipVerify: true}
		if tc := s.tlsConfig(); tc != nil {
			hs.TLS = tc.Clone()
		}
		if hs.SNI != "" {
			hs.TLS.ServerName = hs.SNI
		}
	}
	as := check.Settings{
		Inter: s.AgentInter, Rise: 1, Fall: 1, Addr: s.AgentAddr, Port: s.AgentPort, AgentSend: s.AgentSend,
	}
	if as.Inter == 0 {
		as.Inter = s.Inter
	}
	o := check.ServerOptions{Check: s.Check, AgentCheck: s.Agent, Health: hs, Agent: as,
		ErrorLimit: s.ErrorLimit}
	switch s.Observe {
	case "layer4":
		o.Observe = check.ObserveLayer4
	case "layer7":
		o.Observe = check.ObserveLayer7
	}
	switch s.OnError {
	case "fastinter":
		o.OnError = check.OnErrorFastInter
	case "fail-check":
		o.OnError = check.OnErrorFailCheck
	case "sudden-death":
		o.OnError = check.OnErrorSuddenDeath
	case "mark-down":
		o.OnError = check.OnErrorMarkDown
	}
	a := s.Addr()
	host := ""
	if a.IP.IsValid() {
		host = a.IP.String()
	}
	cfg := o.Config(p.Name, s.Name, host, a.Port, p.checkRules, check.Timeouts{Connect: p.Timeouts.Connect, Check: p.Timeouts.Check})
	cfg.Disabled = s.Disabled
	return cfg
}

// prepareDynamicChecks builds the checks of a server add server creates:
// configured, but neither enabled nor probing until enable health or
// enable agent, as in HAProxy.
func (s *Server) prepareDynamicChecks(g *Global) {
	if !s.Check && !s.Agent {
		return
	}
	c := check.NewServer(s.checkConfig(), checkReporter{s, checkNode(g)})
	if c.Health != nil {
		c.Health.Disable()
	}
	if c.Agent != nil {
		c.Agent.Disable()
	}
	s.chk = c
}

// addChecks schedules a dynamic server's checks, starting the scheduler
// when the configuration had no checked server.
func (proc *Process) addChecks(c *check.Server) {
	proc.checksMu.Lock()
	if proc.checks == nil {
		proc.checks = check.NewScheduler(proc.Conf.Global.SpreadChecks, 0)
		proc.OnStop(proc.checks.Stop)
	}
	sc := proc.checks
	proc.checksMu.Unlock()
	sc.Add(c)
}

func (proc *Process) checkScheduler() *check.Scheduler {
	proc.checksMu.Lock()
	defer proc.checksMu.Unlock()
	return proc.checks
}

// checkNode is the node name http-check send-state reports: global
// "node", or the host name.
func checkNode(g *Global) string {
	if g.Node != "" {
		return g.Node
	}
	h, _ := os.Hostname()
	return h
}

// startChecks builds the checks of every checked server and starts the
// scheduler, spreading first probes over the interval.
func startChecks(proc *Process) error {
	var list []*check.Server
	node := checkNode(&proc.Conf.Global)
	for _, p := range proc.Conf.Proxies {
		if !p.IsBackend() {
			continue
		}
		for _, s := range p.ServerList() {
			if !s.Check && !s.Agent {
				continue
			}
			s.chk = check.NewServer(s.checkConfig(), checkReporter{s, node})
			list = append(list, s.chk)
		}
	}
	if len(list) == 0 {
		return nil
	}
	proc.checks = check.NewScheduler(proc.Conf.Global.SpreadChecks, 0)
	if err := proc.checks.Start(list); err != nil {
		return err
	}
	proc.OnStop(proc.checks.Stop)
	return nil
}

// CheckResult applies a probe's verdict to the server, as HAProxy's
// srv_set_stopped/running/stopping do.
func (r checkReporter) CheckResult(rep check.Report) {
	s := r.s
	if rep.FailedCheck {
		s.ChkFail.Add(1)
	}
	if !rep.Agent {
		s.Health.Store(int32(rep.Health))
		s.CheckStatus.Store(int32(rep.Outcome.Status))
		s.CheckResult.Store(int32(rep.Outcome.Status.Result()))
	}
	p := s.Proxy
	if rep.Logged && p.LogHealthChecks {
		p.logEvent(check.CheckLogText(&rep, s.Backup, p.Name, s.Name, s.UWeight() == 0), ring.LevelNotice)
	}
	if s.AdminState()&AdminMaint != 0 {
		return
	}
	var ev check.StateEvent
	var op uint32
	switch rep.Verdict {
	case check.VerdictDown:
		ev, op = check.EventDown, OpStopped
	case check.VerdictUp:
		ev, op = check.EventUp, OpRunning
	case check.VerdictStopping:
		ev, op = check.EventStopping, OpStopping
	default:
		return
	}
	if s.OpState() == op {
		return
	}
	// The state reaches the server, then each tracker depth first, and
	// HAProxy logs each change ("Server be2/t1 is DOWN via be/s1.") as it
	// is made, so that every line counts the servers left at that moment.
	trk := trackerOps(s, nil)
	was, usable := s.OpState(), s.LBUsable()
	s.setOperationalSelf(op)
	if s.chk != nil {
		s.chk.SetOpState(check.OpState(op))
	}
	why := check.Reason{Check: &rep.Outcome}
	if p.LogHealthChecks {
		why = check.Reason{}
	}
	logStateChange(s, ev, was, usable, why)
	for _, t := range trk {
		t.s.setOperationalSelf(op)
		if t.s.OpState() != op || t.op == op {
			continue
		}
		via := t.s.tracked()
		logStateChange(t.s, ev, t.op, t.usable, check.Reason{Via: via.Proxy.Name + "/" + via.Name})
	}
}

// logStateChange logs that s left state was, and the backend's alert when
// s was usable before and was the last one: a server that only starts
// stopping leaves the backend as empty as one going down, and one that goes
// down from stopping has already been reported.
func logStateChange(s *Server, ev check.StateEvent, was uint32, usable bool, why check.Reason) {
	p := s.Proxy
	act, bck := p.usableCounts()
	p.logEvent(check.StateChangeText(ev, s.Backup, p.Name, s.Name, why,
		check.Counts{Active: act, Backup: bck, Sessions: int(s.Counters.Scur.Load()), Queue: int(p.BE.Qcur.Load())}),
		stateChangeLevel(s, ev, was))
	if act == 0 && bck == 0 && usable && !s.LBUsable() {
		// HAProxy quotes the backend's name on stderr but not in syslog.
		p.logEventText(check.NoServerText(capName(p.Cap), p.Name, false),
			check.NoServerText(capName(p.Cap), p.Name, true), ring.LevelEmerg)
	}
}

// stateChangeLevel is the syslog severity HAProxy gives a server's state
// change: losing a server that was taking its full share of traffic is an
// alert, while a server already stopping or drained was expected to go, so
// its loss, like every other change, is only a notice.
func stateChangeLevel(s *Server, ev check.StateEvent, was uint32) int {
	if ev == check.EventDown && was != OpStopping && s.AdminState()&AdminDrainMask == 0 {
		return ring.LevelAlert
	}
	return ring.LevelNotice
}

type trackerOp struct {
	s      *Server
	op     uint32
	usable bool
}

// trackerOps appends the servers tracking s, depth first, with their
// operational states.
func trackerOps(s *Server, l []trackerOp) []trackerOp {
	for _, t := range s.trackers() {
		seen := t == s
		for _, x := range l {
			seen = seen || x.s == t
		}
		if seen {
			continue
		}
		l = append(l, trackerOp{t, t.OpState(), t.LBUsable()})
		l = trackerOps(t, l)
	}
	return l
}

// ApplyAgent applies what an agent asked for: admin state, weight, maxconn.
func (r checkReporter) ApplyAgent(_ *check.Server, a *check.AgentReply) string {
	s := r.s
	switch a.Admin {
	case "ready":
		s.SetReady()
	case "drain":
		s.SetDrain()
	case "maint":
		s.SetMaint()
	}
	warn := ""
	if a.Weight != "" {
		if w, err := s.ParseWeight(a.Weight); err != nil {
			warn = err.Error()
		} else {
			s.SetWeight(w)
		}
	}
	if a.Maxconn != "" {
		n, err := strconv.Atoi(a.Maxconn)
		if err != nil || n < 0 {
			if warn == "" {
				warn = "maxconn string empty or preceded by garbage"
			}
		} else {
			s.SetMaxConn(n)
		}
	}
	return warn
}

func (p *Proxy) usableCounts() (act, bck int) {
	for _, s := range p.ServerList() {
		if s.LBUsable() {
			if s.Backup {
				bck++
			} else {
				act++
			}
		}
	}
	return
}

// logEvent reports a server or proxy event as HAProxy does: on the
// process's alert output and to the proxy's log targets.
func (p *Proxy) logEvent(msg string, level int) {
	p.logEventText(msg, msg, level)
}

// logEventText is logEvent for events whose stderr text differs from the
// syslog one. On stderr HAProxy tags every server and check event as a
// warning whatever its syslog severity; only a backend left without
// servers (emerg) is an alert there.
func (p *Proxy) logEventText(msg, syslog string, level int) {
	if out := eventOut; out != nil {
		tag := "[WARNING]  "
		if level == ring.LevelEmerg {
			tag = "[ALERT]    "
		}
		fmt.Fprintf(out, "%s(%d) : %s\n", tag, pidNow(), msg)
	}
	p.sendLog([]byte(syslog), level)
}

// checkSettingsChanged keeps the check engine in step with run-time
// changes made through the stats socket.
func checkSettingsChanged(s *Server, ev ServerEvent) {
	c := s.chk
	if c == nil {
		return
	}
	switch ev {
	case SrvEvAdded:
		if v, ok := running.Load(s.Proxy); ok {
			v.(*Process).addChecks(c)
		}
	case SrvEvDeleted:
		if v, ok := running.Load(s.Proxy); ok {
			if sc := v.(*Process).checkScheduler(); sc != nil {
				sc.Remove(c)
			}
		}
	case SrvEvCheck:
		if c.Health != nil {
			if s.CheckState.Load()&ChkStEnabled != 0 {
				c.Health.Enable()
			} else {
				c.Health.Disable()
			}
		}
		if c.Agent != nil {
			if s.AgentState.Load()&ChkStEnabled != 0 {
				c.Agent.Enable()
			} else {
				c.Agent.Disable()
			}
		}
		ca, cp, aa, ap, _ := s.Targets()
		_, _, send := s.AgentTarget()
		if c.Health != nil {
			c.Health.SetAddr(ca)
			c.Health.SetPort(cp)
		}
		if c.Agent != nil {
			c.Agent.SetAddr(aa)
			c.Agent.SetPort(ap)
			c.Agent.SetAgentSend(send)
		}
	case SrvEvAddr:
		a := s.Addr()
		host := ""
		if a.IP.IsValid() {
			host = a.IP.String()
		}
		c.SetAddr(host, a.Port)
	case SrvEvState:
		// Every state change comes here (drain, agent and check verdicts,
		// set server health): only entering and leaving maintenance
		// pause or resume the health check, since LeaveMaint resets its
		// counter to rise and probes at once.
		maint := s.AdminState()&AdminMaint != 0
		if c.Health == nil {
			return
		}
		st := c.Health.Snapshot()
		paused := st.State&check.StPaused != 0
		switch {
		case maint && !paused:
			c.EnterMaint()
		case !maint && paused:
			c.LeaveMaint()
		case !maint:
			// `set server health up|stopping|down` sets core's counter to
			// an end; the check's own counter follows, so that rise and
			// fall count from there as in HAProxy.
			h, full := int(s.Health.Load()), st.Rise+st.Fall-1
			if h == 0 && st.Health != 0 {
				c.Health.ForceHealth(check.ForceDown)
			} else if h == full && st.Health != full {
				c.Health.ForceHealth(check.ForceUp)
			}
		}
	}
}

// CheckSnapshots reports the health and agent checks' last results.
func (s *Server) CheckSnapshots() (health, agent *check.CheckState) {
	if s.chk == nil {
		return nil, nil
	}
	if s.chk.Health != nil {
		h := s.chk.Health.Snapshot()
		health = &h
	}
	if s.chk.Agent != nil {
		a := s.chk.Agent.Snapshot()
		agent = &a
	}
	return
}

// observe feeds live traffic to `observe layer4|layer7`.
func (s *Server) observe(ev check.Event) {
	if s.chk != nil && (s.Observe == "layer4" || s.Observe == "layer7") {
		s.chk.Observe(ev)
	}
}

// CheckStateHeader builds the X-Haproxy-Server-State value "http-check
// send-state" adds, from the server's state at the start of the probe.
func (r checkReporter) CheckStateHeader(_ *check.Server) string {
	s := r.s
	p := s.Proxy
	checked := s.chk != nil && s.chk.Health != nil && s.CheckState.Load()&ChkStEnabled != 0
	health, rise, fall := 0, 1, 1
	if s.chk != nil && s.chk.Health != nil {
		st := s.chk.Health.Snapshot()
		health, rise, fall = st.Health, st.Rise, st.Fall
	}
	host, port := "", 0
	if a := s.Addr(); a != nil {
		if a.IP.IsValid() {
			host = a.IP.String()
		}
		port = a.Port
	}
	return check.StateHeader(check.OpState(s.OpState()), checked, health, rise, fall, host, port,
		p.Name, s.Name, r.node, s.EWeight(), p.totalWeight(), int(s.Counters.Scur.Load()),
		int(p.BE.Scur.Load()), int(p.BE.Qcur.Load()), 0)
}

// totalWeight is the weight the load balancer shares among the usable
// servers: the active ones', or the backups' when no active server is left.
func (p *Proxy) totalWeight() int {
	act, bck := 0, 0
	for _, s := range p.ServerList() {
		if !s.LBUsable() {
			continue
		}
		if s.Backup {
			bck += s.EWeight()
		} else {
			act += s.EWeight()
		}
	}
	if act > 0 {
		return act
	}
	return bck
}
