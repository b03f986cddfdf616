package sample

import "net/netip"

// ipmask keeps the network part of an address: an IPv4 one (or an
// IPv4-mapped IPv6 one) with the first mask, an IPv6 one with the second;
// an IPv6 address without an IPv6 mask gives no sample.

func init() {
	RegisterConvs(Conv{Name: "ipmask", Max: 2, In: TAddr, Out: TIPv4, Check: typedArgs(1, []argKind{aMsk4, aMsk6}, nil), Fn: convIPMask})
}

func convIPMask(r *Request, a []Arg, s *Sample) bool {
	ip := s.IP
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if ip.Is4() {
		p, _ := ip.Prefix(a[0].IP.Bits())
		s.T, s.IP = TIPv4, p.Addr()
		return true
	}
	if len(a) < 2 || !ip.Is6() {
		return false
	}
	if m, ok := a[1].V.([16]byte); ok {
		b := ip.As16()
		for i := range b {
			b[i] &= m[i]
		}
		s.T, s.IP = TIPv6, netip.AddrFrom16(b)
		return true
	}
	p, _ := ip.Prefix(a[1].IP.Bits())
	s.T, s.IP = TIPv6, netip.AddrFrom16(p.Addr().As16())
	return true
}
