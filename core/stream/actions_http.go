package stream

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"time"

	"goha/core/config"

	"goha/core/http1"
	"goha/core/sample"
)

// The http-request, http-response and http-after-response actions beyond
// headers, deny and return: variables, request-line rewrites, header value
// rewrites, redirects and set-status.

// redirectRule is a compiled redirect.
type redirectRule struct {
	kind        string // location, prefix, scheme
	target      *sample.Expr
	code        int
	dropQuery   bool
	appendSlash bool
	setCookie   string
	clearCookie string
}

// compileMore compiles the actions rules.go leaves to this file; ok is
// false for an action it does not know.
func compileMore(env *sample.Env, r *httpRule, args []string, resp bool) (bool, error) {
	var err error
	switch key := actionKeyOf(args[0]); key {
	case "capture":
		// The configuration turned a len form into its slot's id.
		if len(args) < 4 || args[2] != "id" {
			return true, fmt.Errorf("expects <expression> [ 'len' <length> | id <idx> ].")
		}
		r.act = actCapture
		if r.capX, err = sample.CompileExpr(env, args[1]); err != nil {
			return true, err
		}
		r.capID, err = strconv.Atoi(args[3])
	case "set-var", "set-var-fmt", "unset-var":
		r.act = actVar
		r.v, err = compileVarAction(env, args)
	case "set-path", "set-pathq", "set-query", "set-uri", "set-method":
		if resp {
			return false, nil
		}
		r.act = map[string]ruleAction{"set-path": actSetPath, "set-pathq": actSetPathQ, "set-query": actSetQuery,
			"set-uri": actSetURI, "set-method": actSetMethod}[key]
		if len(args) < 2 {
			return true, fmt.Errorf("expects exactly 1 argument <format>.")
		}
		r.value, err = httpLF(env, args[1])
	case "replace-path", "replace-pathq", "replace-uri":
		if resp {
			return false, nil
		}
		r.act = map[string]ruleAction{"replace-path": actReplacePath, "replace-pathq": actReplacePathQ, "replace-uri": actReplaceURI}[key]
		if len(args) < 3 {
			return true, fmt.Errorf("expects exactly 2 arguments <match-regex> and <replace-format>.")
		}
		if r.nameRe, err = regexp.Compile(args[1]); err != nil {
			return true, fmt.Errorf("failed to parse the regex : %v.", err)
		}
		r.value, err = httpLF(env, args[2])
	case "replace-header", "replace-value":
		r.act = actReplaceHeader
		if key == "replace-value" {
			r.act = actReplaceValue
		}
		if len(args) < 4 {
			return true, fmt.Errorf("expects exactly 3 arguments.")
		}
		r.name = args[1]
		if r.nameRe, err = regexp.Compile(args[2]); err != nil {
			return true, fmt.Errorf("failed to parse the regex : %v.", err)
		}
		r.value, err = httpLF(env, args[3])
	case "set-status":
		if !resp {
			return false, nil
		}
		r.act = actSetStatus
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 100 || n > 999 {
			return true, fmt.Errorf("expects an integer status code between 100 and 999")
		}
		r.status = n
		r.reason = reasonPhrase(n)
		if len(args) > 3 {
			r.reason = args[3]
		}
	case "auth":
		if resp {
			return false, nil
		}
		err = compileAuth(r, args)
	case "redirect":
		r.act = actRedirect
		r.redir, err = compileRedirect(env, args)
	case "set-src", "set-src-port", "set-dst", "set-dst-port":
		if resp {
			return false, nil
		}
		r.act = map[string]ruleAction{"set-src": actSetSrc, "set-src-port": actSetSrcPort, "set-dst": actSetDst, "set-dst-port": actSetDstPort}[key]
		if len(args) < 2 {
			return true, fmt.Errorf("missing fetch method")
		}
		r.expr, err = sample.CompileExpr(env, args[1])
	case "set-timeout":
		if resp {
			return false, nil
		}
		r.act = actSetTimeout
		if len(args) < 3 || args[1] != "server" && args[1] != "tunnel" {
			return true, fmt.Errorf("'set-timeout' rule supports 'server'/'tunnel' (got '%s')", firstWord(args[1:]))
		}
		r.name = args[1]
		if d, perr := config.ParseTime(args[2], time.Millisecond); perr == nil {
			r.status = int(d / time.Millisecond)
		} else {
			r.expr, err = sample.CompileExpr(env, args[2])
		}
	default:
		return compileOther(r, args, env, resp)
	}
	return true, err
}

