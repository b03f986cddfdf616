package config

import (
	"fmt"
	"strings"
)

// Conditions of .if and .elif, as HAProxy 2.6 reads them:
//
//	expr := and ( "||" and )*
//	and  := term ( "&&" term )*
//	term := "!"* ( integer | "(" expr ")" | predicate [ "(" args ")" ] )
//
// The whole expression is parsed before anything is evaluated, so a syntax
// error is reported even in a branch that evaluation would skip. Error
// messages and the column they point at follow HAProxy's.

// maxCondRecursion is HAProxy's MAX_CFG_RECURSION.
const maxCondRecursion = 1024

// argBufLimit is the largest decoded predicate argument HAProxy accepts
// (its trash buffer, bufsize 16384, minus the terminating NUL).
const argBufLimit = 16383

type condTerm struct {
	neg   bool
	kind  int // termTrue, termFalse, termPred, termParen
	pred  *condPred
	args  []string
	paren *condExpr
}

const (
	termTrue = iota
	termFalse
	termPred
	termParen
)

// condAnd is a chain of terms joined by "&&"; condExpr a chain of condAnd
// joined by "||".
type condAnd struct{ terms []*condTerm }
type condExpr struct{ ands []*condAnd }

type condPred struct {
	name  string
	nargs int
}

var condPreds = []condPred{
	{"defined", 1},
	{"feature", 1},
	{"streq", 2},
	{"strneq", 2},
	{"version_atleast", 1},
	{"version_before", 1},
	{"openssl_version_atleast", 1},
	{"openssl_version_before", 1},
	{"ssllib_name_startswith", 1},
}

// condEnv is what predicates consult.
type condEnv struct {
	lookup   func(string) (string, bool)
	features string // "+NAME +NAME ...", the shape of HAProxy's build features
	version  string
}

type condParser struct {
	s     string
	err   string
	errAt int
}

func (p *condParser) at(i int) byte {
	if i < len(p.s) {
		return p.s[i]
	}
	return 0
}

func (p *condParser) skipBlanks(i int) int {
	for p.at(i) == ' ' || p.at(i) == '\t' {
		i++
	}
	return i
}

// Each parse function takes the position its caller's cursor is at and
// returns the position the caller's cursor is left at, which HAProxy
// updates on success and, in a few places, on a desynchronisation (ret 0)
// too; error messages quote the text from there. ret is -1 on error (err
// and errAt set), 0 when nothing could be parsed, 1 on success.

func (p *condParser) parseExpr(text, depth int) (*condExpr, int, int) {
	in := text
	if in >= len(p.s) {
		return nil, text, 0
	}
	e := &condExpr{}
	firstOp := -1
	for {
		if depth <= 0 {
			p.err = fmt.Sprintf("unparsable conditional expression '%s'", p.s[in:])
			p.errAt = in
			return nil, text, -1
		}
		a, in2, ret := p.parseAnd(in, depth-1)
		if ret == -1 {
			return nil, text, -1
		}
		if ret == 0 {
			p.err = fmt.Sprintf("unparsable conditional expression '%s'", p.s[in2:])
			p.errAt = in2
			return nil, text, -1
		}
		e.ands = append(e.ands, a)
		in = p.skipBlanks(in2)
		if p.at(in) != '|' || p.at(in+1) != '|' {
			return e, in, 1
		}
		// HAProxy recurses on the right-hand side; when that side is
		// empty the cursor stays on the first operator of the chain.
		if firstOp < 0 {
			firstOp = in
		}
		in = p.skipBlanks(in + 2)
		if in >= len(p.s) {
			return nil, firstOp, 0
		}
		depth--
	}
}

func (p *condParser) parseAnd(text, depth int) (*condAnd, int, int) {
	in := text
	if in >= len(p.s) {
		return nil, text, 0
	}
	a := &condAnd{}
	firstOp := -1
	for {
		if depth <= 0 {
			p.err = fmt.Sprintf("unparsable conditional sub-expression '%s'", p.s[in:])
			p.errAt = in
			return nil, text, -1
		}
		t, in2, ret := p.parseTerm(in, depth-1)
		if ret == -1 {
			return nil, text, -1
		}
		if ret == 0 {
			p.err = fmt.Sprintf("unparsable conditional sub-expression '%s'", p.s[in:])
			p.errAt = in
			return nil, text, -1
		}
		a.terms = append(a.terms, t)
		in = p.skipBlanks(in2)
		if p.at(in) != '&' || p.at(in+1) != '&' {
			return a, in, 1
		}
		if firstOp < 0 {
			firstOp = in
		}
		in = p.skipBlanks(in + 2)
		if in >= len(p.s) {
			return nil, firstOp, 0
		}
		depth--
	}
}

