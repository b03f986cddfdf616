package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Values in HAProxy's units, as keywords and runtime commands take them.

// ParseTime reads HAProxy's time format: a number with an optional unit
// (us, ms, s, m, h, d); the default unit is given (usually milliseconds).
func ParseTime(s string, defUnit time.Duration) (time.Duration, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid time value '%s'", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > 1<<31 {
		return 0, fmt.Errorf("timer overflow in argument '%s'", s)
	}
	unit := defUnit
	switch s[i:] {
	case "":
	case "us":
		unit = time.Microsecond
	case "ms":
		unit = time.Millisecond
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	default:
		return 0, fmt.Errorf("unexpected character '%c' in argument '%s'", s[i], s)
	}
	return time.Duration(n) * unit, nil
}

// ParseSize reads a size with an optional k, m or g suffix.
func ParseSize(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mult, s = 1024*1024, s[:len(s)-1]
	case strings.HasSuffix(s, "g"), strings.HasSuffix(s, "G"):
		mult, s = 1024*1024*1024, s[:len(s)-1]
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("invalid size '%s'", s)
	}
	return v * mult, nil
}
