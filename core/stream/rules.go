package stream

import (
	"bytes"
	"errors"
	"fmt"
	"goha/core"
	"goha/core/sample"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"goha/core/diag"
	"goha/core/http1"
)

type useBackendRule struct {
	cond *sample.Cond
	be   *proxy
	name *sample.Expr // a dynamic rule's backend name
}

type ruleAction int

const (
	actSetHeader ruleAction = iota
	actAddHeader
	actDelHeader
	actDeny
	actReturn
	actAllow
	actVar
	actSetPath
	actSetPathQ
	actSetQuery
	actSetURI
	actSetMethod
	actReplacePath
	actReplacePathQ
	actReplaceURI
	actReplaceHeader
	actReplaceValue
	actSetStatus
	actRedirect
	actSetSrc
	actSetSrcPort
	actSetDst
	actSetDstPort
	actSetTimeout
	actTarpit
	actAuth
	actCapture
	actStick // track-sc*, sc-inc-gpc*, sc-set-gpt* (stick.go)
)

// httpRule is a compiled http-request or http-response rule.
type httpRule struct {
	act    ruleAction
	name   string
	nameRe *regexp.Regexp // del-header -m reg
	match  byte           // del-header -m: 0 (str), 'b'eg, 'e'nd, 's'ub, 'r'eg
	value  *sample.Expr   // set-header, add-header
	status int
	reply  *http1.Reply // deny, and return when nothing in it varies
	cond   *sample.Cond
	// return with log-format parts, built per request.
	ctype string
	hdrs  []retHeader
	body  *sample.Expr
	warn  string // what compiling dropped, for the configuration's warnings

	// deny and return: the proxy's error page (default-errorfiles, a
	// deny without reply words), or an http-errors section's.
	errMsg  bool
	errSect string

	v      *varAction         // set-var, set-var-fmt, unset-var
	reason string             // set-status
	redir  *redirectRule      // redirect
	expr   *sample.SampleExpr // set-src, set-dst and their ports, set-timeout
	capX   *sample.SampleExpr // capture: the value
	capID  int                // capture: the slot
	wait   *waitBodyRule      // wait-for-body
	norm   normalizer         // normalize-uri
	sa     *stickAction       // stick-table actions
	pos    diag.Pos           // the rule's line, for last_rule_file and last_rule_line
}

type retHeader struct {
	name  string
	value *sample.Expr
}

// compileHTTP compiles ACLs, use_backend conditions, http rules and error
// files of every proxy, reporting problems at their lines.
func (proc *Process) compileHTTP(d *diag.Collector) {
	for _, p := range proc.proxies {
		// Table arguments name this proxy's table when they name none.
		proc.env.Proxy = p.Name
		named := map[string][]*sample.Term{}
		for _, a := range p.ACLs {
			t, err := sample.CompileACL(proc.envAt(a.Pos), a.Words)
			if authError(d, p, a.Pos, a.Name, "", err) {
				// The name stays known, matching nothing: rules using it
				// are not errors of their own.
				if _, ok := named[a.Name]; !ok {
					named[a.Name] = nil
				}
				continue
			}
			if err != nil {
				d.Alertf(a.Pos, "error detected while parsing ACL '%s' : %v", a.Name, err)
				continue
			}
			named[a.Name] = append(named[a.Name], t)
		}
		for _, ub := range p.UseBackends {
			c, err := sample.CompileCond(proc.envAt(ub.Pos), ub.Cond, named)
			if err != nil {
				d.Alertf(ub.Pos, "error detected while parsing switching rule : %v.", err)
				continue
			}
			if ub.Dynamic {
				if e := proc.compileDynamicBackend(ub, d); e != nil {
					p.useBE = append(p.useBE, useBackendRule{cond: c, name: e})
				}
			} else if ub.Target != nil {
				p.useBE = append(p.useBE, useBackendRule{cond: c, be: proc.proxyOf(ub.Target)})
			}
		}
		for _, r := range p.HTTPReqRules {
			if rule, err := compileRule(proc.envAt(r.Pos), r.Words, named, false); authError(d, p, r.Pos, "", "http-request", err) {
			} else if err != nil {
				d.Alertf(r.Pos, "%s", ruleError(p, "http-request", r.Words, err))
			} else {
				if rule.warn != "" {
					d.Warnf(r.Pos, "%s", rule.warn)
				}
				rule.pos = r.Pos
				p.reqRules = append(p.reqRules, rule)
			}
		}
		markHintGroups(p.reqRules)
		for _, r := range p.HTTPRespRules {
			if rule, err := compileRule(proc.envAt(r.Pos), r.Words, named, true); authError(d, p, r.Pos, "", "http-response", err) {
			} else if err != nil {
				d.Alertf(r.Pos, "%s", ruleError(p, "http-response", r.Words, err))
			} else {
				if rule.warn != "" {
					d.Warnf(r.Pos, "%s", rule.warn)
				}
				rule.pos = r.Pos
				p.respRules = append(p.respRules, rule)
			}
		}
		for _, r := range p.HTTPAfterRules {
			if rule, err := compileRule(proc.env, r.Words, named, true); err != nil {
				d.Alertf(r.Pos, "%s", ruleError(p, "http-after-response", r.Words, err))
			} else if rule.act == actDeny || rule.act == actReturn || rule.act == actRedirect || rule.act == actWaitBody || rule.act == actNormalizeURI {
				d.Alertf(r.Pos, "'http-after-response %s' : unknown action.", firstWord(r.Words))
			} else {
				p.afterRules = append(p.afterRules, rule)
			}
		}
		proc.compileTCPRules(p, named, d)
		proc.compileRouting(p, named, d)
		proc.compileStickRules(p, named, d)
		proc.compileErrors(p, named, d)
		proc.finishAuth(p, d)
		proc.compileStats(p, named, d)
	}
}

