package sample

import (
	"fmt"
	"strconv"
)

// json_query reads one value from a JSON document with a JSON path of
// keys and indexes ($.a.b[2], a '\' escaping a '.' or '[' in a key), as
// HAProxy's mjson does: the first member of a name counts, the document is
// read only as far as the value, strings are unescaped (only \u00XX of
// the \u escapes), numbers are given as HAProxy prints a double (%g), or
// as integers with "int", booleans as booleans; null, objects and arrays
// give no sample.

func init() {
	RegisterConvs(Conv{Name: "json_query", Max: 2, In: TStr, Out: TAny, Check: jsonQueryArgs, Fn: convJSONQuery})
}

type jsonStep struct {
	key   string // unescaped; when idx is -1
	idx   int
	isKey bool
}

func jsonQueryArgs(env *Env, a []Arg) error {
	p := arg(a, 0).S
	if p == "" {
		return fmt.Errorf("json_path must not be empty")
	}
	if t := arg(a, 1).S; t != "" && t != "int" {
		return fmt.Errorf("output_type only supports \"int\" as argument")
	}
	if steps, ok := parseJSONPath(p); ok {
		a[0].V = steps
	} else {
		a[0].V = false
	}
	if len(a) > 1 && a[1].S == "int" {
		a[1].I = 1
	}
	return nil
}

// parseJSONPath reads the path; a path mjson would never match gives
// ok false (the converter then never finds anything).
func parseJSONPath(p string) ([]jsonStep, bool) {
	if p[0] != '$' {
		return nil, false
	}
	var steps []jsonStep
	for i := 1; i < len(p); {
		switch p[i] {
		case '.':
			i++
			var key []byte
			for i < len(p) && p[i] != '.' && p[i] != '[' {
				if p[i] == '\\' && i+1 < len(p) {
					i++
				}
				key = append(key, p[i])
				i++
			}
			steps = append(steps, jsonStep{key: string(key), isKey: true})
		case '[':
			j := i + 1
			for j < len(p) && p[j] != ']' {
				j++
			}
			n, err := strconv.Atoi(p[i+1 : j])
			if err != nil || j == len(p) || n < 0 {
				return nil, false
			}
			steps = append(steps, jsonStep{idx: n})
			i = j + 1
		default:
			return nil, false
		}
	}
	return steps, true
}

type jsonTok uint8

const (
	jInvalid jsonTok = iota
	jString
	jNumber
	jTrue
	jFalse
	jNull
	jObject
	jArray
)

// jsonScan walks JSON text; pos is where it is.
type jsonScan struct {
	b   []byte
	pos int
}

func (j *jsonScan) ws() {
	for j.pos < len(j.b) {
		switch j.b[j.pos] {
		case ' ', '\t', '\n', '\r':
			j.pos++
		default:
			return
		}
	}
}

// value reads the value at pos, following steps; it returns the kind and
// bytes of the value the path names, or jInvalid when the text is bad or
// the path leads nowhere. depth bounds nesting.
func (j *jsonScan) value(steps []jsonStep, depth int) (jsonTok, []byte) {
	if depth > 20 {
		return jInvalid, nil
	}
	j.ws()
	if j.pos >= len(j.b) {
		return jInvalid, nil
	}
	start := j.pos
	c := j.b[j.pos]
	switch {
	case c == '{':
		j.pos++
		j.ws()
		if j.pos < len(j.b) && j.b[j.pos] == '}' {
			j.pos++
			return j.leaf(steps, jObject), nil
		}
		for {
			j.ws()
			k, ok := j.str()
			if !ok {
				return jInvalid, nil
			}
			j.ws()
			if j.pos >= len(j.b) || j.b[j.pos] != ':' {
				return jInvalid, nil
			}
			j.pos++
			if len(steps) > 0 && steps[0].isKey && string(k[1:len(k)-1]) == steps[0].key {
				return j.value(steps[1:], depth+1)
			}
			if t, _ := j.value(nil, depth+1); t == jInvalid {
				return jInvalid, nil
			}
			j.ws()
			if j.pos >= len(j.b) {
				return jInvalid, nil
			}
			if j.b[j.pos] == '}' {
				j.pos++
				return j.leaf(steps, jObject), nil
			}
			if j.b[j.pos] != ',' {
				return jInvalid, nil
			}
			j.pos++
		}
	case c == '[':
		j.pos++
		j.ws()
		if j.pos < len(j.b) && j.b[j.pos] == ']' {
			j.pos++
			return j.leaf(steps, jArray), nil
		}
		for i := 0; ; i++ {
			if len(steps) > 0 && !steps[0].isKey && steps[0].idx == i {
				return j.value(steps[1:], depth+1)
			}
			if t, _ := j.value(nil, depth+1); t == jInvalid {
				return jInvalid, nil
			}
			j.ws()
			if j.pos >= len(j.b) {
				return jInvalid, nil
			}
			if j.b[j.pos] == ']' {
				j.pos++
				return j.leaf(steps, jArray), nil
			}
			if j.b[j.pos] != ',' {
				return jInvalid, nil
			}
			j.pos++
		}
	case c == '"':
		s, ok := j.str()
		if !ok {
			return jInvalid, nil
		}
		return j.leaf(steps, jString), s
	case c == '-' || c >= '0' && c <= '9':
		j.pos++
		for j.pos < len(j.b) && (j.b[j.pos] >= '0' && j.b[j.pos] <= '9' || j.b[j.pos] == '.' ||
			j.b[j.pos] == 'e' || j.b[j.pos] == 'E' || (j.b[j.pos] == '-' || j.b[j.pos] == '+') && (j.b[j.pos-1] == 'e' || j.b[j.pos-1] == 'E')) {
			j.pos++
		}
		return j.leaf(steps, jNumber), j.b[start:j.pos]
	default:
		for _, w := range []struct {
			s string
			t jsonTok
		}{{"true", jTrue}, {"false", jFalse}, {"null", jNull}} {
			if len(j.b)-j.pos >= len(w.s) && string(j.b[j.pos:j.pos+len(w.s)]) == w.s {
				j.pos += len(w.s)
				return j.leaf(steps, w.t), nil
			}
		}
	}
	return jInvalid, nil
}

