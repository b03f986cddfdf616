package stream

import (
	"crypto/tls"
	"goha/core"
	"os"
	"strings"

	"goha/core/check"
)

// Health checks: the check package runs probes and keeps rise/fall state;
// core builds the rulesets after validation (check options may follow the
// server lines, so HAProxy initialises checks only then), applies verdicts
// to server states and reports them in logs.

// checkReporter receives a server's check results.
type checkReporter struct {
	s    *server
	node string // global "node", or the host name, for send-state
}

// checkSettings turns a server's configuration into the check package's.
func (s *server) checkConfig() check.ServerConfig {
	p := s.Proxy
	hs := check.Settings{
		Inter: s.Inter, FastInter: s.FastInter, DownInter: s.DownInter,
		Rise: s.Rise, Fall: s.Fall, Addr: s.CheckAddr, Port: s.CheckPort,
		// A check goes as the traffic does, TLS and PROXY header
		// included, unless it has an address or port of its own; a
		// server added at run time checks over TLS only with check-ssl
		// and with a PROXY header only with check-send-proxy, as in
		// HAProxy 2.6.
		SSL: s.CheckSSL || (s.SSL == 1 && s.CheckPort == 0 && s.CheckAddr == "" && !s.Dynamic),
		SNI: s.CheckSNI, SendProxy: s.CheckSendProxy || ((s.SendProxy || s.SendProxyV2) && s.CheckPort == 0 && s.CheckAddr == "" && !s.Dynamic),
		Socks4: s.Socks4, ViaSocks4: s.CheckViaSocks4,
	}
	if hs.SSL {
		hs.TLS = &tls.Config{InsecureSkipVerify: true}
		if tc := s.TLSConfig(); tc != nil {
			hs.TLS = tc.Clone()
		}
		if hs.SNI != "" {
			hs.TLS.ServerName = hs.SNI
		}
		if s.CheckALPN != "" {
			hs.ALPN = strings.Split(s.CheckALPN, ",")
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
	cfg := o.Config(p.Name, s.Name, host, a.Port, p.CheckRuleset(), check.Timeouts{Connect: p.Timeouts.Connect, Check: p.Timeouts.Check})
	cfg.Disabled = s.Disabled
	return cfg
}

// prepareDynamicChecks builds the checks of a server add server creates:
// configured, but neither enabled nor probing until enable health or
// enable agent, as in HAProxy.
func (proc *Process) prepareDynamicChecks(s *server) {
	g := &proc.Conf.Global
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
func checkNode(g *core.Global) string {
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
	for _, p := range proc.proxies {
		if p.rt == nil {
			continue
		}
		for _, s := range p.rt.servers() {
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

// CheckResult applies a probe's verdict to the server.
func (r checkReporter) CheckResult(rep check.Report) { r.s.ApplyCheck(rep, r.s.chk) }

// ApplyAgent applies what an agent asked for.
func (r checkReporter) ApplyAgent(_ *check.Server, a *check.AgentReply) string {
	return r.s.ApplyAgent(a)
}

// checkSettingsChanged keeps the check engine in step with run-time
// changes made through the stats socket.
func (proc *Process) checkSettingsChanged(s *server, ev core.ServerEvent) {
	c := s.chk
	if c == nil {
		return
	}
	switch ev {
	case core.SrvEvAdded:
		proc.addChecks(c)
	case core.SrvEvDeleted:
		if sc := proc.checkScheduler(); sc != nil {
			sc.Remove(c)
		}
	case core.SrvEvCheck:
		if c.Health != nil {
			if s.CheckState.Load()&core.ChkStEnabled != 0 {
				c.Health.Enable()
			} else {
				c.Health.Disable()
			}
		}
		if c.Agent != nil {
			if s.AgentState.Load()&core.ChkStEnabled != 0 {
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
	case core.SrvEvAddr:
		a := s.Addr()
		host := ""
		if a.IP.IsValid() {
			host = a.IP.String()
		}
		c.SetAddr(host, a.Port)
	case core.SrvEvState:
		// Every state change comes here (drain, agent and check verdicts,
		// set server health): only entering and leaving maintenance
		// pause or resume the health check, since LeaveMaint resets its
		// counter to rise and probes at once.
		maint := s.AdminState()&core.AdminMaint != 0
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

// CheckSnapshots reports a server's health and agent checks' last results.
func (proc *Process) CheckSnapshots(cs *core.Server) (health, agent *check.CheckState) {
	s := proc.serverOf(cs)
	if s == nil || s.chk == nil {
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
func (s *server) observe(ev check.Event) {
	if s.chk != nil && (s.Observe == "layer4" || s.Observe == "layer7") {
		s.chk.Observe(ev)
	}
}

// CheckStateHeader builds the X-Haproxy-Server-State value "http-check
// send-state" adds, from the server's state at the start of the probe.
func (r checkReporter) CheckStateHeader(_ *check.Server) string {
	s := r.s
	p := s.Proxy
	checked := s.chk != nil && s.chk.Health != nil && s.CheckState.Load()&core.ChkStEnabled != 0
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
		p.Name, s.Name, r.node, s.EWeight(), p.TotalWeight(), int(s.Counters.Scur.Load()),
		int(p.BE.Scur.Load()), int(p.BE.Qcur.Load()), 0)
}