func actionKeyOf(w string) string {
	if i := bytes.IndexByte([]byte(w), '('); i > 0 {
		return w[:i]
	}
	return w
}

func compileRedirect(env *sample.Env, args []string) (*redirectRule, error) {
	if len(args) < 3 {
		if len(args) == 2 {
			return nil, fmt.Errorf("missing argument for '%s'", args[1])
		}
		return nil, fmt.Errorf("expects 'code', 'prefix', 'location', 'scheme', 'set-cookie', 'clear-cookie', 'drop-query', 'ignore-empty' or 'append-slash' (was '')")
	}
	rd := &redirectRule{kind: args[1], code: 302}
	switch rd.kind {
	case "location", "prefix", "scheme":
	default:
		return nil, fmt.Errorf("expects 'code', 'prefix', 'location', 'scheme', 'set-cookie', 'clear-cookie', 'drop-query', 'ignore-empty' or 'append-slash' (was '%s').", rd.kind)
	}
	var err error
	if rd.target, err = httpLF(env, args[2]); err != nil {
		return nil, err
	}
	for i := 3; i < len(args); i++ {
		switch args[i] {
		case "code":
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 301 || n > 308 || n == 304 || n == 305 || n == 306 {
				return nil, fmt.Errorf("'code': unsupported HTTP code '%s'.", args[i+1])
			}
			rd.code = n
			i++
		case "drop-query":
			rd.dropQuery = true
		case "append-slash":
			rd.appendSlash = true
		case "set-cookie":
			rd.setCookie = args[i+1]
			i++
		case "clear-cookie":
			rd.clearCookie = args[i+1]
			i++
		}
	}
	return rd, nil
}

// applyReqAction runs a request action of this file on the request being
// handled.
func (hc *hconn) applyReqAction(r *httpRule, v *sample.Request) {
	req := &hc.req
	switch r.act {
	case actCapture:
		hc.capture(r, v, false)
	case actVar:
		r.v.apply(v, &hc.rs.smp, &hc.rs.buf)
	case actSetMethod:
		hc.scratch = r.value.AppendTo(hc.scratch[:0], v)
		req.SetMethod(hc.scratch)
	case actSetURI:
		hc.scratch = r.value.AppendTo(hc.scratch[:0], v)
		req.SetURI(hc.scratch)
	case actSetPath, actSetPathQ, actSetQuery:
		hc.scratch = r.value.AppendTo(hc.scratch[:0], v)
		pre, path, query := splitURI(req.URI())
		var out []byte
		out = append(out, pre...)
		switch r.act {
		case actSetPath:
			out = append(out, hc.scratch...)
			out = append(out, query...)
		case actSetPathQ:
			out = append(out, hc.scratch...)
		case actSetQuery:
			out = append(out, path...)
			out = append(out, '?')
			out = append(out, bytes.TrimPrefix(hc.scratch, []byte("?"))...)
		}
		req.SetURI(out)
	case actReplacePath, actReplacePathQ, actReplaceURI:
		pre, path, query := splitURI(req.URI())
		subject := path
		switch r.act {
		case actReplacePathQ:
			subject = append(append([]byte(nil), path...), query...)
		case actReplaceURI:
			subject = req.URI()
		}
		m := r.nameRe.FindSubmatchIndex(subject)
		if m == nil {
			return
		}
		hc.scratch = r.value.AppendTo(hc.scratch[:0], v)
		repl := expandRefs(nil, hc.scratch, subject, m)
		var out []byte
		switch r.act {
		case actReplacePath:
			out = append(append(append(out, pre...), repl...), query...)
		case actReplacePathQ:
			out = append(append(out, pre...), repl...)
		default:
			out = repl
		}
		req.SetURI(out)
	case actReplaceHeader, actReplaceValue:
		hc.replaceHeader(r, v, req, &hc.rwReq)
	case actSetSrc, actSetSrcPort, actSetDst, actSetDstPort:
		hc.setAddr(r, v)
	case actSetTimeout:
		d := time.Duration(r.status) * time.Millisecond
		if r.expr != nil {
			// An expression gives milliseconds.
			s := &hc.rs.smp
			if !r.expr.Eval(v, s) || !sampleInt(v, s) || s.I <= 0 {
				return
			}
			d = time.Duration(s.I) * time.Millisecond
		}
		if r.name == "server" {
			hc.srvTimeout = d
		} else {
			hc.tunTimeout = d
		}
	default:
		hc.applyOther(r, v)
	}
}

