package sample

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"goha/core/diag"
)

// ACLs and conditions. A criterion is a sample expression, a matching
// method and patterns; it matches when any value of the expression (any
// occurrence of a header) matches any pattern. They are compiled once,
// while the configuration is read; evaluation reads the message in place.

type matchKind uint8

const (
	matchFound matchKind = iota
	matchBool
	matchInt
	matchIP
	matchBin
	matchLen
	matchStr
	matchBeg
	matchEnd
	matchSub
	matchReg
	matchDir
	matchDom
)

var matchNames = map[string]matchKind{
	"found": matchFound, "bool": matchBool, "int": matchInt, "ip": matchIP, "bin": matchBin,
	"len": matchLen, "str": matchStr, "beg": matchBeg, "end": matchEnd, "sub": matchSub,
	"reg": matchReg, "dir": matchDir, "dom": matchDom,
}

// Term is one compiled criterion. Its patterns live in the process's
// MapSet, as HAProxy's pattern references: one per pattern file (-f),
// shared with every other user of the file, and one of the ACL's own, so
// that the runtime commands (add acl, del acl, ...) change what it
// matches.
type Term struct {
	expr   *SampleExpr
	match  matchKind
	nocase bool
	refs   []*matcher
	auth   Userlist // http_auth_group: patterns are groups of this list
}

// condTerm is a possibly negated reference to a named ACL (terms ORed
// together) or to an anonymous one.
type condTerm struct {
	neg   bool
	terms []*Term
}

// Cond is a compiled `if|unless` condition: OR of ANDs of terms.
type Cond struct {
	unless bool
	ors    [][]condTerm
}

// derived are the ACL keywords that name a fetch and a matching method
// at once (path_beg is path -m beg), by suffix.
var derived = []struct {
	suffix string
	match  matchKind
}{
	{"_beg", matchBeg}, {"_end", matchEnd}, {"_sub", matchSub}, {"_reg", matchReg},
	{"_dir", matchDir}, {"_dom", matchDom}, {"_len", matchLen}, {"_ip", matchIP},
	{"_val", matchInt}, {"_found", matchFound},
}

// defaultMatch is the method a criterion without -m uses, from its type.
func defaultMatch(t Type) matchKind {
	switch t {
	case TBool:
		return matchBool
	case TSint:
		return matchInt
	case TIPv4, TIPv6, TAddr:
		return matchIP
	case TBin:
		return matchBin
	}
	return matchStr
}

// CompileACL compiles `<criterion> [flags] [values...]`.
func CompileACL(env *Env, words []string) (*Term, error) {
	if len(words) == 0 {
		return nil, fmt.Errorf("missing fetch method")
	}
	t := &Term{}
	crit := words[0]
	explicit := false
	e, n, err := ParseExpr(env, crit)
	if re, ok := asRef(err); ok {
		re.ACL = true
		return nil, re
	}
	if err != nil || n < len(crit) {
		// A derived keyword: the fetch's name with a method's suffix.
		name, rest, _ := strings.Cut(crit, "(")
		if rest != "" || strings.HasSuffix(crit, "(") {
			rest = "(" + rest
		}
		found := false
		for _, d := range derived {
			base, ok := strings.CutSuffix(name, d.suffix)
			if !ok || fetches[base] == nil {
				continue
			}
			e2, n2, err2 := ParseExpr(env, base+rest)
			if err2 != nil {
				return nil, err2
			}
			if n2 < len(base+rest) {
				return nil, fmt.Errorf("unexpected '%s' after '%s'", (base + rest)[n2:], crit)
			}
			e, t.match, explicit, found = e2, d.match, true, true
			break
		}
		if !found {
			var uf *errUnknownFetch
			if errors.As(err, &uf) {
				return nil, fmt.Errorf("unknown fetch method '%s' in ACL expression '%s'.", uf.name, crit)
			}
			if err == nil {
				err = fmt.Errorf("unexpected '%s' after '%s'", crit[n:], crit[:n])
			}
			return nil, err
		}
	}
	t.expr = e
	if !explicit {
		t.match = defaultMatch(e.Out())
	}
	vals := words[1:]
	ms := env.maps()
	mapFile, loaded := false, false
	uid := -1
	for len(vals) > 0 && strings.HasPrefix(vals[0], "-") {
		switch vals[0] {
		case "-i":
			t.nocase = true
		case "-n":
		case "-m":
			if len(vals) < 2 {
				return nil, fmt.Errorf("missing matching method after '-m'")
			}
			if loaded {
				return nil, fmt.Errorf("'-m' must only be specified before patterns and files in parsing ACL expression")
			}
			m, ok := matchNames[vals[1]]
			if !ok {
				return nil, fmt.Errorf("unknown matching method '%s' for ACL keyword '%s'", vals[1], crit)
			}
			t.match, explicit = m, true
			vals = vals[1:]
		case "-M":
			mapFile = true
		case "-f":
			if len(vals) < 2 {
				return nil, fmt.Errorf("'-f' expects a file name")
			}
			if err := t.checkMethod(crit); err != nil {
				return nil, err
			}
			flag := RefACL
			if mapFile {
				flag |= RefMap
			}
			ref, err := ms.loadRef(env, vals[1], flag, mapFile)
			if err != nil {
				return nil, err
			}
			x, err := ref.attach(t.match, t.nocase, TAny)
			if err != nil {
				return nil, err
			}
			t.refs = append(t.refs, x)
			loaded = true
			vals = vals[1:]
		case "-u":
			if len(vals) < 2 {
				return nil, fmt.Errorf("'-u' expects a unique id")
			}
			n, ok := parseSint([]byte(vals[1]))
			if !ok {
				return nil, fmt.Errorf("the argument of -u must be an integer")
			}
			if ms.idTaken(int(n)) {
				return nil, fmt.Errorf("the id is already used")
			}
			uid = int(n)
			vals = vals[1:]
		case "--":
			vals = vals[1:]
			goto values
		default:
			return nil, fmt.Errorf("'%s' : unknown flag", vals[0])
		}
		vals = vals[1:]
	}
values:
	if err := t.checkMethod(crit); err != nil {
		return nil, err
	}
	kw, _, _ := strings.Cut(crit, "(")
	kw, _, _ = strings.Cut(kw, ",")
	own, err := ms.newACLRef(env, kw, uid).attach(t.match, t.nocase, TAny)
	if err != nil {
		return nil, err
	}
	t.refs = append(t.refs, own)
	if t.match == matchFound || t.match == matchBool {
		if len(vals) > 0 {
			return nil, fmt.Errorf("'%s' : this matching method takes no pattern", vals[0])
		}
		return t, nil
	}
	op := ""
	for _, v := range vals {
		if t.match == matchInt || t.match == matchLen {
			// An operator applies to the values after it: "gt 3" is "4:".
			switch v {
			case "eq", "ge", "gt", "le", "lt":
				op = v
				continue
			}
			if op != "" && op != "eq" && !strings.ContainsAny(v, ":-") {
				n, ok := parseSint([]byte(v))
				if !ok {
					return nil, fmt.Errorf("'%s' is neither a number nor a supported operator", v)
				}
				v = opRange(op, n)
			}
		}
		if err := own.m.Add(own.m.Current(), v, "", false); err != nil {
			return nil, err
		}
	}
	if err := t.authTerm(explicit, vals); err != nil {
		return nil, err
	}
	return t, nil
}

