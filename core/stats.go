package core

import (
	"slices"
	"strings"
	"time"

	"goha/core/config"
	"goha/core/diag"
	"goha/core/sample"
)

// The statistics page a proxy answers itself (HAProxy's uri_auth): its
// `stats` keywords. Any of them enables the page, as in HAProxy; a proxy
// inherits its defaults section's page, and drops it on its own first
// `stats` line to start afresh.

// DefaultStatsURI is the page's prefix when no `stats uri` names one.
const DefaultStatsURI = "/haproxy?stats"

// DefaultStatsRealm is the Basic realm of `stats auth` without `stats realm`.
const DefaultStatsRealm = "HAProxy Statistics"

// StatsConf is a proxy's statistics page.
type StatsConf struct {
	URI     string
	Realm   string        // "" for DefaultStatsRealm
	Refresh time.Duration // whole seconds; 0 for none
	// Users are `stats auth` accounts; with any, a request without one
	// of them gets the 401 challenge.
	Users []StatsUser
	// Admin are `stats admin` conditions (words from if/unless): the
	// first that holds lets a POST change servers.
	Admin []LineDef
	// HTTPRequest are `stats http-request` rules (the words after it),
	// run once a request is known to be for the page.
	HTTPRequest []LineDef
	// Scopes are `stats scope` proxy names ("." the proxy itself); none
	// shows every proxy.
	Scopes      []string
	Legends     bool   // stats show-legends
	ShowNode    bool   // stats show-node
	Node        string // its name; "" for the global node
	ShowDesc    bool   // stats show-desc
	Desc        string // its text; "" for the global description
	HideVersion bool
	// owner is the section whose lines built it: a proxy that inherited
	// it from its defaults replaces it on its own first line.
	owner *Proxy
}

// StatsUser is one `stats auth` account, its password in clear.
type StatsUser struct {
	Name, Password string
}

// statsKeywords are the proxies' `stats` keywords, docs/configuration.md's
// rows.
var statsKeywords = []string{"enable", "uri", "realm", "refresh", "auth", "admin", "scope",
	"hide-version", "show-legends", "show-node", "show-desc", "http-request"}

func init() {
	for _, w := range statsKeywords {
		registerKeywords(Keyword{Name: "stats " + w, Scope: scopeProxy, Args: ArgsAny, Parse: parseStats})
	}
	// The extra HTML tables of the modules' counters.
	registerKeywords(Keyword{Name: "stats show-modules", Scope: scopeProxy, Args: ArgsAny, Unimplemented: Warned},
		// Any other word after stats, or none, gets HAProxy's message.
		Keyword{Name: "stats", Scope: scopeProxy, Args: ArgsAny, Parse: func(c *kwCtx, args []string) error {
			const want = "expects 'admin', 'uri', 'realm', 'auth', 'scope', 'enable', 'hide-version', 'show-node', 'show-desc' or 'show-legends'."
			if len(args) == 0 || args[0] == "" {
				return errf("missing keyword in 'stats', " + want)
			}
			return errf("unknown stats parameter '%s', "+want, args[0])
		}})
}

// statsOf is the page p's lines change: its own, never its defaults'.
func statsOf(p *Proxy) *StatsConf {
	if p.Stats == nil || p.Stats.owner != p {
		p.Stats = &StatsConf{URI: DefaultStatsURI, owner: p}
	}
	return p.Stats
}

