package sample

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"

	"goha/core/http1"
)

// ACLs and conditions, for use_backend and http-request/response rules.
// They are compiled once after parsing; evaluation reads the parsed head in
// place and allocates nothing.

type matchKind int

const (
	matchStr matchKind = iota // exact
	matchBeg
	matchEnd
	matchSub
	matchReg
	matchFound
	matchIP
)

// fetch says which part of the request a criterion reads.
type fetchKind int

const (
	fetchPath fetchKind = iota
	fetchURL
	fetchHdr
	fetchMethod
	fetchSrc
	fetchAlways
	fetchNever
	fetchStatus
)

// Term is one compiled criterion: a fetch, a match and its patterns.
type Term struct {
	fetch    fetchKind
	hdr      string
	match    matchKind
	nocase   bool
	pats     [][]byte
	res      []*regexp.Regexp
	prefixes []netip.Prefix
	codes    []int
}

// condTerm is a possibly negated reference to a named ACL (a list of terms
// ORed together) or to an anonymous one.
type condTerm struct {
	neg   bool
	terms []*Term
}

// Cond is a compiled `if|unless` condition: OR of ANDs of terms.
type Cond struct {
	unless bool
	ors    [][]condTerm
}

// Request is what conditions and expressions look at: the message head
// being handled (a request, or a response with its status) and the client.
type Request struct {
	Head   *http1.Head
	Client net.Addr
	Status int
}

var criteria = map[string]struct {
	fetch fetchKind
	match matchKind
}{
	"path": {fetchPath, matchStr}, "path_beg": {fetchPath, matchBeg}, "path_end": {fetchPath, matchEnd},
	"path_sub": {fetchPath, matchSub}, "path_reg": {fetchPath, matchReg},
	"url": {fetchURL, matchStr}, "url_beg": {fetchURL, matchBeg}, "url_end": {fetchURL, matchEnd},
	"url_sub": {fetchURL, matchSub}, "url_reg": {fetchURL, matchReg},
	"method": {fetchMethod, matchStr}, "src": {fetchSrc, matchIP},
	"always_true": {fetchAlways, matchFound}, "always_false": {fetchNever, matchFound},
	"status": {fetchStatus, matchStr},
}

