package sample

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// A matcher is HAProxy's pattern expression: a reference's entries
// indexed for one match method, case flag and value type. It indexes
// entries of every generation and looks up those of the current one.
// Everything in it is guarded by its map's mu: lookups hold it for
// reading.
//
// Where HAProxy keeps a tree the matcher keeps the same precedence: str
// finds the first entry with the key (a hash), beg the longest key that
// starts the value (a hash per key length present), ip the longest prefix
// (a hash per prefix length). Where HAProxy scans a list in order (end,
// dir, dom, beg and str with -i) the first entry in file order that
// matches wins; end, dir and dom find it through hashes of the value's
// candidate pieces, sub, reg, regm, int and len scan their list.
type matcher struct {
	m      *Map
	kind   matchKind
	nocase bool
	out    Type // the value's type for a map converter; TAny for an ACL
	slot   int  // where entries keep their value parsed for out

	keys    map[string][]*MapEntry // str, bin, beg, end, dir, dom: by key
	lens    []int                  // beg, end: key lengths present, longest first
	lenCnt  map[int]int
	maxWord int // dir, dom: the longest key
	nets    [2]map[netip.Prefix][]*MapEntry
	bits    [2][]int // prefix lengths present, longest first
	bitCnt  [2]map[int]int
	list    []*listPat // sub, reg, regm, int, len, non-contiguous ip masks
}

const matchRegm = matchDom + 1

// listPat is an entry compiled for a list.
type listPat struct {
	e          *MapEntry
	re         *regexp.Regexp
	lo, hi     int64
	loOK, hiOK bool
	b          []byte
	addr, mask uint32
}

// parsedPat is what parsing an entry's key (and value) gives, before it
// is indexed.
type parsedPat struct {
	key  string // the index key
	pfx  netip.Prefix
	lp   *listPat
	val  smpVal
	skip bool // nothing to index (a dir/dom key of delimiters only)
}

func newMatcher(m *Map, kind matchKind, nocase bool, out Type, slot int) *matcher {
	return &matcher{m: m, kind: kind, nocase: nocase, out: out, slot: slot}
}

func matchMethodName(k matchKind) string {
	if k == matchRegm {
		return "regm"
	}
	return matchName(k)
}

// parse compiles an entry for this matcher, with HAProxy's errors.
func (x *matcher) parse(e *MapEntry) (parsedPat, error) {
	var p parsedPat
	if x.out != TAny {
		v, ok := smpVal{}, true
		if e.HasV {
			v, ok = parseMapValue(x.out, e.Value)
		}
		if !ok {
			return p, fmt.Errorf("unable to parse '%s'", e.Value)
		}
		p.val = v
	}
	k := e.Key
	switch x.kind {
	case matchFound, matchBool:
		p.skip = true
	case matchInt, matchLen:
		lp, err := parseIntPattern(k)
		if err != nil {
			return p, err
		}
		p.lp = lp
	case matchIP:
		pfx, mask, contiguous, err := parseIPPattern(k)
		if err != nil {
			return p, err
		}
		if contiguous {
			p.pfx = pfx
		} else {
			a := pfx.Addr().As4()
			p.lp = &listPat{addr: binary.BigEndian.Uint32(a[:]), mask: mask}
		}
	case matchBin:
		b, err := hex.DecodeString(k)
		if err != nil || len(k)%2 != 0 {
			return p, fmt.Errorf("'%s' is not a valid hexadecimal string", k)
		}
		p.key = string(b)
	case matchReg, matchRegm:
		expr := k
		if x.nocase {
			expr = "(?i)" + k
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return p, fmt.Errorf("regex '%s' is invalid", k)
		}
		p.lp = &listPat{re: re}
	case matchSub:
		p.lp = &listPat{b: []byte(x.fold(k))}
	case matchDir, matchDom:
		w := strings.Trim(x.fold(k), x.delims())
		p.key, p.skip = w, w == ""
	default: // str, beg, end
		p.key = x.fold(k)
	}
	return p, nil
}

func (x *matcher) fold(s string) string {
	if x.nocase {
		return strings.ToLower(s)
	}
	return s
}

func (x *matcher) delims() string {
	if x.kind == matchDir {
		return "/?"
	}
	return "/?.:"
}

