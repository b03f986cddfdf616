package check

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"goha/core/sample"
)

// arg returns words[i] or "" past the end, as HAProxy's argument arrays do.
func arg(words []string, i int) string {
	if i < len(words) {
		return words[i]
	}
	return ""
}

// ParseTCPCheckRule parses one "tcp-check <action> ..." line (already
// tokenized, words[0] == "tcp-check") against the rules declared before it.
// The error text is HAProxy's, ready to follow "parsing [file:line] : ".
func ParseTCPCheckRule(words []string, prev []*Rule) (*Rule, error) {
	return parseRuleLine(words, prev, false)
}

// ParseHTTPCheckRule parses one "http-check connect|send|expect|comment"
// line. "disable-on-404" and "send-state" are backend flags handled by
// Backend.HTTPCheck.
func ParseHTTPCheckRule(words []string, prev []*Rule) (*Rule, error) {
	return parseRuleLine(words, prev, true)
}

func parseRuleLine(words []string, prev []*Rule, http bool) (*Rule, error) {
	kw := arg(words, 0)
	act := arg(words, 1)
	var r *Rule
	var err error
	switch {
	case act == "connect":
		r, err = parseConnect(words, prev)
	case !http && (act == "send" || act == "send-binary" || act == "send-lf" || act == "send-binary-lf"):
		r, err = parseSend(words)
	case http && act == "send":
		r, err = parseSendHTTP(words)
	case act == "expect":
		r, err = parseExpect(words, prev, http)
	case act == "comment":
		if arg(words, 2) == "" {
			err = errors.New("expects a string as argument")
		} else {
			r = &Rule{Action: ActComment, Comment: words[2]}
		}
	case strings.HasPrefix(act, "set-var(") || strings.HasPrefix(act, "unset-var("):
		r, err = parseVarAction(words)
	default:
		if http {
			return nil, fmt.Errorf("'%s' only supports 'disable-on-404', 'send-state', 'comment', 'connect', 'send', 'expect', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)'. but got '%s'", kw, act)
		}
		return nil, fmt.Errorf("'%s' only supports 'comment', 'connect', 'send', 'send-binary', 'expect', 'set-var-fmt(*)', 'set-var(*)', 'unset-var(*)'. but got '%s'", kw, act)
	}
	if err != nil {
		// HAProxy appends a period whatever the inner message ends with.
		return nil, fmt.Errorf("'%s %s' : %s.", kw, act, err)
	}
	return r, nil
}

func parseConnect(words []string, prev []*Rule) (*Rule, error) {
	for _, p := range prev {
		if p.Action == ActConnect {
			break
		}
		if p.Action == ActComment || p.Action == ActSetVar || p.Action == ActUnsetVar ||
			(p.Action == ActSend && p.Send.HTTP != nil && p.Send.HTTP.FromOption) {
			continue
		}
		return nil, errors.New("first step MUST also be a 'connect', optionally preceded by a 'set-var', an 'unset-var' or a 'comment', when there is a 'connect' step in the tcp-check ruleset")
	}
	c := &ConnectRule{}
	r := &Rule{Action: ActConnect, Connect: c}
	for i := 2; i < len(words) && words[i] != ""; i++ {
		w := words[i]
		switch w {
		case "default":
			c.Default = true
		case "addr":
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects <ipv4|ipv6> as argument.", w)
			}
			if err := checkAddr(a); err != nil {
				return nil, fmt.Errorf("'%s' : %s.", w, err)
			}
			c.Addr = a
			i++
		case "port":
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects a port number or a sample expression as argument.", w)
			}
			n, err := strconv.Atoi(a)
			if err != nil || a[0] == '+' || a[0] == '-' {
				return nil, fmt.Errorf("error detected while parsing port expression : sample expressions are not supported for 'port' (got '%s')", a)
			}
			if n < 1 || n > 65535 {
				return nil, fmt.Errorf("expects a valid TCP port (from range 1 to 65535) or a sample expression, got %s.", a)
			}
			c.Port = n
			i++
		case "comment":
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects a string as argument.", w)
			}
			r.Comment = a
			i++
		case "send-proxy":
			c.SendProxy = true
		case "via-socks4":
			c.ViaSocks4 = true
		case "linger":
			c.Linger = true
		case "ssl":
			c.SSL = true
		case "sni":
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects a string as argument.", w)
			}
			c.SNI = a
			i++
		case "alpn":
			a := arg(words, i+1)
			protos, err := parseALPN(a)
			if err != nil {
				return nil, fmt.Errorf("'%s' : %s", w, err)
			}
			c.ALPN = protos
			i++
		default:
			return nil, fmt.Errorf("expects 'comment', 'port', 'addr', 'send-proxy', 'ssl', 'sni', 'alpn' or 'via-socks4', 'linger', 'default' but got '%s' as argument.", w)
		}
	}
	return r, nil
}

