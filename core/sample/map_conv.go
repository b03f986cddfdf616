package sample

import (
	"fmt"
	"net/netip"
)

// The map converters: map_<method>[_<output>](<file>[,<default>]) looks
// the input up in a map file with one of HAProxy's matching methods and
// gives the value of the entry found, parsed as a string, an integer or
// an address; the default when none is found; no sample without default.

func init() {
	type method struct {
		name string
		kind matchKind
		in   Type
	}
	methods := []method{
		{"str", matchStr, TStr}, {"beg", matchBeg, TStr}, {"sub", matchSub, TStr},
		{"dir", matchDir, TStr}, {"dom", matchDom, TStr}, {"end", matchEnd, TStr},
		{"reg", matchReg, TStr}, {"int", matchInt, TSint}, {"ip", matchIP, TAddr},
	}
	var cs []Conv
	add := func(name string, kind matchKind, in, out Type) {
		cs = append(cs, Conv{Name: name, Min: 1, Max: 2, In: in, Out: out,
			Check: mapCheck(kind, out), Fn: mapConv})
	}
	add("map", matchStr, TStr, TStr)
	for _, m := range methods {
		add("map_"+m.name, m.kind, m.in, TStr)
	}
	add("map_regm", matchRegm, TStr, TStr)
	for _, m := range methods {
		add("map_"+m.name+"_int", m.kind, m.in, TSint)
	}
	for _, m := range methods {
		// An address map gives IPv4 or IPv6 values; like HAProxy, the
		// expression is typed as IPv4 for what may follow it.
		add("map_"+m.name+"_ip", m.kind, m.in, TIPv4)
	}
	RegisterConvs(cs...)
}

// mapArgs is what a map converter's Check compiles into its first
// argument.
type mapArgs struct {
	x   *matcher
	def *Sample // nil: no default
}

func mapCheck(kind matchKind, out Type) func(*Env, []Arg) error {
	valType := out
	if out == TIPv4 {
		valType = TAddr
	}
	return func(env *Env, a []Arg) error {
		ma := &mapArgs{}
		if len(a) > 1 {
			d := &Sample{T: TStr, B: []byte(a[1].S)}
			switch valType {
			case TSint:
				n, ok := parseSint([]byte(a[1].S))
				if !ok {
					return fmt.Errorf("failed to parse '%s' as type 'integer' at position 2", a[1].S)
				}
				*d = Sample{T: TSint, I: n}
			case TAddr:
				ip, err := netip.ParseAddr(a[1].S)
				if err != nil || ip.Zone() != "" {
					return fmt.Errorf("map: cannot parse default ip <%s>.", a[1].S)
				}
				*d = Sample{T: TIPv6, IP: ip}
				if ip.Is4() {
					d.T = TIPv4
				}
			}
			ma.def = d
		}
		m, err := env.maps().loadRef(env, a[0].S, RefMap, true)
		if err != nil {
			return err
		}
		if ma.x, err = m.attach(kind, false, valType); err != nil {
			return err
		}
		a[0].V = ma
		return nil
	}
}

func mapConv(r *Request, a []Arg, s *Sample) bool {
	ma := a[0].V.(*mapArgs)
	x := ma.x
	var sub []int
	x.m.mu.RLock()
	e, _ := x.lookup(r, s, &sub)
	ok := true
	if e != nil {
		switch {
		case !e.HasV:
			// An entry without a value gives 1, as in HAProxy.
			s.setInt(1)
		case x.kind == matchRegm:
			ok = appendBackrefs(r, s, e.Value, sub)
		case x.out == TStr:
			s.setStr(append(r.alloc(len(e.Value)), e.Value...))
		case x.slot < len(e.vals) && e.vals[x.slot].ok:
			v := &e.vals[x.slot].s
			s.T, s.I, s.IP, s.B = v.T, v.I, v.IP, nil
		default:
			ok = false
		}
	}
	x.m.mu.RUnlock()
	if e != nil {
		return ok
	}
	if ma.def == nil {
		return false
	}
	s.T, s.I, s.IP, s.B = ma.def.T, ma.def.I, ma.def.IP, ma.def.B
	return true
}

// appendBackrefs builds a map_regm value: \0 to \9 are the input's
// submatches (nothing for a group that did not take part), \xHH a byte,
// a backslash before anything else that thing, as HAProxy's exp_replace.
// A trailing backslash, or a result larger than a buffer, gives no sample.
func appendBackrefs(r *Request, s *Sample, v string, sub []int) bool {
	in := s.B
	n := len(v)
	for i := 0; i+1 < len(v); i++ {
		if v[i] == '\\' && v[i+1] >= '0' && v[i+1] <= '9' {
			if g := int(v[i+1] - '0'); 2*g+1 < len(sub) && sub[2*g] >= 0 {
				n += sub[2*g+1] - sub[2*g]
			}
		}
	}
	out := r.alloc(n)
	for i := 0; i < len(v); {
		c := v[i]
		i++
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i == len(v) {
			return false
		}
		c = v[i]
		i++
		switch {
		case c >= '0' && c <= '9':
			if g := int(c - '0'); 2*g+1 < len(sub) && sub[2*g] >= 0 {
				out = append(out, in[sub[2*g]:sub[2*g+1]]...)
			}
		case c == 'x':
			if i+2 > len(v) {
				return false
			}
			out = append(out, hexNibble(v[i])<<4+hexNibble(v[i+1]))
			i += 2
		default:
			out = append(out, c)
		}
	}
	if len(out) >= maxLine {
		return false
	}
	s.setStr(out)
	return true
}

// hexNibble is HAProxy's arithmetic on a hex digit, which does not check
// that it is one.
func hexNibble(c byte) byte {
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	c -= '0'
	if c > 9 {
		c -= 'A' - '9' - 1
	}
	return c
}
