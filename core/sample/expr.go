package sample

import (
	"errors"
	"fmt"
	"strings"
)

// Expr... see lf.go; SampleExpr is one fetch and its converters.
type SampleExpr struct {
	Text  string // as written
	fetch *Fetch
	args  []Arg
	convs []convStep
}

type convStep struct {
	conv *Conv
	args []Arg
}

// Out is the type the expression gives.
func (e *SampleExpr) Out() Type {
	if n := len(e.convs); n > 0 {
		return e.convs[n-1].conv.Out
	}
	return e.fetch.Out
}

// Need says what the expression's fetch reads.
func (e *SampleExpr) Need() Need { return e.fetch.Need }

// FetchName is the expression's fetch.
func (e *SampleExpr) FetchName() string { return e.fetch.Name }

// isIDChar says whether c may appear in a fetch or converter name.
func isIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '+' || c == ':' || c == '$'
}

// ParseExpr reads the expression at the start of s: a fetch with its
// arguments, then converters after commas. It returns the expression and
// the number of bytes it used; what follows is the caller's (a ']' in a
// log format, the end of the word in an ACL).
func ParseExpr(env *Env, s string) (*SampleExpr, int, error) {
	i := 0
	for i < len(s) && isIDChar(s[i]) {
		i++
	}
	name := s[:i]
	if name == "" {
		return nil, 0, fmt.Errorf("missing fetch method")
	}
	f := fetches[name]
	if f == nil {
		return nil, 0, unknownFetch(name)
	}
	e := &SampleExpr{fetch: f}
	args, n, err := parseArgs(s[i:])
	if err != nil {
		return nil, 0, fmt.Errorf("fetch method '%s' : %v", name, err)
	}
	i += n
	if f.PadArgs && len(args) >= f.Min && len(args) < f.Max {
		args = append(args, make([]Arg, f.Max-len(args))...)
	}
	if args, err = checkArgs(env, args, f.Min, f.Max, f.Check, s[i-n:], n > 0); err != nil {
		if _, ok := asRef(err); ok {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("fetch method '%s' : %v", name, err)
	}
	e.args = args
	out := f.Out
	for i < len(s) && s[i] == ',' {
		// HAProxy skips repeated commas.
		for i < len(s) && s[i] == ',' {
			i++
		}
		j := i
		for j < len(s) && isIDChar(s[j]) {
			j++
		}
		cname := s[i:j]
		if cname == "" {
			return nil, 0, fmt.Errorf("unknown converter ''")
		}
		c := convs[cname]
		if c == nil {
			return nil, 0, unknownConv(cname)
		}
		i = j
		cargs, n, err := parseArgs(s[i:])
		if err != nil {
			return nil, 0, fmt.Errorf("invalid args in converter '%s' : %v", cname, err)
		}
		i += n
		if cargs, err = checkArgs(env, cargs, c.Min, c.Max, c.Check, s[i-n:], n > 0); err != nil {
			var ae *ArgError
			if errors.As(err, &ae) {
				return nil, 0, fmt.Errorf("invalid arg %d in converter '%s' : %s", ae.Pos, cname, ae.Msg)
			}
			return nil, 0, fmt.Errorf("invalid args in converter '%s' : %v", cname, err)
		}
		if !castable[out][c.In] {
			return nil, 0, fmt.Errorf("converter '%s' cannot be applied", cname)
		}
		e.convs = append(e.convs, convStep{c, cargs})
		out = c.Out
	}
	e.Text = s[:i]
	return e, i, nil
}

// CompileExpr parses a whole word as an expression.
func CompileExpr(env *Env, s string) (*SampleExpr, error) {
	e, n, err := ParseExpr(env, s)
	if err != nil {
		return nil, err
	}
	if n < len(s) {
		return nil, fmt.Errorf("unexpected '%s' after sample expression '%s'", s[n:], s[:n])
	}
	return e, nil
}

// errUnknownFetch is an unknown fetch name; ACLs word it their own way.
type errUnknownFetch struct{ name, msg string }

func (e *errUnknownFetch) Error() string { return e.msg }

func unknownFetch(name string) error {
	msg := fmt.Sprintf("unknown fetch method '%s'", name)
	if best := suggest(name, FetchNames()); best != "" {
		msg += fmt.Sprintf("; did you mean '%s' maybe ?", best)
	}
	return &errUnknownFetch{name, msg}
}

func unknownConv(name string) error {
	msg := fmt.Sprintf("unknown converter '%s'", name)
	if best := suggest(name, ConvNames()); best != "" {
		msg += fmt.Sprintf("; did you mean '%s' maybe ?", best)
	}
	return fmt.Errorf("%s", msg)
}

// parseArgs reads "(a,b,...)" at the start of s, as HAProxy's
// make_arg_list: commas split arguments and ')' ends them outside quotes;
// single and double quotes group; outside single quotes a backslash
// escapes a backslash, a space and quotes, and makes \r, \n and \t control
// characters; any other backslash is kept. It returns the arguments and
// the bytes used.
func parseArgs(s string) ([]Arg, int, error) {
	if len(s) == 0 || s[0] != '(' {
		return nil, 0, nil
	}
	var args []Arg
	var cur strings.Builder
	started := false
	var squote, dquote bool
	at := 1 // where the argument being read starts
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' && !squote:
			dquote = !dquote
			started = true
		case c == '\'' && !dquote:
			squote = !squote
			started = true
		case c == '\\' && !squote && i+1 < len(s):
			started = true
			switch n := s[i+1]; n {
			case '\\', ' ', '"', '\'':
				cur.WriteByte(n)
				i++
			case 'r':
				cur.WriteByte('\r')
				i++
			case 'n':
				cur.WriteByte('\n')
				i++
			case 't':
				cur.WriteByte('\t')
				i++
			default:
				cur.WriteByte(c)
			}
		case !squote && !dquote && c == ',':
			args = append(args, Arg{S: cur.String(), at: at})
			cur.Reset()
			started = true
			at = i + 1
		case !squote && !dquote && c == ')':
			if started || cur.Len() > 0 || len(args) > 0 {
				args = append(args, Arg{S: cur.String(), at: at})
			}
			return args, i + 1, nil
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	return nil, 0, fmt.Errorf("expected ')'")
}

// ArgError is an argument that does not parse as its type: HAProxy names
// its position ("invalid arg 2 in converter ...") rather than the
// converter's arguments as a whole.
type ArgError struct {
	Pos int // from 1
	Msg string
}

func (e *ArgError) Error() string { return e.Msg }

// checkArgs counts the arguments and lets check compile them.
// src is the text from the opening parenthesis on, for messages; parens
// says whether there was one: "str()" is one empty argument, as in HAProxy.
func checkArgs(env *Env, a []Arg, min, max int, check func(*Env, []Arg) error, src string, parens bool) ([]Arg, error) {
	if len(a) == 0 && parens && min > 0 {
		a = []Arg{{S: "", at: 1}}
	}
	if len(a) < min {
		return nil, fmt.Errorf("missing arguments (got %d/%d)", len(a), min)
	}
	if max >= 0 && len(a) > max {
		// HAProxy reads the arguments it expects, then finds no ')'.
		if check != nil && max > 0 {
			if err := check(env, a[:max]); err != nil {
				return nil, err
			}
		}
		at := a[max].at - 1 // the comma before the first extra argument
		if max == 0 {
			at = a[0].at
		}
		if at >= 0 && at < len(src) {
			return nil, &ArgError{Pos: max + 1, Msg: fmt.Sprintf("expected ')' before '%s'", src[at:])}
		}
		return nil, fmt.Errorf("too many arguments (got %d/%d)", len(a), max)
	}
	if check != nil {
		if err := check(env, a); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Eval evaluates the expression: its fetch (the last value when there are
// several, as HAProxy takes a header's last occurrence), then each
// converter on the value cast to its input type. It reports false when
// there is no sample: the fetch found nothing, a cast or a converter
// failed. It never fails otherwise.
func (e *SampleExpr) Eval(r *Request, s *Sample) bool {
	r.reset()
	return e.eval(r, s)
}

func (e *SampleExpr) eval(r *Request, s *Sample) bool {
	*s = Sample{}
	if !e.fetch.Fn(r, e.args, s) {
		return false
	}
	return e.convert(r, s)
}

func (e *SampleExpr) convert(r *Request, s *Sample) bool {
	for i := range e.convs {
		st := &e.convs[i]
		if !cast(r, s, st.conv.In) {
			return false
		}
		if !st.conv.Fn(r, st.args, s) {
			return false
		}
	}
	return true
}

// each calls fn with every value of the fetch (every occurrence of a
// header, for an ACL), converted; it stops when fn returns true and says
// whether one did.
func (e *SampleExpr) each(r *Request, fn func(s *Sample) bool) bool {
	s := &r.iterSmp
	pos, more := 0, false
	for {
		*s = Sample{iter: true, pos: pos}
		if !e.fetch.Fn(r, e.args, s) {
			return false
		}
		pos, more = s.pos, s.more
		if e.convert(r, s) && fn(s) {
			return true
		}
		if !more {
			return false
		}
	}
}

// AppendText appends the sample as text, as a log format or a header
// value shows it.
func AppendText(b []byte, r *Request, s *Sample) []byte {
	switch s.T {
	case TBool, TSint, TIPv4, TIPv6:
		t := *s
		if cast(r, &t, TStr) {
			return append(b, t.B...)
		}
		return b
	}
	return append(b, s.B...)
}
