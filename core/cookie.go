package core

import (
	"fmt"
	"strings"

	"goha/core/diag"
)

// Cookie-based persistence: the backend keyword `cookie`, as HAProxy 2.6
// reads it. The running process (core/stream) applies it.

// CookieConf is a backend's persistence cookie. Immutable once parsed: a
// proxy shares it with the defaults section it came from.
type CookieConf struct {
	Name string
	// The modes; at most one of Rewrite, Insert, Prefix. None of them
	// (with or without Indirect) is HAProxy's passive mode: the cookie
	// still picks the server, nothing is added or rewritten.
	Rewrite, Insert, Prefix bool
	Indirect                bool
	NoCache                 bool
	PostOnly                bool
	Preserve                bool
	HTTPOnly                bool
	Secure                  bool
	Dynamic                 bool
	// Domain is what follows "; domain=" in an inserted cookie: several
	// domains are joined with "; domain=", as HAProxy joins them.
	Domain string
	// Attrs is what follows "; " after the other attributes, several
	// joined with "; ".
	Attrs string
	// MaxIdle and MaxLife are in seconds; 0 when not set.
	MaxIdle, MaxLife uint32
}

// Any says whether a mode was given (HAProxy's PR_CK_ANY): only then do
// the log's cookie characters say something other than "--".
func (c *CookieConf) Any() bool {
	return c != nil && (c.Rewrite || c.Insert || c.Prefix || c.Indirect)
}

// parseCookie reads the words after `cookie`. Warnings go to the
// collector as they are met; the first alert stops the line, except the
// mode conflicts, which HAProxy reports all of after reading the words.
func parseCookie(c *kwCtx, args []string) error {
	if len(args) < 1 || args[0] == "" {
		return errf("'cookie' expects <cookie_name> as argument.")
	}
	ck := &CookieConf{Name: args[0]}
	warn := func(format string, a ...any) {
		c.b.d.Add(diag.Diag{Sev: diag.Warning, Pos: c.pos, Parsing: true, Tight: true, Msg: fmt.Sprintf(format, a...)})
	}
	for i := 1; i < len(args); i++ {
		w := args[i]
		val := ""
		if i+1 < len(args) {
			val = args[i+1]
		}
		switch w {
		case "rewrite":
			ck.Rewrite = true
		case "indirect":
			ck.Indirect = true
		case "insert":
			ck.Insert = true
		case "nocache":
			ck.NoCache = true
		case "postonly":
			ck.PostOnly = true
		case "preserve":
			ck.Preserve = true
		case "prefix":
			ck.Prefix = true
		case "httponly":
			ck.HTTPOnly = true
		case "secure":
			ck.Secure = true
		case "dynamic":
			ck.Dynamic = true
		case "domain":
			if val == "" {
				return tightf("'%s' expects <domain> as argument.", w)
			}
			if !strings.Contains(val, ".") {
				warn("domain '%s' contains no embedded dot, this configuration may not work properly (see RFC6265#5.2.3).", val)
			}
			if j := invalidDomainChar(val); j >= 0 {
				return tightf("character '%c' is not permitted in domain name '%s'.", val[j], val)
			}
			if ck.Domain == "" {
				ck.Domain = val
			} else {
				ck.Domain += "; domain=" + val
			}
			i++
		case "maxidle", "maxlife":
			if val == "" {
				what := "idletime"
				if w == "maxlife" {
					what = "lifetime"
				}
				return tightf("'%s' expects <%s> in seconds as argument.", w, what)
			}
			secs, err := parseSeconds(val, func(format string, a ...any) {
				c.b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf(format, a...)})
			})
			if err != nil {
				return tightf("%s", strings.ReplaceAll(err.Error(), "%KW", w))
			}
			if w == "maxidle" {
				ck.MaxIdle = secs
			} else {
				ck.MaxLife = secs
			}
			i++
		case "attr":
			if val == "" {
				return tightf("'%s' expects <value> as argument.", w)
			}
			for j := 0; j < len(val); j++ {
				if b := val[j]; b < 0x20 || b == 0x7f || b == ';' {
					return tightf("character '%%x%02X' is not permitted in attribute value.", b)
				}
			}
			if ck.Attrs == "" {
				ck.Attrs = val
			} else {
				ck.Attrs += "; " + val
			}
			i++
		default:
			return errf("'cookie' supports 'rewrite', 'insert', 'prefix', 'indirect', 'nocache', 'postonly', 'domain', 'maxidle', 'dynamic', 'maxlife' and 'attr' options.")
		}
	}
	bad := false
	if ck.Rewrite && ck.Indirect {
		c.b.d.Alertf(c.pos, "cookie 'rewrite' and 'indirect' modes are incompatible.")
		bad = true
	}
	if n := btoi(ck.Rewrite) + btoi(ck.Insert) + btoi(ck.Prefix); n > 1 {
		c.b.d.Alertf(c.pos, "cookie 'rewrite', 'insert' and 'prefix' modes are incompatible.")
		bad = true
	}
	if ck.Preserve && !ck.Insert && !ck.Indirect {
		c.b.d.Alertf(c.pos, "cookie 'preserve' requires at least 'insert' or 'indirect'.")
		bad = true
	}
	if bad {
		return nil
	}
	if ck.Dynamic {
		// Dynamic cookies are a hash of the server's address and
		// dynamic-cookie-key, which goha does not compute.
		return errf("'cookie dynamic' is not supported by goha.")
	}
	c.p.Cookie = append([]string(nil), args...)
	c.p.CookiePersist = ck
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// invalidDomainChar returns the index of the first byte HAProxy does not
// permit in a cookie domain (letters, digits, '.', '_' and '-' are), or -1.
func invalidDomainChar(s string) int {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-') {
			return i
		}
	}
	return -1
}