func compileRule(env *sample.Env, words []string, named map[string][]*sample.Term, resp bool) (*httpRule, error) {
	n, ok := core.RuleArity(words)
	if !ok {
		return nil, core.UnknownAction(words[0])
	}
	args, condWords := words[:n], words[n:]
	cond, err := sample.CompileCond(env, condWords, named)
	if err != nil {
		return nil, err
	}
	r := &httpRule{cond: cond}
	switch args[0] {
	case "set-header", "add-header":
		if len(args) < 3 {
			return nil, fmt.Errorf("expects exactly 2 arguments.")
		}
		r.act = actSetHeader
		if args[0] == "add-header" {
			r.act = actAddHeader
		}
		v, err := httpLF(env, strings.Join(args[2:], " "))
		if err != nil {
			return nil, err
		}
		r.name, r.value = args[1], v
	case "del-header":
		if len(args) < 2 {
			return nil, fmt.Errorf("expects at least 1 argument.")
		}
		r.act, r.name = actDelHeader, args[1]
		if len(args) > 2 {
			switch m := firstWord(args[3:]); m {
			case "str":
			case "beg", "end":
				r.match = m[0]
			case "sub":
				r.match, r.name = 's', strings.ToLower(r.name)
			case "reg":
				re, err := regexp.Compile(r.name)
				if err != nil {
					return nil, fmt.Errorf("regex '%s' is invalid: %v", r.name, err)
				}
				r.match, r.nameRe = 'r', re
			default:
				return nil, fmt.Errorf("-m with unsupported matching method '%s'.", m)
			}
		}
	case "allow":
		r.act = actAllow
	case "deny", "return", "tarpit":
		if args[0] == "tarpit" && resp {
			return nil, core.UnknownAction(args[0])
		}
		if err := compileReply(env, r, args, resp); err != nil {
			return nil, err
		}
		if args[0] == "tarpit" {
			// A tarpit is a deny after a wait, with a 500 by default.
			r.act = actTarpit
			if !slices.Contains(args, "deny_status") && !slices.Contains(args, "status") {
				r.status = 500
			}
		}
	default:
		ok, err := compileMore(env, r, args, resp)
		if err != nil {
			return nil, err
		}
		if !ok {
			if r.sa, ok, err = compileStickAction(env, args); err != nil {
				return nil, err
			}
			r.act = actStick
		}
		if !ok {
			return nil, core.UnknownAction(args[0])
		}
	}
	return r, nil
}

// delHeader removes the fields del-header names. HAProxy compares names
// without regard to case, and runs a regex on the name as its HTX stores
// it: in lower case.
func (r *httpRule) delHeader(h *http1.Head) {
	if r.match == 0 {
		h.Del(r.name)
		return
	}
	var low []byte
	for i := 0; i < h.NumFields(); i++ {
		if h.Deleted(i) {
			continue
		}
		name, _ := h.Field(i)
		var ok bool
		switch r.match {
		case 'b':
			ok = len(name) >= len(r.name) && bytes.EqualFold(name[:len(r.name)], []byte(r.name))
		case 'e':
			ok = len(name) >= len(r.name) && bytes.EqualFold(name[len(name)-len(r.name):], []byte(r.name))
		case 's':
			low = appendLower(low[:0], name)
			ok = bytes.Contains(low, []byte(r.name))
		case 'r':
			low = appendLower(low[:0], name)
			ok = r.nameRe.Match(low)
		}
		if ok {
			h.DelField(i)
		}
	}
}