// leaf is the value's kind when the path ends here, jNull (a value
// that gives no sample, but valid text) when the path goes on.
func (j *jsonScan) leaf(steps []jsonStep, t jsonTok) jsonTok {
	if len(steps) > 0 {
		return jNull
	}
	return t
}

// str reads a string with its quotes; a backslash escapes the next
// character when it is one JSON escapes.
func (j *jsonScan) str() ([]byte, bool) {
	if j.pos >= len(j.b) || j.b[j.pos] != '"' {
		return nil, false
	}
	start := j.pos
	for i := j.pos + 1; i < len(j.b); i++ {
		switch j.b[i] {
		case '\\':
			if i+1 < len(j.b) && jsonUnesc(j.b[i+1]) != 0 {
				i++
			}
		case 0:
			return nil, false
		case '"':
			j.pos = i + 1
			return j.b[start:j.pos], true
		}
	}
	return nil, false
}

func jsonUnesc(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case '\\':
		return '\\'
	case '"':
		return '"'
	}
	return 0
}

const jsonIntMax = 1<<53 - 1

func convJSONQuery(r *Request, a []Arg, s *Sample) bool {
	steps, ok := a[0].V.([]jsonStep)
	if !ok {
		return false
	}
	j := jsonScan{b: s.B}
	t, v := j.value(steps, 0)
	switch t {
	case jNumber:
		if len(a) > 1 && a[1].I == 1 {
			n := strtoll(v)
			if n < -jsonIntMax || n > jsonIntMax {
				return false
			}
			s.setInt(n)
			return true
		}
		f, err := strconv.ParseFloat(string(numPrefix(v)), 64)
		if err != nil {
			return false
		}
		s.setStr(strconv.AppendFloat(r.alloc(24), f, 'g', 6, 64))
		return true
	case jTrue, jFalse:
		s.setBool(t == jTrue)
		return true
	case jString:
		out := r.alloc(len(v))
		in := v[1 : len(v)-1]
		for i := 0; i < len(in); i++ {
			switch {
			case in[i] == '\\' && i+5 < len(in) && in[i+1] == 'u':
				if in[i+2] != '0' || in[i+3] != '0' {
					return false
				}
				out = append(out, byte(unhex(in[i+4])<<4|unhex(in[i+5])))
				i += 5
			case in[i] == '\\' && i+1 < len(in):
				c := jsonUnesc(in[i+1])
				if c == 0 {
					return false
				}
				out = append(out, c)
				i++
			default:
				out = append(out, in[i])
			}
		}
		s.setStr(out)
		return true
	}
	return false
}

// numPrefix is the longest prefix of a JSON number token that is a
// number.
func numPrefix(v []byte) []byte {
	for len(v) > 0 {
		if _, err := strconv.ParseFloat(string(v), 64); err == nil {
			return v
		}
		v = v[:len(v)-1]
	}
	return v
}

// strtoll reads an integer as C's strtoll in base 0: a sign, then hex
// (0x), octal (leading 0) or decimal digits, up to the first other byte.
func strtoll(b []byte) int64 {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	base := int64(10)
	if len(b) > 1 && b[0] == '0' {
		base = 8
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		d := int64(unhex(c))
		if d < 0 || d >= base {
			break
		}
		if n > (1<<62)/base {
			n = 1 << 62 // beyond the JSON range either way
			break
		}
		n = n*base + d
	}
	if neg {
		n = -n
	}
	return n
}
