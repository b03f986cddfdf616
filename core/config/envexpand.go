package config

import (
	"os"
	"strings"
)

// ExpandEnv replaces $NAME and ${NAME} in s with the variables' values, as
// HAProxy does for every address it parses, quoted or not, after the line
// was cut into words. A name is letters, digits and '_'; an unset variable,
// or a '$' followed by no name, becomes empty. A nil lookup reads the
// process environment.
func ExpandEnv(s string, lookup func(string) (string, bool)) string {
	if strings.IndexByte(s, '$') < 0 {
		return s
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := i + 1
		brace := j < len(s) && s[j] == '{'
		if brace {
			j++
		}
		k := j
		for k < len(s) && (isAlnum(s[k]) || s[k] == '_') {
			k++
		}
		if v, ok := lookup(s[j:k]); ok && k > j {
			b.WriteString(v)
		}
		if brace && k < len(s) && s[k] == '}' {
			k++
		}
		s = s[k:]
	}
}
