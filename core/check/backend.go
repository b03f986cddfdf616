package check

import (
	"fmt"
	"strings"

	"goha/core/sample"
)

// Backend collects the check configuration of one backend (or defaults
// section) while the configuration is parsed: "option <check>",
// "tcp-check ..." and "http-check ..." lines, in any order relative to the
// server lines. Call Finalize after the whole section was read.
//
// Not thread safe: used at configuration time only.
type Backend struct {
	name     string
	defaults bool

	chosen bool // a check option was given (HAProxy PR_O2_CHK_ANY)
	rules  Rules

	tcpRS  *Ruleset // this section's own "tcp-check" rules
	httpRS *Ruleset // this section's own "http-check" rules (and option httpchk)
}

// NewBackend starts the check configuration of a backend; defaults is true
// for a defaults section.
func NewBackend(name string, defaults bool) *Backend {
	return &Backend{name: name, defaults: defaults}
}

// InheritFrom copies what a defaults section configured, as HAProxy does
// when a backend is declared after it.
func (b *Backend) InheritFrom(def *Backend) {
	if def == nil {
		return
	}
	b.chosen = def.chosen
	b.rules = *def.rules.clone()
	b.rules.Flags &^= RulesUnusedTCP | RulesUnusedHTTP
	if b.rules.Set != nil {
		b.rules.Flags |= RulesInherited
	}
}

// CheckOptions lists the "option" keywords handled by Backend.Option.
var CheckOptions = []string{"httpchk", "redis-check", "mysql-check", "pgsql-check", "smtpchk", "ldap-check", "ssl-hello-chk", "spop-check", "tcp-check"}

// IsCheckOption reports whether "option <name>" selects a check type.
func IsCheckOption(name string) bool {
	for _, o := range CheckOptions {
		if o == name {
			return true
		}
	}
	return false
}

func tooMany(words []string, max int) error {
	if a := arg(words, 2+max); a != "" {
		return fmt.Errorf("'%s %s' cannot handle unexpected argument '%s'.", words[0], words[1], a)
	}
	return nil
}

func (b *Backend) selectShared(rs *Ruleset, proto Proto, vars map[string]string) {
	b.chosen = true
	b.rules = Rules{Set: rs, Proto: proto, Flags: RulesShared, Vars: vars,
		Disable404: b.rules.Disable404, SendState: b.rules.SendState}
}

// Option handles "option <check> [args]" (words[0] == "option"). The error
// text is HAProxy's; a *diag.Warn is not fatal.
func (b *Backend) Option(words []string) error {
	name := arg(words, 1)
	switch name {
	case "redis-check":
		if err := tooMany(words, 0); err != nil {
			return err
		}
		b.selectShared(RedisRuleset(), ProtoRedis, nil)
	case "ssl-hello-chk":
		if err := tooMany(words, 0); err != nil {
			return err
		}
		b.selectShared(SSLHelloRuleset(), ProtoSSL3, nil)
	case "ldap-check":
		if err := tooMany(words, 0); err != nil {
			return err
		}
		b.selectShared(LDAPRuleset(), ProtoLDAP, nil)
	case "spop-check":
		if err := tooMany(words, 0); err != nil {
			return err
		}
		b.selectShared(SPOPRuleset(), ProtoSPOP, nil)
	case "smtpchk":
		if err := tooMany(words, 2); err != nil {
			return err
		}
		cmd := "HELO localhost"
		if v, d := arg(words, 2), arg(words, 3); d != "" && (v == "EHLO" || v == "HELO") {
			cmd = v + " " + d
		}
		b.selectShared(SMTPRuleset(), ProtoSMTP, map[string]string{"check.smtp_cmd": cmd})
	case "pgsql-check":
		if err := tooMany(words, 2); err != nil {
			return err
		}
		if arg(words, 2) == "" || arg(words, 3) == "" {
			return fmt.Errorf("'%s %s' expects 'user <username>' as argument.", words[0], name)
		}
		if words[2] != "user" {
			return fmt.Errorf("'%s %s' only supports optional values: 'user' (got '%s').", words[0], name, words[2])
		}
		b.selectShared(PgSQLRuleset(), ProtoPgSQL, pgsqlVars(words[3]))
	case "mysql-check":
		if err := tooMany(words, 3); err != nil {
			return err
		}
		if arg(words, 2) == "" {
			b.selectShared(MySQLRuleset(false, false), ProtoMySQL, nil)
			return nil
		}
		if words[2] != "user" {
			return fmt.Errorf("'%s %s' only supports optional values: 'user' (got '%s').", words[0], name, words[2])
		}
		if arg(words, 3) == "" {
			return fmt.Errorf("'%s %s %s' expects <username> as argument.", words[0], name, words[2])
		}
		pre41 := false
		switch arg(words, 4) {
		case "", "post-41":
		case "pre-41":
			pre41 = true
		default:
			return fmt.Errorf("keyword '%s' only supports 'post-41' and 'pre-41' (got '%s').", words[2], words[4])
		}
		b.selectShared(MySQLRuleset(true, pre41), ProtoMySQL, mysqlVars(words[3], pre41))
	case "tcp-check":
		if err := tooMany(words, 0); err != nil {
			return err
		}
		if b.chosen && b.rules.Proto == ProtoTCP && b.rules.Set != nil && b.tcpRS == nil {
			// Keep the tcp-check rules inherited from defaults.
			return nil
		}
		b.chosen = true
		if b.tcpRS == nil {
			b.tcpRS = &Ruleset{Name: b.rsName("tcp-check")}
		}
		b.rules = Rules{Set: b.tcpRS, Proto: ProtoTCP, Disable404: b.rules.Disable404, SendState: b.rules.SendState}
	case "httpchk":
		if err := tooMany(words, 3); err != nil {
			return err
		}
		req, warn := httpchkRequest(words[2:])
		b.chosen = true
		if b.httpRS == nil {
			b.httpRS = &Ruleset{Name: b.rsName("http-check")}
		}
		b.rules = Rules{Set: b.httpRS, Proto: ProtoHTTP, Disable404: b.rules.Disable404, SendState: b.rules.SendState}
		if err := addHTTPRule(b.httpRS, req); err != nil {
			return fmt.Errorf("'%s %s' : %s.", words[0], name, err)
		}
		if warn != "" {
			return warnf(fmt.Sprintf("'%s %s' : %s", words[0], name, warn))
		}
	default:
		return fmt.Errorf("check: unknown check option '%s'", name)
	}
	return nil
}

