package config

import (
	"strconv"
	"strings"
	"testing"
)

var testCondEnv = &condEnv{
	lookup:   testEnv,
	features: "+OPENSSL -QUIC +LUA +LINUX_SPLICE",
	version:  "2.6.12",
}

func TestConditionValues(t *testing.T) {
	tests := []struct {
		expr string
		want bool
	}{
		{"", false},
		{"0", false},
		{"1", true},
		{"-1", true},
		{"0x10", true},
		{"0x0", false},
		{"00", false},
		{"!0", true},
		{"!!1", true},
		{"! ! 0", false},
		{"1 && 0", false},
		{"1&&1", true},
		{"0 || 1", true},
		{"0||0", false},
		{"1 && 0 || 1", true},  // && binds tighter
		{"0 || 1 && 0", false}, // 0 || (1 && 0)
		{"!(0 || 0) && 1", true},
		{"((((1))))", true},
		{"( 1 )", true},
		{"defined(WHO)", true},
		{"defined(EMPTY)", true}, // defined, even if empty
		{"defined(NOPE)", false},
		{"defined()", false},
		{"defined", false}, // no parentheses: one empty argument
		{"feature(OPENSSL)", true},
		{"feature(QUIC)", false},
		{"feature(OPEN)", false},
		{"feature(SPLICE)", false},
		{"feature(LINUX_SPLICE)", true},
		{"streq(a,a)", true},
		{"streq(a,b)", false},
		{"strneq(a,b)", true},
		{`streq("a b",a b)`, true},
		{`streq('a,b',"a,b")`, true},
		{`streq(a\ b,"a b")`, true},
		{"streq(,)", true},
		{"version_atleast(2.6)", true},
		{"version_atleast(2.6.12)", true},
		{"version_atleast(2.6.13)", false},
		{"version_atleast(2.7-dev1)", false},
		{"version_atleast(2.6-dev1)", true},
		{"version_before(2.6.13)", true},
		{"version_before(2.6.12)", false},
		{"version_before(3)", true},
		{"version_atleast(abc)", true}, // unparsable: HAProxy's comparison says "older"
		{"version_before(abc)", false},
		{"openssl_version_atleast(1.0.0)", false},
		{"ssllib_name_startswith(OpenSSL)", false},
	}
	for _, tt := range tests {
		got, msg, at := evalCondition(tt.expr, testCondEnv)
		if msg != "" {
			t.Errorf("%q: error %q at %d", tt.expr, msg, at)
			continue
		}
		if got != tt.want {
			t.Errorf("%q = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

// The messages and positions were captured from HAProxy 2.6.12 (positions
// here count from 0, HAProxy prints them from 1).
func TestConditionErrors(t *testing.T) {
	tests := []struct {
		expr string
		msg  string
		at   int
	}{
		{"1 2", "unexpected character '2' at the end of conditional expression '1 2'", 2},
		{"foo", "unparsable conditional expression 'foo'", 0},
		{"defined(", "expected ')' in argument 1 of predicate 'defined' used in conditional expression", 8},
		{"defined(A", "expected ')' in argument 1 of predicate 'defined' used in conditional expression", 9},
		{"streq(a)", "missing arguments (got 1/2), type 'string' expected in argument 1 of predicate 'streq' used in conditional expression", 7},
		{"streq(a,b", "expected ')' in argument 1 of predicate 'streq' used in conditional expression", 9},
		{"streq(a,b,c)", "expected ')' before ',c)' in argument 1 of predicate 'streq' used in conditional expression", 9},
		{"(1", "expected ')' after conditional expression '(1'", 0},
		{"1 &&", "unparsable conditional expression '&&'", 2},
		{"1 && 2 && ", "unparsable conditional expression '&& 2 && '", 2},
		{"0 || 1 && 2 && ", "unparsable conditional expression '&& 2 && '", 7},
		{"(1 && )", "unparsable conditional expression ')'", 6},
		{"1 || 0 ||", "unparsable conditional expression '1 || 0 ||'", 2},
		{`streq(a\,b,a)`, "expected ')' before ',a)' in argument 1 of predicate 'streq' used in conditional expression", 10},
		{`streq(x),x\))`, "missing arguments (got 1/2), type 'string' expected in argument 1 of predicate 'streq' used in conditional expression", 7},
		{"1 | 0", "unexpected character '|' at the end of conditional expression '1 | 0'", 2},
		{" ", "unparsable conditional sub-expression ' '", 0},
		{"!", "unparsable conditional expression '!'", 0},
		{"()", "unparsable conditional expression ')'", 1},
		{"defined (X)", "unexpected character '(' at the end of conditional expression 'defined (X)'", 8},
		{`defined(A\`, "failed to parse '\\' after 'A' as type 'string' at position 1 in argument 0 of predicate 'defined' used in conditional expression", 9},
		{"1 && foo(1)", "unparsable conditional expression 'foo(1)'", 5},
	}
	for _, tt := range tests {
		_, msg, at := evalCondition(tt.expr, testCondEnv)
		if msg != tt.msg || at != tt.at {
			t.Errorf("%q:\n got %q at %d\nwant %q at %d", tt.expr, msg, at, tt.msg, tt.at)
		}
	}
}

func TestConditionRecursionLimit(t *testing.T) {
	deep := strings.Repeat("(", 2000) + "1" + strings.Repeat(")", 2000)
	if _, msg, _ := evalCondition(deep, testCondEnv); !strings.Contains(msg, "unparsable conditional") {
		t.Errorf("2000 parentheses: %q, want a refusal", msg)
	}
	ok := strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100)
	if v, msg, _ := evalCondition(ok, testCondEnv); msg != "" || !v {
		t.Errorf("100 parentheses: %v %q", v, msg)
	}
	long := strings.Repeat("1 && ", 3000) + "1"
	if _, msg, _ := evalCondition(long, testCondEnv); !strings.Contains(msg, "unparsable conditional") {
		t.Errorf("3000 terms: %q, want a refusal", msg)
	}
}

func TestSplitVersion(t *testing.T) {
	tests := []struct {
		v    string
		want [7]uint32
		ok   bool
	}{
		{"1.2.1-pre2", [7]uint32{1, 2, 1, 0, 2, 2, 0}, true},
		{"1.2.1", [7]uint32{1, 2, 1, 0, 3, 0, 0}, true},
		{"1.2.10.1", [7]uint32{1, 2, 10, 1, 3, 0, 0}, true},
		{"1.3.16-rc1", [7]uint32{1, 3, 16, 0, 2, 1, 0}, true},
		{"1.4-dev3", [7]uint32{1, 4, 0, 0, 1, 3, 0}, true},
		{"1.5-dev18-43", [7]uint32{1, 5, 0, 0, 1, 18, 43}, true},
		{"2.4-dev18-f6818d-20", [7]uint32{2, 4, 0, 0, 1, 18, 20}, true},
		{"2.6.12-1+deb12u4", [7]uint32{2, 6, 12, 0, 3, 0, 0}, true}, // "1+deb12u4" is no number
		{"2", [7]uint32{2, 0, 0, 0, 3, 0, 0}, true},
		{"", [7]uint32{0, 0, 0, 0, 3, 0, 0}, false},
		{"abc", [7]uint32{0, 0, 0, 0, 3, 0, 0}, false},
		{"2.6x", [7]uint32{2, 6, 0, 0, 3, 0, 0}, false},
		{"1.2.3.4.5", [7]uint32{1, 2, 3, 4, 3, 0, 0}, false},
		{"2.6-", [7]uint32{2, 6, 0, 0, 3, 0, 0}, true},
		{"2.6-dev-", [7]uint32{2, 6, 0, 0, 1, 0, 0}, true},
		{"2.6-dev3-x-", [7]uint32{2, 6, 0, 0, 1, 3, 0}, false},
	}
	for _, tt := range tests {
		got, ok := splitVersion(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: got %v %v, want %v %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCompareVersion(t *testing.T) {
	tests := []struct {
		cur, v string
		want   int
	}{
		{"2.6.12", "2.6.12", 0},
		{"2.6.12", "2.6", -1},
		{"2.6.12", "2.6.13", 1},
		{"2.6.12", "2.6.12-dev1", -1}, // a dev release comes before the release
		{"2.6-dev3", "2.6-rc1", 1},
		{"", "2.6.12", 0}, // empty means HAProxyVersion
		{"bad", "2.6", -2},
		{"2.6", "bad", -3},
	}
	for _, tt := range tests {
		if got := compareVersion(tt.cur, tt.v); got != tt.want {
			t.Errorf("compareVersion(%q, %q) = %d, want %d", tt.cur, tt.v, got, tt.want)
		}
	}
}

func TestHasFeature(t *testing.T) {
	f := "-51DEGREES +ACCEPT4 +OPENSSL -QUIC +OPENSSL_WOLFSSL"
	tests := []struct {
		name string
		want bool
	}{
		{"OPENSSL", true},
		{"QUIC", false},
		{"ACCEPT4", true},
		{"ACCEPT", false},
		{"51DEGREES", false},
		{"SSL", false},
		{"OPENSSL_WOLFSSL", true},
		{"", false},
	}
	for _, tt := range tests {
		if got := hasFeature(f, tt.name); got != tt.want {
			t.Errorf("hasFeature(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Random conditions run through HAProxy 2.6.12 (`haproxy -c`, WHO=world),
// with the message and position it printed.
func TestConditionRandomAgainstHAProxy(t *testing.T) {
	tests := []struct {
		line string
		msg  string
		pos  int
	}{
		{`.if feature(QUIC)0&`, "unexpected character '0' at the end of conditional expression 'feature(QUIC)0&'", 14},
		{`.if \&&`, `unparsable conditional expression '\&&'`, 1},
		{`.if -0,||&&`, "unexpected character ',' at the end of conditional expression '-0,||&&'", 3},
		{`.if |-`, "unparsable conditional expression '|-'", 1},
		{`.if feature(QUIC)-1||definedstreq(a,a)defined(00x1`, "unexpected character '-' at the end of conditional expression 'feature(QUIC)-1||definedstreq(a,a)defined(00x1'", 14},
		{`.if defined(WHO)streq(a,a)`, "unexpected character 's' at the end of conditional expression 'defined(WHO)streq(a,a)'", 13},
		{`.if (streq(a,a)`, "expected ')' after conditional expression '(streq(a,a)'", 1},
		{`.if  defined(NOPE)defined! )defined(WHO)`, "unexpected character 'd' at the end of conditional expression 'defined(NOPE)defined! )defined(WHO)'", 14},
		{`.if "${WHO}""${WHO}")\ `, "unparsable conditional expression 'worldworld) '", 1},
	}
	for _, tt := range tests {
		_, d := parseString(t, "global\n"+tt.line+"\n.endif\n")
		all := d.All()
		want := tt.msg + " in '.if' at position " + strconv.Itoa(tt.pos) + ":"
		if len(all) != 1 || !strings.HasPrefix(all[0].Msg, want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.line, renderDiags(d), want)
		}
	}
}

func TestEvalConditionAPI(t *testing.T) {
	opts := Options{Getenv: testEnv, Features: []string{"OPENSSL"}}
	if v, err := EvalCondition("defined(WHO) && feature(OPENSSL) && version_atleast(2.6)", opts); err != nil || !v {
		t.Errorf("got %v %v, want true", v, err)
	}
	if _, err := EvalCondition("1 2", opts); err == nil || !strings.Contains(err.Error(), "unexpected character '2'") {
		t.Errorf("got %v", err)
	}
}
