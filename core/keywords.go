package core

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"goha/core/config"
	"goha/core/diag"
)

// Scopes say where a keyword may appear. A listen section is FE|BE.
const (
	scopeGlobal = 1 << iota
	scopeDefaults
	scopeFE
	scopeBE

	scopeProxy = scopeDefaults | scopeFE | scopeBE
)

// Keyword is one configuration keyword of the global or a proxy section.
// Name has one or two words ("maxconn", "timeout connect", "option httplog",
// "stats socket"); the dispatcher tries the two-word form first.
type Keyword struct {
	Name  string
	Scope int
	// Parse gets the words after the keyword's name. It returns nil, a
	// *diag.Warn (reported as a WARNING), or any other error (an ALERT).
	Parse func(c *kwCtx, args []string) error
	// Args is the most words after the name the keyword takes. The
	// dispatcher refuses one more, as HAProxy does, before Parse runs: a
	// parser that reads only the words it wants cannot let a typo through.
	// The zero value takes none; ArgsAny leaves the count to Parse (lists,
	// conditions, sub-keywords, or words HAProxy itself ignores).
	Args int
	// TooMany, when set, reports extra words instead of the dispatcher's
	// usual alert, for keywords HAProxy words differently; it returns nil
	// to accept them.
	TooMany func(c *kwCtx, args []string) error
	// Unimplemented, when set, says the keyword is parsed (its words are
	// checked) but does nothing in goha, and how that is reported.
	Unimplemented Gap
}

// Gap is what goha does with a keyword it knows but does not implement.
// A keyword whose absence changes what traffic gets is Refused: goha would
// otherwise serve something other than what the operator wrote. Only
// tuning, and what has no observable effect in a Go process, is Warned.
type Gap uint8

const (
	Implemented Gap = iota
	// Warned keywords are accepted with a WARNING: ignoring them leaves the
	// traffic as HAProxy would shape it.
	Warned
	// Refused keywords are an ALERT, so goha refuses to start.
	Refused
)

// err reports the keyword kw that has this gap: a *diag.Warn, an alert
// error, or nil when the keyword is implemented.
func (g Gap) err(kw string) error {
	switch g {
	case Warned:
		return diag.Warnf("'%s' is parsed but not implemented by goha yet; ignored.", kw)
	case Refused:
		return errf("'%s' is not supported by goha.", kw)
	}
	return nil
}

// ArgsAny is Keyword.Args for keywords that check their words themselves.
const ArgsAny = -1

// kwCtx is what a keyword parser may look at and change.
type kwCtx struct {
	b   *builder
	pos diag.Pos
	kw  string
	neg bool // "no option x"
	def bool // "default option x"
	p   *Proxy
	g   *Global
	sec *config.Section
	env func(string) (string, bool) // the line's environment, for addresses
}

var keywords = map[string]*Keyword{}

// registerKeywords adds keywords to the table. It panics on duplicates: two
// features claiming one keyword is a programming error.
func registerKeywords(kws ...Keyword) {
	for i := range kws {
		k := &kws[i]
		if k.Name == "" || (k.Parse == nil && k.Unimplemented == Implemented) {
			panic("core: keyword without name or parser: " + k.Name)
		}
		if _, dup := keywords[k.Name]; dup {
			panic("core: keyword registered twice: " + k.Name)
		}
		keywords[k.Name] = k
	}
}