func (b *Backend) rsName(kind string) string {
	if b.defaults {
		return "*" + kind + "-defaults"
	}
	return "*" + kind + "-" + b.name
}

// httpchkRequest builds the implicit send rule of "option httpchk
// [<method>] <uri> [<version>]"; a version ending with "\r\n" headers is
// still accepted, with HAProxy's deprecation warning.
func httpchkRequest(a []string) (*Rule, string) {
	req := &HTTPRequest{FromOption: true}
	m, u, v := arg(a, 0), arg(a, 1), arg(a, 2)
	switch {
	case m != "" && u == "":
		req.URI = m
	case m != "":
		req.Method, req.URI = m, u
	}
	warn := ""
	if v != "" {
		hdrs, body := "", ""
		if i := strings.Index(v, "\r\n\r\n"); i >= 0 {
			body = v[i+4:]
			v = v[:i]
		}
		if i := strings.Index(v, "\r\n"); i >= 0 {
			hdrs = v[i+2:]
			v = v[:i]
		}
		req.Version = v
		if hdrs != "" || body != "" {
			warn = "hiding headers or body at the end of the version string is deprecated. Please, consider to use 'http-check send' directive instead."
		}
		for _, l := range strings.Split(hdrs, "\r\n") {
			i := strings.IndexByte(l, ':')
			if i <= 0 {
				continue
			}
			f, err := compileLF(strings.TrimLeft(l[i+1:], " \t"))
			if err != nil {
				f = sample.Literal(strings.TrimLeft(l[i+1:], " \t"))
			}
			req.Headers = append(req.Headers, HTTPHeader{Name: l[:i], value: f})
		}
		req.Body = body
	}
	return &Rule{Action: ActSend, Send: &SendRule{Kind: SendHTTP, HTTP: req}}, warn
}