// sampleInt casts s to an integer.
func sampleInt(v *sample.Request, s *sample.Sample) bool {
	return sample.Cast(v, s, sample.TSint)
}

// connAddrs are an exchange's addresses as rules changed them; nil when
// unchanged.
type connAddrs struct {
	src, dst net.Addr
}

// setAddr is set-src, set-dst and their ports: the exchange's addresses
// as logs, fetches and option forwardfor/originalto see them from then on
// (HAProxy 2.6 keeps them for the one request, not the connection's next).
func (hc *hconn) setAddr(r *httpRule, v *sample.Request) {
	a, ok := newAddr(r.act, r.expr, v, &hc.rs.smp)
	if !ok {
		return
	}
	if r.act == actSetSrc || r.act == actSetSrcPort {
		hc.addrs.src = a
		v.Client = a
		hc.si.client = a
	} else {
		hc.addrs.dst = a
		v.Local = a
	}
}

// newAddr is the address set-src, set-dst or their ports (act) give: expr
// evaluated for v, in s, replacing the client's or the local address or
// port; ok false when the expression gives nothing usable.
func newAddr(act ruleAction, expr *sample.SampleExpr, v *sample.Request, s *sample.Sample) (net.Addr, bool) {
	if !expr.Eval(v, s) {
		return nil, false
	}
	cur := v.Client
	if act == actSetDst || act == actSetDstPort {
		cur = v.Local
	}
	ap, _ := addrPortOf(cur)
	switch act {
	case actSetSrc, actSetDst:
		if !sample.Cast(v, s, sample.TAddr) {
			return nil, false
		}
		ap = netip.AddrPortFrom(s.IP.Unmap(), ap.Port())
		if act == actSetSrc && s.IP.Is4In6() {
			ap = netip.AddrPortFrom(s.IP, ap.Port())
		}
	default:
		if !sampleInt(v, s) || s.I < 0 || s.I > 65535 {
			return nil, false
		}
		ap = netip.AddrPortFrom(ap.Addr(), uint16(s.I))
	}
	return net.TCPAddrFromAddrPort(ap), true
}

// addrPortOf is a TCP address's address and port.
func addrPortOf(a net.Addr) (netip.AddrPort, bool) {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
	}
	return netip.AddrPort{}, false
}

// replaceHeader is replace-header (the whole value of each field named)
// and replace-value (each comma-separated element).
func (hc *hconn) replaceHeader(r *httpRule, v *sample.Request, h *http1.Head, rw *http1.Rewriter) {
	hc.scratch = r.value.AppendTo(hc.scratch[:0], v)
	for i := h.Index(lowerName(r.name), 0); i >= 0; i = h.Index(lowerName(r.name), i+1) {
		val := h.Value(i)
		if r.act == actReplaceHeader {
			if m := r.nameRe.FindSubmatchIndex(val); m != nil {
				h.ReplaceValue(i, expandRefs(nil, hc.scratch, val, m))
			}
			continue
		}
		// Each element between commas is matched without its leading
		// blanks and, when it matches, replaced with them, as HAProxy
		// does.
		var out []byte
		changed := false
		for j, el := range bytes.Split(val, []byte(",")) {
			if j > 0 {
				out = append(out, ',')
			}
			t := bytes.TrimLeft(el, " \t")
			if m := r.nameRe.FindSubmatchIndex(t); m != nil {
				out = expandRefs(out, hc.scratch, t, m)
				changed = true
			} else {
				out = append(out, el...)
			}
		}
		if changed {
			h.ReplaceValue(i, out)
		}
	}
}

func lowerName(n string) string {
	for i := 0; i < len(n); i++ {
		if n[i] >= 'A' && n[i] <= 'Z' {
			return string(appendLower(nil, []byte(n)))
		}
	}
	return n
}

