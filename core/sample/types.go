package sample

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// Type is a sample's type, HAProxy's: what a fetch returns, what a
// converter takes and gives, and what casts between them exist.
type Type uint8

const (
	TAny Type = iota
	TBool
	TSint
	TAddr // ipv4 or ipv6, as a converter's input
	TIPv4
	TIPv6
	TStr
	TBin
	TMeth
	numTypes
)

var typeNames = [numTypes]string{"any", "bool", "sint", "addr", "ipv4", "ipv6", "str", "bin", "meth"}

func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return "?"
}

// Sample is one value: an integer (bool, sint), an address (ipv4, ipv6) or
// bytes (str, bin, meth). B points into the message, into a fetch's
// argument, or into the Request's scratch space; it is valid for the
// evaluation of one expression.
type Sample struct {
	T  Type
	I  int64
	B  []byte
	IP netip.Addr

	// A fetch with several values (a header's occurrences) returns them
	// one by one when iter is set (an ACL matches any of them): pos is its
	// place, more says another value follows.
	iter, more bool
	pos        int
}

func (s *Sample) setStr(b []byte) { s.T, s.B = TStr, b }
func (s *Sample) setInt(i int64)  { s.T, s.I = TSint, i }
func (s *Sample) setBool(v bool) {
	s.T, s.I = TBool, 0
	if v {
		s.I = 1
	}
}

// castable[from][to] says whether a cast exists, as in HAProxy's table
// (sample_casts): which converter may follow which fetch is decided from
// it when the expression is compiled.
var castable = [numTypes][numTypes]bool{
	TAny:  {true, true, true, true, true, true, true, true, true},
	TBool: {TAny: true, TBool: true, TSint: true, TStr: true, TBin: true},
	TSint: {TAny: true, TBool: true, TSint: true, TAddr: true, TIPv4: true, TIPv6: true, TStr: true, TBin: true},
	TAddr: {TAny: true},
	TIPv4: {TAny: true, TSint: true, TAddr: true, TIPv4: true, TIPv6: true, TStr: true, TBin: true},
	TIPv6: {TAny: true, TAddr: true, TIPv4: true, TIPv6: true, TStr: true, TBin: true},
	TStr:  {TAny: true, TBool: true, TSint: true, TAddr: true, TIPv4: true, TIPv6: true, TStr: true, TBin: true, TMeth: true},
	TBin:  {TAny: true, TStr: true, TBin: true, TMeth: true},
	TMeth: {TAny: true, TStr: true, TBin: true, TMeth: true},
}

// cast converts s to type to in place, as HAProxy's casts do; false when
// the value does not convert (a string that is not a number, an IPv6
// address that is not an IPv4-mapped one).
func cast(r *Request, s *Sample, to Type) bool {
	from := s.T
	if to == TAny || from == to {
		return true
	}
	if from >= numTypes || to >= numTypes || !castable[from][to] {
		return false
	}
	switch from {
	case TBool:
		switch to {
		case TSint:
			s.T = TSint
		case TStr:
			s.B = strconv.AppendInt(r.alloc(20), s.I, 10)
			s.T = TStr
		case TBin:
			b := r.alloc(8)[:8]
			binary.BigEndian.PutUint64(b, uint64(s.I&1))
			s.T, s.B = TBin, b
		}
		return true
	case TSint:
		switch to {
		case TBool:
			s.setBool(s.I != 0)
		case TAddr, TIPv4:
			var a [4]byte
			binary.BigEndian.PutUint32(a[:], uint32(s.I))
			s.T, s.IP = TIPv4, netip.AddrFrom4(a)
		case TIPv6:
			var a [4]byte
			binary.BigEndian.PutUint32(a[:], uint32(s.I))
			s.T, s.IP = TIPv6, netip.AddrFrom16(netip.AddrFrom4(a).As16())
		case TStr:
			s.B = strconv.AppendInt(r.alloc(20), s.I, 10)
			s.T = TStr
		case TBin:
			b := r.alloc(8)[:8]
			binary.BigEndian.PutUint64(b, uint64(s.I))
			s.T, s.B = TBin, b
		}
		return true
	case TIPv4:
		switch to {
		case TSint:
			a := s.IP.As4()
			s.setInt(int64(binary.BigEndian.Uint32(a[:])))
		case TAddr:
		case TIPv6:
			s.T, s.IP = TIPv6, netip.AddrFrom16(s.IP.As16())
		case TStr:
			s.B = s.IP.AppendTo(r.alloc(15))
			s.T = TStr
		case TBin:
			a := s.IP.As4()
			s.B = append(r.alloc(4), a[:]...)
			s.T = TBin
		}
		return true
	case TIPv6:
		switch to {
		case TAddr:
		case TIPv4:
			if !s.IP.Is4In6() {
				return false
			}
			s.T, s.IP = TIPv4, s.IP.Unmap()
		case TStr:
			s.B = s.IP.AppendTo(r.alloc(39))
			s.T = TStr
		case TBin:
			a := s.IP.As16()
			s.B = append(r.alloc(16), a[:]...)
			s.T = TBin
		}
		return true
	case TStr:
		switch to {
		case TBool, TSint:
			if len(s.B) == 0 {
				return false
			}
			n := castInt64(s.B)
			s.T, s.I = to, n
			if to == TBool && n != 0 {
				s.I = 1
			}
		case TAddr, TIPv4, TIPv6:
			a, err := netip.ParseAddr(string(s.B))
			if err != nil {
				return false
			}
			switch {
			case to == TIPv4 && a.Is6():
				return false
			case to == TIPv6 && a.Is4():
				a = netip.AddrFrom16(a.As16())
			}
			s.T, s.IP = TIPv6, a
			if a.Is4() {
				s.T = TIPv4
			}
		case TBin:
			s.T = TBin
		case TMeth:
			s.T = TMeth
		}
		return true
	case TBin:
		switch to {
		case TStr:
			// Like HAProxy, a binary sample becomes the string of its bytes
			// up to the first NUL.
			for i, c := range s.B {
				if c == 0 {
					s.B = s.B[:i]
					break
				}
			}
			s.T = TStr
		case TMeth:
			s.T = TMeth
		}
		return true
	case TMeth:
		s.T = to
		return true
	}
	return false
}

// castInt64 is HAProxy's string to integer cast: an optional sign and the
// digits that follow, up to the first other character ("12ab" is 12, "ab"
// is 0).
func castInt64(b []byte) int64 {
	neg := false
	i := 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var n int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if neg {
		n = -n
	}
	return n
}

// parseSint reads a signed decimal integer, the whole string, as HAProxy's
// string to integer cast.
func parseSint(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	i := 0
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i++
		if i == len(b) {
			return 0, false
		}
	}
	var n int64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Cast converts s to type to, as HAProxy's casts do (for actions that take
// a sample of a given type: set-src takes an address); false when it does
// not convert.
func Cast(r *Request, s *Sample, to Type) bool { return cast(r, s, to) }