// checkMethod says whether the criterion's type can be read by its method.
func (t *Term) checkMethod(crit string) error {
	if !castable[t.expr.Out()][matchInput(t.match)] {
		return fmt.Errorf("ACL keyword '%s' (type %s) cannot match with method '%s'", crit, t.expr.Out(), matchName(t.match))
	}
	return nil
}

func matchName(m matchKind) string {
	for k, v := range matchNames {
		if v == m {
			return k
		}
	}
	return "?"
}

// matchInput is the type a matching method reads.
func matchInput(m matchKind) Type {
	switch m {
	case matchFound:
		return TAny
	case matchBool:
		return TBool
	case matchInt:
		return TSint
	case matchIP:
		return TAddr
	case matchBin:
		return TBin
	}
	return TStr
}

// opRange writes an operator and a value as the range pattern HAProxy
// stores for them.
func opRange(op string, n int64) string {
	switch op {
	case "gt":
		return strconv.FormatInt(n+1, 10) + ":"
	case "ge":
		return strconv.FormatInt(n, 10) + ":"
	case "lt":
		return ":" + strconv.FormatInt(n-1, 10)
	}
	return ":" + strconv.FormatInt(n, 10)
}

// Eval says whether the criterion matches.
func (t *Term) Eval(r *Request) bool {
	r.reset()
	return t.eval(r)
}

func (t *Term) eval(r *Request) bool {
	return t.expr.each(r, func(s *Sample) bool { return t.matches(r, s) })
}

func (t *Term) matches(r *Request, s *Sample) bool {
	if !cast(r, s, matchInput(t.match)) {
		return false
	}
	switch t.match {
	case matchFound:
		return true
	case matchBool:
		return s.I != 0
	}
	if t.auth != nil {
		return t.matchGroups(s)
	}
	for _, x := range t.refs {
		x.m.mu.RLock()
		e, _ := x.lookup(r, s, nil)
		x.m.mu.RUnlock()
		if e != nil {
			return true
		}
	}
	return false
}

