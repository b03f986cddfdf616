package core

import (
	"fmt"
	"goha/core/diag"
	"goha/core/sample"
	"strings"
)

// Routing is what a proxy says about where a request goes besides its
// backend switching rules: the older redirect rules, the monitor URI of a
// frontend, and a backend's use-server rules. None of it is inherited
// from defaults sections, as in HAProxy.
type Routing struct {
	// Redirects are `redirect ...` lines, the words after the keyword
	// prefixed with "redirect" so that they compile as the
	// http-request action does. They run after the proxy's http-request
	// rules.
	Redirects []LineDef
	// MonitorURI is the URI a frontend answers itself; "" for none.
	MonitorURI string
	// MonitorFail are `monitor fail` conditions (words from if/unless):
	// the first that holds makes the monitor answer 503.
	MonitorFail []LineDef
	// UseServers are the backend's use-server rules, in order.
	UseServers []*UseServer
}

// UseServer is a `use-server <name> if|unless <cond>` rule. A name with a
// '%' is a log-format string, evaluated per request.
type UseServer struct {
	Pos     diag.Pos
	Name    string
	Cond    []string // words from if/unless
	Dynamic bool
	Target  *Server // resolved static name
}

// dynamicName says whether a use_backend or use-server name is a
// log-format string, evaluated per request, as HAProxy decides: any '%'
// makes it one.
func dynamicName(name string) bool { return strings.IndexByte(name, '%') >= 0 }

func init() {
	registerKeywords(
		Keyword{Name: "redirect", Scope: scopeFE | scopeBE, Args: ArgsAny, Parse: parseRedirect},
		Keyword{Name: "monitor-uri", Scope: scopeFE, Args: 1, Parse: func(c *kwCtx, args []string) error {
			if first(args) == "" {
				return errf("'monitor-uri' expects an URI.")
			}
			c.p.MonitorURI = args[0]
			return nil
		}},
		Keyword{Name: "monitor", Scope: scopeFE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
			if first(args) != "fail" {
				return errf("'monitor' only supports 'fail'.")
			}
			if len(args) < 3 || (args[1] != "if" && args[1] != "unless") {
				return errf("'monitor fail' requires either 'if' or 'unless' followed by a condition.")
			}
			if _, err := sample.CompileCond(nil, args[1:], c.p.aclsSoFar); err != nil {
				return errf("error detected while parsing a 'monitor fail' condition : %s.", strings.TrimSuffix(err.Error(), "."))
			}
			c.p.MonitorFail = append(c.p.MonitorFail, LineDef{Pos: c.pos, Words: append([]string(nil), args[1:]...)})
			if len(c.p.Redirects) > 0 {
				return diag.Warnf("a 'monitor fail' rule placed after a 'redirect' rule will still be processed before.")
			}
			return nil
		}},
		Keyword{Name: "use-server", Scope: scopeBE, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
			if first(args) == "" {
				return errf("'use-server' expects a server name.")
			}
			if len(args) < 3 || (args[1] != "if" && args[1] != "unless") {
				return errf("'use-server' requires either 'if' or 'unless' followed by a condition.")
			}
			if _, err := sample.CompileCond(nil, args[1:], c.p.aclsSoFar); err != nil {
				return errf("error detected while parsing switching rule : %s.", strings.TrimSuffix(err.Error(), "."))
			}
			c.p.UseServers = append(c.p.UseServers, &UseServer{Pos: c.pos, Name: args[0], Cond: append([]string(nil), args[1:]...), Dynamic: dynamicName(args[0])})
			return nil
		}},
	)
	registerPostCheck(resolveUseServers)
}

// parseRedirect checks a `redirect` line as HAProxy's redirect rule
// parser does; the process compiles it.
func parseRedirect(c *kwCtx, args []string) error {
	words := append([]string{"redirect"}, args...)
	fail := func(msg string) error {
		return errf("error detected in %s '%s' while parsing redirect rule : %s", capName(c.p.Cap), c.p.Name, msg)
	}
	switch first(args) {
	case "location", "prefix", "scheme":
	case "":
		return fail("redirection type expected ('prefix', 'location', or 'scheme').")
	default:
		return fail(fmt.Sprintf("expects 'code', 'prefix', 'location', 'scheme', 'set-cookie', 'clear-cookie', 'drop-query', 'ignore-empty' or 'append-slash' (was '%s').", args[0]))
	}
	if len(args) < 2 {
		return fail(fmt.Sprintf("missing argument for '%s'.", args[0]))
	}
	n, _ := RuleArity(words)
	for i := 2; i < n; i++ {
		switch words[i] {
		case "code", "set-cookie", "clear-cookie":
			if i+1 >= len(words) {
				return fail(fmt.Sprintf("missing argument for '%s'.", words[i]))
			}
			if words[i] == "code" && !redirectCode(words[i+1]) {
				return fail(fmt.Sprintf("'code': unsupported HTTP code '%s' (must be one of 301, 302, 303, 307 or 308).", words[i+1]))
			}
			i++
		}
	}
	if n < len(words) {
		if w := words[n]; w != "if" && w != "unless" {
			return fail(fmt.Sprintf("expects 'code', 'prefix', 'location', 'scheme', 'set-cookie', 'clear-cookie', 'drop-query', 'ignore-empty' or 'append-slash' (was '%s').", w))
		}
		if _, err := sample.CompileCond(nil, words[n:], c.p.aclsSoFar); err != nil {
			return fail(strings.TrimSuffix(err.Error(), ".") + ".")
		}
	}
	c.p.Redirects = append(c.p.Redirects, LineDef{Pos: c.pos, Words: words})
	return nil
}

func redirectCode(w string) bool {
	switch w {
	case "301", "302", "303", "307", "308":
		return true
	}
	return false
}

// resolveUseServers finds the servers static use-server rules name, with
// HAProxy's message for a missing one, and marks them referenced so that
// `del server` refuses them.
func resolveUseServers(b *builder) {
	for _, p := range b.cfg.Proxies {
		for _, us := range p.UseServers {
			if us.Dynamic {
				continue
			}
			s := p.FindServer(us.Name)
			if s == nil {
				b.d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("%s '%s' : unable to find server '%s' referenced in a 'use-server' rule.", capName(p.Cap), p.Name, us.Name)})
				continue
			}
			us.Target = s
			s.Reference()
		}
	}
}
