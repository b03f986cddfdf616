package core

import (
	"errors"
	"goha/core/check"
	"goha/core/diag"
	"goha/ring"
	"strconv"
	"strings"
)

func init() {
	registerPostCheck(buildChecks)
	// The check keywords are kept as lines, in order, and compiled by
	// buildChecks once the section is read: check options may follow the
	// server lines, as in HAProxy.
	registerKeywords(
		option("log-health-checks", scopeDefaults|scopeBE, func(p *Proxy) *bool { return &p.LogHealthChecks }),
		Keyword{Name: "tcp-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "http-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option httpchk", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option tcp-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option redis-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option mysql-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option pgsql-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option smtpchk", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option ldap-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option ssl-hello-chk", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
		Keyword{Name: "option spop-check", Scope: scopeDefaults | scopeBE, Args: ArgsAny, Parse: checkRule},
	)
}

func checkRule(c *kwCtx, args []string) error {
	words := append(strings.Fields(c.kw), args...)
	if c.neg {
		words = append([]string{"no"}, words...)
	}
	c.p.CheckRules = append(c.p.CheckRules, LineDef{c.pos, words})
	return nil
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
				var w *diag.Warn
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

// ApplyCheck applies a probe's verdict to the server, as HAProxy's
// srv_set_stopped/running/stopping do; chk, the server's checks, learns
// the state the verdict led to.
func (s *Server) ApplyCheck(rep check.Report, chk *check.Server) {
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
		p.LogEvent(check.CheckLogText(&rep, s.Backup, p.Name, s.Name, s.UWeight() == 0), ring.LevelNotice)
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
	why := check.Reason{Check: &rep.Outcome}
	if p.LogHealthChecks {
		why = check.Reason{}
	}
	s.changeOperational(ev, op, why, func() {
		if chk != nil {
			chk.SetOpState(check.OpState(op))
		}
	})
}

// ApplyAgent applies what an agent asked for: admin state, weight, maxconn.
func (s *Server) ApplyAgent(a *check.AgentReply) string {
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