func lowerInto(r *Request, b []byte) []byte {
	out := r.alloc(len(b))[:len(b)]
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// matchWord says whether p appears in b between delimiters (or the ends),
// its own leading and trailing delimiters ignored: HAProxy's dir and dom
// methods.
func matchWord(b, p []byte, delims string) bool {
	isDelim := func(c byte) bool { return strings.IndexByte(delims, c) >= 0 }
	for len(p) > 0 && isDelim(p[0]) {
		p = p[1:]
	}
	for len(p) > 0 && isDelim(p[len(p)-1]) {
		p = p[:len(p)-1]
	}
	if len(p) == 0 {
		return false
	}
	mayMatch := true
	for i := 0; i < len(b); i++ {
		if isDelim(b[i]) {
			mayMatch = true
			continue
		}
		if !mayMatch {
			continue
		}
		if len(b)-i < len(p) {
			return false
		}
		if bytes.Equal(b[i:i+len(p)], p) && (i+len(p) == len(b) || isDelim(b[i+len(p)])) {
			return true
		}
		mayMatch = false
	}
	return false
}

// predefined are HAProxy's predefined ACLs.
var predefined = map[string][]string{
	"TRUE":           {"always_true"},
	"FALSE":          {"always_false"},
	"HTTP":           {"req.proto_http"},
	"HTTP_1.0":       {"req.ver", "1.0"},
	"HTTP_1.1":       {"req.ver", "1.1"},
	"HTTP_CONTENT":   {"req.hdr_val(content-length)", "gt", "0"},
	"HTTP_URL_ABS":   {"url_reg", "^[^/:]*://"},
	"HTTP_URL_SLASH": {"url_beg", "/"},
	"HTTP_URL_STAR":  {"url", "*"},
	"LOCALHOST":      {"src", "127.0.0.1/8", "::1"},
	"METH_CONNECT":   {"method", "CONNECT"},
	"METH_DELETE":    {"method", "DELETE"},
	"METH_GET":       {"method", "GET", "HEAD"},
	"METH_HEAD":      {"method", "HEAD"},
	"METH_OPTIONS":   {"method", "OPTIONS"},
	"METH_POST":      {"method", "POST"},
	"METH_PUT":       {"method", "PUT"},
	"METH_TRACE":     {"method", "TRACE"},
	"RDP_COOKIE":     {"req.rdp_cookie_cnt", "gt", "0"},
	"REQ_CONTENT":    {"req.len", "gt", "0"},
	"WAIT_END":       {"wait_end"},
}

// CompileCond compiles the words after a rule, starting with if/unless.
// named holds the proxy's named ACLs.
func CompileCond(env *Env, words []string, named map[string][]*Term) (*Cond, error) {
	if len(words) == 0 {
		return nil, nil
	}
	c := &Cond{}
	switch words[0] {
	case "if":
	case "unless":
		c.unless = true
	default:
		return nil, fmt.Errorf("expects 'if' or 'unless' followed by a condition but found '%s'", words[0])
	}
	words = words[1:]
	if len(words) == 0 {
		return nil, fmt.Errorf("missing condition after '%s'", map[bool]string{false: "if", true: "unless"}[c.unless])
	}
	var and []condTerm
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "||" || w == "or":
			c.ors = append(c.ors, and)
			and = nil
			continue
		case w == "&&" || w == "and":
			continue
		}
		neg := false
		if w == "!" {
			neg = true
			i++
			if i >= len(words) {
				return nil, fmt.Errorf("missing ACL after '!'")
			}
			w = words[i]
		} else if strings.HasPrefix(w, "!") {
			neg, w = true, w[1:]
		}
		if w == "{" {
			j := i + 1
			for j < len(words) && words[j] != "}" {
				j++
			}
			if j >= len(words) {
				return nil, fmt.Errorf("missing closing '}' in condition")
			}
			t, err := CompileACL(env, words[i+1:j])
			if err != nil {
				return nil, err
			}
			and = append(and, condTerm{neg: neg, terms: []*Term{t}})
			i = j
			continue
		}
		terms, ok := named[w]
		if !ok {
			def, ok2 := predefined[w]
			if !ok2 {
				return nil, fmt.Errorf("no such ACL : '%s'", w)
			}
			t, err := CompileACL(env, def)
			if err != nil {
				return nil, fmt.Errorf("predefined ACL '%s' : %v", w, err)
			}
			terms = []*Term{t}
		}
		and = append(and, condTerm{neg: neg, terms: terms})
	}
	c.ors = append(c.ors, and)
	return c, nil
}

// Eval evaluates the condition; a nil condition is true.
func (c *Cond) Eval(v *Request) bool {
	if c == nil {
		return true
	}
	res := false
	for _, and := range c.ors {
		ok := true
		for _, ct := range and {
			m := false
			for _, t := range ct.terms {
				if t.Eval(v) {
					m = true
					break
				}
			}
			if m == ct.neg {
				ok = false
				break
			}
		}
		if ok {
			res = true
			break
		}
	}
	return res != c.unless
}

// ParseNetwork reads an address with an optional /bits mask (or dotted
// mask); an address alone is a network of itself.
func ParseNetwork(v string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Masked(), nil
	}
	if a, m, ok := strings.Cut(v, "/"); ok {
		ip, err := netip.ParseAddr(a)
		mask, err2 := netip.ParseAddr(m)
		if err == nil && err2 == nil && ip.Is4() && mask.Is4() {
			mb := mask.As4()
			bits := 0
			for _, x := range mb {
				for x&0x80 != 0 {
					bits++
					x <<= 1
				}
			}
			return netip.PrefixFrom(ip, bits).Masked(), nil
		}
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func suggest(word string, candidates []string) string {
	return diag.BestMatch(word, candidates)
}