func parseALPN(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("missing the comma-delimited ALPN protocol suite")
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p == "" {
			return nil, errors.New("empty protocol name in the ALPN list")
		}
		if len(p) > 255 {
			return nil, errors.New("ALPN protocol name too long")
		}
		out = append(out, p)
	}
	return out, nil
}

// checkAddr validates an "addr" argument: an IP address, optionally with a
// port, or a host name.
func checkAddr(a string) error {
	host, port := a, ""
	if h, p, err := net.SplitHostPort(a); err == nil {
		host, port = h, p
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("invalid port '%s'", port)
		}
	}
	if host == "" || strings.ContainsAny(host, " /") {
		return fmt.Errorf("invalid address: '%s'", a)
	}
	return nil
}

func parseHexBinary(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, errors.New("an even number of hex digit is expected")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return nil, fmt.Errorf("an hex digit is expected (found '%c')", c)
		}
	}
	return hex.DecodeString(s)
}

func parseSend(words []string) (*Rule, error) {
	act := words[1]
	var kind SendKind
	switch act {
	case "send":
		kind = SendString
	case "send-binary":
		kind = SendBinary
	case "send-lf":
		kind = SendStringLF
	default:
		kind = SendBinaryLF
	}
	data := arg(words, 2)
	if data == "" {
		what := "string"
		if kind == SendBinary {
			what = "binary string"
		}
		// HAProxy swaps the two words in this message; keep it identical.
		return nil, fmt.Errorf("'%s' expects a %s as argument", what, act)
	}
	r := &Rule{Action: ActSend, Send: &SendRule{Kind: kind}}
	for i := 3; i < len(words) && words[i] != ""; i++ {
		if words[i] != "comment" {
			return nil, fmt.Errorf("expects 'comment' but got '%s' as argument.", words[i])
		}
		if arg(words, i+1) == "" {
			return nil, fmt.Errorf("'%s' expects a string as argument.", words[i])
		}
		r.Comment = words[i+1]
		i++
	}
	switch kind {
	case SendString:
		r.Send.Data = []byte(data)
	case SendBinary:
		b, err := parseHexBinary(data)
		if err != nil {
			return nil, fmt.Errorf("'%s' invalid binary string (%s).\n", data, err)
		}
		r.Send.Data = b
	default:
		f, err := compileLF(data)
		if err != nil {
			return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", data, err)
		}
		r.Send.fmt = f
	}
	return r, nil
}