// CompileACL compiles `<criterion> [flags] [values...]`.
func CompileACL(words []string) (*Term, error) {
	if len(words) == 0 {
		return nil, fmt.Errorf("missing fetch method")
	}
	crit := words[0]
	t := &Term{}
	if name, arg, ok := strings.Cut(crit, "("); ok && strings.HasSuffix(arg, ")") {
		arg = strings.TrimSuffix(arg, ")")
		switch name {
		case "hdr", "req.hdr", "hdr_beg", "hdr_end", "hdr_sub", "hdr_reg", "hdr_dom", "hdr_cnt":
			t.fetch, t.hdr = fetchHdr, strings.ToLower(arg)
			switch name {
			case "hdr_beg":
				t.match = matchBeg
			case "hdr_end":
				t.match = matchEnd
			case "hdr_sub":
				t.match = matchSub
			case "hdr_reg":
				t.match = matchReg
			default:
				t.match = matchStr
			}
		default:
			return nil, fmt.Errorf("unknown fetch method '%s' in ACL expression '%s'.", name, crit)
		}
	} else if c, ok := criteria[crit]; ok {
		t.fetch, t.match = c.fetch, c.match
	} else {
		return nil, fmt.Errorf("unknown fetch method '%s' in ACL expression '%s'.", crit, crit)
	}
	vals := words[1:]
	for len(vals) > 0 && strings.HasPrefix(vals[0], "-") {
		switch vals[0] {
		case "-i":
			t.nocase = true
		case "-m":
			if len(vals) < 2 {
				return nil, fmt.Errorf("missing matching method after '-m'")
			}
			switch vals[1] {
			case "str":
				t.match = matchStr
			case "beg":
				t.match = matchBeg
			case "end":
				t.match = matchEnd
			case "sub":
				t.match = matchSub
			case "reg":
				t.match = matchReg
			case "found":
				t.match = matchFound
			default:
				return nil, fmt.Errorf("unknown matching method '%s'", vals[1])
			}
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
	for _, v := range vals {
		switch t.match {
		case matchReg:
			expr := v
			if t.nocase {
				expr = "(?i)" + v
			}
			re, err := regexp.Compile(expr)
			if err != nil {
				return nil, fmt.Errorf("regex '%s' is invalid", v)
			}
			t.res = append(t.res, re)
		case matchIP:
			p, err := ParseNetwork(v)
			if err != nil {
				return nil, fmt.Errorf("'%s' is not a valid IPv4 or IPv6 address", v)
			}
			t.prefixes = append(t.prefixes, p)
		default:
			if t.fetch == fetchStatus {
				var code int
				fmt.Sscanf(v, "%d", &code)
				t.codes = append(t.codes, code)
				continue
			}
			t.pats = append(t.pats, []byte(v))
		}
	}
	if t.fetch == fetchHdr && len(vals) == 0 && t.match == matchStr {
		t.match = matchFound
	}
	return t, nil
}

func (t *Term) Eval(v *Request) bool {
	var s []byte
	switch t.fetch {
	case fetchAlways:
		return true
	case fetchNever:
		return false
	case fetchPath, fetchURL, fetchMethod, fetchHdr:
		if v.Head == nil {
			// A tcp stream has no HTTP message: such a criterion never
			// matches there, as in HAProxy.
			return false
		}
	}
	switch t.fetch {
	case fetchPath:
		s = v.Head.Path()
	case fetchURL:
		s = v.Head.URI()
	case fetchMethod:
		s = v.Head.MethodBytes()
	case fetchStatus:
		for _, c := range t.codes {
			if c == v.Status {
				return true
			}
		}
		return false
	case fetchSrc:
		ta, ok := v.Client.(*net.TCPAddr)
		if !ok {
			return false
		}
		a, _ := netip.AddrFromSlice(ta.IP)
		a = a.Unmap()
		for _, p := range t.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	case fetchHdr:
		for i := v.Head.Index(t.hdr, 0); i >= 0; i = v.Head.Index(t.hdr, i+1) {
			if t.match == matchFound || t.matchOne(v.Head.Value(i)) {
				return true
			}
		}
		return false
	}
	if t.match == matchFound {
		return true
	}
	return t.matchOne(s)
}

func (t *Term) matchOne(s []byte) bool {
	if t.match == matchReg {
		for _, re := range t.res {
			if re.Match(s) {
				return true
			}
		}
		return false
	}
	for _, p := range t.pats {
		var ok bool
		switch t.match {
		case matchStr:
			ok = len(s) == len(p) && (bytes.Equal(s, p) || t.nocase && bytes.EqualFold(s, p))
		case matchBeg:
			ok = len(s) >= len(p) && (bytes.Equal(s[:len(p)], p) || t.nocase && bytes.EqualFold(s[:len(p)], p))
		case matchEnd:
			ok = len(s) >= len(p) && (bytes.Equal(s[len(s)-len(p):], p) || t.nocase && bytes.EqualFold(s[len(s)-len(p):], p))
		case matchSub:
			if t.nocase {
				ok = bytes.Contains(bytes.ToLower(s), bytes.ToLower(p))
			} else {
				ok = bytes.Contains(s, p)
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// CompileCond compiles the words after a rule, starting with if/unless.
// named holds the proxy's named ACLs.
func CompileCond(words []string, named map[string][]*Term) (*Cond, error) {
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
			t, err := CompileACL(words[i+1 : j])
			if err != nil {
				return nil, err
			}
			and = append(and, condTerm{neg: neg, terms: []*Term{t}})
			i = j
			continue
		}
		terms, ok := named[w]
		if !ok {
			if c, ok2 := criteria[w]; ok2 && (c.fetch == fetchAlways || c.fetch == fetchNever) {
				t, _ := CompileACL([]string{w})
				terms = []*Term{t}
			} else if w == "TRUE" || w == "FALSE" {
				k := map[string]string{"TRUE": "always_true", "FALSE": "always_false"}[w]
				t, _ := CompileACL([]string{k})
				terms = []*Term{t}
			} else {
				return nil, fmt.Errorf("no such ACL : '%s'", w)
			}
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

// ParseNetwork reads an address with an optional /bits mask; an address
// alone is a network of itself.
func ParseNetwork(v string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}