func parseStats(c *kwCtx, args []string) error {
	word := strings.TrimPrefix(c.kw, "stats ")
	arg := first(args)
	defaults := c.p.Cap == CapDefaults
	switch word {
	case "admin":
		if defaults {
			return errf("'stats admin' not allowed in 'defaults' section.")
		}
		if arg != "if" && arg != "unless" {
			return errf("'stats admin' requires either 'if' or 'unless' followed by a condition.")
		}
		if _, err := sample.CompileCond(nil, args, c.p.aclsSoFar); err != nil {
			return errf("error detected while parsing a 'stats admin' rule : %s.", strings.TrimSuffix(err.Error(), "."))
		}
		s := statsOf(c.p)
		s.Admin = append(s.Admin, LineDef{Pos: c.pos, Words: slices.Clone(args)})
		return nil
	case "http-request":
		if defaults {
			return errf("'stats' not allowed in 'defaults' section.")
		}
		s := statsOf(c.p)
		var warn error
		if n := len(s.HTTPRequest); n > 0 {
			if k, ok := RuleArity(s.HTTPRequest[n-1].Words); ok && k == len(s.HTTPRequest[n-1].Words) {
				warn = diag.Warnf("previous 'stats' action has no condition attached, further entries are NOOP.")
			}
		}
		// The rule is read as an http-request line, with its messages.
		rc := *c
		rc.kw = "http-request"
		var one []LineDef
		if err := addRule(&rc, &one, args); err != nil {
			return err
		}
		s.HTTPRequest = append(s.HTTPRequest, one...)
		return warn
	case "uri":
		if arg == "" {
			return errf("'uri' needs an URI prefix.")
		}
		statsOf(c.p).URI = arg
	case "realm":
		if arg == "" {
			return errf("'realm' needs an realm name.")
		}
		statsOf(c.p).Realm = arg
	case "refresh":
		d, err := parseStatsRefresh(arg)
		if err != nil {
			return err
		}
		statsOf(c.p).Refresh = d
	case "auth":
		user, pass, ok := strings.Cut(arg, ":")
		if arg == "" {
			return errf("'auth' needs a user:password account.")
		}
		if !ok {
			// HAProxy takes a word without a colon as a user whose
			// password is empty.
			pass = ""
		}
		s := statsOf(c.p)
		for _, u := range s.Users {
			if u.Name == user {
				return diag.Warnf("uri auth: ignoring duplicated user '%s'.", user)
			}
		}
		s.Users = append(s.Users, StatsUser{Name: user, Password: pass})
	case "scope":
		if arg == "" {
			return errf("'scope' needs a proxy name.")
		}
		s := statsOf(c.p)
		s.Scopes = append(s.Scopes, arg)
	case "enable":
		statsOf(c.p)
	case "hide-version":
		statsOf(c.p).HideVersion = true
	case "show-legends":
		statsOf(c.p).Legends = true
	case "show-node":
		if arg != "" && !validNodeName(arg) {
			return errf("'stats show-node' invalid node name - should be a stringwith digits(0-9), letters(A-Z, a-z), hyphen(-) or underscode(_).")
		}
		s := statsOf(c.p)
		s.ShowNode, s.Node = true, arg
	case "show-desc":
		if arg == "" && c.b.cfg.Global.Description == "" {
			return diag.Warnf("'show-desc' requires a parameter or 'desc' to be set in the global section.")
		}
		s := statsOf(c.p)
		s.ShowDesc, s.Desc = true, strings.Join(args, " ")
	}
	// HAProxy ignores the words after the ones it reads.
	return nil
}

// parseStatsRefresh reads `stats refresh`'s interval, in seconds by
// default, rounded up to whole seconds as HAProxy's parse_time_err does.
func parseStatsRefresh(arg string) (time.Duration, error) {
	if arg == "" {
		return 0, nil
	}
	i := 0
	for i < len(arg) && arg[i] >= '0' && arg[i] <= '9' {
		i++
	}
	d, err := config.ParseTime(arg, time.Second)
	switch {
	case err != nil && strings.Contains(err.Error(), "overflow"):
		return 0, errf("timer overflow in argument <%s> to stats refresh interval, maximum value is 2147483647 s (~68 years).", arg)
	case err != nil && i < len(arg):
		return 0, errf("unexpected character '%c' in argument to stats refresh interval.", arg[i])
	case err != nil:
		return 0, errf("unexpected character '%c' in argument to stats refresh interval.", arg[0])
	}
	secs := (d + time.Second - 1) / time.Second
	if secs >= 1<<31 {
		return 0, errf("timer overflow in argument <%s> to stats refresh interval, maximum value is 2147483647 s (~68 years).", arg)
	}
	return secs * time.Second, nil
}

func validNodeName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