func parseSendHTTP(words []string) (*Rule, error) {
	req := &HTTPRequest{}
	r := &Rule{Action: ActSend, Send: &SendRule{Kind: SendHTTP, HTTP: req}}
	hostSeen := ""
	for i := 2; i < len(words) && words[i] != ""; i++ {
		w := words[i]
		switch w {
		case "meth", "ver", "comment":
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects a string as argument.", w)
			}
			switch w {
			case "meth":
				req.Method = a
			case "ver":
				req.Version = a
			default:
				r.Comment = a
			}
			i++
		case "uri", "uri-lf":
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects a string as argument.", w)
			}
			req.URI, req.uriFmt = a, nil
			if w == "uri-lf" {
				f, err := compileLF(a)
				if err != nil {
					return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", a, err)
				}
				req.URI, req.uriFmt = "", f
			}
			i++
		case "hdr":
			n, v := arg(words, i+1), arg(words, i+2)
			if n == "" || v == "" {
				return nil, fmt.Errorf("'%s' expects <name> and <value> as arguments", w)
			}
			lower := strings.ToLower(n)
			i += 2
			if lower == "host" {
				if hostSeen != "" {
					return nil, fmt.Errorf("'%s' header already defined (previous value is '%s')", n, hostSeen)
				}
				hostSeen = v
			} else if lower == "content-length" || lower == "transfer-encoding" {
				continue
			}
			f, err := compileLF(v)
			if err != nil {
				return nil, err
			}
			req.Headers = append(req.Headers, HTTPHeader{Name: n, value: f})
		case "body", "body-lf":
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects a string as argument.", w)
			}
			req.Body, req.bodyFmt = a, nil
			if w == "body-lf" {
				f, err := compileLF(a)
				if err != nil {
					return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", a, err)
				}
				req.Body, req.bodyFmt = "", f
			}
			i++
		default:
			return nil, fmt.Errorf("expects 'comment', 'meth', 'uri', 'uri-lf', 'ver', 'hdr', 'body' or 'body-lf' but got '%s' as argument.", w)
		}
	}
	return r, nil
}

func compileRegex(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("regex '%s' is invalid (error=%v)", p, err)
	}
	return re, nil
}

func parseMatchMethod(words []string, i int, orig string, allowReg bool, isFmt bool) (int, error) {
	m := arg(words, i+1)
	if m == "" {
		return 0, fmt.Errorf("'%s' : '%s' expects at a matching pattern ('str', 'beg', 'end', 'sub' or 'reg')", orig, words[i])
	}
	switch m {
	case "str":
		return MatchStr, nil
	case "beg":
		return MatchBeg, nil
	case "end":
		return MatchEnd, nil
	case "sub":
		return MatchSub, nil
	case "reg":
		if isFmt {
			return 0, fmt.Errorf("'%s': log-format string is not supported with a regex matching method", orig)
		}
		return MatchReg, nil
	}
	return 0, fmt.Errorf("'%s' : '%s' only supports 'str', 'beg', 'end', 'sub' or 'reg' (got '%s')", orig, words[i], m)
}

