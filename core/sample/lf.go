package sample

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Expr is a compiled log-format string as http-request and
// http-response rules take them: literal text with %[sample] expressions
// and %% for a percent sign. The samples are the request's parts that
// rules commonly use; evaluation appends to a buffer and allocates nothing.
type Expr struct {
	parts  []lfPart
	static []byte // the whole value when it has no expression
}

type lfPart struct {
	lit   []byte
	fetch fetchKind
	hdr   string
	isLit bool
}

// CompileLF compiles a log-format string.
func CompileLF(s string) (*Expr, error) {
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
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			return nil, fmt.Errorf("missing ']' in log-format '%s'", s)
		}
		name := s[i+2 : i+end]
		p, err := lfSample(name)
		if err != nil {
			return nil, err
		}
		if len(lit) > 0 {
			e.parts = append(e.parts, lfPart{lit: lit, isLit: true})
			lit = nil
		}
		e.parts = append(e.parts, p)
		dynamic = true
		i += end
	}
	if len(lit) > 0 {
		e.parts = append(e.parts, lfPart{lit: lit, isLit: true})
	}
	if !dynamic {
		e.static = []byte(strings.ReplaceAll(s, "%%", "%"))
		e.parts = nil
	}
	return e, nil
}

func lfSample(name string) (lfPart, error) {
	switch name {
	case "path":
		return lfPart{fetch: fetchPath}, nil
	case "url":
		return lfPart{fetch: fetchURL}, nil
	case "method":
		return lfPart{fetch: fetchMethod}, nil
	case "src":
		return lfPart{fetch: fetchSrc}, nil
	case "status":
		return lfPart{fetch: fetchStatus}, nil
	}
	for _, pfx := range []string{"req.hdr(", "hdr("} {
		if h, ok := strings.CutPrefix(name, pfx); ok && strings.HasSuffix(h, ")") {
			return lfPart{fetch: fetchHdr, hdr: strings.ToLower(strings.TrimSuffix(h, ")"))}, nil
		}
	}
	return lfPart{}, fmt.Errorf("unknown fetch method '%s' in log-format expression (goha supports path, url, method, src, status, req.hdr(<name>))", name)
}

// Static says whether the value has no expression.
func (e *Expr) Static() bool { return e.parts == nil }

// AppendTo evaluates e for the request in v.
func (e *Expr) AppendTo(b []byte, v *Request) []byte {
	if e.parts == nil {
		return append(b, e.static...)
	}
	for i := range e.parts {
		p := &e.parts[i]
		if p.isLit {
			b = append(b, p.lit...)
			continue
		}
		switch p.fetch {
		case fetchPath:
			b = append(b, v.Head.Path()...)
		case fetchURL:
			b = append(b, v.Head.URI()...)
		case fetchMethod:
			b = append(b, v.Head.MethodBytes()...)
		case fetchStatus:
			b = strconv.AppendInt(b, int64(v.Status), 10)
		case fetchSrc:
			if ta, ok := v.Client.(*net.TCPAddr); ok {
				ip := ta.IP
				if v4 := ip.To4(); v4 != nil {
					ip = v4
				}
				b, _ = ip.AppendText(b)
			}
		case fetchHdr:
			if i := v.Head.Index(p.hdr, 0); i >= 0 {
				b = append(b, v.Head.Value(i)...)
			}
		}
	}
	return b
}

// Literal is an expression of fixed text, taken as is (no % sequences).
func Literal(s string) *Expr { return &Expr{static: []byte(s)} }
