package sample

import (
	"errors"
	"fmt"
	"net/netip"
)

// Converter arguments as HAProxy types them. A converter written without
// parentheses, or with empty ones, has one empty argument in HAProxy: a
// string argument is then "", an integer one is missing. The converters
// below are registered with Min 0 and count their arguments in their
// Check, so that the messages are HAProxy's; their Fn reads an absent
// optional argument as its zero value (arg).

type argKind uint8

const (
	aStr argKind = iota
	aInt
	aMsk4
	aMsk6
	aPbuf // a protocol buffers field number: dotted, kept as []uint32 in V
)

var argKindNames = [...]string{aStr: "string", aInt: "integer", aMsk4: "IPv4 mask", aMsk6: "IPv6 mask", aPbuf: "Protocol buffers field number"}

// arg is the i-th argument, or the zero Arg when it was not given.
func arg(a []Arg, i int) *Arg {
	if i < len(a) {
		return &a[i]
	}
	return &zeroArg
}

// zeroArg is read only.
var zeroArg Arg

// typedArgs checks that a has at least min arguments (counting the
// implied empty one) and parses each as its kind, then runs check.
func typedArgs(min int, kinds []argKind, check func(env *Env, a []Arg) error) func(env *Env, a []Arg) error {
	return func(env *Env, a []Arg) error {
		got := max(len(a), 1)
		if got < min {
			return &ArgError{Pos: got + 1, Msg: fmt.Sprintf("missing arguments (got %d/%d), type '%s' expected", got, min, argKindNames[kinds[got]])}
		}
		for i := range a {
			if err := parseTyped(&a[i], kinds[i], i+1); err != nil {
				return err
			}
		}
		if len(a) == 0 && kinds[0] != aStr && min > 0 {
			return &ArgError{Pos: 1, Msg: fmt.Sprintf("expected type '%s' at position 1, but got nothing", argKindNames[kinds[0]])}
		}
		if check != nil {
			return check(env, a)
		}
		return nil
	}
}

func parseTyped(a *Arg, k argKind, pos int) error {
	if k == aStr {
		return nil
	}
	if a.S == "" {
		return &ArgError{Pos: pos, Msg: fmt.Sprintf("expected type '%s' at position %d, but got nothing", argKindNames[k], pos)}
	}
	bad := &ArgError{Pos: pos, Msg: fmt.Sprintf("failed to parse '%s' as type '%s' at position %d", a.S, argKindNames[k], pos)}
	switch k {
	case aInt:
		n, rest := readInt64(a.S)
		if rest != "" {
			return bad
		}
		a.I = n
	case aMsk4, aMsk6:
		p, ok := parseMask(a.S, k == aMsk6)
		if !ok && k == aMsk6 {
			// HAProxy takes any IPv6 address as a mask, ones or not
			// contiguous: the converter ANDs it.
			if m, err := netip.ParseAddr(a.S); err == nil && m.Is6() && !m.Is4In6() {
				a.V, ok = m.As16(), true
			}
		}
		if !ok {
			return bad
		}
		a.IP = p
	case aPbuf:
		ids, ok := parseDottedUints(a.S)
		if !ok {
			return bad
		}
		a.V = ids
	}
	return nil
}

// parseDottedUints reads numbers separated by dots, as HAProxy's
// parse_dotted_uints: an empty number is 0, a trailing dot is an error.
func parseDottedUints(s string) ([]uint32, bool) {
	var ids []uint32
	b := []byte(s)
	for len(b) > 0 {
		n, l := readUint(b)
		b = b[l:]
		if len(b) > 0 {
			if b[0] != '.' || len(b) == 1 {
				return nil, false
			}
			b = b[1:]
		}
		ids = append(ids, n)
	}
	return ids, true
}

// readInt64 reads an optional sign and decimal digits as HAProxy's
// read_int64, returning what follows.
func readInt64(s string) (int64, string) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for s != "" && s[0] >= '0' && s[0] <= '9' {
		n = n*10 + int64(s[0]-'0')
		s = s[1:]
	}
	if neg {
		n = -n
	}
	return n, s
}

