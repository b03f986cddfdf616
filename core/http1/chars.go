package http1

// Character classes from RFC 7230, as HAProxy's h1 parser applies them.
const (
	cToken = 1 << iota // tchar: header names and methods
	cSPHT              // space or horizontal tab
	cCRLF              // CR or LF
	cVer               // characters that may appear in an HTTP version token
	cHex               // hexadecimal digit
)

var ctab = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= cToken | cVer
		t[c-'a'+'A'] |= cToken | cVer
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= cToken | cVer | cHex
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] |= cHex
		t[c-'a'+'A'] |= cHex
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] |= cToken
	}
	t['/'] |= cVer
	t['.'] |= cVer
	t[' '] |= cSPHT
	t['\t'] |= cSPHT
	t['\r'] |= cCRLF
	t['\n'] |= cCRLF
	return t
}()

func isToken(c byte) bool { return ctab[c]&cToken != 0 }
func isSPHT(c byte) bool  { return ctab[c]&cSPHT != 0 }
func isCRLF(c byte) bool  { return ctab[c]&cCRLF != 0 }
func isLWS(c byte) bool   { return ctab[c]&(cSPHT|cCRLF) != 0 }
func isVer(c byte) bool   { return ctab[c]&cVer != 0 }

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// eqFold reports whether b equals s ignoring ASCII case. s may have any case.
func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != s[i] && lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// eqFoldBytes is eqFold for two byte slices.
func eqFoldBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] && lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// trimLWS strips leading and trailing spaces, tabs, CR and LF.
func trimLWS(b []byte) []byte {
	for len(b) > 0 && isLWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isLWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// NextValue splits a comma-separated header value: it returns the first
// element, trimmed of blanks, and the remainder after its comma. ok is false
// once v holds nothing but blanks and commas. It never allocates, so ACLs can
// walk hdr() values element by element the way HAProxy does.
func NextValue(v []byte) (elem, rest []byte, ok bool) {
	for len(v) > 0 && (v[0] == ',' || isLWS(v[0])) {
		v = v[1:]
	}
	if len(v) == 0 {
		return nil, nil, false
	}
	i := 0
	for i < len(v) && v[i] != ',' {
		i++
	}
	elem = trimLWS(v[:i])
	if i < len(v) {
		rest = v[i+1:]
	}
	return elem, rest, true
}
