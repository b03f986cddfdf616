package check

import (
	"bytes"
	"strconv"
	"strings"
)

// httpResponse is a parsed HTTP/1.x response head and the body received so
// far. It is parsed from the probe's receive buffer at each evaluation.
type httpResponse struct {
	status  int
	code    string // the three status digits as sent
	reason  string
	headers [][2]string
	body    []byte
	eom     bool // the whole message was received
	bad     bool // parse error
}

// parseHTTPResponse parses in; it returns nil when the head is incomplete.
func parseHTTPResponse(in []byte, eof bool) *httpResponse {
	end := bytes.Index(in, []byte("\r\n\r\n"))
	sep := 4
	if end < 0 {
		if end = bytes.Index(in, []byte("\n\n")); end < 0 {
			if eof && len(in) > 0 {
				return &httpResponse{bad: true}
			}
			return nil
		}
		sep = 2
	}
	head := string(in[:end])
	lines := strings.Split(strings.ReplaceAll(head, "\r\n", "\n"), "\n")
	r := &httpResponse{}
	sl := lines[0]
	if !strings.HasPrefix(sl, "HTTP/") || len(sl) < 12 || sl[8] != ' ' {
		return &httpResponse{bad: true}
	}
	code := sl[9:12]
	n, err := strconv.Atoi(code)
	if err != nil || n < 100 || n > 999 || (len(sl) > 12 && sl[12] != ' ') {
		return &httpResponse{bad: true}
	}
	r.status, r.code = n, code
	if len(sl) > 13 {
		r.reason = sl[13:]
	}
	for _, l := range lines[1:] {
		i := strings.IndexByte(l, ':')
		if i <= 0 || strings.ContainsAny(l[:i], " \t") {
			return &httpResponse{bad: true}
		}
		r.headers = append(r.headers, [2]string{l[:i], strings.Trim(l[i+1:], " \t")})
	}
	rest := in[end+sep:]
	if n < 200 || n == 204 || n == 304 {
		r.eom = true
		return r
	}
	if te := r.header("transfer-encoding"); strings.Contains(strings.ToLower(te), "chunked") {
		r.body, r.eom, r.bad = dechunk(rest)
		return r
	}
	if cl := r.header("content-length"); cl != "" {
		l, err := strconv.Atoi(cl)
		if err != nil || l < 0 {
			return &httpResponse{bad: true}
		}
		if len(rest) >= l {
			r.body, r.eom = rest[:l], true
		} else {
			r.body = rest
		}
		return r
	}
	r.body, r.eom = rest, eof
	return r
}

func (r *httpResponse) header(name string) string {
	for _, h := range r.headers {
		if strings.EqualFold(h[0], name) {
			return h[1]
		}
	}
	return ""
}

// dechunk decodes as much of a chunked body as is available.
func dechunk(b []byte) (body []byte, eom bool, bad bool) {
	for {
		i := bytes.Index(b, []byte("\r\n"))
		if i < 0 {
			return body, false, false
		}
		szs := string(b[:i])
		if j := strings.IndexByte(szs, ';'); j >= 0 {
			szs = szs[:j]
		}
		sz, err := strconv.ParseUint(strings.TrimSpace(szs), 16, 31)
		if err != nil {
			return body, false, true
		}
		b = b[i+2:]
		if sz == 0 {
			return body, true, false
		}
		if uint64(len(b)) < sz {
			return append(body, b...), false, false
		}
		body = append(body, b[:sz]...)
		b = b[sz:]
		if len(b) < 2 {
			return body, false, false
		}
		b = b[2:]
	}
}

func matchValue(method int, v, pat string, r *ExpectRule, isName bool) bool {
	switch method {
	case MatchStr:
		if isName {
			return strings.EqualFold(v, pat)
		}
		return v == pat
	case MatchBeg:
		if isName {
			return len(v) >= len(pat) && strings.EqualFold(v[:len(pat)], pat)
		}
		return strings.HasPrefix(v, pat)
	case MatchEnd:
		if isName {
			return len(v) >= len(pat) && strings.EqualFold(v[len(v)-len(pat):], pat)
		}
		return strings.HasSuffix(v, pat)
	case MatchSub:
		if isName {
			return strings.Contains(strings.ToLower(v), strings.ToLower(pat))
		}
		return strings.Contains(v, pat)
	case MatchReg:
		if isName {
			return r.hdrNameRe.MatchString(v)
		}
		return r.hdrValueRe.MatchString(v)
	}
	return false
}

