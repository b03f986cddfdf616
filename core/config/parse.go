package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"goha/core/diag"
)

// SectionKinds are the words that open a section, as HAProxy 2.6 registers
// them. A line whose first word is one of these starts a new Section.
var SectionKinds = []string{
	"listen", "frontend", "backend", "defaults", "global", "userlist",
	"peers", "mailers", "namespace_list", "resolvers", "cache", "program",
	"http-errors", "ring", "log-forward", "fcgi-app",
}

// IsSectionKind says whether word opens a section.
func IsSectionKind(word string) bool {
	for _, k := range SectionKinds {
		if k == word {
			return true
		}
	}
	return false
}

const (
	// maxNestedConds is HAProxy's MAXNESTEDCONDS: .if blocks nest at most
	// one level less deep than this.
	maxNestedConds = 100
	// maxFatal is how many fatal errors a file may have before HAProxy
	// stops reading it.
	maxFatal = 50
)

// Load reads the configuration files named by paths, in order, and returns
// their sections. A path naming a directory stands for the regular files in
// it whose names end in ".cfg" and do not start with a dot, in lexical
// order, as HAProxy's -f does. Every problem found is reported into d; the
// caller refuses to start when d.HasAlert(). Sections never continue from
// one file into the next, and .if blocks must close in the file that opens
// them. An .alert directive stops the load at once.
func Load(paths []string, opts Options, d *diag.Collector) []Section {
	if d == nil {
		d = &diag.Collector{}
	}
	var files []string
	for _, path := range paths {
		files = append(files, expandPath(path, d)...)
	}
	p := newParser(opts, d)
	for _, f := range files {
		if p.stop {
			break
		}
		data, err := os.ReadFile(f)
		if err != nil {
			d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Could not open configuration file %s : %s", f, strerror(err))})
			continue
		}
		p.file(f, data)
	}
	return p.sections
}

// Parse reads one configuration file's contents; file names it in
// diagnostics and in .FILE.
func Parse(file string, data []byte, opts Options, d *diag.Collector) []Section {
	if d == nil {
		d = &diag.Collector{}
	}
	p := newParser(opts, d)
	p.file(file, data)
	return p.sections
}

// expandPath turns one -f argument into the files to read.
func expandPath(path string, d *diag.Collector) []string {
	st, err := os.Stat(path)
	if err != nil {
		d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Cannot open configuration file/directory %s : %s", path, strerror(err))})
		return nil
	}
	if !st.IsDir() {
		return []string{path}
	}
	ents, err := os.ReadDir(path) // sorted by name, byte-wise like alphasort in the C locale
	if err != nil {
		d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Cannot open configuration directory %s : %s", path, strerror(err))})
		return nil
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		// HAProxy takes the first ".cfg" in the name and wants it last,
		// so "a.cfg.cfg" is skipped as it is there.
		if strings.HasPrefix(name, ".") || strings.Index(name, ".cfg") != len(name)-4 || len(name) < 4 {
			continue
		}
		full := path + "/" + name
		fst, err := os.Stat(full)
		if err != nil {
			d.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Cannot open configuration file %s : %s", full, strerror(err))})
			continue
		}
		if !fst.Mode().IsRegular() {
			continue
		}
		out = append(out, filepath.Clean(full))
	}
	return out
}

// strerror renders err the way C's strerror() does for errno values.
func strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		s := errno.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// parser holds what lasts across the files of one load.
type parser struct {
	opts   Options
	d      *diag.Collector
	env    envState
	lookup func(string) (string, bool) // env.lookup, bound once
	// envNow is a frozen copy of env for the lines read since its last
	// change, so a line's Env keeps answering as it did when it was read.
	envNow   func(string) (string, bool)
	cond     condEnv
	sections []Section
	// stop is set by an .alert directive: nothing more is read.
	stop bool
}

func newParser(opts Options, d *diag.Collector) *parser {
	p := &parser{opts: opts, d: d}
	p.env.base = opts.Getenv
	if p.env.base == nil {
		p.env.base = os.LookupEnv
	}
	var fb strings.Builder
	for i, f := range opts.Features {
		if i > 0 {
			fb.WriteByte(' ')
		}
		if !strings.HasPrefix(f, "+") && !strings.HasPrefix(f, "-") {
			fb.WriteByte('+')
		}
		fb.WriteString(f)
	}
	p.lookup = p.env.lookup
	p.envNow = p.env.frozen()
	p.cond = condEnv{lookup: p.lookup, features: fb.String(), version: opts.Version}
	return p
}

