package config

import "strings"

// HAProxyVersion is the version version_atleast() and version_before()
// compare against when Options.Version is empty: the HAProxy release whose
// configuration language goha speaks.
const HAProxyVersion = "2.6.12"

// splitVersion reads a version such as "2.4-dev18-f6818d-20" into seven
// numbers the way HAProxy does: major, minor, patch, sub-patch, a tag rank
// (1 for dev, 2 for rc or pre, 3 for a release), the tag's number and a
// trailing commit count. Missing parts are zero. ok is false when the text
// is not a version.
func splitVersion(v string) (val [7]uint32, ok bool) {
	val[4] = 3
	if v == "" {
		return val, false
	}
	p := 0
	// The four dotted numbers; a '-' jumps to the tag.
	tag := false
	for k := 0; k < 4; k++ {
		n, end := strtol10(v, p)
		val[k] = n
		if end >= len(v) {
			return val, true
		}
		if v[end] == '-' {
			p = end + 1
			tag = true
			break
		}
		if k == 3 || v[end] != '.' {
			return val, false
		}
		p = end + 1
	}
	if !tag {
		return val, false
	}
	if p < len(v) && !isDigit(v[p]) {
		rank := uint32(0)
		switch {
		case strings.HasPrefix(v[p:], "dev"):
			rank, p = 1, p+3
		case strings.HasPrefix(v[p:], "rc"):
			rank, p = 2, p+2
		case strings.HasPrefix(v[p:], "pre"):
			rank, p = 2, p+3
		}
		if rank != 0 {
			val[4] = rank
			n, end := strtol10(v, p)
			val[5] = n
			if end >= len(v) {
				return val, true
			}
			if v[end] != '-' {
				return val, false
			}
			p = end + 1
		}
	}
	// The commit count: the number after the last '-', or what remains.
	rest := ""
	if p < len(v) {
		rest = v[p:]
	}
	if k := strings.LastIndexByte(rest, '-'); k >= 0 {
		rest = rest[k+1:]
		if rest == "" {
			return val, false
		}
	}
	if n, end := strtol10(rest, 0); end == len(rest) {
		val[6] = n
	}
	return val, true
}

// strtol10 is C's strtol(s+i, &end, 10) truncated to an unsigned int as
// HAProxy stores it: leading blanks and a sign are accepted, and nothing
// converted leaves end at i.
func strtol10(s string, i int) (uint32, int) {
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	neg := false
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		neg = s[j] == '-'
		j++
	}
	start := j
	var n uint64
	over := false
	for j < len(s) && isDigit(s[j]) {
		if n > (1<<63)/10 {
			over = true
		}
		n = n*10 + uint64(s[j]-'0')
		if n > 1<<63 {
			over = true
		}
		j++
	}
	if j == start {
		return 0, i
	}
	var v int64
	switch {
	case over && neg:
		v = -1 << 63
	case over:
		v = 1<<63 - 1
	case neg:
		v = -int64(n)
	default:
		v = int64(n)
	}
	return uint32(v), j
}

// compareVersion compares version with cur as HAProxy's
// compare_current_version() does: -1 when version is older than cur, 0
// when equal, 1 when newer, -2 when cur does not parse and -3 when version
// does not parse. The predicates use it unchanged, so that, as in HAProxy,
// version_atleast() of an unparsable version is true.
func compareVersion(cur, version string) int {
	if cur == "" {
		cur = HAProxyVersion
	}
	loc, ok := splitVersion(cur)
	if !ok {
		return -2
	}
	mod, ok := splitVersion(version)
	if !ok {
		return -3
	}
	for i := range loc {
		if mod[i] < loc[i] {
			return -1
		}
		if mod[i] > loc[i] {
			return 1
		}
	}
	return 0
}
