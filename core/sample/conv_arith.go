package sample

import "math"

// Arithmetic and bitwise converters on signed 64-bit integers. The operand
// is an integer or a variable name; a variable that is not set, or is not
// a number, gives no sample. Overflows saturate, and a division by zero
// gives the largest integer (a modulo by zero, 0), as in HAProxy.

func init() {
	op := func(name string, f func(a, b int64) int64) Conv {
		return Conv{Name: name, Max: 1, In: TSint, Out: TSint, Check: varOrInt, Fn: func(r *Request, a []Arg, s *Sample) bool {
			b, ok := intOperand(r, arg(a, 0))
			if !ok {
				return false
			}
			s.setInt(f(s.I, b))
			return true
		}}
	}
	un := func(name string, out Type, f func(int64) int64) Conv {
		return Conv{Name: name, In: TSint, Out: out, Fn: func(r *Request, a []Arg, s *Sample) bool {
			s.T, s.I = out, f(s.I)
			return true
		}}
	}
	b2i := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	RegisterConvs(
		op("add", arithAdd),
		op("sub", arithSub),
		op("mul", arithMul),
		op("div", arithDiv),
		op("mod", arithMod),
		op("and", func(a, b int64) int64 { return a & b }),
		op("or", func(a, b int64) int64 { return a | b }),
		op("xor", func(a, b int64) int64 { return a ^ b }),
		un("neg", TSint, func(a int64) int64 {
			if a == math.MinInt64 {
				return math.MaxInt64
			}
			return -a
		}),
		un("cpl", TSint, func(a int64) int64 { return ^a }),
		un("bool", TBool, func(a int64) int64 { return b2i(a != 0) }),
		un("not", TBool, func(a int64) int64 { return b2i(a == 0) }),
		un("odd", TBool, func(a int64) int64 { return a & 1 }),
		un("even", TBool, func(a int64) int64 { return b2i(a&1 == 0) }),
	)
}

func arithAdd(a, b int64) int64 {
	if a^b >= 0 { // same sign: it may overflow
		if a < 0 && math.MinInt64-a > b {
			return math.MinInt64
		}
		if a >= 0 && math.MaxInt64-a < b {
			return math.MaxInt64
		}
	}
	return a + b
}

func arithSub(a, b int64) int64 {
	if b == math.MinInt64 {
		// -MinInt64 does not exist: add MaxInt64, then one more.
		r := arithAdd(a, math.MaxInt64)
		if r < math.MaxInt64 {
			r++
		}
		return r
	}
	return arithAdd(a, -b)
}

func arithMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a == math.MinInt64 && b == -1 {
		return math.MaxInt64
	}
	c := a * b
	if c/b != a {
		if (a < 0) == (b < 0) {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

func arithDiv(a, b int64) int64 {
	if b == 0 || a == math.MinInt64 && b == -1 {
		return math.MaxInt64
	}
	return a / b
}

func arithMod(a, b int64) int64 {
	if b == 0 || a == math.MinInt64 && b == -1 {
		return 0
	}
	return a % b
}