func parseExpect(words []string, prev []*Rule, http bool) (*Rule, error) {
	if arg(words, 2) == "" {
		return nil, errors.New("expects at least a matching pattern as arguments")
	}
	e := &ExpectRule{MinRecv: -1}
	r := &Rule{Action: ActExpect, Expect: e}
	typeSet := false
	var pattern, onSuccess, onError string
	var hasOnSuccess, hasOnError bool
	var hdrNameFmt, hdrValueFmt bool
	badKw := func(w string) error {
		if http {
			return fmt.Errorf("'only supports min-recv, [!]string', '[!]rstring', '[!]string-lf', '[!]status', '[!]rstatus', [!]hdr, [!]fhdr or comment but got '%s' as argument.", w)
		}
		return fmt.Errorf("'only supports min-recv, '[!]binary', '[!]string', '[!]rstring', '[!]string-lf''[!]rbinary', '[!]binary-lf' or comment but got '%s' as argument.", w)
	}
	setType := func(k ExpectKind) error {
		if typeSet {
			return errors.New("only on pattern expected")
		}
		typeSet = true
		e.Kind = k
		return nil
	}
	for i := 2; i < len(words) && words[i] != ""; i++ {
		w := words[i]
		inPattern := false
		for strings.HasPrefix(w, "!") {
			inPattern = true
			for strings.HasPrefix(w, "!") {
				e.Inverse = !e.Inverse
				w = w[1:]
			}
			if w == "" {
				i++
				w = arg(words, i)
			}
		}
		if w == "" {
			break
		}
		needArg := func(what string) (string, error) {
			a := arg(words, i+1)
			if a == "" {
				return "", fmt.Errorf("'%s' expects %s", w, what)
			}
			i++
			return a, nil
		}
		notInPattern := func() error {
			if inPattern {
				return fmt.Errorf("[!] not supported with '%s'", w)
			}
			return nil
		}
		var err error
		switch w {
		case "min-recv":
			if err = notInPattern(); err != nil {
				return nil, err
			}
			a, err := needArg("a integer as argument")
			if err != nil {
				return nil, err
			}
			n, perr := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
			if perr != nil {
				n = atolPrefix(a)
			}
			if n < -1 || n > 1<<31-1 {
				return nil, fmt.Errorf("'%s' expects -1 or an integer from 0 to INT_MAX", w)
			}
			e.MinRecv = int(n)
		case "string", "rstring":
			k := ExpectString
			if http {
				k = ExpectHTTPBody
			}
			if w == "rstring" {
				k++
			}
			if err = setType(k); err != nil {
				return nil, err
			}
			if pattern, err = needArg("a <pattern> as argument"); err != nil {
				return nil, err
			}
		case "binary", "rbinary":
			if http {
				return nil, badKw(w)
			}
			k := ExpectBinary
			if w == "rbinary" {
				k = ExpectRBinary
			}
			if err = setType(k); err != nil {
				return nil, err
			}
			if pattern, err = needArg("a <pattern> as argument"); err != nil {
				return nil, err
			}
		case "string-lf", "binary-lf":
			k := ExpectStringLF
			if w == "binary-lf" {
				if http {
					return nil, badKw(w)
				}
				k = ExpectBinaryLF
			} else if http {
				k = ExpectHTTPBodyLF
			}
			if err = setType(k); err != nil {
				return nil, err
			}
			if pattern, err = needArg("a <pattern> as argument"); err != nil {
				return nil, err
			}
		case "status", "rstatus":
			if !http {
				return nil, badKw(w)
			}
			k := ExpectHTTPStatus
			if w == "rstatus" {
				k = ExpectHTTPRStatus
			}
			if err = setType(k); err != nil {
				return nil, err
			}
			if pattern, err = needArg("a <pattern> as argument"); err != nil {
				return nil, err
			}
		case "custom":
			if err = notInPattern(); err != nil {
				return nil, err
			}
			if err = setType(ExpectCustom); err != nil {
				return nil, err
			}
		case "hdr", "fhdr":
			if !http {
				return nil, badKw(w)
			}
			if err = setType(ExpectHTTPHeader); err != nil {
				return nil, err
			}
			orig := w
			e.hdrFull = w == "fhdr"
			if arg(words, i+1) == "" || arg(words, i+2) == "" || (words[i+1] != "name" && words[i+1] != "name-lf") {
				return nil, fmt.Errorf("'%s' expects at the name keyword as first argument followed by a pattern", orig)
			}
			hdrNameFmt = words[i+1] == "name-lf"
			i += 2
			e.hdrNameMatch = MatchStr
			if words[i] == "-m" {
				if e.hdrNameMatch, err = parseMatchMethod(words, i, orig, true, hdrNameFmt); err != nil {
					return nil, err
				}
				i += 2
			}
			e.hdrName = arg(words, i)
			if v := arg(words, i+1); v != "value" && v != "value-lf" {
				e.hdrValueMatch = MatchNone
				continue
			}
			hdrValueFmt = words[i+1] == "value-lf"
			e.hdrValueMatch = MatchStr
			if arg(words, i+2) == "-m" {
				i += 2
				if e.hdrValueMatch, err = parseMatchMethod(words, i, orig, true, hdrValueFmt); err != nil {
					return nil, err
				}
			}
			if arg(words, i+2) == "" {
				return nil, fmt.Errorf("'%s' expect a pattern with the value keyword", orig)
			}
			e.hdrValue = words[i+2]
			i += 2
		case "comment":
			if err = notInPattern(); err != nil {
				return nil, err
			}
			if r.Comment, err = needArg("a string as argument"); err != nil {
				return nil, err
			}
		case "on-success":
			if err = notInPattern(); err != nil {
				return nil, err
			}
			if onSuccess, err = needArg("a string as argument"); err != nil {
				return nil, err
			}
			hasOnSuccess = true
		case "on-error":
			if err = notInPattern(); err != nil {
				return nil, err
			}
			if onError, err = needArg("a string as argument"); err != nil {
				return nil, err
			}
			hasOnError = true
		case "ok-status", "error-status", "tout-status":
			if err = notInPattern(); err != nil {
				return nil, err
			}
			a := arg(words, i+1)
			if a == "" {
				return nil, fmt.Errorf("'%s' expects a string as argument", w)
			}
			st, err := parseStatusArg(w, a)
			if err != nil {
				return nil, err
			}
			switch w {
			case "ok-status":
				e.OKStatus = st
			case "error-status":
				e.ErrStatus = st
			default:
				e.ToutStatus = st
			}
			i++
		case "status-code":
			if err = notInPattern(); err != nil {
				return nil, err
			}
			a, err := needArg("an expression as argument")
			if err != nil {
				return nil, err
			}
			x, perr := compileExpr(a, "")
			if perr != nil {
				return nil, fmt.Errorf("error detected while parsing status-code expression : %s", perr)
			}
			e.statusCode = x
		default:
			return nil, badKw(w)
		}
	}
	if hasOnSuccess {
		f, err := compileLF(onSuccess)
		if err != nil {
			return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", onSuccess, err)
		}
		e.onSuccess = f
	}
	if hasOnError {
		f, err := compileLF(onError)
		if err != nil {
			return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", onError, err)
		}
		e.onError = f
	}
	if !typeSet {
		return nil, errors.New("pattern not found")
	}
	var err error
	switch e.Kind {
	case ExpectHTTPStatus:
		if e.Codes, err = parseStatusCodes(pattern); err != nil {
			return nil, err
		}
	case ExpectString, ExpectHTTPBody:
		e.Data = []byte(pattern)
	case ExpectBinary:
		b, err := parseHexBinary(pattern)
		if err != nil {
			return nil, fmt.Errorf("invalid binary string (%s)", err)
		}
		e.Data = b
	case ExpectRString, ExpectRBinary, ExpectHTTPRStatus, ExpectHTTPRBody:
		if e.re, err = compileRegex(pattern); err != nil {
			return nil, err
		}
	case ExpectStringLF, ExpectBinaryLF, ExpectHTTPBodyLF:
		if e.fmt, err = compileLF(pattern); err != nil {
			return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", pattern, err)
		}
	case ExpectHTTPHeader:
		if e.hdrNameMatch == MatchReg {
			if e.hdrNameRe, err = compileRegex("(?i)" + e.hdrName); err != nil {
				return nil, err
			}
		}
		if e.hdrValueMatch == MatchReg {
			if e.hdrValueRe, err = compileRegex(e.hdrValue); err != nil {
				return nil, err
			}
		}
		if hdrNameFmt {
			if e.hdrNameFmt, err = compileLF(e.hdrName); err != nil {
				return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", e.hdrName, err)
			}
		}
		if hdrValueFmt {
			if e.hdrValueFmt, err = compileLF(e.hdrValue); err != nil {
				// HAProxy quotes the name pattern here, not the value.
				return nil, fmt.Errorf("'%s' invalid log-format string (%s).\n", e.hdrName, err)
			}
		}
	}
	// Every expect points back to the first inverted expect of its chain,
	// so that waiting for more data restarts from there.
	e.headIndex = len(prev)
	for k := len(prev) - 1; k >= 0; k-- {
		p := prev[k]
		if p.Action == ActExpect {
			if p.Expect.Inverse {
				e.headIndex = k
			}
			continue
		}
		if p.Action != ActComment && p.Action != ActSetVar && p.Action != ActUnsetVar {
			break
		}
	}
	return r, nil
}