// insert indexes a parsed entry.
func (x *matcher) insert(e *MapEntry, p parsedPat) {
	if x.out != TAny {
		for len(e.vals) <= x.slot {
			e.vals = append(e.vals, smpVal{})
		}
		e.vals[x.slot] = p.val
	}
	switch {
	case p.skip:
	case p.lp != nil:
		p.lp.e = e
		x.list = append(x.list, p.lp)
	case x.kind == matchIP:
		i := ipFam(p.pfx.Addr())
		if x.nets[i] == nil {
			x.nets[i], x.bitCnt[i] = map[netip.Prefix][]*MapEntry{}, map[int]int{}
		}
		x.nets[i][p.pfx] = append(x.nets[i][p.pfx], e)
		x.bits[i] = addLen(x.bits[i], x.bitCnt[i], p.pfx.Bits())
	default:
		if x.keys == nil {
			x.keys, x.lenCnt = map[string][]*MapEntry{}, map[int]int{}
		}
		x.keys[p.key] = append(x.keys[p.key], e)
		if x.kind == matchBeg || x.kind == matchEnd {
			x.lens = addLen(x.lens, x.lenCnt, len(p.key))
		}
		x.maxWord = max(x.maxWord, len(p.key))
	}
}

func ipFam(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

// addLen counts one more key of length n, keeping lens sorted longest
// first.
func addLen(lens []int, cnt map[int]int, n int) []int {
	cnt[n]++
	if cnt[n] == 1 {
		i, _ := slices.BinarySearchFunc(lens, n, func(a, b int) int { return b - a })
		lens = slices.Insert(lens, i, n)
	}
	return lens
}

func dropLen(lens []int, cnt map[int]int, n int) []int {
	cnt[n]--
	if cnt[n] == 0 {
		delete(cnt, n)
		if i := slices.Index(lens, n); i >= 0 {
			lens = slices.Delete(lens, i, i+1)
		}
	}
	return lens
}

// remove drops an entry from the indexes.
func (x *matcher) remove(e *MapEntry) {
	if i := slices.IndexFunc(x.list, func(p *listPat) bool { return p.e == e }); i >= 0 {
		x.list = slices.Delete(x.list, i, i+1)
		return
	}
	p, err := x.parse(&MapEntry{Key: e.Key})
	if err != nil || p.skip {
		return
	}
	if x.kind == matchIP {
		i := ipFam(p.pfx.Addr())
		if _, ok := dropEntry(x.nets[i], p.pfx, e); ok {
			x.bits[i] = dropLen(x.bits[i], x.bitCnt[i], p.pfx.Bits())
		}
		return
	}
	if _, ok := dropEntry(x.keys, p.key, e); ok && (x.kind == matchBeg || x.kind == matchEnd) {
		x.lens = dropLen(x.lens, x.lenCnt, len(p.key))
	}
}

func dropEntry[K comparable](m map[K][]*MapEntry, k K, e *MapEntry) ([]*MapEntry, bool) {
	l := m[k]
	i := slices.Index(l, e)
	if i < 0 {
		return l, false
	}
	l = slices.Delete(l, i, i+1)
	if len(l) == 0 {
		delete(m, k)
	} else {
		m[k] = l
	}
	return l, true
}

// current returns the first entry of l in the map's current generation.
func (x *matcher) current(l []*MapEntry) *MapEntry {
	for _, e := range l {
		if e.gen == x.m.curr {
			return e
		}
	}
	return nil
}

// earlier returns whichever of a and b comes first in the map.
func earlier(a, b *MapEntry) *MapEntry {
	if a == nil || (b != nil && b.seq < a.seq) {
		return b
	}
	return a
}

// lookup finds the entry s matches, s already cast to what the method
// reads; tree says it was found through an index HAProxy keeps as a tree.
// sub, for regm, receives the submatch positions. The caller holds the
// map's read lock.
func (x *matcher) lookup(r *Request, s *Sample, sub *[]int) (e *MapEntry, tree bool) {
	switch x.kind {
	case matchIP:
		return x.lookupIP(s.IP)
	case matchInt, matchLen:
		n := s.I
		if x.kind == matchLen {
			n = int64(len(s.B))
		}
		for _, p := range x.list {
			if p.e.gen == x.m.curr && (!p.loOK || p.lo <= n) && (!p.hiOK || n <= p.hi) {
				return p.e, false
			}
		}
		return nil, false
	case matchReg, matchRegm:
		for _, p := range x.list {
			if p.e.gen != x.m.curr {
				continue
			}
			if x.kind == matchRegm {
				if m := p.re.FindSubmatchIndex(s.B); m != nil {
					if sub != nil {
						*sub = m
					}
					return p.e, false
				}
			} else if p.re.Match(s.B) {
				return p.e, false
			}
		}
		return nil, false
	}
	b := s.B
	if x.nocase {
		b = lowerInto(r, b)
	}
	switch x.kind {
	case matchStr, matchBin:
		return x.current(x.keys[string(b)]), !x.nocase && x.kind == matchStr
	case matchBeg:
		var best *MapEntry
		for _, n := range x.lens {
			if n > len(b) {
				continue
			}
			if c := x.current(x.keys[string(b[:n])]); c != nil {
				if !x.nocase {
					return c, true // the longest, as HAProxy's prefix tree
				}
				best = earlier(best, c)
			}
		}
		return best, false
	case matchEnd:
		var best *MapEntry
		for _, n := range x.lens {
			if n <= len(b) {
				best = earlier(best, x.current(x.keys[string(b[len(b)-n:])]))
			}
		}
		return best, false
	case matchSub:
		for _, p := range x.list {
			if p.e.gen == x.m.curr && bytes.Contains(b, p.b) {
				return p.e, false
			}
		}
		return nil, false
	case matchDir, matchDom:
		return x.lookupWord(b), false
	}
	return nil, false
}

// lookupWord finds the earliest key that appears in b between delimiters
// (or its ends), as HAProxy's dir and dom methods: every piece that starts
// a word and ends one is a candidate.
func (x *matcher) lookupWord(b []byte) *MapEntry {
	d := x.delims()
	isDelim := func(c byte) bool { return strings.IndexByte(d, c) >= 0 }
	var best *MapEntry
	for i := 0; i < len(b); i++ {
		if isDelim(b[i]) || (i > 0 && !isDelim(b[i-1])) {
			continue
		}
		for j := i + 1; j <= len(b) && j-i <= x.maxWord; j++ {
			if j < len(b) && !isDelim(b[j]) {
				continue
			}
			best = earlier(best, x.current(x.keys[string(b[i:j])]))
		}
	}
	return best
}

// lookupIP finds the longest prefix holding a, in its family's index
// then, as HAProxy, in the other one (IPv4 as ::ffff:a.b.c.d; IPv6 that
// carries an IPv4 address: ::ffff:a.b.c.d, ::a.b.c.d, 2002:AABB:CCDD::),
// then the IPv4 networks of non-contiguous masks, in order.
func (x *matcher) lookupIP(a netip.Addr) (*MapEntry, bool) {
	var v4 netip.Addr
	if a.Is4() {
		v4 = a
		if e := x.longest(0, a); e != nil {
			return e, true
		}
		if e := x.longest(1, netip.AddrFrom16(a.As16())); e != nil {
			return e, true
		}
	} else {
		if e := x.longest(1, a); e != nil {
			return e, true
		}
		b := a.As16()
		hi := binary.BigEndian.Uint64(b[:8])
		mid := binary.BigEndian.Uint32(b[8:12])
		switch {
		case hi == 0 && (mid == 0 || mid == 0xffff):
			v4 = netip.AddrFrom4([4]byte(b[12:16]))
		case b[0] == 0x20 && b[1] == 0x02:
			v4 = netip.AddrFrom4([4]byte(b[2:6]))
		}
		if v4.IsValid() {
			if e := x.longest(0, v4); e != nil {
				return e, true
			}
		}
	}
	if !v4.IsValid() {
		return nil, false
	}
	a4 := v4.As4()
	n := binary.BigEndian.Uint32(a4[:])
	for _, p := range x.list {
		if p.e.gen == x.m.curr && (n^p.addr)&p.mask == 0 {
			return p.e, false
		}
	}
	return nil, false
}

func (x *matcher) longest(fam int, a netip.Addr) *MapEntry {
	for _, n := range x.bits[fam] {
		p, _ := a.Prefix(n)
		if e := x.current(x.nets[fam][p]); e != nil {
			return e
		}
	}
	return nil
}

// parseIntPattern reads an integer pattern: "N", "N:M", ":M", "N:" (or
// with '-' for ':'), as HAProxy's pat_parse_int.
func parseIntPattern(t string) (*listPat, error) {
	p := &listPat{}
	if t == "" {
		return nil, fmt.Errorf("'%s' is not a valid number range", t)
	}
	sep := strings.IndexAny(t, ":-")
	if sep < 0 {
		n, ok := parseSint([]byte(t))
		if !ok {
			return nil, fmt.Errorf("'%s' is not a number", t)
		}
		p.lo, p.hi, p.loOK, p.hiOK = n, n, true, true
		return p, nil
	}
	bad := fmt.Errorf("'%s' is not a valid number range", t)
	a, b := t[:sep], t[sep+1:]
	if a != "" {
		n, ok := parseSint([]byte(a))
		if !ok {
			return nil, bad
		}
		p.lo, p.loOK = n, true
	}
	if b != "" {
		n, ok := parseSint([]byte(b))
		if !ok {
			return nil, bad
		}
		p.hi, p.hiOK = n, true
	}
	if a == "" && b == "" || p.loOK && p.hiOK && p.lo > p.hi {
		return nil, bad
	}
	return p, nil
}

// parseIPPattern reads "addr[/mask]": an IPv4 address with a mask in bits
// or dotted form, or an IPv6 address with a mask in bits. contiguous is
// false for a dotted IPv4 mask with holes, which HAProxy keeps in a list.
func parseIPPattern(t string) (pfx netip.Prefix, mask uint32, contiguous bool, err error) {
	bad := fmt.Errorf("'%s' is not a valid IPv4 or IPv6 address", t)
	as, ms, hasMask := strings.Cut(t, "/")
	a, e := netip.ParseAddr(as)
	if e != nil || a.Zone() != "" {
		return pfx, 0, false, bad
	}
	bits := a.BitLen()
	if hasMask {
		if m, e := netip.ParseAddr(ms); e == nil && a.Is4() && m.Is4() {
			m4 := m.As4()
			mask = binary.BigEndian.Uint32(m4[:])
			if mask+(mask&-mask) != 0 {
				return netip.PrefixFrom(a, 32), mask, false, nil
			}
			bits = 32
			for v := mask; v&1 == 0 && bits > 0; v >>= 1 {
				bits--
			}
		} else {
			n, ok := parseSint([]byte(ms))
			if !ok || n < 0 || int(n) > a.BitLen() || ms[0] == '-' || ms[0] == '+' {
				return pfx, 0, false, bad
			}
			bits = int(n)
		}
	}
	pfx, _ = a.Prefix(bits)
	return pfx, 0, true, nil
}

// parseMapValue parses a map entry's value for a converter's output type:
// any text for str, an integer (HAProxy's read_int64: a sign, digits, the
// whole text; empty is 0; clamped) for sint, an address for addr.
func parseMapValue(out Type, v string) (smpVal, bool) {
	switch out {
	case TSint:
		i, neg := 0, false
		if i < len(v) && (v[i] == '-' || v[i] == '+') {
			neg = v[i] == '-'
			i++
		}
		var u uint64
		over := false
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			d := uint64(v[i] - '0')
			if u > (^uint64(0)-d)/10 {
				over = true
			}
			u = u*10 + d
		}
		if i != len(v) {
			return smpVal{}, false
		}
		var n int64
		switch {
		case neg && (over || u > 1<<63):
			n = -1 << 63
		case neg:
			n = -int64(u)
		case over || u > 1<<63-1:
			n = 1<<63 - 1
		default:
			n = int64(u)
		}
		return smpVal{ok: true, s: Sample{T: TSint, I: n}}, true
	case TAddr, TIPv4, TIPv6:
		a, err := netip.ParseAddr(v)
		if err != nil || a.Zone() != "" {
			return smpVal{}, false
		}
		if a.Is4() {
			return smpVal{ok: true, s: Sample{T: TIPv4, IP: a}}, true
		}
		return smpVal{ok: true, s: Sample{T: TIPv6, IP: a}}, true
	}
	return smpVal{ok: true, s: Sample{T: TStr}}, true
}
