package lb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Algo is a balancing algorithm.
type Algo int

// The algorithms. The zero value is RoundRobin, HAProxy 2.6's default.
const (
	RoundRobin Algo = iota
	StaticRR
	LeastConn
	First
	Source
	URI
	URLParam
	Hdr
	Random
	VNSWRR
	// SWRR is nginx's smooth weighted round robin, O(n) per pick. It is
	// kept as a reference and benchmark baseline; "balance" does not
	// accept it.
	SWRR
)

var algoNames = [...]string{
	RoundRobin: "roundrobin",
	StaticRR:   "static-rr",
	LeastConn:  "leastconn",
	First:      "first",
	Source:     "source",
	URI:        "uri",
	URLParam:   "url_param",
	Hdr:        "hdr",
	Random:     "random",
	VNSWRR:     "vnswrr",
	SWRR:       "swrr",
}

// String is the name "show stat" prints in its algo column.
func (a Algo) String() string {
	if a >= 0 && int(a) < len(algoNames) {
		return algoNames[a]
	}
	return "unknown"
}

// StatName is what HAProxy 2.6 prints in the "algo" column of "show stat":
// the algorithm's name, except "unknown" for random, which 2.6's
// backend_lb_algo_str does not list.
func (a Algo) StatName() string {
	if a == Random {
		return "unknown"
	}
	return a.String()
}

// Balance is a parsed "balance" line.
type Balance struct {
	Algo Algo
	// URI options: "whole" (hash past '?'), "len" (0: all), "depth"
	// (0: all), "path-only" (drop scheme and authority).
	Whole    bool
	Len      int
	Depth    int
	PathOnly bool
	// Param is url_param's parameter name; CheckPost its "check_post".
	Param     string
	CheckPost bool
	// Header is hdr(<name>)'s field name; DomainOnly its
	// "use_domain_only".
	Header     string
	DomainOnly bool
	// Draws is random's number of draws (default 2).
	Draws int
	// MaxInit is vnswrr's "max_init" (0: number of servers).
	MaxInit int
}

// Dynamic reports whether the algorithm, with hash type h, takes run-time
// weights and dynamic servers.
func (b Balance) Dynamic(h HashType) bool {
	switch b.Algo {
	case StaticRR:
		return false
	case Source, URI, URLParam, Hdr:
		return h.Consistent
	}
	return true
}

// NeedsKey reports whether picks want Key.Hash.
func (b Balance) NeedsKey() bool {
	switch b.Algo {
	case Source, URI, URLParam, Hdr:
		return true
	}
	return false
}

// ParseBalance parses the words after "balance". No word means roundrobin.
// Error texts are HAProxy 2.6's; like HAProxy, the caller prints them after
// the keyword ("balance " + err.Error()).
func ParseBalance(args []string) (Balance, error) {
	if len(args) == 0 || args[0] == "" {
		return Balance{Algo: RoundRobin}, nil
	}
	a := args[0]
	rest := args[1:]
	switch {
	case a == "roundrobin":
		return Balance{Algo: RoundRobin}, nil
	case a == "static-rr":
		return Balance{Algo: StaticRR}, nil
	case a == "first":
		return Balance{Algo: First}, nil
	case a == "leastconn":
		return Balance{Algo: LeastConn}, nil
	case strings.HasPrefix(a, "random"):
		b := Balance{Algo: Random, Draws: 2}
		if len(a) > 7 && a[6] == '(' && a[7] != ')' {
			inner := a[7:]
			n, end := parseCInt(inner)
			if end >= len(inner) || inner[end] != ')' {
				if end >= len(inner) {
					return b, errors.New("random : missing closing parenthesis.")
				}
				return b, fmt.Errorf("random : unexpected character '%c' after argument.", inner[end])
			}
			if n < 1 {
				return b, errors.New("random : number of draws must be at least 1.")
			}
			b.Draws = n
		}
		return b, nil
	case a == "source":
		return Balance{Algo: Source}, nil
	case a == "uri":
		b := Balance{Algo: URI}
		for i := 0; i < len(rest); {
			switch rest[i] {
			case "len", "depth":
				v := ""
				if i+1 < len(rest) {
					v = rest[i+1]
				}
				n := atoi(v)
				if v == "" || n <= 0 {
					return b, fmt.Errorf("%s : '%s' expects a positive integer (got '%s').", a, rest[i], v)
				}
				if rest[i] == "len" {
					b.Len = n
				} else {
					b.Depth = n
				}
				i += 2
			case "whole":
				b.Whole = true
				i++
			case "path-only":
				b.PathOnly = true
				i++
			default:
				return b, fmt.Errorf("%s only accepts parameters 'len', 'depth', 'path-only', and 'whole' (got '%s').", a, rest[i])
			}
		}
		return b, nil
	case a == "url_param":
		if len(rest) == 0 || rest[0] == "" {
			return Balance{}, fmt.Errorf("%s requires an URL parameter name.", a)
		}
		b := Balance{Algo: URLParam, Param: rest[0]}
		if len(rest) > 1 && rest[1] != "" {
			if rest[1] != "check_post" {
				return b, fmt.Errorf("%s only accepts 'check_post' modifier (got '%s').", a, rest[1])
			}
			b.CheckPost = true
		}
		return b, nil
	case strings.HasPrefix(a, "hdr("):
		end := strings.IndexByte(a[4:], ')')
		if end <= 0 {
			return Balance{}, errors.New("hdr requires an http header field name.")
		}
		b := Balance{Algo: Hdr, Header: a[4 : 4+end]}
		if len(rest) > 0 && rest[0] != "" {
			if rest[0] != "use_domain_only" {
				return b, fmt.Errorf("%s only accepts 'use_domain_only' modifier (got '%s').", a, rest[0])
			}
			b.DomainOnly = true
		}
		return b, nil
	case a == "vnswrr":
		b := Balance{Algo: VNSWRR}
		for _, r := range rest {
			v, ok := strings.CutPrefix(r, "max_init=")
			if !ok {
				return b, fmt.Errorf("vnswrr only accepts 'max_init=<number>' (got '%s').", r)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return b, fmt.Errorf("vnswrr : 'max_init' expects a non-negative integer (got '%s').", v)
			}
			b.MaxInit = n
		}
		return b, nil
	}
	if strings.HasPrefix(a, "rdp-cookie") || a == "hash" {
		return Balance{}, fmt.Errorf("'%s' is not supported by goha.", a)
	}
	return Balance{}, errors.New("only supports 'roundrobin', 'static-rr', 'leastconn', 'source', 'uri', 'url_param', 'hdr(name)' and 'rdp-cookie(name)' options.")
}

// atoi is C's atoi: leading digits, 0 when there are none.
func atoi(s string) int {
	n, _ := parseCInt(s)
	return n
}

// parseCInt reads an optional sign and decimal digits the way strtol does
// for base 10 and returns the value and the index of the first unread byte.
func parseCInt(s string) (int, int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start, n := i, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if n < 1<<31 {
			n = n*10 + int(s[i]-'0')
		}
		i++
	}
	if i == start {
		return 0, 0
	}
	if neg {
		n = -n
	}
	return n, i
}
