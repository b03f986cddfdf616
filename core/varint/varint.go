// Package varint is HAProxy's variable-length integer encoding, which the
// SPOE protocol, the peers protocol and the binary header fetches share:
// values below 240 take one byte; larger ones put their low 4 bits in a
// first byte of 240 or more, then 7 bits per byte, each byte but the last
// at 128 or more.
package varint

// Append writes v.
func Append(b []byte, v uint64) []byte {
	if v < 240 {
		return append(b, byte(v))
	}
	b = append(b, byte(v)|240)
	v = (v - 240) >> 4
	for v >= 128 {
		b = append(b, byte(v)|128)
		v = (v - 128) >> 7
	}
	return append(b, byte(v))
}

// Read reads one integer from b; n is 0 when b ends before it does.
func Read(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	v = uint64(b[0])
	if v < 240 {
		return v, 1
	}
	n = 1
	for shift := uint(4); shift <= 63; shift += 7 {
		if n >= len(b) {
			return 0, 0
		}
		c := b[n]
		n++
		v += uint64(c) << shift
		if c < 128 {
			return v, n
		}
	}
	return 0, 0
}