// addHTTPRule inserts an http-check rule the way HAProxy merges the
// implicit request of "option httpchk" with explicit "http-check send".
func addHTTPRule(rs *Ruleset, r *Rule) error {
	isOpt := r.Action == ActSend && r.Send.HTTP != nil && r.Send.HTTP.FromOption
	if isOpt {
		fi := firstActive(rs.Rules)
		if fi >= 0 && rs.Rules[fi].Action == ActConnect {
			fi = nextActive(rs.Rules, fi)
		}
		switch {
		case fi < 0 || rs.Rules[fi].Action != ActSend:
			rs.Rules = append([]*Rule{r}, rs.Rules...)
		case rs.Rules[fi].Send.HTTP.FromOption:
			rs.Rules = append(append([]*Rule{r}, rs.Rules[:fi]...), rs.Rules[fi+1:]...)
		default:
			mergeHTTPSend(rs.Rules[fi].Send.HTTP, r.Send.HTTP)
		}
		return nil
	}
	li := lastActive(rs.Rules)
	var last *Rule
	if li >= 0 {
		last = rs.Rules[li]
	}
	index := 0
	if n := len(rs.Rules); n > 0 {
		// The implicit request of "option httpchk" does not count.
		lr := rs.Rules[n-1]
		index = lr.Index
		if !(lr.Action == ActSend && lr.Send.HTTP != nil && lr.Send.HTTP.FromOption) {
			index++
		}
	}
	switch {
	case last == nil || (last.Action == ActSend && last.Send.HTTP != nil && last.Send.HTTP.FromOption):
	case last.Action != ActConnect && r.Action == ActSend:
		return fmt.Errorf("unable to add http-check send rule at step %d (missing connect rule)", index+1)
	case last.Action != ActSend && last.Action != ActExpect && r.Action == ActExpect:
		return fmt.Errorf("unable to add http-check expect rule at step %d (missing send rule)", index+1)
	case last.Action != ActExpect && r.Action == ActConnect:
		return fmt.Errorf("unable to add http-check connect rule at step %d (missing expect rule)", index+1)
	}
	if r.Action == ActSend {
		fi := firstActive(rs.Rules)
		if fi >= 0 && rs.Rules[fi].Action == ActSend && rs.Rules[fi].Send.HTTP.FromOption {
			opt := rs.Rules[fi]
			mergeHTTPSend(opt.Send.HTTP, r.Send.HTTP)
			opt.Send.HTTP.FromOption = false
			if r.Comment != "" {
				opt.Comment = r.Comment
			}
			rs.Rules = append(rs.Rules[:fi], rs.Rules[fi+1:]...)
			r = opt
		}
	}
	r.Index = index
	rs.Rules = append(rs.Rules, r)
	return nil
}

// mergeHTTPSend overwrites the fields of old that nw sets.
func mergeHTTPSend(old, nw *HTTPRequest) {
	if nw.Method != "" {
		old.Method = nw.Method
	}
	if nw.URI != "" || nw.uriFmt != nil {
		old.URI, old.uriFmt = nw.URI, nw.uriFmt
	}
	if nw.Version != "" {
		old.Version = nw.Version
	}
	if len(nw.Headers) > 0 {
		old.Headers = nw.Headers
	}
	if nw.Body != "" || nw.bodyFmt != nil {
		old.Body, old.bodyFmt = nw.Body, nw.bodyFmt
	}
}

// TCPCheck handles a "tcp-check <action> ..." line.
func (b *Backend) TCPCheck(words []string) error {
	if b.tcpRS == nil {
		b.tcpRS = &Ruleset{Name: b.rsName("tcp-check")}
	}
	r, err := ParseTCPCheckRule(words, b.tcpRS.Rules)
	if err != nil {
		return err
	}
	if len(b.tcpRS.Rules) > 0 {
		r.Index = b.tcpRS.Rules[len(b.tcpRS.Rules)-1].Index + 1
	}
	b.tcpRS.Rules = append(b.tcpRS.Rules, r)
	if b.chosen && b.rules.Proto == ProtoTCP {
		b.rules.Set = b.tcpRS
		b.rules.Flags &^= RulesUnusedTCP | RulesInherited
	} else {
		b.rules.Flags |= RulesUnusedTCP
	}
	return nil
}

// HTTPCheck handles an "http-check <action> ..." line, including the
// disable-on-404 and send-state flags.
func (b *Backend) HTTPCheck(words []string) error {
	switch arg(words, 1) {
	case "disable-on-404", "send-state":
		if a := arg(words, 2); a != "" {
			return fmt.Errorf("'%s %s' cannot handle unexpected argument '%s'.", words[0], words[1], a)
		}
		if words[1] == "disable-on-404" {
			b.rules.Disable404 = true
		} else {
			b.rules.SendState = true
		}
		return nil
	}
	if b.httpRS == nil {
		b.httpRS = &Ruleset{Name: b.rsName("http-check")}
	}
	r, err := ParseHTTPCheckRule(words, b.httpRS.Rules)
	if err != nil {
		return err
	}
	if b.chosen && b.rules.Proto == ProtoHTTP {
		b.rules.Set = b.httpRS
		b.rules.Flags &^= RulesUnusedHTTP | RulesInherited
		if err := addHTTPRule(b.httpRS, r); err != nil {
			return fmt.Errorf("'%s %s' : %s.", words[0], words[1], err)
		}
		return nil
	}
	b.rules.Flags |= RulesUnusedHTTP
	if len(b.httpRS.Rules) > 0 {
		r.Index = b.httpRS.Rules[len(b.httpRS.Rules)-1].Index + 1
	}
	b.httpRS.Rules = append(b.httpRS.Rules, r)
	return nil
}