// atolPrefix mimics atol(): leading digits, 0 if none.
func atolPrefix(s string) int64 {
	s = strings.TrimLeft(s, " \t")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
		if n > 1<<40 {
			break
		}
	}
	if neg {
		n = -n
	}
	return n
}

func parseStatusArg(kw, a string) (Status, error) {
	u := strings.ToUpper(a)
	switch kw {
	case "ok-status":
		switch u {
		case "L7OK":
			return StatusL7OK, nil
		case "L7OKC":
			return StatusL7OKC, nil
		case "L6OK":
			return StatusL6OK, nil
		case "L4OK":
			return StatusL4OK, nil
		}
		return 0, fmt.Errorf("'%s' only supports 'L4OK', 'L6OK', 'L7OK' or 'L7OKC' status (got '%s').", kw, a)
	case "error-status":
		switch u {
		case "L7RSP":
			return StatusL7Rsp, nil
		case "L7STS":
			return StatusL7Sts, nil
		case "L7OKC":
			return StatusL7OKC, nil
		case "L6RSP":
			return StatusL6Rsp, nil
		case "L4CON":
			return StatusL4Con, nil
		}
		return 0, fmt.Errorf("'%s' only supports 'L4CON', 'L6RSP', 'L7RSP' or 'L7STS' status (got '%s').", kw, a)
	}
	switch u {
	case "L7TOUT":
		return StatusL7TOut, nil
	case "L6TOUT":
		return StatusL6TOut, nil
	case "L4TOUT":
		return StatusL4TOut, nil
	}
	return 0, fmt.Errorf("'%s' only supports 'L4TOUT', 'L6TOUT' or 'L7TOUT' status (got '%s').", kw, a)
}