func (p *probe) expectHTTP(r *Rule, lastRead bool) evalRet {
	e := r.Expect
	resp := parseHTTPResponse(p.in, p.eof)
	if resp != nil && resp.eom {
		lastRead = true
	}
	if len(p.in) >= bufSize {
		lastRead = true
	}
	if resp == nil {
		if lastRead {
			return p.fail(r, StatusL7Rsp, false, "")
		}
		return evalWait
	}
	if resp.bad {
		return p.fail(r, StatusL7Rsp, false, "")
	}
	p.out.Code = resp.status
	if p.rules.Disable404 && !p.target.ServerDown && resp.status == 404 {
		return evalContinue
	}
	match := e.Inverse
	st := e.ErrStatus
	desc := ""
	switch e.Kind {
	case ExpectHTTPStatus:
		match = false
		for _, c := range e.Codes {
			if resp.status >= c[0] && resp.status <= c[1] {
				match = true
				break
			}
		}
		if st == StatusUnknown {
			st = StatusL7Sts
		}
		if e.onError == nil {
			desc = resp.reason
		}
	case ExpectHTTPRStatus:
		match = e.re.MatchString(resp.code)
		if st == StatusUnknown {
			st = StatusL7Sts
		}
		if e.onError == nil {
			desc = resp.reason
		}
	case ExpectHTTPHeader:
		match = false
		name, value := e.hdrName, e.hdrValue
		if e.hdrNameFmt != nil {
			name = string(p.lf(e.hdrNameFmt))
		}
		if e.hdrValueFmt != nil {
			value = string(p.lf(e.hdrValueFmt))
		}
	headers:
		for _, h := range resp.headers {
			if !matchValue(e.hdrNameMatch, h[0], name, e, true) {
				continue
			}
			if e.hdrValueMatch == MatchNone {
				match = true
				break
			}
			vals := []string{h[1]}
			if !e.hdrFull {
				vals = strings.Split(h[1], ",")
			}
			for _, v := range vals {
				if matchValue(e.hdrValueMatch, strings.Trim(v, " \t"), value, e, false) {
					match = true
					break headers
				}
			}
		}
		if st == StatusUnknown {
			st = StatusL7Sts
		}
		if e.onError == nil {
			desc = resp.reason
		}
	case ExpectHTTPBody, ExpectHTTPRBody, ExpectHTTPBodyLF:
		match = false
		if st == StatusUnknown {
			st = StatusL7Rsp
		}
		if len(resp.body) == 0 {
			if !lastRead {
				return evalWait
			}
			if e.onError == nil {
				desc = "HTTP content check could not find a response body"
			}
			return p.fail(r, st, false, desc)
		}
		var pat []byte
		if e.Kind == ExpectHTTPBodyLF {
			pat = p.lf(e.fmt)
			if len(pat) == 0 {
				return p.fail(r, StatusL7Rsp, false, "log-format string evaluated to an empty string")
			}
		}
		if !lastRead && ((e.Kind == ExpectHTTPBody && len(resp.body) < len(e.Data)) ||
			(e.Kind == ExpectHTTPBodyLF && len(resp.body) < len(pat)) ||
			(e.MinRecv > 0 && len(resp.body) < e.MinRecv)) {
			return evalWait
		}
		switch e.Kind {
		case ExpectHTTPBody:
			match = bytes.Contains(resp.body, e.Data)
		case ExpectHTTPBodyLF:
			match = bytes.Contains(resp.body, pat)
		default:
			match = e.re.Match(resp.body)
		}
		if !match && !lastRead && e.MinRecv == -1 {
			return evalWait
		}
		if e.onError == nil {
			if e.Inverse {
				desc = "HTTP check matched unwanted content"
			} else {
				desc = "HTTP content check did not match"
			}
		}
	default:
		if st == StatusUnknown {
			st = StatusL7Rsp
		}
		return p.fail(r, st, false, "")
	}
	if match != e.Inverse {
		return evalContinue
	}
	return p.fail(r, st, false, desc)
}
