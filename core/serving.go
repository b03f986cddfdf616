package core

import (
	"context"
	"crypto/tls"

	"goha/core/check"
	"goha/ring"
)

// What the running process reads from the model and the few counters it
// moves. core never calls the process: the process calls these.

// MaxConnLimit is the frontend's connection limit in force: `set maxconn
// frontend` or the configuration's; 0 means none.
func (p *Proxy) MaxConnLimit() int64 {
	switch v := p.liveMaxConn.Load(); {
	case v == 0:
		return int64(p.MaxConn)
	case v < 0:
		return 0
	default:
		return v
	}
}

// Template is the defaults section p was built from, or nil.
func (p *Proxy) Template() *Proxy { return p.tmpl }

// CheckRuleset is the backend's compiled check rules (nil before Build
// validated them).
func (p *Proxy) CheckRuleset() *check.Rules { return p.checkRules }

// HasLoggers says whether p sends its logs anywhere (`log` lines of its
// own or `log global`).
func (p *Proxy) HasLoggers() bool { return len(p.loggers) > 0 }

// TLS is the bind's TLS configuration; nil unless it has `ssl`.
func (b *Bind) TLS() *tls.Config { return b.tls }

// TakeSlot counts one more stream on s unless it is at maxconn.
func (s *Server) TakeSlot() bool {
	m := s.maxconn.Load()
	for {
		n := s.served.Load()
		if m > 0 && n >= m {
			return false
		}
		if s.served.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// ReleaseSlot undoes TakeSlot.
func (s *Server) ReleaseSlot() { s.served.Add(-1) }

// LiveMaxConn is the process maxconn set at run time (set maxconn
// global); 0 while the configured one applies.
func (c *Config) LiveMaxConn() int64 { return c.rt().maxconn.Load() }

// StartLogging starts the ring forwarders and the log-forward listeners;
// stop flushes what UDP targets still gather, then stops them.
func (c *Config) StartLogging() (stop func()) {
	st := c.logs()
	ctx, cancel := context.WithCancel(context.Background())
	st.cancel = cancel
	st.reg.Start(ctx)
	for _, lf := range st.forwards {
		go lf.ListenAndServe(ctx)
	}
	return func() {
		c.eachLogger(func(l *ring.Logger) { l.Flush() })
		cancel()
		st.reg.Wait()
	}
}

// SetTLS replaces the bind's TLS configuration; nil makes it plain TCP.
// Listeners opened afterwards use it.
func (b *Bind) SetTLS(c *tls.Config) { b.tls = c }
