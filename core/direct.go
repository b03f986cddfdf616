package core

import (
	"strings"

	"goha/core/config"
	"goha/core/diag"
)

// A backend without load balancing sends every stream to one address:
// `dispatch <addr>:<port>`, or with `option transparent` the address the
// client connected to. HAProxy uses them only when no `balance` is set
// (its default algorithm is chosen only when neither is), and never shares
// their connections between client sessions.

func init() {
	registerKeywords(
		Keyword{Name: "dispatch", Scope: scopeBE, Args: 1, Parse: parseDispatch},
		option("transparent", scopeDefaults|scopeBE, func(p *Proxy) *bool { return &p.Transparent }),
	)
	registerProxyCheck((*builder).checkDirect)
}

// Direct says how the backend reaches its peer when it does not balance:
// DirectNone (it balances over its servers), DirectDispatch (its dispatch
// address) or DirectTransparent (the client's destination).
func (p *Proxy) Direct() DirectKind {
	switch {
	case p.BalanceSet:
		return DirectNone
	case p.Dispatch != nil:
		return DirectDispatch
	case p.Transparent:
		return DirectTransparent
	}
	return DirectNone
}

// DirectKind is what Proxy.Direct returns.
type DirectKind uint8

const (
	DirectNone DirectKind = iota
	DirectDispatch
	DirectTransparent
)

func parseDispatch(c *kwCtx, args []string) error {
	a := config.ExpandEnv(first(args), c.env)
	if a == "" {
		return errf("'dispatch' : '%s' resolves to an empty address (environment variable missing?)", first(args))
	}
	sa, host, err := parseServerAddrLiteral(a)
	if err != nil {
		return errf("'dispatch' : %v in '%s'", err, a)
	}
	if sa.Unix == "" && sa.Port == 0 && !strings.HasSuffix(a, ":0") {
		return errf("'dispatch' : missing port specification in '%s'", a)
	}
	if host != "" {
		ip, ok := ResolveHost(host)
		if !ok {
			return errf("'dispatch' : invalid address: '%s' in '%s'", host, a)
		}
		sa.IP = ip
	}
	c.p.Dispatch = sa
	return nil
}

// checkDirect refuses what HAProxy refuses once the sections are read:
// transparent with a balance algorithm; and drops a dispatch address that
// balancing makes unused, with HAProxy's warning.
func (b *builder) checkDirect(p *Proxy) {
	if !p.IsBackend() || !p.BalanceSet {
		return
	}
	if p.Transparent {
		b.d.Alertf(diag.Pos{}, "%s '%s' cannot use both transparent and balance mode.", capName(p.Cap), p.Name)
	} else if p.Dispatch != nil {
		b.d.Warnf(diag.Pos{}, "dispatch address of %s '%s' will be ignored in balance mode.", capName(p.Cap), p.Name)
		p.Dispatch = nil
	}
}

// NewDirectServer is the server a dispatch or transparent backend's
// streams are counted against: outside the server list (no stats row, no
// checks), named "<NOSRV>" in logs as HAProxy names a stream without a
// server, with the dispatch address (none for transparent).
func NewDirectServer(p *Proxy) *Server {
	s := &Server{Proxy: p, Name: "<NOSRV>"}
	s.ServerConf = defaultServerConf()
	a := p.Dispatch
	if a == nil {
		a = &ServerAddr{}
	}
	s.addr.Store(a)
	s.uweight.Store(1)
	s.op.Store(OpRunning)
	return s
}