// readUint mimics HAProxy's read_uint: leading digits, 0 if none.
func readUint(s string, p int) (uint64, int) {
	var n uint64
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		if n < 1<<40 {
			n = n*10 + uint64(s[p]-'0')
		}
		p++
	}
	return n, p
}

func parseStatusCodes(pattern string) ([][2]int, error) {
	var codes [][2]int
	p := 0
	for {
		c1, np := readUint(pattern, p)
		p = np
		c2 := c1
		if p < len(pattern) && pattern[p] == '-' {
			c2, p = readUint(pattern, p+1)
		}
		if c1 > c2 {
			return nil, fmt.Errorf("invalid range of status codes '%s'", pattern)
		}
		codes = append(codes, [2]int{int(min(c1, 1<<31)), int(min(c2, 1<<31))})
		if p >= len(pattern) {
			break
		}
		if pattern[p] != ',' {
			return nil, fmt.Errorf("invalid character '%c' in the list of status codes", pattern[p])
		}
		p++
	}
	return codes, nil
}

func parseVarAction(words []string) (*Rule, error) {
	act := words[1]
	set := strings.HasPrefix(act, "set-var(")
	open := strings.IndexByte(act, '(')
	if !strings.HasSuffix(act, ")") {
		return nil, fmt.Errorf("missing ')' to close the variable name")
	}
	name := act[open+1 : len(act)-1]
	if !strings.HasPrefix(name, "check.") || len(name) == len("check.") {
		return nil, fmt.Errorf("invalid variable '%s'. Only the 'check' scope is supported here", name)
	}
	vn, err := sample.ParseVarName(name)
	if err != nil {
		return nil, err
	}
	r := &Rule{VarName: name, varName: vn}
	if !set {
		if arg(words, 2) != "" {
			return nil, fmt.Errorf("unexpected argument '%s'", words[2])
		}
		r.Action = ActUnsetVar
		return r, nil
	}
	r.Action = ActSetVar
	if arg(words, 2) == "" {
		return nil, errors.New("expects a sample expression as argument")
	}
	// HAProxy reads the expression from one word and ignores what
	// follows.
	x, err := compileExpr(words[2], act)
	if err != nil {
		return nil, fmt.Errorf("'set-var' : %s", err)
	}
	r.varExpr = x
	return r, nil
}