// keywordNames lists the keywords valid in scope, for "did you mean".
func keywordNames(scope int) []string {
	var out []string
	for name, k := range keywords {
		if k.Scope&scope != 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// SuggestFunc picks the closest candidate to a misspelled word, or "".
// core/diag provides HAProxy's word-fingerprint matcher.
var SuggestFunc = diag.BestMatch

func sectionScope(p *Proxy) int {
	if p == nil {
		return scopeGlobal
	}
	if p.Cap&CapDefaults != 0 {
		return scopeDefaults
	}
	s := 0
	if p.Cap&CapFE != 0 {
		s |= scopeFE
	}
	if p.Cap&CapBE != 0 {
		s |= scopeBE
	}
	return s
}

// dispatch runs one line of a global or proxy section through the table.
func (b *builder) dispatch(sec *config.Section, p *Proxy, ln config.Line) {
	words := ln.Words
	if len(words) == 0 || b.aborted {
		return
	}
	c := &kwCtx{b: b, pos: ln.Pos, p: p, g: &b.cfg.Global, sec: sec, env: ln.Env}
	if (words[0] == "no" || words[0] == "default") && len(words) > 1 {
		c.neg = words[0] == "no"
		c.def = words[0] == "default"
		words = words[1:]
	}
	scope := sectionScope(p)
	var k *Keyword
	var args []string
	if len(words) > 1 {
		if kk := keywords[words[0]+" "+words[1]]; kk != nil {
			k, args = kk, words[2:]
		}
	}
	if k == nil {
		if kk := keywords[words[0]]; kk != nil {
			k, args = kk, words[1:]
		}
	}
	secName := sec.Kind
	if k == nil || k.Scope&(scopeGlobal|scopeProxy) == 0 || (k.Scope&scopeGlobal != 0) != (scope == scopeGlobal) && k.Scope&scope == 0 {
		b.unknownKeyword(ln.Pos, words, secName, scope)
		return
	}
	if scope == scopeDefaults && b.defaultsRule(sec, p, ln.Pos, words) {
		return
	}
	if k.Scope&scope == 0 {
		// Known in proxies, but not for this capability: HAProxy warns,
		// after counting an option's words.
		if strings.HasPrefix(k.Name, "option ") && k.Args != ArgsAny && len(args) > k.Args && k.TooMany == nil {
			b.report(ln.Pos, errf("'%s' cannot handle unexpected argument '%s'.", k.Name, args[k.Args]))
			return
		}
		b.d.Add(diag.Diag{Sev: diag.Warning, Pos: ln.Pos, Parsing: true,
			Msg: fmt.Sprintf("'%s' ignored because %s '%s' has no %s capability.",
				k.Name, secName, sec.Name, missingCap(k.Scope))})
		return
	}
	if (c.neg || c.def) && !strings.HasPrefix(k.Name, "option ") && k.Name != "log" {
		b.d.Alertf(ln.Pos, "'%s' not supported with 'no' or 'default' prefix.", k.Name)
		return
	}
	c.kw = k.Name
	if k.Args != ArgsAny && len(args) > k.Args {
		var err error
		if k.TooMany != nil {
			err = k.TooMany(c, args)
		} else {
			err = errf("'%s' cannot handle unexpected argument '%s'.", k.Name, args[k.Args])
		}
		if err != nil {
			b.report(ln.Pos, err)
			return
		}
	}
	if c.neg && k.Unimplemented == Refused {
		// "no option x" asks for HAProxy's default, which is what goha
		// does without the option.
		return
	}
	// A keyword with a gap may still check its words first, so that a line
	// HAProxy refuses gets HAProxy's message.
	if k.Parse != nil {
		if err := k.Parse(c, args); err != nil {
			b.report(ln.Pos, err)
			return
		}
	}
	if err := k.Unimplemented.err(k.Name); err != nil {
		b.report(ln.Pos, err)
	}
}

func missingCap(scope int) string {
	if scope&scopeFE == 0 {
		return "backend"
	}
	return "frontend"
}

func (b *builder) unknownKeyword(pos diag.Pos, words []string, secName string, scope int) {
	kw := words[0]
	msg := fmt.Sprintf("unknown keyword '%s' in '%s' section", kw, secName)
	if kw == "option" && len(words) > 1 {
		msg = fmt.Sprintf("unknown option '%s'.", words[1])
		b.d.Alertf(pos, "%s", msg)
		return
	}
	if best := SuggestFunc(kw, firstWords(keywordNames(scope))); best != "" {
		msg += fmt.Sprintf("; did you mean '%s' maybe ?", best)
	}
	b.d.Alertf(pos, "%s", msg)
}

func firstWords(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		f, _, _ := strings.Cut(n, " ")
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// report turns a keyword parser's error into a diagnostic.
func (b *builder) report(pos diag.Pos, err error) {
	var w *diag.Warn
	if errors.As(err, &w) {
		b.d.Warnf(pos, "%s", w.Msg)
		return
	}
	var ab *abortErr
	if errors.As(err, &ab) {
		b.aborted = true
		b.d.Alertf(pos, "%s", ab.msg)
		return
	}
	var ca *continueAlert
	if errors.As(err, &ca) {
		b.d.Add(diag.Diag{Sev: diag.Alert, Pos: pos, Parsing: true, Continue: true, Msg: ca.msg})
		return
	}
	var t *tightErr
	if errors.As(err, &t) {
		sev := diag.Alert
		if t.warn {
			sev = diag.Warning
		}
		b.d.Add(diag.Diag{Sev: sev, Pos: pos, Parsing: true, Tight: true, Msg: t.msg})
		return
	}
	b.d.Alertf(pos, "%s", err.Error())
}

// tightErr is an alert HAProxy prints without the blank before the colon
// ("parsing [f:1]: msg"): its rule parsers and a few keywords word it so.
type tightErr struct {
	msg  string
	warn bool
}

func (e *tightErr) Error() string { return e.msg }

func tightf(format string, args ...any) error {
	return &tightErr{msg: fmt.Sprintf(format, args...)}
}

func tightWarnf(format string, args ...any) error {
	return &tightErr{msg: fmt.Sprintf(format, args...), warn: true}
}

// continueAlert is an alert after which HAProxy goes on: printed, counted
// as a parse error by nobody, start-up not refused.
type continueAlert struct{ msg string }

func (e *continueAlert) Error() string { return e.msg }

// Helpers shared by keyword parsers.

// invalidChar returns the first byte HAProxy does not permit in the name of
// a proxy, server or ACL (letters, digits, '-', '_', '.' and ':' are), as a
// one-byte string, or "".
func invalidChar(name string) string {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == ':' {
			continue
		}
		return name[i : i+1]
	}
	return ""
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func parseIntArg(c *kwCtx, args []string) (int, error) {
	if len(args) < 1 {
		return 0, errf("'%s' expects an integer argument.", c.kw)
	}
	v, err := strconv.Atoi(args[0])
	if err != nil {
		return 0, errf("'%s' expects an integer argument.", c.kw)
	}
	return v, nil
}

// timeErr words a bad time value as HAProxy does.
func timeErr(kw, arg string, err error) error {
	for i := 0; i < len(arg); i++ {
		if arg[i] < '0' || arg[i] > '9' {
			if i > 0 {
				return errf("unexpected character '%c' in '%s'", arg[i], kw)
			}
			break
		}
	}
	return errf("'%s' %v", kw, err)
}