func (p *condParser) parseTerm(text, depth int) (*condTerm, int, int) {
	in := p.skipBlanks(text)
	if in >= len(p.s) {
		return nil, text, 0
	}
	fail0 := func() (*condTerm, int, int) {
		p.err = fmt.Sprintf("unparsable conditional expression '%s'", p.s[text:])
		p.errAt = text
		return nil, text, -1
	}
	if depth <= 0 {
		return fail0()
	}
	t := &condTerm{}
	for p.at(in) == '!' {
		t.neg = !t.neg
		in = p.skipBlanks(in + 1)
	}
	if end, nonzero, ok := strtolPrefix(p.s, in); ok {
		t.kind = termFalse
		if nonzero {
			t.kind = termTrue
		}
		return t, end, 1
	}
	if p.at(in) == '(' {
		t.kind = termParen
		in = p.skipBlanks(in + 1)
		e, in2, ret := p.parseExpr(in, depth-1)
		if ret == -1 {
			return nil, text, -1
		}
		if ret == 0 {
			return fail0()
		}
		in = p.skipBlanks(in2)
		if p.at(in) != ')' {
			p.err = fmt.Sprintf("expected ')' after conditional expression '%s'", p.s[text:])
			p.errAt = text
			return nil, text, -1
		}
		t.paren = e
		return t, p.skipBlanks(in + 1), 1
	}
	wlen := strings.IndexAny(p.s[in:], " (")
	if wlen < 0 {
		wlen = len(p.s) - in
	}
	word := p.s[in : in+wlen]
	for i := range condPreds {
		if condPreds[i].name != word {
			continue
		}
		t.kind = termPred
		t.pred = &condPreds[i]
		args, end, argn, msg := parseArgList(p.s, in+wlen, t.pred.nargs)
		if msg != "" {
			p.err = fmt.Sprintf("%s in argument %d of predicate '%s' used in conditional expression", msg, argn, word)
			p.errAt = end
			return nil, text, -1
		}
		t.args = args
		return t, end, 1
	}
	return fail0()
}

// strtolPrefix reports whether C's strtol(s+i, &end, 0) converts anything,
// where it stops, and whether the value is non-zero.
func strtolPrefix(s string, i int) (end int, nonzero, ok bool) {
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	base := 10
	if j+2 < len(s) && s[j] == '0' && (s[j+1]|0x20) == 'x' && isHex(s[j+2]) {
		base = 16
		j += 2
	} else if j < len(s) && s[j] == '0' {
		base = 8
	}
	start := j
	for j < len(s) {
		c := s[j]
		var ok bool
		switch base {
		case 16:
			ok = isHex(c)
		case 8:
			ok = c >= '0' && c <= '7'
		default:
			ok = isDigit(c)
		}
		if !ok {
			break
		}
		if c != '0' {
			nonzero = true
		}
		j++
	}
	if j == start {
		return i, false, false
	}
	return j, nonzero, true
}

