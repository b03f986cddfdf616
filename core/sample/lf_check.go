package sample

import (
	"fmt"
	"strings"
)

// What health checks and the configuration's and the CLI's set-var need of
// log-format strings beyond what rules do.

// CheckNeeds returns HAProxy's error for the first sample expression of e
// (compiled from src) that reads what ok says is not available where the
// string is used, or nil.
func (e *Expr) CheckNeeds(src string, ok func(Need) bool) error {
	for _, x := range e.Exprs() {
		if ok(x.Need()) {
			continue
		}
		rest := src
		if i := strings.Index(src, "%["+x.Text); i >= 0 {
			rest = src[i+2:]
		}
		return fmt.Errorf("sample fetch <%s> may not be reliably used here because it needs '%s' which is not available here", rest, x.Need())
	}
	return nil
}

// Exprs lists the sample expressions of e, in order, for a caller that
// restricts what may be fetched where (a health check has no request).
func (e *Expr) Exprs() []*SampleExpr {
	var out []*SampleExpr
	for i := range e.parts {
		if x := e.parts[i].expr; x != nil {
			out = append(out, x)
		}
	}
	return out
}

// AppendCString evaluates e as AppendTo does, except that each sample's
// text ends at its first NUL byte: health checks build their strings as
// HAProxy copies samples into a log line, as C strings.
func (e *Expr) AppendCString(b []byte, v *Request) []byte {
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
			n := len(b)
			b = AppendText(b, v, s)
			for j := n; j < len(b); j++ {
				if b[j] == 0 {
					b = b[:j]
					break
				}
			}
		}
	}
	return b
}