// parseMask reads a mask: a prefix length or a dotted (IPv4) or colon
// (IPv6) mask, kept as a prefix of the zero address.
func parseMask(s string, v6 bool) (netip.Prefix, bool) {
	bits := 32
	if v6 {
		bits = 128
	}
	if n, rest := readInt64(s); rest == "" && s[0] != '-' && s[0] != '+' {
		if n > int64(bits) {
			return netip.Prefix{}, false
		}
		return maskPrefix(int(n), v6), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Is4() == v6 {
		return netip.Prefix{}, false
	}
	// A dotted mask must be contiguous ones.
	b := a.AsSlice()
	n, ended := 0, false
	for _, c := range b {
		for i := 7; i >= 0; i-- {
			one := c>>uint(i)&1 == 1
			switch {
			case one && ended:
				return netip.Prefix{}, false
			case one:
				n++
			default:
				ended = true
			}
		}
	}
	return maskPrefix(n, v6), true
}

func maskPrefix(n int, v6 bool) netip.Prefix {
	if v6 {
		return netip.PrefixFrom(netip.IPv6Unspecified(), n)
	}
	return netip.PrefixFrom(netip.IPv4Unspecified(), n)
}

// checkVarName parses a variable name as HAProxy's vars_check_arg, and
// declares it when it is a process variable.
func checkVarName(env *Env, s string) (VarName, error) {
	n, err := CheckVarName(s, "")
	if err == nil && n.Scope == ScopeProc && env != nil {
		env.Proc.Declare(n.Name)
	}
	return n, err
}

// CheckVarName parses a variable name as HAProxy does: a scope, then
// letters, digits, '_' and '.'. HAProxy's syntax error quotes the rest of
// the word the name was cut from: rest is what followed the name there.
func CheckVarName(s, rest string) (VarName, error) {
	if s == "" {
		return VarName{}, errors.New("Empty variable name cannot be accepted")
	}
	n, err := ParseVarName(s)
	if err != nil {
		return n, err
	}
	for i := 0; i < len(n.Name); i++ {
		c := n.Name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return n, fmt.Errorf("invalid syntax at char '%s%s'", n.Name[i:], rest)
		}
	}
	return n, nil
}

// argVar is the variable an argument names, if it names one.
func argVar(a *Arg) (VarName, bool) {
	n, ok := a.V.(VarName)
	return n, ok
}

// varOrInt compiles an argument that is an integer or a variable name (the
// arithmetic converters' operand).
func varOrInt(env *Env, a []Arg) error {
	x := arg(a, 0)
	if n, err := checkVarName(env, x.S); err == nil && len(a) > 0 {
		a[0].V = n
		return nil
	}
	n, rest := readInt64(x.S)
	if rest != "" {
		return fmt.Errorf("expects an integer or a variable name")
	}
	if len(a) > 0 {
		a[0].I = n
	}
	return nil
}

// readVar reads a variable cast to type t into s (the Request's scratch
// space holds what the cast builds).
func readVar(r *Request, n VarName, t Type, s *Sample) bool {
	if !r.Vars.Get(n, s) {
		return false
	}
	return cast(r, s, t)
}

// intOperand is the value of an integer-or-variable argument.
func intOperand(r *Request, a *Arg) (int64, bool) {
	n, ok := argVar(a)
	if !ok {
		return a.I, true
	}
	var t Sample
	if !readVar(r, n, TSint, &t) {
		return 0, false
	}
	return t.I, true
}

// mustVar compiles an argument that must name a variable (strcmp,
// secure_memcmp).
func mustVar(env *Env, a []Arg) error {
	x := arg(a, 0)
	if x.S == "" {
		return fmt.Errorf("missing variable name")
	}
	n, err := checkVarName(env, x.S)
	if err != nil {
		return fmt.Errorf("failed to register variable name '%s'", x.S)
	}
	a[0].V = n
	return nil
}

// optVar compiles the i-th argument, when not empty, as a variable name
// (concat's and add_item's middle argument).
func optVar(env *Env, a []Arg, i int) error {
	x := arg(a, i)
	if x.S == "" {
		return nil
	}
	n, err := checkVarName(env, x.S)
	if err != nil {
		return fmt.Errorf("failed to register variable name '%s'", x.S)
	}
	a[i].V = n
	return nil
}

// varOrBase64 compiles a key argument: a variable name (whose value is
// base64-decoded when used) or base64 text, decoded now (hmac's key,
// aes_gcm_dec's nonce, key and tag).
func varOrBase64(env *Env, a *Arg) error {
	if a.S == "" {
		return nil
	}
	if n, err := checkVarName(env, a.S); err == nil {
		a.V = n
		return nil
	}
	dec, ok := b64Decode(nil, []byte(a.S), false)
	if !ok || len(a.S)%4 != 0 {
		return fmt.Errorf("argument needs to be base64 encoded, and can either be a string or a variable")
	}
	a.V = dec
	return nil
}

// keyOperand is a varOrBase64 argument's bytes.
func keyOperand(r *Request, a *Arg) ([]byte, bool) {
	switch v := a.V.(type) {
	case []byte:
		return v, true
	case VarName:
		var t Sample
		if !readVar(r, v, TStr, &t) {
			return nil, false
		}
		return b64Decode(r.alloc(len(t.B)*3/4+3), t.B, false)
	}
	return nil, true
}

// strOperand appends a string-or-variable argument's text (concat and
// add_item); ok false when the variable is not set or has no text.
func varText(r *Request, n VarName) ([]byte, bool) {
	var t Sample
	if !r.Vars.Get(n, &t) {
		return nil, false
	}
	if t.T == TStr || t.T == TBin || t.T == TMeth {
		return t.B, true
	}
	if !cast(r, &t, TStr) {
		return nil, false
	}
	return t.B, true
}
