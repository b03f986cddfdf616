package core

import (
	"fmt"
	"os"
	"strconv"

	"goha/core/diag"
	"goha/core/http1"
)

func init() { registerPostCheck(compileHTTP) }

type useBackendRule struct {
	cond *Cond
	be   *Proxy
}

type ruleAction int

const (
	actSetHeader ruleAction = iota
	actAddHeader
	actDelHeader
	actDeny
	actReturn
	actAllow
)

// httpRule is a compiled http-request or http-response rule.
type httpRule struct {
	act    ruleAction
	name   string
	value  *lfExpr // set-header, add-header
	status int
	reply  *http1.Reply // deny, and return when nothing in it varies
	cond   *Cond
	// return with log-format parts, built per request.
	ctype string
	hdrs  []retHeader
	body  *lfExpr
}

type retHeader struct {
	name  string
	value *lfExpr
}

// compileHTTP compiles ACLs, use_backend conditions, http rules and error
// files of every proxy, reporting problems at their lines.
func compileHTTP(b *builder) {
	for _, p := range b.cfg.Proxies {
		named := map[string][]*aclTerm{}
		for _, a := range p.ACLs {
			t, err := compileACL(a.Words)
			if err != nil {
				b.d.Alertf(a.Pos, "error detected while parsing ACL '%s' : %v", a.Name, err)
				continue
			}
			named[a.Name] = append(named[a.Name], t)
		}
		for _, ub := range p.UseBackends {
			c, err := compileCond(ub.Cond, named)
			if err != nil {
				b.d.Alertf(ub.Pos, "error detected while parsing switching rule : %v.", err)
				continue
			}
			if ub.Target != nil {
				p.useBE = append(p.useBE, useBackendRule{cond: c, be: ub.Target})
			}
		}
		for _, r := range p.HTTPReqRules {
			if rule, err := compileRule(r.Words, named, false); err != nil {
				b.d.Alertf(r.Pos, "'http-request %s' : %v", first(r.Words), err)
			} else {
				p.reqRules = append(p.reqRules, rule)
			}
		}
		for _, r := range p.HTTPRespRules {
			if rule, err := compileRule(r.Words, named, true); err != nil {
				b.d.Alertf(r.Pos, "'http-response %s' : %v", first(r.Words), err)
			} else {
				p.respRules = append(p.respRules, rule)
			}
		}
		for code, path := range p.ErrorFiles {
			raw, err := os.ReadFile(path)
			if err != nil {
				b.d.Add(diag.Diag{Sev: diag.Alert, Pos: p.Pos, Msg: fmt.Sprintf("error opening file '%s'.", path)})
				continue
			}
			r, err := http1.NewReply(raw)
			if err != nil {
				b.d.Add(diag.Diag{Sev: diag.Alert, Pos: p.Pos, Msg: fmt.Sprintf("'%s': %v", path, err)})
				continue
			}
			if p.errReply == nil {
				p.errReply = map[int]*http1.Reply{}
			}
			p.errReply[code] = r
		}
	}
}

func splitCond(words []string) ([]string, []string) {
	for i, w := range words {
		if w == "if" || w == "unless" {
			return words[:i], words[i:]
		}
	}
	return words, nil
}

func compileRule(words []string, named map[string][]*aclTerm, resp bool) (*httpRule, error) {
	args, condWords := splitCond(words)
	cond, err := compileCond(condWords, named)
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
		v, err := compileLF(joinWords(args[2:]))
		if err != nil {
			return nil, err
		}
		r.name, r.value = args[1], v
	case "del-header":
		if len(args) < 2 {
			return nil, fmt.Errorf("expects at least 1 argument.")
		}
		r.act, r.name = actDelHeader, args[1]
	case "allow":
		r.act = actAllow
	case "deny":
		r.act, r.status = actDeny, 403
		if resp {
			r.status = 502
		}
		for i := 1; i+1 < len(args); i++ {
			if args[i] == "deny_status" {
				n, err := strconv.Atoi(args[i+1])
				if err != nil {
					return nil, fmt.Errorf("invalid status code '%s'.", args[i+1])
				}
				r.status = n
			}
		}
		r.reply = http1.ErrorReply(r.status)
		if r.reply == nil {
			return nil, fmt.Errorf("status code '%d' not handled.", r.status)
		}
	case "return":
		r.act, r.status = actReturn, 200
		body := ""
		lf := false
		for i := 1; i < len(args); i++ {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("'%s' expects an argument.", args[i])
			}
			switch args[i] {
			case "status":
				n, err := strconv.Atoi(args[i+1])
				if err != nil || n < 200 || n > 599 {
					return nil, fmt.Errorf("status code '%s' is invalid.", args[i+1])
				}
				r.status = n
			case "content-type":
				r.ctype = args[i+1]
			case "string":
				body, lf = args[i+1], false
			case "lf-string":
				body, lf = args[i+1], true
			case "hdr":
				if i+2 >= len(args) {
					return nil, fmt.Errorf("'hdr' expects <name> and <fmt> as arguments.")
				}
				v, err := compileLF(args[i+2])
				if err != nil {
					return nil, err
				}
				r.hdrs = append(r.hdrs, retHeader{name: args[i+1], value: v})
				i++
			default:
				return nil, fmt.Errorf("unknown argument '%s'.", args[i])
			}
			i++
		}
		if lf {
			v, err := compileLF(body)
			if err != nil {
				return nil, err
			}
			r.body = v
		} else {
			r.body = &lfExpr{static: []byte(body)}
		}
		static := r.body.isStatic()
		for _, h := range r.hdrs {
			static = static && h.value.isStatic()
		}
		if static {
			head, _ := r.appendReturnHead(nil, len(r.body.static), nil, false)
			raw := string(head) + "\r\n" + string(r.body.static)
			rep, err := http1.NewReply([]byte(raw))
			if err != nil {
				return nil, err
			}
			r.reply = rep
		}
	default:
		return nil, fmt.Errorf("unknown or unsupported action '%s'; goha supports 'set-header', 'add-header', 'del-header', 'allow', 'deny' and 'return'.", args[0])
	}
	return r, nil
}

func reasonPhrase(code int) string {
	switch code {
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 204:
		return "No Content"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 500:
		return "Internal Server Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Time-out"
	}
	return "Other"
}

// appendReturnHead writes the status line and header fields of a return
// rule's response, without the final empty line, for a body of n bytes,
// in HAProxy's order: the rule's hdr fields, then content-length and
// content-type. v evaluates the hdr values (nil when they are static).
// On the wire (wire set), a 1xx or 204 response has no content-length,
// as HAProxy's H1 layer drops it; fields is what the fields count in
// HAProxy's log (http1.HTXSize), where it is still counted.
func (r *httpRule) appendReturnHead(b []byte, n int, v *reqView, wire bool) (out []byte, fields int) {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(r.status), 10)
	b = append(b, ' ')
	b = append(b, reasonPhrase(r.status)...)
	b = append(b, "\r\n"...)
	for _, h := range r.hdrs {
		b = append(b, h.name...)
		b = append(b, ": "...)
		at := len(b)
		b = h.value.appendTo(b, v)
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