func appendLower(b, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// httpLF compiles the format of an HTTP action (see sample.Expr.HTTP).
func httpLF(env *sample.Env, s string) (*sample.Expr, error) {
	e, err := sample.CompileLF(env, s)
	if err == nil {
		e.HTTP()
	}
	return e, err
}

// reasonPhrase is the reason HAProxy 2.6's http_get_reason gives a
// status: set-status without a reason and return replies carry it.
func reasonPhrase(code int) string {
	if r, ok := reasons[code]; ok {
		return r
	}
	switch code / 100 {
	case 1:
		return "Informational"
	case 2:
		return "Success"
	case 3:
		return "Redirection"
	case 4:
		return "Client Error"
	case 5:
		return "Server Error"
	}
	return "Other"
}

var reasons = map[int]string{
	100: "Continue", 101: "Switching Protocols", 102: "Processing",
	200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information",
	204: "No Content", 205: "Reset Content", 206: "Partial Content", 207: "Multi-Status",
	210: "Content Different", 226: "IM Used",
	300: "Multiple Choices", 301: "Moved Permanently", 302: "Moved Temporarily",
	303: "See Other", 304: "Not Modified", 305: "Use Proxy", 307: "Temporary Redirect",
	308: "Permanent Redirect", 310: "Too many Redirects",
	400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
	404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
	407: "Proxy Authentication Required", 408: "Request Time-out", 409: "Conflict",
	410: "Gone", 411: "Length Required", 412: "Precondition Failed",
	413: "Request Entity Too Large", 414: "Request-URI Too Long",
	415: "Unsupported Media Type", 416: "Requested range unsatisfiable",
	417: "Expectation failed", 418: "I'm a teapot", 421: "Misdirected Request",
	422: "Unprocessable Content", 423: "Locked", 424: "Method failure", 425: "Too Early",
	426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
	431: "Request Header Fields Too Large", 449: "Retry With",
	450: "Blocked by Windows Parental Controls", 451: "Unavailable For Legal Reasons",
	456: "Unrecoverable Error", 499: "client has closed connection",
	500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway or Proxy Error",
	503: "Service Unavailable", 504: "Gateway Time-out", 505: "HTTP Version not supported",
	506: "Variant also negotiate", 507: "Insufficient storage", 508: "Loop detected",
	509: "Bandwidth Limit Exceeded", 510: "Not extended", 511: "Network authentication required",
	520: "Web server is returning an unknown error",
}

// redirectReason is the reason of a redirect rule's reply, HAProxy's own
// for its five codes (302 is "Found" there, not http_get_reason's).
func redirectReason(code int) string {
	if code == 302 {
		return "Found"
	}
	return reasonPhrase(code)
}

// appendReturnHead writes the status line and header fields of a return
// rule's response, without the final empty line, for a body of n bytes,
// in HAProxy's order: the rule's hdr fields, then content-length and
// content-type. v evaluates the hdr values (nil when they are static).
// On the wire (wire set), a 1xx or 204 response has no content-length,
// as HAProxy's H1 layer drops it; fields is what the fields count in
// HAProxy's log (http1.HTXSize), where it is still counted.
func (r *httpRule) appendReturnHead(b []byte, n int, v *sample.Request, wire bool) (out []byte, fields int) {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(r.status), 10)
	b = append(b, ' ')
	b = append(b, reasonPhrase(r.status)...)
	b = append(b, "\r\n"...)
	for _, h := range r.hdrs {
		start := len(b)
		b = append(b, h.name...)
		b = append(b, ": "...)
		at := len(b)
		b = h.value.AppendTo(b, v)
		if len(b) == at {
			// A field whose value came out empty is left out, as
			// HAProxy leaves it out.
			b = b[:start]
			continue
		}
		fields += len(h.name) + len(b) - at
		b = append(b, "\r\n"...)
	}
	var num [20]byte
	cl := strconv.AppendInt(num[:0], int64(n), 10)
	fields += len("content-length") + len(cl)
	if !wire || !http1.BodylessStatus(r.status) {
		b = append(b, "content-length: "...)
		b = append(b, cl...)
		b = append(b, "\r\n"...)
	}
	if r.ctype != "" {
		b = append(b, "content-type: "...)
		b = append(b, r.ctype...)
		b = append(b, "\r\n"...)
		fields += len("content-type") + len(r.ctype)
	}
	return b, fields
}

// ruleError words a rule that does not compile: an expression's error as
// HAProxy reports it, anything else after the rule's keyword and action.
func ruleError(p *proxy, kw string, words []string, err error) string {
	var ua *core.UnknownActionError
	if errors.As(err, &ua) {
		return fmt.Sprintf("'%s %s' : %v", kw, firstWord(words), err)
	}
	return fmt.Sprintf("error detected in %s '%s' while parsing '%s %s' rule : %s.", core.CapName(p.Cap), p.Name, kw, firstWord(words), strings.TrimSuffix(err.Error(), "."))
}

func firstWord(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