// Finalize runs HAProxy's post-parse pass: it picks the default connect-only
// ruleset when no check option was given, adds the implicit connect (and,
// for HTTP, the implicit "expect status 200-399"), and folds comment rules
// into the rules that follow them. It returns the warnings HAProxy prints
// ("... uses tcp-check rules without 'option tcp-check' ...") and an error
// for fatal problems. kind is "backend" or "proxy" for the messages.
func (b *Backend) Finalize(kind string) (*Rules, []string, error) {
	var warns []string
	if b.rules.Flags&RulesUnusedHTTP != 0 {
		warns = append(warns, fmt.Sprintf("%s '%s' uses http-check rules without 'option httpchk', so the rules are ignored.", kind, b.name))
	}
	if b.rules.Flags&RulesUnusedTCP != 0 {
		warns = append(warns, fmt.Sprintf("%s '%s' uses tcp-check rules without 'option tcp-check', so the rules are ignored.", kind, b.name))
	}
	if !b.chosen {
		b.rules = Rules{Set: DefaultRuleset(), Proto: ProtoDefault, Flags: RulesShared,
			Disable404: b.rules.Disable404, SendState: b.rules.SendState}
	}
	if b.rules.Proto != ProtoHTTP {
		if b.rules.Disable404 {
			warns = append(warns, fmt.Sprintf("'%s' will be ignored for %s '%s' (requires 'option httpchk').", "disable-on-404", kind, b.name))
			b.rules.Disable404 = false
		}
		if b.rules.SendState {
			warns = append(warns, fmt.Sprintf("'%s' will be ignored for %s '%s' (requires 'option httpchk').", "send-state", kind, b.name))
			b.rules.SendState = false
		}
	}
	if b.rules.Set == nil {
		return nil, warns, fmt.Errorf("proxy '%s' : tcp-check configured but no ruleset defined.", b.name)
	}
	if !b.rules.Set.Shared {
		if b.rules.Proto == ProtoHTTP && !b.rules.Set.finalized {
			if err := finalizeHTTP(b.rules.Set); err != nil {
				return nil, warns, fmt.Errorf("proxy '%s': unable to add implicit http-check expect rule (%s).", b.name, err)
			}
		}
		finalizeRuleset(b.rules.Set)
	}
	r := b.rules.clone()
	return r, warns, nil
}

// finalizeHTTP moves the implicit request after the first connect and adds
// the implicit final expect when the ruleset ends with a send.
func finalizeHTTP(rs *Ruleset) error {
	fi := firstActive(rs.Rules)
	if fi >= 0 {
		r := rs.Rules[fi]
		if r.Action == ActSend && r.Send.HTTP != nil && r.Send.HTTP.FromOption {
			if ni := nextActive(rs.Rules, fi); ni >= 0 && rs.Rules[ni].Action == ActConnect {
				rules := append([]*Rule{}, rs.Rules[:fi]...)
				rules = append(rules, rs.Rules[fi+1:ni+1]...)
				r.Index = rs.Rules[ni].Index + 1
				rules = append(rules, r)
				rules = append(rules, rs.Rules[ni+1:]...)
				rs.Rules = rules
			}
		}
	}
	if li := lastActive(rs.Rules); li >= 0 && rs.Rules[li].Action == ActSend {
		e, err := ParseHTTPCheckRule([]string{"http-check", "expect", "status", "200-399"}, rs.Rules)
		if err != nil {
			return err
		}
		e.Index = rs.Rules[li].Index + 1
		rs.Rules = append(rs.Rules, e)
	}
	return nil
}

// finalizeRuleset adds the implicit connect and folds comments. It runs
// once per ruleset, so a ruleset shared by several backends is finalized by
// the first.
func finalizeRuleset(rs *Ruleset) {
	if rs.finalized {
		return
	}
	rs.finalized = true
	if fi := firstActive(rs.Rules); fi < 0 || rs.Rules[fi].Action != ActConnect {
		c := &Rule{Action: ActConnect, Connect: &ConnectRule{Default: true, Implicit: true}}
		rs.Rules = append([]*Rule{c}, rs.Rules...)
	}
	var out []*Rule
	comment := ""
	prev := ActComment
	for _, r := range rs.Rules {
		if r.Action != prev && prev != ActComment {
			comment = ""
		}
		prev = r.Action
		switch r.Action {
		case ActComment:
			comment = r.Comment
			continue
		case ActConnect:
			if r.Comment == "" {
				r.Comment = comment
			}
			comment = ""
		case ActSetVar, ActUnsetVar:
			comment = ""
		case ActSend, ActExpect:
			if r.Comment == "" {
				r.Comment = comment
			}
		}
		out = append(out, r)
	}
	// Expect chains point at rule positions; recompute them now that
	// comments are gone and the implicit connect is in.
	for i, r := range out {
		if r.Action != ActExpect {
			continue
		}
		r.Expect.headIndex = i
		for k := i - 1; k >= 0; k-- {
			p := out[k]
			if p.Action == ActExpect {
				if p.Expect.Inverse {
					r.Expect.headIndex = k
				}
				continue
			}
			if p.Action != ActSetVar && p.Action != ActUnsetVar {
				break
			}
		}
	}
	rs.Rules = out
}