// parseSeconds reads a time in seconds as HAProxy's maxidle and maxlife
// do: a number with an optional unit (us, ms, s, m, h, d), rounded up to
// the second. Bytes after the unit draw a warning and are ignored. Error
// texts name the keyword as %KW.
func parseSeconds(s string, warn func(string, ...any)) (uint32, error) {
	i := 0
	var n uint64
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if n < 1<<40 {
			n = n*10 + uint64(s[i]-'0')
		}
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("unexpected character '%c' in argument to <%%KW>.", s[0])
	}
	mul, div := uint64(1), uint64(1)
	rest := s[i:]
	switch {
	case rest == "":
	case rest[0] == 's':
		rest = rest[1:]
	case strings.HasPrefix(rest, "us"):
		div, rest = 1000000, rest[2:]
	case strings.HasPrefix(rest, "ms"):
		div, rest = 1000, rest[2:]
	case rest[0] == 'm':
		mul, rest = 60, rest[1:]
	case rest[0] == 'h':
		mul, rest = 3600, rest[1:]
	case rest[0] == 'd':
		mul, rest = 86400, rest[1:]
	default:
		return 0, fmt.Errorf("unexpected character '%c' in argument to <%%KW>.", rest[0])
	}
	if rest != "" {
		warn("unexpected character '%c' after the timer value '%s', only (us=microseconds,ms=milliseconds,s=seconds,m=minutes,h=hours,d=days) are supported. This will be reported as an error in next versions.", rest[0], s)
	}
	v := (n*mul + div - 1) / div
	if v >= 0x80000000 {
		return 0, fmt.Errorf("timer overflow in argument <%s> to <%%KW>, maximum value is 2147483647 s (~68 years).", s)
	}
	return uint32(v), nil
}

func init() {
	// The rules that bend persistence: goha has none of them, and
	// ignoring one would send requests elsewhere than asked.
	registerKeywords(
		Keyword{Name: "force-persist", Scope: scopeFE | scopeBE, Args: ArgsAny, Unimplemented: Refused},
		Keyword{Name: "ignore-persist", Scope: scopeFE | scopeBE, Args: ArgsAny, Unimplemented: Refused},
	)
	registerPostCheck(func(b *builder) {
		for _, p := range b.cfg.Proxies {
			if p.CookiePersist != nil && p.Mode != ModeHTTP && p.IsBackend() {
				b.d.Add(diag.Diag{Sev: diag.Warning, Msg: fmt.Sprintf("cookie will be ignored for %s '%s' (needs 'mode http').", capName(p.Cap), p.Name)})
			}
		}
	})
}
