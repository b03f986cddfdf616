package sample

import (
	"fmt"
	"strings"
)

// Expr is a compiled log-format string as rules take them: literal text
// with %[sample] expressions and %% for a percent sign. Evaluation appends
// to a buffer.
type Expr struct {
	parts  []lfPart
	static []byte // the whole value when it has no expression
	http   bool   // an HTTP action's format: samples' control characters encoded
}

// HTTP marks e as the format of an HTTP action (a header value, a
// request-line part, a redirect, a reply), as HAProxy's LOG_OPT_HTTP: the
// control characters its samples give (all but HTAB, and DEL) are
// written %XX, so that no sample ends a header or a request line.
func (e *Expr) HTTP() { e.http = true }

type lfPart struct {
	lit  []byte
	expr *SampleExpr
}

// CompileLF compiles a log-format string.
func CompileLF(env *Env, s string) (*Expr, error) {
	e := &Expr{}
	var lit []byte
	dynamic := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			lit = append(lit, c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			lit = append(lit, '%')
			i++
			continue
		}
		if i+1 >= len(s) || s[i+1] != '[' {
			return nil, fmt.Errorf("unsupported log-format variable at position %d in '%s': goha evaluates %%[sample] expressions only", i, s)
		}
		x, n, err := ParseExpr(env, s[i+2:])
		if _, ok := asRef(err); ok {
			return nil, err
		}
		if err != nil {
			return nil, &ExprError{fmt.Sprintf("failed to parse sample expression <%s> : %v", s[i+2:], err)}
		}
		end := i + 2 + n
		if end >= len(s) || s[end] != ']' {
			if end < len(s) {
				return nil, fmt.Errorf("expected ']' after '%s', but found '%c'", s[i+2:end], s[end])
			}
			return nil, fmt.Errorf("missing ']' after '%s'", s[i+2:end])
		}
		if len(lit) > 0 {
			e.parts = append(e.parts, lfPart{lit: lit})
			lit = nil
		}
		e.parts = append(e.parts, lfPart{expr: x})
		dynamic = true
		i = end
	}
	if len(lit) > 0 {
		e.parts = append(e.parts, lfPart{lit: lit})
	}
	if !dynamic {
		e.static = []byte(strings.ReplaceAll(s, "%%", "%"))
		e.parts = nil
	}
	return e, nil
}

// ExprError is a sample expression that does not compile, in HAProxy's
// words; rules report it with HAProxy's "error detected ... while parsing
// ... rule" around it.
type ExprError struct{ Msg string }

func (e *ExprError) Error() string { return e.Msg }

// Static says whether the value has no expression.
func (e *Expr) Static() bool { return e.parts == nil }

// AppendTo evaluates e for the request in v; a sample that is absent adds
// nothing.
func (e *Expr) AppendTo(b []byte, v *Request) []byte {
	if e.parts == nil {
		return append(b, e.static...)
	}
	s := &v.lfSmp
	for i := range e.parts {
		p := &e.parts[i]
		if p.expr == nil {
			b = append(b, p.lit...)
			continue
		}
		if p.expr.Eval(v, s) {
			from := len(b)
			b = AppendText(b, v, s)
			if e.http {
				b = httpEncode(b, from)
			}
		}
	}
	return b
}

// httpEncode writes the control characters of b[from:] as %XX (HAProxy's
// http_encode_map).
func httpEncode(b []byte, from int) []byte {
	i := from
	for i < len(b) && !httpEncoded(b[i]) {
		i++
	}
	if i == len(b) {
		return b
	}
	tail := append([]byte(nil), b[i:]...)
	b = b[:i]
	const hex = "0123456789ABCDEF"
	for _, c := range tail {
		if httpEncoded(c) {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return b
}

func httpEncoded(c byte) bool { return c < 0x20 && c != '\t' || c == 0x7f }

// Literal is an expression of fixed text, taken as is (no % sequences).
func Literal(s string) *Expr { return &Expr{static: []byte(s)} }
