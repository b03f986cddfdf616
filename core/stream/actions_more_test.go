package stream

import "testing"

func TestParseUintC(t *testing.T) {
	for _, c := range []struct {
		in string
		v  uint32
		ok bool
	}{
		{"16", 16, true}, {"0x10", 16, true}, {"010", 8, true}, {"0", 0, true},
		{"x1", 0, false}, {"1x", 0, false}, {"-1", 0, false}, {"", 0, false}, {"09", 0, false},
	} {
		v, ok := parseUintC(c.in)
		if ok != c.ok || ok && v != c.v {
			t.Errorf("parseUintC(%q) = %d, %v; want %d, %v", c.in, v, ok, c.v, c.ok)
		}
	}
}

// The messages are HAProxy 2.6's (haproxy -c).
func TestCompileOtherErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"set-log-level"}, "expects exactly 1 argument (log level name or 'silent')."},
		{[]string{"set-log-level", "foo"}, "expects exactly 1 argument (log level name or 'silent')."},
		{[]string{"strict-mode"}, "expects exactly 1 arguments."},
		{[]string{"strict-mode", "x"}, "Unexpected value 'x'. Only 'on' and 'off' are supported."},
		{[]string{"set-mark"}, "expects exactly 1 argument (integer/hex value)."},
		{[]string{"set-mark", "x1"}, "invalid character starting at 'x1' (integer/hex value expected)."},
		{[]string{"set-tos"}, "expects exactly 1 argument (integer/hex value)."},
		{[]string{"early-hint", "a"}, "expects exactly 2 arguments."},
		{[]string{"set-nice"}, "expects exactly 1 argument (integer value)."},
	} {
		_, err := compileOther(&httpRule{}, c.args, nil, false)
		if err == nil || err.Error() != c.msg {
			t.Errorf("%v: got %v, want %q", c.args, err, c.msg)
		}
	}
	r := &httpRule{}
	if ok, err := compileOther(r, []string{"set-log-level", "silent"}, nil, false); !ok || err != nil || r.status != logSilent {
		t.Errorf("set-log-level silent: %v %v %d", ok, err, r.status)
	}
	if ok, _ := compileOther(&httpRule{}, []string{"early-hint", "a", "b"}, nil, true); ok {
		t.Errorf("early-hint accepted in http-response")
	}
}

// A monitor-uri beginning with '/' matches the path of an absolute-form
// request too; another one matches the whole URI only (HAProxy 2.6).
func TestIsMonitorURI(t *testing.T) {
	for _, c := range []struct {
		m, uri string
		want   bool
	}{
		{"/health", "/health", true},
		{"/health", "http://www.haproxy.org/health", true},
		{"/health", "/hEAlth", false},
		{"/health", "/health?x", false},
		{"http://www.haproxy.org/health", "http://www.haproxy.org/health", true},
		{"http://www.haproxy.org/health", "/health", false},
	} {
		if got := isMonitorURI(c.m, []byte(c.uri)); got != c.want {
			t.Errorf("monitor-uri %q, request %q: %v", c.m, c.uri, got)
		}
	}
}