// expandRefs appends tmpl with \0..\9 replaced by the groups of the match
// m in subject: HAProxy's back-references in replace-* actions.
func expandRefs(out, tmpl, subject []byte, m []int) []byte {
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c == '\\' && i+1 < len(tmpl) && tmpl[i+1] >= '0' && tmpl[i+1] <= '9' {
			g := int(tmpl[i+1] - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				out = append(out, subject[m[2*g]:m[2*g+1]]...)
			}
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}

// splitURI cuts a request target into what precedes the path (the scheme
// and authority of an absolute form), the path and the query (with its
// '?').
func splitURI(u []byte) (pre, path, query []byte) {
	if len(u) > 0 && u[0] != '/' {
		if i := bytes.Index(u, []byte("://")); i >= 0 {
			j := bytes.IndexByte(u[i+3:], '/')
			if j < 0 {
				q := bytes.IndexByte(u[i+3:], '?')
				if q < 0 {
					return u, nil, nil
				}
				return u[:i+3+q], nil, u[i+3+q:]
			}
			pre, u = u[:i+3+j], u[i+3+j:]
		}
	}
	if q := bytes.IndexByte(u, '?'); q >= 0 {
		return pre, u[:q], u[q:]
	}
	return pre, u, nil
}

// redirectReply builds a redirect's response for the request being
// handled, with the Connection field mode asks for.
func (hc *hconn) redirectReply(rd *redirectRule, v *sample.Request, mode http1.ConnValue) []byte {
	req := &hc.req
	_, path, query := splitURI(req.URI())
	loc := rd.target.AppendTo(nil, v)
	switch rd.kind {
	case "prefix":
		if len(loc) == 1 && loc[0] == '/' {
			loc = loc[:0]
		}
		loc = append(loc, path...)
	case "scheme":
		loc = append(loc, "://"...)
		loc = append(loc, req.Host()...)
		loc = append(loc, path...)
	}
	if rd.appendSlash && rd.kind != "location" && !bytes.HasSuffix(loc, []byte("/")) {
		loc = append(loc, '/')
	}
	if rd.kind != "location" && !rd.dropQuery {
		loc = append(loc, query...)
	}
	b := append(hc.out[:0], "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(rd.code), 10)
	b = append(b, ' ')
	b = append(b, redirectReason(rd.code)...)
	b = append(b, "\r\ncontent-length: 0\r\nlocation: "...)
	b = append(b, loc...)
	b = append(b, "\r\n"...)
	if rd.code == 302 || rd.code == 303 || rd.code == 307 {
		b = append(b, "cache-control: no-cache\r\n"...)
	}
	if rd.setCookie != "" {
		b = append(b, "set-cookie: "...)
		b = append(b, rd.setCookie...)
		b = append(b, "; path=/;\r\n"...)
	}
	if rd.clearCookie != "" {
		b = append(b, "set-cookie: "...)
		b = append(b, rd.clearCookie...)
		b = append(b, "; path=/; Max-Age=0; Expires=Thu, 01-Jan-1970 00:00:01 GMT;\r\n"...)
	}
	b = endLocalHead(b, mode)
	hc.out = b
	return b
}

// applyRespAction runs a response action of this file (http-response,
// http-after-response) on the response h; it returns a new status when
// set-status ran, else 0.
func (hc *hconn) applyRespAction(r *httpRule, v *sample.Request, h *http1.Head) int {
	switch r.act {
	case actCapture:
		hc.capture(r, v, true)
	case actVar:
		r.v.apply(v, &hc.rs.smp, &hc.rs.buf)
	case actReplaceHeader, actReplaceValue:
		hc.replaceHeader(r, v, h, &hc.rwResp)
	case actCacheStore:
		hc.cacheStoreRule(r, h)
	case actSetStatus:
		hc.rwResp.SetStatus(strconv.AppendInt(nil, int64(r.status), 10), []byte(r.reason))
		v.Status = r.status
		return r.status
	default:
		hc.applyOther(r, v)
	}
	return 0
}

// afterResponse runs the backend's then the frontend's http-after-response
// rules on a response; it returns the status set-status gave, or 0.
func (hc *hconn) afterResponse(fe, be *proxy, resp *http1.Head, v *sample.Request) int {
	status := 0
	for i, px := range [2]*proxy{be, fe} {
		if px == nil || i == 1 && px == be {
			continue
		}
		if _, st := hc.runRespRules(px.afterRules, v, resp); st != 0 {
			status = st
		}
	}
	return status
}

// runRespRules runs response rules (http-response, http-after-response)
// on resp until an allow; it reports a deny, and the status set-status
// gave (0 when none ran).
func (hc *hconn) runRespRules(rules []*httpRule, v *sample.Request, resp *http1.Head) (denied bool, status int) {
	for _, r := range rules {
		if !r.cond.Eval(v) {
			continue
		}
		switch r.act {
		case actAllow:
			hc.si.lastRule = &r.pos
			return false, status
		case actDeny, actReturn:
			hc.si.lastRule = &r.pos
			hc.respReply = r
			return true, status
		case actWaitBody:
			if !hc.waitRespBody(r) {
				return true, status
			}
		case actRedirect:
			hc.si.lastRule = &r.pos
			hc.respRedir = r
			return false, status
		default:
			if hc.headerAction(r, v, resp, &hc.rwResp) {
				if hc.room != nil && hc.room.failed {
					return true, status
				}
				continue
			}
			if st := hc.applyRespAction(r, v, resp); st != 0 {
				status = st
			}
		}
	}
	return false, status
}

// headerAction runs set-header, add-header and del-header on h; it returns
// false for other actions. The head itself changes, so that later rules
// and fetches see the fields as HAProxy's do.
func (hc *hconn) headerAction(r *httpRule, v *sample.Request, h *http1.Head, rw *http1.Rewriter) bool {
	switch r.act {
	case actSetHeader:
		hc.scratch = r.value.AppendTo(hc.scratch[:0], v)
		hc.freeFields(h, r.name)
		h.Del(r.name)
		if hc.room == nil || hc.room.take(len(r.name)+len(hc.scratch)) {
			h.AddField(r.name, hc.scratch)
		}
	case actAddHeader:
		hc.scratch = r.value.AppendTo(hc.scratch[:0], v)
		if hc.room == nil || hc.room.take(len(r.name)+len(hc.scratch)) {
			h.AddField(r.name, hc.scratch)
		}
	case actDelHeader:
		r.delHeader(h)
	default:
		return false
	}
	return true
}

// afterLocal runs http-after-response rules on a reply the proxy made
// itself (return, deny, redirect, an error): HAProxy runs them on every
// response. b is the reply as sent; the result replaces it.
func (hc *hconn) afterLocal(fe, be *proxy, b []byte, si *streamInfo) []byte {
	if len(fe.afterRules) == 0 && (be == nil || len(be.afterRules) == 0) {
		return b
	}
	resp := &hc.resp
	resp.Reset()
	n, err := resp.ParseResponse(b, hc.req.Method)
	if err != nil || n <= 0 {
		return b
	}
	v := &hc.view
	v.Head, v.Req, v.Status = resp, &hc.req, resp.Status
	hc.rwResp.Reset()
	// The proxy's own reply has its buffer to itself.
	room := hc.room
	hc.room = nil
	defer func() { hc.room = room }()
	before := resp.HTXSize()
	if st := hc.afterResponse(fe, be, resp, v); st != 0 {
		si.status = st
	}
	// HAProxy counts the reply once these rules have run on it.
	si.bytesOut += int64(resp.HTXSize() - before)
	if !hc.rwResp.Modified(resp) {
		return b
	}
	head := hc.rwResp.Head(resp)
	out := make([]byte, 0, len(head)+len(b)-n)
	out = append(append(out, head...), b[n:]...)
	return out
}

// rejectRequest ends a request a tcp-request content rule or an
// http-request reject rejected: the connection closes without a reply, as
// in HAProxy, and the stream is logged with no request time (HAProxy
// aborts it before its request analysers end), and for a tcp-request
// rule with no request line (<BADREQ>), as HAProxy 2.6 logs them.
func (proc *Process) rejectRequest(fe, px *proxy, si *streamInfo, tcpRule bool) bool {
	fe.FE.Dreq.Add(1)
	if px != fe {
		px.BE.Dreq.Add(1)
	}
	si.trq = -1
	if tcpRule {
		si.reqLine = nil
	}
	si.status = -1
	si.term = [2]byte{'P', 'R'}
	si.tt = time.Since(si.accept)
	si.ta = si.tt
	proc.logHTTP(si)
	return false
}

// serverTimeout is timeout server for the exchange: set-timeout's, else
// the backend's.
func (hc *hconn) serverTimeout(be *proxy) time.Duration {
	if hc.srvTimeout > 0 {
		return hc.srvTimeout
	}
	return be.Timeouts.Server
}