// envState is the environment as the configuration sees it: the process
// environment (or Options.Getenv) overlaid with what setenv, presetenv,
// unsetenv and resetenv lines in global sections did so far, since HAProxy
// applies those while it reads and later lines see the result. The
// process environment itself is left alone.
type envState struct {
	base    func(string) (string, bool)
	set     map[string]string
	unset   map[string]bool
	cleared bool // resetenv: nothing from base shows through
}

func (e *envState) lookup(name string) (string, bool) {
	if v, ok := e.set[name]; ok {
		return v, true
	}
	if e.unset[name] || e.cleared {
		return "", false
	}
	return e.base(name)
}

func (e *envState) setenv(name, value string) {
	if e.set == nil {
		e.set = map[string]string{}
	}
	e.set[name] = value
	delete(e.unset, name)
}

// frozen returns a lookup of the environment as it is now, which later
// changes to e do not affect.
func (e *envState) frozen() func(string) (string, bool) {
	c := envState{base: e.base, cleared: e.cleared}
	if len(e.set) > 0 {
		c.set = make(map[string]string, len(e.set))
		for k, v := range e.set {
			c.set[k] = v
		}
	}
	if len(e.unset) > 0 {
		c.unset = make(map[string]bool, len(e.unset))
		for k := range e.unset {
			c.unset[k] = true
		}
	}
	return c.lookup
}

// apply mirrors the effect of a global section's environment keywords and
// says whether words was one of them. Malformed lines change nothing; the
// keyword tables report them.
func (e *envState) apply(words []string) bool {
	switch words[0] {
	case "setenv":
		if len(words) == 3 {
			e.setenv(words[1], words[2])
		}
	case "presetenv":
		if len(words) == 3 {
			if _, ok := e.lookup(words[1]); !ok {
				e.setenv(words[1], words[2])
			}
		}
	case "unsetenv":
		for _, n := range words[1:] {
			delete(e.set, n)
			if e.unset == nil {
				e.unset = map[string]bool{}
			}
			e.unset[n] = true
		}
	case "resetenv":
		keep := map[string]string{}
		for _, n := range words[1:] {
			if v, ok := e.lookup(n); ok {
				keep[n] = v
			}
		}
		e.set, e.unset, e.cleared = keep, nil, true
	default:
		return false
	}
	return true
}

// condState is the state of one .if level, as HAProxy names them: TAKE
// means the current branch's lines are used, DROP that they are not but a
// later branch may be, SKIP that no later branch of this level may be.
type condState int

const (
	ifTake condState = iota
	ifDrop
	ifSkip
	elifTake
	elifDrop
	elifSkip
	elseTake
	elseDrop
)

func (s condState) masked() bool {
	switch s {
	case ifDrop, ifSkip, elifDrop, elifSkip, elseDrop:
		return true
	}
	return false
}

// decided says whether a branch of this level was already taken or
// skipped, so that no later .elif or .else may be.
func (s condState) decided() bool {
	switch s {
	case ifTake, ifSkip, elifTake, elifSkip:
		return true
	}
	return false
}

func (s condState) isElse() bool { return s == elseTake || s == elseDrop }

// fileState is what lasts for one file.
type fileState struct {
	name    string
	linenum int
	fatal   int
	conds   []condState
	cur     int // index in p.sections of the open section, -1 before the first
	// secName is what .SECTION expands to; secSet is false before the
	// first section.
	secName string
	secSet  bool
	// nonGlobal: a section other than global was seen in this file.
	nonGlobal bool
	pseudo    func(string) (string, bool, bool)
	buf       []byte // the current line, which the tokenizer may modify
}

func (p *parser) file(name string, data []byte) {
	fs := &fileState{name: name, cur: -1}
	fs.pseudo = p.pseudo(fs)
	rest := data
	for len(rest) > 0 && !p.stop {
		var raw []byte
		hasLF := false
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			raw, rest, hasLF = rest[:i], rest[i+1:], true
		} else {
			raw, rest = rest, nil
		}
		fs.linenum++
		if fs.fatal >= maxFatal {
			p.alertTight(fs, "too many fatal errors (%d), stopping now.", fs.fatal)
			break
		}
		nul := bytes.IndexByte(raw, 0)
		if nul >= 0 {
			raw = raw[:nul]
		}
		p.line(fs, raw)
		if p.stop {
			break // an .alert: HAProxy reports nothing more
		}
		switch {
		case nul >= 0:
			// HAProxy reads the line up to the NUL, then stops reading the
			// file; goha goes on so that later problems show too.
			p.alertTight(fs, "Stray NUL character at position %d.", nul+1)
			fs.fatal++
		case !hasLF:
			p.alertTight(fs, "Missing LF on last line, file might have been truncated at position %d.", len(raw)+1)
		}
	}
	if len(fs.conds) > 0 && !p.stop {
		p.alertTight(fs, "non-terminated '.if' block.")
	}
}