// parseArgList reads a predicate's parenthesised string arguments at
// s[i:], like HAProxy's make_arg_list() for string arguments: quotes and
// the escapes \\ \<space> \" \' \r \n \t are resolved, a comma or a closing
// parenthesis outside quotes ends an argument. It returns the arguments,
// the position after them, and on error a message with the argument
// number HAProxy reports.
func parseArgList(s string, i, nargs int) (args []string, end, argn int, msg string) {
	at := func(k int) byte {
		if k < len(s) {
			return s[k]
		}
		return 0
	}
	empty := at(i) != '('
	if !empty {
		i++
	}
	// Without parentheses there is still one empty argument, as HAProxy
	// reads it: "defined" alone is defined("").
	pos := 0
	for pos < nargs {
		var squote, dquote bool
		var out []byte
		for !empty && i < len(s) && len(out) < argBufLimit {
			c := s[i]
			if c == '"' && !squote {
				dquote = !dquote
				i++
				continue
			}
			if c == '\'' && !dquote {
				squote = !squote
				i++
				continue
			}
			if c == '\\' && !squote {
				next := at(i + 1)
				switch next {
				case 0:
					return nil, i, pos, fmt.Sprintf("failed to parse '%s' after '%s' as type 'string' at position %d", s[i:], out, pos+1)
				case '\\', ' ', '"', '\'':
					out = append(out, next)
					i++
				case 'r':
					out = append(out, '\r')
					i++
				case 'n':
					out = append(out, '\n')
					i++
				case 't':
					out = append(out, '\t')
					i++
				default:
					out = append(out, '\\')
				}
				i++
				continue
			}
			if !squote && !dquote && (c == ',' || c == ')') {
				break
			}
			out = append(out, c)
			i++
		}
		if !empty && i < len(s) && s[i] != ',' && s[i] != ')' {
			return nil, i, pos, fmt.Sprintf("too small buffer size to store decoded argument %d, increase bufsize ?", pos+1)
		}
		args = append(args, string(out))
		pos++
		if empty || i >= len(s) || s[i] == ')' || pos >= nargs {
			break
		}
		i++ // the comma
	}
	if pos < nargs {
		return nil, i, pos, fmt.Sprintf("missing arguments (got %d/%d), type 'string' expected", pos, nargs)
	}
	if !empty {
		if at(i) != ')' {
			if pos > 1 {
				pos--
			}
			if i < len(s) {
				return nil, i, pos, fmt.Sprintf("expected ')' before '%s'", s[i:])
			}
			return nil, i, pos, "expected ')'"
		}
		i++
	}
	return args, i, pos, ""
}

// evalCondition parses and evaluates the condition text of a .if or .elif.
// On error it returns the message and the offset in text it points at.
func evalCondition(text string, env *condEnv) (val bool, errMsg string, errAt int) {
	if text == "" {
		return false, "", 0
	}
	p := &condParser{s: text}
	e, end, ret := p.parseExpr(0, maxCondRecursion)
	switch ret {
	case -1:
		return false, p.err, p.errAt
	case 0:
		return false, fmt.Sprintf("unparsable conditional expression '%s'", text), end
	}
	end = p.skipBlanks(end)
	if end < len(text) {
		return false, fmt.Sprintf("unexpected character '%c' at the end of conditional expression '%s'", text[end], text), end
	}
	return e.eval(env), "", 0
}

func (e *condExpr) eval(env *condEnv) bool {
	for _, a := range e.ands {
		if a.eval(env) {
			return true
		}
	}
	return false
}

func (a *condAnd) eval(env *condEnv) bool {
	for _, t := range a.terms {
		if !t.eval(env) {
			return false
		}
	}
	return true
}

func (t *condTerm) eval(env *condEnv) bool {
	var v bool
	switch t.kind {
	case termTrue:
		v = true
	case termParen:
		v = t.paren.eval(env)
	case termPred:
		v = t.pred.eval(t.args, env)
	}
	return v != t.neg
}

func (p *condPred) eval(args []string, env *condEnv) bool {
	switch p.name {
	case "defined":
		_, ok := env.lookup(args[0])
		return ok
	case "feature":
		return hasFeature(env.features, args[0])
	case "streq":
		return args[0] == args[1]
	case "strneq":
		return args[0] != args[1]
	case "version_atleast":
		return compareVersion(env.version, args[0]) <= 0
	case "version_before":
		return compareVersion(env.version, args[0]) > 0
	}
	// goha is not linked against an SSL library: the openssl_* and
	// ssllib_* predicates are never true.
	return false
}

// hasFeature looks name up in a build features string ("+A -B +C") the way
// HAProxy does: an occurrence counts when a '+' or '-' precedes it and a
// blank or the end follows it, and the first such occurrence decides.
func hasFeature(features, name string) bool {
	for p := 0; p <= len(features); p++ {
		k := strings.Index(features[p:], name)
		if k < 0 {
			return false
		}
		p += k
		if p > 0 {
			end := p + len(name)
			if end == len(features) || features[end] == ' ' {
				switch features[p-1] {
				case '+':
					return true
				case '-':
					return false
				}
			}
		}
	}
	return false
}
