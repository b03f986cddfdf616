package stream

import (
	"fmt"
	"goha/core"
	"goha/core/diag"
	"goha/core/http1"
	"goha/core/sample"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// compileReply compiles the reply of a deny or return rule (and of an
// http-error line, as a return): status, content-type, a payload (string,
// lf-string, file, lf-file), hdr fields, or an error page (errorfile,
// errorfiles, default-errorfiles). As in HAProxy 2.6, a deny with nothing
// but deny_status answers with the proxy's error page, and a reply with
// no payload nor error page is empty.
func compileReply(env *sample.Env, r *httpRule, args []string, resp bool) error {
	deny := args[0] == "deny" || args[0] == "tarpit"
	r.act, r.status = actReturn, 200
	if deny {
		r.act, r.status = actDeny, 403
		if resp {
			r.status = 502
		}
	}
	body := ""
	lf, payload, replyKw := false, false, false
	for i := 1; i < len(args); i++ {
		w := args[i]
		if w == "default-errorfiles" {
			r.errMsg, replyKw = true, true
			continue
		}
		if i+1 >= len(args) {
			return fmt.Errorf("'%s' expects an argument.", w)
		}
		if w != "deny_status" {
			replyKw = true
		}
		switch w {
		case "status", "deny_status":
			n, _ := strconv.Atoi(args[i+1])
			if n < 200 || n > 599 {
				return fmt.Errorf("Unexpected status code '%d'", n)
			}
			r.status = n
		case "content-type":
			r.ctype = args[i+1]
		case "string":
			body, lf, payload = args[i+1], false, true
		case "lf-string":
			body, lf, payload = args[i+1], true, true
		case "file", "lf-file":
			raw, err := os.ReadFile(args[i+1])
			if err != nil {
				return fmt.Errorf("error opening file '%s'.", args[i+1])
			}
			body, lf, payload = string(raw), w == "lf-file", true
		case "errorfile":
			raw, err := os.ReadFile(args[i+1])
			if err != nil {
				return fmt.Errorf("error opening file '%s'.", args[i+1])
			}
			rep, err := http1.NewReply(raw)
			if err != nil {
				return fmt.Errorf("'%s': %v", args[i+1], err)
			}
			r.reply = rep
		case "errorfiles":
			r.errSect = args[i+1]
		case "hdr":
			if i+2 >= len(args) {
				return fmt.Errorf("'hdr' expects <name> and <fmt> as arguments.")
			}
			v, err := httpLF(env, args[i+2])
			if err != nil {
				return err
			}
			r.hdrs = append(r.hdrs, retHeader{name: args[i+1], value: v})
			i++
		default:
			return fmt.Errorf("unknown argument '%s'.", w)
		}
		i++
	}
	if deny && !replyKw {
		r.errMsg = true
	}
	if r.errMsg || r.errSect != "" || r.reply != nil {
		if !core.ErrorCode(r.status) {
			return fmt.Errorf("status code '%d' not handled by default with '%s' or 'errorfile' argument.", r.status, "default-errorfiles")
		}
		return nil
	}
	if body != "" && r.ctype == "" {
		return fmt.Errorf("a content type must be defined when non-empty payload is configured.")
	}
	// A reply without a body has no content type: HAProxy drops it, with
	// a warning.
	switch {
	case r.ctype != "" && !payload:
		r.warn = fmt.Sprintf("content-type '%s' ignored by the http reply because neither errorfile nor payload defined.", r.ctype)
		r.ctype = ""
	case r.ctype != "" && body == "":
		r.warn = fmt.Sprintf("content-type '%s' ignored by the http reply when used with an empty payload.", r.ctype)
		r.ctype = ""
	}
	if lf {
		v, err := httpLF(env, body)
		if err != nil {
			return err
		}
		r.body = v
	} else {
		r.body = sample.Literal(body)
	}
	static := r.body.Static()
	for _, h := range r.hdrs {
		static = static && h.value.Static()
	}
	if static {
		body := r.body.AppendTo(nil, nil)
		head, _ := r.appendReturnHead(nil, len(body), nil, false)
		rep, err := http1.NewReply([]byte(string(head) + "\r\n" + string(body)))
		if err != nil {
			return err
		}
		r.reply = rep
	}
	return nil
}

// compileErrors builds a proxy's error pages from its lines, in order,
// and the http-errors sections they name.
func (proc *Process) compileErrors(p *proxy, named map[string][]*sample.Term, d *diag.Collector) {
	// Every section is read once, before any request: deny and return
	// rules look their pages up by name while serving.
	for _, name := range slices.Sorted(maps.Keys(proc.Conf.HTTPErrors)) {
		proc.httpErrors(name, d)
	}
	for _, e := range p.Errors {
		var rep *http1.Reply
		var dyn *httpRule
		switch e.Kind {
		case "errorfile":
			raw, err := os.ReadFile(e.Arg)
			if err != nil {
				d.Add(diag.Diag{Sev: diag.Alert, Pos: e.Pos, Msg: fmt.Sprintf("error opening file '%s'.", e.Arg)})
				continue
			}
			if rep, err = http1.NewReply(raw); err != nil {
				d.Add(diag.Diag{Sev: diag.Alert, Pos: e.Pos, Msg: fmt.Sprintf("'%s': %v", e.Arg, err)})
				continue
			}
		case "errorloc", "errorloc302", "errorloc303":
			code, reason := 302, "Found"
			if e.Kind == "errorloc303" {
				code, reason = 303, "See Other"
			}
			raw := fmt.Sprintf("HTTP/1.1 %d %s\r\ncache-control: no-cache\r\ncontent-length: 0\r\nlocation: %s\r\n\r\n", code, reason, e.Arg)
			var err error
			if rep, err = http1.NewReply([]byte(raw)); err != nil {
				d.Add(diag.Diag{Sev: diag.Alert, Pos: e.Pos, Msg: fmt.Sprintf("%s : %v", e.Kind, err)})
				continue
			}
		case "errorfiles":
			sec := proc.httpErrors(e.Arg, d)
			for code, r := range sec {
				if len(e.Codes) > 0 && !slices.Contains(e.Codes, code) {
					continue
				}
				p.setErrReply(code, r, nil)
			}
			continue
		case "http-error":
			words := append([]string{"return", "status", strconv.Itoa(e.Code)}, e.Words...)
			r := &httpRule{}
			if err := compileReply(proc.envAt(e.Pos), r, words, false); err != nil {
				d.Alertf(e.Pos, "http-error : %s", strings.TrimSuffix(err.Error(), "."))
				continue
			}
			if r.warn != "" {
				d.Warnf(e.Pos, "%s", r.warn)
			}
			switch {
			case r.errSect != "":
				rep = proc.httpErrors(r.errSect, d)[e.Code]
			case r.errMsg:
				// default-errorfiles: the built-in page.
			case r.reply != nil:
				rep = r.reply
			default:
				dyn = r
			}
		}
		p.setErrReply(e.Code, rep, dyn)
	}
}

func (p *proxy) setErrReply(code int, rep *http1.Reply, dyn *httpRule) {
	if p.errReply == nil {
		p.errReply, p.errDyn = map[int]*http1.Reply{}, map[int]*httpRule{}
	}
	delete(p.errReply, code)
	delete(p.errDyn, code)
	if rep != nil {
		p.errReply[code] = rep
	}
	if dyn != nil {
		p.errDyn[code] = dyn
	}
}

// httpErrors is the http-errors section called name, its files read once.
func (proc *Process) httpErrors(name string, d *diag.Collector) map[int]*http1.Reply {
	if r, ok := proc.httpErrs[name]; ok {
		return r
	}
	sec := proc.Conf.HTTPErrors[name]
	if sec == nil {
		return nil
	}
	out := map[int]*http1.Reply{}
	for code, path := range sec.Files {
		raw, err := os.ReadFile(path)
		if err != nil {
			d.Add(diag.Diag{Sev: diag.Alert, Pos: sec.Pos, Msg: fmt.Sprintf("errorfile : error opening file '%s'.", path)})
			continue
		}
		r, err := http1.NewReply(raw)
		if err != nil {
			d.Add(diag.Diag{Sev: diag.Alert, Pos: sec.Pos, Msg: fmt.Sprintf("'%s': %v", path, err)})
			continue
		}
		out[code] = r
	}
	if proc.httpErrs == nil {
		proc.httpErrs = map[string]map[int]*http1.Reply{}
	}
	proc.httpErrs[name] = out
	return out
}

// ruleReply is the reply of a deny or return rule for the request being
// handled; force says the connection closes after it.
func (proc *Process) ruleReply(px *proxy, hc *hconn, r *httpRule, mode http1.ConnValue) (b []byte, n int64, force bool) {
	rep := r.reply
	if rep == nil && r.errSect != "" {
		rep = proc.httpErrs[r.errSect][r.status]
	}
	switch {
	case rep != nil:
		return rep.Bytes(mode), int64(rep.LogSize), rep.ForceClose
	case r.errMsg || r.errSect != "":
		return proc.errorReplyBytes(px, hc, r.status, mode)
	}
	b, n = hc.dynamicReturn(r, &hc.view, mode)
	return b, n, false
}

// errorReplyBytes is the error page for status: the backend's when the
// stream has one, else px's, else the built-in one, as HAProxy's
// http_error_message chooses; an http-error line's page may be built per
// request. n is what the log counts.
func (proc *Process) errorReplyBytes(px *proxy, hc *hconn, status int, mode http1.ConnValue) (b []byte, n int64, force bool) {
	for _, p := range [2]*proxy{hc.si.be, px} {
		if p == nil {
			continue
		}
		if r := p.errReply[status]; r != nil {
			return r.Bytes(mode), int64(r.LogSize), r.ForceClose
		}
		if dr := p.errDyn[status]; dr != nil {
			b, n = hc.dynamicReturn(dr, &hc.view, mode)
			return b, n, false
		}
	}
	if r := http1.ErrorReply(status); r != nil {
		return r.Bytes(mode), int64(r.LogSize), r.ForceClose
	}
	return nil, 0, false
}