func (p *parser) pos(fs *fileState) diag.Pos { return diag.Pos{File: fs.name, Line: fs.linenum} }

func (p *parser) report(fs *fileState, sev diag.Severity, tight bool, format string, args ...any) {
	p.d.Add(diag.Diag{Sev: sev, Pos: p.pos(fs), Parsing: true, Tight: tight, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) alertTight(fs *fileState, format string, args ...any) {
	p.report(fs, diag.Alert, true, format, args...)
}

func (p *parser) pseudo(fs *fileState) func(string) (string, bool, bool) {
	return func(name string) (string, bool, bool) {
		switch name {
		case ".LINE":
			return strconv.Itoa(fs.linenum), true, true
		case ".FILE":
			return fs.name, true, true
		case ".SECTION":
			return fs.secName, fs.secSet, true
		}
		return "", false, false
	}
}

// caret renders HAProxy's two-line pointer under a quoted line: the line,
// then a '^' under column col.
func caret(text string, col int) string {
	return fmt.Sprintf("  %s\n  %*s", text, col+1, "^")
}

func (p *parser) line(fs *fileState, raw []byte) {
	fs.buf = append(fs.buf[:0], raw...)
	buf := fs.buf
	off := 0
	for off < len(buf) && isSpace(buf[off]) {
		off++
	}
	line := buf[off:]
	if len(line) > 0 && line[0] == '[' {
		p.scope(fs, line)
		return
	}

	res := tokenize(line, p.lookup, fs.pseudo)
	if res.err != tokOK {
		var what string
		switch res.err {
		case tokQuote:
			what = "unmatched quote"
		case tokBrace:
			what = "unmatched brace in environment variable name"
		case tokVarName:
			what = "forbidden first char in environment variable name"
		case tokHex:
			what = "truncated or invalid hexadecimal sequence"
		case tokExpand:
			what = "truncated or invalid word expansion sequence"
		case tokTooMany:
			p.alertTight(fs, "too many words, truncating after word %d, position %d: <%s>.", maxLineArgs, res.manyPos, res.manyWord)
			fs.fatal++
			return
		}
		text, col := sanitizeForPrinting(line, res.errAt, 80)
		p.alertTight(fs, "%s at position %d:\n%s", what, off+res.errAt+1, caret(text, col))
		fs.fatal++
		p.brokenCondDirective(fs, line)
		return
	}
	args := res.args
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	if args[0] == "" {
		return // blank line, comment, or a line starting with an empty word
	}
	if res.crAt >= 0 {
		// HAProxy silently ignores whatever follows a carriage return
		// that ends a word; say so, as it is rarely intended.
		p.report(fs, diag.Warning, true, "carriage return at position %d ends the line, the rest of the line is ignored.", off+res.crAt+1)
	}

	if args[0][0] == '.' && p.condDirective(fs, args, res.tail) {
		return
	}
	if n := len(fs.conds); n > 0 && fs.conds[n-1].masked() {
		return
	}
	if args[0][0] == '.' {
		p.directive(fs, args)
		return
	}

	words := trimWords(args)
	if IsSectionKind(words[0]) {
		p.openSection(fs, words)
		return
	}
	if fs.cur < 0 {
		p.alertTight(fs, "unknown keyword '%s' out of section.", arg(0))
		fs.fatal++
		return
	}
	sec := &p.sections[fs.cur]
	sec.Lines = append(sec.Lines, Line{Pos: p.pos(fs), Words: words, Env: p.envNow})
	if sec.Kind == "global" && p.env.apply(words) {
		p.envNow = p.env.frozen()
	}
}

// trimWords drops the empty words at the end of a line: HAProxy cannot
// tell them from absent ones either (`maxconn ""` and `maxconn` read alike).
func trimWords(args []string) []string {
	n := len(args)
	for n > 1 && args[n-1] == "" {
		n--
	}
	return args[:n:n]
}

// condDirective handles .if, .elif, .else and .endif; it reports whether
// args was one of them. These are handled even inside masked blocks, to
// keep track of the nesting.
func (p *parser) condDirective(fs *fileState, args []string, tail string) bool {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	n := len(fs.conds)
	switch args[0] {
	case ".if":
		if n+1 >= maxNestedConds {
			// HAProxy stops here; goha drops the block and goes on.
			p.alertTight(fs, "too many nested '.if', max is %d.", maxNestedConds)
			fs.fatal++
			fs.conds = append(fs.conds, ifSkip)
			return true
		}
		if n > 0 && fs.conds[n-1].masked() {
			fs.conds = append(fs.conds, ifSkip)
			return true
		}
		v, msg, at := evalCondition(tail, &p.cond)
		if msg != "" {
			text, col := sanitizeForPrinting([]byte(tail), at, 76)
			p.alertTight(fs, "%s in '.if' at position %d:\n  .if %s\n  %*s", msg, at+1, text, col+5, "^")
			fs.fatal++
			// HAProxy stops reading here; goha drops the whole block.
			fs.conds = append(fs.conds, ifSkip)
			return true
		}
		if v {
			fs.conds = append(fs.conds, ifTake)
		} else {
			fs.conds = append(fs.conds, ifDrop)
		}
	case ".elif":
		if n == 0 {
			p.alertTight(fs, "lone '.elif' with no matching '.if'.")
			fs.fatal++
			return true
		}
		top := &fs.conds[n-1]
		if top.isElse() {
			p.alertTight(fs, "'.elif' after '.else' is not permitted.")
			fs.fatal++
			return true
		}
		if top.decided() {
			*top = elifSkip
			return true
		}
		v, msg, at := evalCondition(tail, &p.cond)
		if msg != "" {
			text, col := sanitizeForPrinting([]byte(tail), at, 74)
			p.alertTight(fs, "%s in '.elif' at position %d:\n  .elif %s\n  %*s", msg, at+1, text, col+7, "^")
			fs.fatal++
			*top = elifSkip
			return true
		}
		if v {
			*top = elifTake
		} else {
			*top = elifDrop
		}
	case ".else":
		if arg(1) != "" {
			p.alertTight(fs, "Unexpected argument '%s' for '%s'.", arg(1), args[0])
			fs.fatal++
		}
		if n == 0 {
			p.alertTight(fs, "lone '.else' with no matching '.if'.")
			fs.fatal++
			return true
		}
		top := &fs.conds[n-1]
		if top.isElse() {
			p.alertTight(fs, "'.else' after '.else' is not permitted.")
			fs.fatal++
			return true
		}
		if top.decided() {
			*top = elseDrop
		} else {
			*top = elseTake
		}
	case ".endif":
		if arg(1) != "" {
			p.alertTight(fs, "Unexpected argument '%s' for '%s'.", arg(1), args[0])
			fs.fatal++
		}
		if n == 0 {
			p.alertTight(fs, "lone '.endif' with no matching '.if'.")
			fs.fatal++
			return true
		}
		fs.conds = fs.conds[:n-1]
	default:
		return false
	}
	return true
}

// brokenCondDirective keeps the nesting balanced when a .if, .elif, .else
// or .endif line could not be tokenized: the block it opens or continues is
// dropped. HAProxy drops the line itself, so that its .else and .endif are
// then reported as lone; goha reports the line's one real error instead.
func (p *parser) brokenCondDirective(fs *fileState, line []byte) {
	word := line
	for i, c := range line {
		if isSpace(c) || c == '#' {
			word = line[:i]
			break
		}
	}
	n := len(fs.conds)
	switch string(word) {
	case ".if":
		fs.conds = append(fs.conds, ifSkip)
	case ".elif":
		if n > 0 && !fs.conds[n-1].isElse() {
			fs.conds[n-1] = elifSkip
		}
	case ".else":
		if n > 0 && !fs.conds[n-1].isElse() {
			fs.conds[n-1] = elseDrop
		}
	case ".endif":
		if n > 0 {
			fs.conds = fs.conds[:n-1]
		}
	}
}

// directive handles the message directives and unknown '.' words.
func (p *parser) directive(fs *fileState, args []string) {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	var sev diag.Severity
	switch args[0] {
	case ".alert":
		sev = diag.Alert
	case ".warning":
		sev = diag.Warning
	case ".notice":
		sev = diag.Notice
	case ".diag":
		sev = diag.Diagnostic
	default:
		p.alertTight(fs, "unknown directive '%s'.", args[0])
		fs.fatal++
		return
	}
	if arg(2) != "" {
		p.alertTight(fs, "Unexpected argument '%s' for '%s'. Use quotes if the message should contain spaces.", arg(2), args[0])
		return
	}
	p.report(fs, sev, true, "'%s'.", arg(1))
	if sev == diag.Alert {
		p.stop = true
	}
}

// scope checks a "[name]" line. HAProxy records the name for a few
// keywords that goha does not implement, so it is only validated.
func (p *parser) scope(fs *fileState, line []byte) {
	end := bytes.IndexByte(line[1:], ']')
	if end <= 0 {
		p.report(fs, diag.Alert, false, "empty scope name is forbidden.")
		fs.fatal++
		return
	}
	name := line[1 : 1+end]
	if c, bad := invalidChar(name); bad {
		p.report(fs, diag.Alert, false, "character '%c' is not permitted in a scope name.", c)
		fs.fatal++
		return
	}
	rest := line[end+2:]
	i := 0
	for i < len(rest) && isSpace(rest[i]) {
		i++
	}
	if i < len(rest) && rest[i] != '#' {
		p.report(fs, diag.Alert, false, "character '%c' is not permitted after scope declaration.", rest[i])
		fs.fatal++
	}
}

// invalidChar returns the first character HAProxy does not allow in an
// object name (letters, digits, '.', ':', '_' and '-' are allowed).
func invalidChar(name []byte) (byte, bool) {
	for _, c := range name {
		if !isAlnum(c) && c != '.' && c != ':' && c != '_' && c != '-' {
			return c, true
		}
	}
	return 0, false
}

// openSection starts a section from its header words and checks the
// header's shape as HAProxy's section parsers do.
func (p *parser) openSection(fs *fileState, words []string) {
	arg := func(i int) string {
		if i < len(words) {
			return words[i]
		}
		return ""
	}
	kind := words[0]
	s := Section{Kind: kind, Pos: p.pos(fs)}
	switch kind {
	case "global":
		if arg(1) != "" {
			p.report(fs, diag.Alert, false, "'%s' cannot handle unexpected argument '%s'.", kind, arg(1))
		}
		s.Args = words[1:]
	case "defaults":
		// defaults [<name>] [from <defaults>]; "defaults from x" has no name.
		at := 2
		if arg(1) == "from" && arg(2) != "" && arg(3) == "" {
			at = 1
		} else {
			s.Name = arg(1)
		}
		if arg(at) == "from" {
			s.From = arg(at + 1)
			if s.From == "" {
				p.report(fs, diag.Alert, false, "defaults section '' not found for defaults '%s'.", s.Name)
			}
			at += 2
		}
		if at < len(words) {
			s.Args = words[at:]
		}
	case "frontend", "backend", "listen":
		// <kind> <name> [from <defaults>]
		s.Name = arg(1)
		if arg(2) == "from" && arg(3) != "" {
			s.From = arg(3)
		}
		// HAProxy points a frontend or listen section with more words to
		// 'bind'; for a backend it ignores them silently, goha names them.
		hasFE := kind != "backend"
		switch {
		case arg(2) != "" && s.From == "":
			if hasFE {
				p.report(fs, diag.Alert, false, "please use the 'bind' keyword for listening addresses.")
			} else {
				p.report(fs, diag.Alert, false, "'%s' cannot handle unexpected argument '%s'.", kind, arg(2))
			}
		case arg(4) != "":
			p.report(fs, diag.Alert, false, "'%s' cannot handle unexpected argument '%s'.", kind, arg(4))
			if hasFE {
				p.report(fs, diag.Alert, false, "please use the 'bind' keyword for listening addresses.")
			}
		}
		switch {
		case s.From != "" && len(words) > 4:
			s.Args = words[4:]
		case s.From == "" && len(words) > 2:
			s.Args = words[2:]
		}
	default:
		s.Name = arg(1)
		if len(words) > 2 {
			s.Args = words[2:]
		}
	}
	if s.Args != nil && len(s.Args) == 0 {
		s.Args = nil
	}
	p.sections = append(p.sections, s)
	fs.cur = len(p.sections) - 1
	fs.secName, fs.secSet = kind, true
	if arg(1) != "" {
		fs.secName = arg(1)
	}
	// HAProxy's diagnostic mode (-dD) points out a global section that
	// follows another kind of section in the same file.
	if kind == "global" {
		if fs.nonGlobal {
			p.report(fs, diag.Diagnostic, false, "global section detected after a non-global one, the prevalence of their statements is unspecified")
		}
	} else {
		fs.nonGlobal = true
	}
}
