package core

import (
	"fmt"
	"regexp"
	"strings"

	"goha/core/config"
	"goha/core/diag"
)

// TCP and HTTP rules in a defaults section, as HAProxy 2.6 restricts them:
// an anonymous defaults section may not declare any, and a named one that
// does may be inherited by frontends or by backends but not by both, nor by
// listens or other defaults. The proxies inheriting from it run its
// http-request and http-response rules before their own.

// defRules is what a named defaults section's rules demand of the proxies
// inheriting from it.
type defRules struct {
	any            bool // any tcp-request, tcp-response, http-request or http-response rule
	tcpReqConnSess bool // tcp-request connection or session rules
	tcpRespContent bool // tcp-response content rules
	fe, be         bool // inherited by a frontend, by a backend
}

// srvFetchRe finds sample fetches whose argument names a server, which a
// defaults section must qualify with its backend.
var srvFetchRe = regexp.MustCompile(`\b(srv_conn|srv_conn_free|srv_is_up|srv_queue|srv_sess_rate|srv_id|srv_name)\(([^)]*)\)`)

// defaultsRule checks a rule line of a defaults section and records what it
// requires. It returns true when the line was refused.
func (b *builder) defaultsRule(sec *config.Section, p *Proxy, pos diag.Pos, words []string) bool {
	kw := words[0]
	if kw != "http-request" && kw != "http-response" && kw != "tcp-request" && kw != "tcp-response" {
		return false
	}
	sub := ""
	if len(words) > 1 {
		sub = words[1]
	}
	if sec.Name == "" {
		switch kw {
		case "http-request", "http-response":
			b.d.Alertf(pos, "'%s' not allowed in anonymous 'defaults' section.", kw)
		case "tcp-request":
			b.d.Alertf(pos, "tcp-request %s is not allowed in anonymous 'defaults' sections", sub)
		case "tcp-response":
			b.d.Alertf(pos, "tcp-response %s is only allowed in 'backend' sections or 'defaults' section with a name", sub)
		}
		return true
	}
	if b.defRules == nil {
		b.defRules = map[*Proxy]*defRules{}
	}
	r := b.defRules[p]
	if r == nil {
		r = &defRules{}
		b.defRules[p] = r
	}
	// An inspect-delay is a setting, not a rule.
	if sub != "inspect-delay" {
		r.any = true
	}
	if kw == "tcp-request" && (sub == "connection" || sub == "session") {
		r.tcpReqConnSess = true
	}
	if kw == "tcp-response" && sub == "content" {
		r.tcpRespContent = true
	}
	for i, w := range words {
		if m := srvFetchRe.FindStringSubmatch(w); m != nil && !strings.Contains(m[2], "/") {
			b.d.Add(diag.Diag{Sev: diag.Alert, Pos: pos, Parsing: true, Tight: true,
				Msg: fmt.Sprintf("backend name must be set in arg 1 of sample fetch keyword '%s' in %s expression in proxy '%s'.", m[1], kw, sec.Name)})
			return true
		}
		if strings.HasPrefix(w, "track-sc") && (kw == "http-request" || kw == "tcp-request") {
			if !containsWord(words[i+1:], "table") {
				b.defTrack = append(b.defTrack, fmt.Sprintf("Proxy '%s': unable to find table '%s' referenced by %s.", p.Name, p.Name, w))
			}
		}
	}
	return false
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// inheritRules refuses a section inheriting rules it may not have.
func (b *builder) inheritRules(s *config.Section, cap Cap, tmpl *Proxy) {
	r := b.defRules[tmpl]
	if r == nil || !r.any {
		return
	}
	at := func(format string, args ...any) {
		b.d.Add(diag.Diag{Sev: diag.Alert, Pos: s.Pos, Parsing: true, Tight: true, Msg: fmt.Sprintf(format, args...)})
	}
	switch cap {
	case CapDefaults:
		// A defaults section starts afresh unless it names its template.
		if s.From == "" {
			return
		}
		at("a defaults section cannot inherit from a defaults section defining TCP/HTTP rules (defaults section at %s).", tmpl.Pos)
	case CapFE | CapBE:
		at("a listen section cannot inherit from a defaults section defining TCP/HTTP rules.")
	case CapBE:
		if r.tcpReqConnSess {
			at("a backend section cannot inherit from a defaults section defining 'tcp-request connection' or 'tcp-request session' rules (defaults section at %s).", tmpl.Pos)
		} else if r.fe {
			at("frontends and backends cannot inherit from the same defaults section if it defines TCP/HTTP rules (defaults section at %s).", tmpl.Pos)
		}
		r.be = true
	case CapFE:
		if r.tcpRespContent {
			at("a frontend section cannot inherit from a defaults section defining 'tcp-response content' rules (defaults section at %s).", tmpl.Pos)
		} else if r.be {
			at("frontends and backends cannot inherit from the same defaults section if it defines TCP/HTTP rules (defaults section at %s).", tmpl.Pos)
		}
		r.fe = true
	}
}

// checkDefaultsTables refuses track-sc actions in defaults sections that
// name no table: a defaults section has none of its own.
func (b *builder) checkDefaultsTables() {
	for _, msg := range b.defTrack {
		b.d.Add(diag.Diag{Sev: diag.Alert, Msg: msg})
	}
}
