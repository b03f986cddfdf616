package check

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file holds the small subset of HAProxy's sample language that
// health-check rules need: the fetches var(), res.payload(), str(), int(),
// bin(), date(), be_name, srv_name, res.hdr() and res.fhdr(), the converters hex, htonl, cut_crlf, ltrim, rtrim, lower
// and upper, and log-format strings made of text and %[expr] blocks.

type valueKind uint8

const (
	valStr valueKind = iota
	valInt
	valBin
)

// value is one sample: an integer or a byte string.
type value struct {
	kind valueKind
	b    []byte
	i    int64
}

func strValue(s string) value { return value{kind: valStr, b: []byte(s)} }
func intValue(i int64) value  { return value{kind: valInt, i: i} }

func (v value) bytes() []byte {
	if v.kind == valInt {
		return strconv.AppendInt(nil, v.i, 10)
	}
	return v.b
}

func (v value) asInt() (int64, bool) {
	if v.kind == valInt {
		return v.i, true
	}
	s := strings.TrimSpace(string(v.b))
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// evalEnv is what a sample expression may read while a probe runs.
type evalEnv struct {
	vars map[string]value
	resp []byte // bytes received since the last send
	now  time.Time
	// backend and server are the checked server's proxy and own names.
	backend, server string
}

type fetchFn func(env *evalEnv, args []string) (value, bool)
type convFn func(v value, args []string) (value, bool)

type sampleStep struct {
	name string
	args []string
	conv convFn
}

// sampleExpr is a fetch followed by converters.
type sampleExpr struct {
	text  string
	fetch fetchFn
	fargs []string
	convs []sampleStep
}

var errNoSample = errors.New("no sample")

var fetches = map[string]struct {
	fn      fetchFn
	minArgs int
	maxArgs int
}{
	"var": {fetchVar, 1, 1},
	"res.payload": {func(env *evalEnv, a []string) (value, bool) {
		off, _ := strconv.Atoi(a[0])
		n, _ := strconv.Atoi(a[1])
		if off > len(env.resp) {
			return value{}, false
		}
		d := env.resp[off:]
		if n > 0 {
			if n > len(d) {
				return value{}, false
			}
			d = d[:n]
		}
		return value{kind: valBin, b: append([]byte(nil), d...)}, true
	}, 2, 2},
	"be_name":  {func(env *evalEnv, _ []string) (value, bool) { return strValue(env.backend), true }, 0, 0},
	"srv_name": {func(env *evalEnv, _ []string) (value, bool) { return strValue(env.server), true }, 0, 0},
	"res.fhdr": {func(env *evalEnv, a []string) (value, bool) { return resHeader(env, a[0], true) }, 1, 1},
	"res.hdr":  {func(env *evalEnv, a []string) (value, bool) { return resHeader(env, a[0], false) }, 1, 1},
	"str":      {func(_ *evalEnv, a []string) (value, bool) { return strValue(a[0]), true }, 1, 1},
	"int": {func(_ *evalEnv, a []string) (value, bool) {
		n, err := strconv.ParseInt(a[0], 10, 64)
		return intValue(n), err == nil
	}, 1, 1},
	"bin": {func(_ *evalEnv, a []string) (value, bool) {
		b, err := hex.DecodeString(a[0])
		return value{kind: valBin, b: b}, err == nil
	}, 1, 1},
	"date": {func(env *evalEnv, a []string) (value, bool) {
		t := env.now
		if t.IsZero() {
			t = time.Now()
		}
		off := int64(0)
		if len(a) > 0 && a[0] != "" {
			off, _ = strconv.ParseInt(a[0], 10, 64)
		}
		return intValue(t.Unix() + off), true
	}, 0, 1},
}

func fetchVar(env *evalEnv, a []string) (value, bool) {
	v, ok := env.vars[a[0]]
	return v, ok
}

func trimSet(chars string, left bool) convFn {
	return func(v value, a []string) (value, bool) {
		set := chars
		if len(a) > 0 {
			set = a[0]
		}
		b := v.bytes()
		if left {
			b = []byte(strings.TrimLeft(string(b), set))
		} else {
			b = []byte(strings.TrimRight(string(b), set))
		}
		return value{kind: valStr, b: b}, true
	}
}

var converters = map[string]struct {
	fn      convFn
	minArgs int
	maxArgs int
}{
	"hex": {func(v value, _ []string) (value, bool) {
		return value{kind: valStr, b: []byte(strings.ToUpper(hex.EncodeToString(v.bytes())))}, true
	}, 0, 0},
	"htonl": {func(v value, _ []string) (value, bool) {
		n, ok := v.asInt()
		if !ok {
			return value{}, false
		}
		b := make([]byte, 4)
		binary.BigEndian.PutUint32(b, uint32(n))
		return value{kind: valBin, b: b}, true
	}, 0, 0},
	"cut_crlf": {func(v value, _ []string) (value, bool) {
		b := v.bytes()
		for i, c := range b {
			if c == '\r' || c == '\n' {
				b = b[:i]
				break
			}
		}
		return value{kind: valStr, b: b}, true
	}, 0, 0},
	"ltrim": {trimSet("", true), 1, 1},
	"rtrim": {trimSet("", false), 1, 1},
	"lower": {func(v value, _ []string) (value, bool) {
		return value{kind: valStr, b: []byte(strings.ToLower(string(v.bytes())))}, true
	}, 0, 0},
	"upper": {func(v value, _ []string) (value, bool) {
		return value{kind: valStr, b: []byte(strings.ToUpper(string(v.bytes())))}, true
	}, 0, 0},
}

// splitTop splits s on sep outside parentheses and quotes.
func splitTop(s string, sep byte) ([]string, error) {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && i+1 < len(s) {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unexpected ')'")
			}
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if depth != 0 {
		return nil, fmt.Errorf("missing closing ')'")
	}
	return append(out, s[start:]), nil
}

func unquote(a string) string {
	if len(a) >= 2 && (a[0] == '\'' || a[0] == '"') && a[len(a)-1] == a[0] {
		return a[1 : len(a)-1]
	}
	return a
}

// splitCall splits "name(a,b)" into name and arguments.
func splitCall(s string) (string, []string, error) {
	i := strings.IndexByte(s, '(')
	if i < 0 {
		return s, nil, nil
	}
	if !strings.HasSuffix(s, ")") {
		return "", nil, fmt.Errorf("missing closing ')' after arguments to '%s'", s[:i])
	}
	inner := s[i+1 : len(s)-1]
	if inner == "" {
		return s[:i], nil, nil
	}
	parts, err := splitTop(inner, ',')
	if err != nil {
		return "", nil, err
	}
	for k := range parts {
		parts[k] = unquote(strings.Trim(parts[k], " \t"))
	}
	return s[:i], parts, nil
}

// parseSample parses a sample expression such as
// "res.payload(4,0),ltrim(' '),cut_crlf".
func parseSample(text string) (*sampleExpr, error) {
	steps, err := splitTop(text, ',')
	if err != nil {
		return nil, err
	}
	name, args, err := splitCall(steps[0])
	if err != nil {
		return nil, err
	}
	f, ok := fetches[name]
	if !ok {
		return nil, fmt.Errorf("unknown fetch method '%s'", name)
	}
	if len(args) < f.minArgs || len(args) > f.maxArgs {
		return nil, fmt.Errorf("invalid arg count for fetch method '%s'", name)
	}
	if name == "res.payload" {
		for _, a := range args {
			if n, err := strconv.Atoi(a); err != nil || n < 0 {
				return nil, fmt.Errorf("invalid argument '%s' to fetch method 'res.payload'", a)
			}
		}
	}
	if name == "var" && !strings.HasPrefix(args[0], "check.") {
		return nil, fmt.Errorf("only the 'check' variable scope is supported here (got '%s')", args[0])
	}
	e := &sampleExpr{text: text, fetch: f.fn, fargs: args}
	for _, st := range steps[1:] {
		cname, cargs, err := splitCall(strings.TrimSpace(st))
		if err != nil {
			return nil, err
		}
		c, ok := converters[cname]
		if !ok {
			return nil, fmt.Errorf("unknown converter '%s'", cname)
		}
		if len(cargs) < c.minArgs || len(cargs) > c.maxArgs {
			return nil, fmt.Errorf("invalid arg count for converter '%s'", cname)
		}
		e.convs = append(e.convs, sampleStep{name: cname, args: cargs, conv: c.fn})
	}
	return e, nil
}

func (e *sampleExpr) eval(env *evalEnv) (value, bool) {
	v, ok := e.fetch(env, e.fargs)
	if !ok {
		return value{}, false
	}
	for _, c := range e.convs {
		if v, ok = c.conv(v, c.args); !ok {
			return value{}, false
		}
	}
	return v, true
}

// resHeader returns the last value of header name in the HTTP response
// received so far: the whole line when full (res.fhdr), else its last
// comma-separated element (res.hdr).
func resHeader(env *evalEnv, name string, full bool) (value, bool) {
	resp := parseHTTPResponse(env.resp, true)
	if resp == nil || resp.bad {
		return value{}, false
	}
	for i := len(resp.headers) - 1; i >= 0; i-- {
		h := resp.headers[i]
		if !strings.EqualFold(h[0], name) {
			continue
		}
		v := h[1]
		if !full {
			if k := strings.LastIndexByte(v, ','); k >= 0 {
				v = v[k+1:]
			}
		}
		return strValue(strings.Trim(v, " \t")), true
	}
	return value{}, false
}

// logFormat is a parsed log-format string: literal text and %[expr] blocks.
type logFormat struct {
	text  string
	parts []lfPart
}

type lfPart struct {
	lit  string
	expr *sampleExpr
}

func (f *logFormat) isEmpty() bool { return f == nil || len(f.parts) == 0 }

// parseLogFormat accepts plain text, %% and %[sample expression].
func parseLogFormat(s string) (*logFormat, error) {
	f := &logFormat{text: s}
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			lit.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		if i+1 >= len(s) || s[i+1] != '[' {
			return nil, fmt.Errorf("only '%%[<sample expression>]' and '%%%%' are supported at position %d", i)
		}
		depth, end := 0, -1
		for j := i + 2; j < len(s); j++ {
			if s[j] == '(' {
				depth++
			} else if s[j] == ')' {
				depth--
			} else if s[j] == ']' && depth <= 0 {
				end = j
				break
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("missing ']' after '%%[' at position %d", i)
		}
		e, err := parseSample(s[i+2 : end])
		if err != nil {
			return nil, err
		}
		if lit.Len() > 0 {
			f.parts = append(f.parts, lfPart{lit: lit.String()})
			lit.Reset()
		}
		f.parts = append(f.parts, lfPart{expr: e})
		i = end
	}
	if lit.Len() > 0 {
		f.parts = append(f.parts, lfPart{lit: lit.String()})
	}
	return f, nil
}

func (f *logFormat) build(env *evalEnv) []byte {
	if f == nil {
		return nil
	}
	var out []byte
	for _, p := range f.parts {
		if p.expr == nil {
			out = append(out, p.lit...)
			continue
		}
		if v, ok := p.expr.eval(env); ok {
			b := v.bytes()
			// HAProxy copies samples into log lines as C strings.
			if i := bytesIndexNUL(b); i >= 0 {
				b = b[:i]
			}
			out = append(out, b...)
		}
	}
	return out
}

func bytesIndexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
