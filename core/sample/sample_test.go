package sample

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goha/core/http1"
)

// request builds a Request over a parsed request head.
func request(t testing.TB, raw string) *Request {
	t.Helper()
	h := &http1.Head{}
	if _, err := h.ParseRequest([]byte(raw)); err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return &Request{
		Head:   h,
		Client: &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40000},
		Local:  &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080},
		Vars:   &Vars{},
	}
}

const testReq = "GET /api/v1/users?id=3&x=y HTTP/1.1\r\nHost: Example.COM\r\n" +
	"Accept: text/html, application/json ,*/*\r\nX-Multi: one\r\nX-Multi: two\r\nContent-Length: 0\r\n\r\n"

func TestExpressions(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want string // "<none>" when no sample
	}{
		{"path", "/api/v1/users"},
		{"pathq", "/api/v1/users?id=3&x=y"},
		{"url", "/api/v1/users?id=3&x=y"},
		{"query", "id=3&x=y"},
		{"method", "GET"},
		{"base", "Example.COM/api/v1/users"},
		{"req.ver", "1.1"},
		{"hdr(host)", "Example.COM"},
		{"hdr(Host)", "Example.COM"},
		{"hdr(accept)", "*/*"}, // the last element
		{"hdr(accept,1)", "text/html"},
		{"hdr(accept,-2)", "application/json"},
		{"req.fhdr(accept)", "text/html, application/json ,*/*"},
		{"hdr(x-multi)", "two"},
		{"hdr(x-multi,1)", "one"},
		{"hdr(x-none)", "<none>"},
		{"hdr_cnt(accept)", "3"},
		{"req.fhdr_cnt(accept)", "1"},
		{"hdr_cnt", "7"},
		{"src", "192.0.2.7"},
		{"src_port", "40000"},
		{"dst", "127.0.0.1"},
		{"dst_port", "8080"},
		{"str(abc)", "abc"},
		{"str(\"a,b\")", "a,b"},
		{"str(a\\ b)", "a b"},
		{"str('a\\2')", "a\\2"}, // no escape within single quotes
		{"str(a\\2)", "a\\2"},   // a lone backslash stays
		{"int(-12)", "-12"},
		{"bool(1)", "1"},
		{"ipv4(10.0.0.1)", "10.0.0.1"},
		{"always_true", "1"},
		{"var(txn.unset)", "<none>"},
		{"var(txn.unset,dflt)", "dflt"},
		{"status", "<none>"},
		{"res.hdr(x)", "<none>"},
	} {
		e, err := CompileExpr(nil, tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		r := request(t, testReq)
		var s Sample
		got := "<none>"
		if e.Eval(r, &s) {
			got = string(AppendText(nil, r, &s))
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestExpressionErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"", "missing fetch method"},
		{"nosuch", "unknown fetch method 'nosuch'"},
		{"str", "fetch method 'str' : missing arguments (got 0/1)"},
		{"hdr(a,b,c)", "fetch method 'hdr' : failed to parse 'b' as type 'integer' at position 2"},
		{"str(a,b)", "fetch method 'str' : expected ')' before ',b)'"},
		{"str(a\\,b)", "fetch method 'str' : expected ')' before ',b)'"},
		{"int(x)", "fetch method 'int' : failed to parse 'x' as type 'integer' at position 1"},
		{"path(", "fetch method 'path' : expected ')'"},
		{"var(x)", "fetch method 'var' : invalid variable name 'x'"},
	} {
		_, err := CompileExpr(nil, tc.expr)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.expr, err, tc.want)
		}
	}
}

func TestCasts(t *testing.T) {
	r := &Request{}
	for _, tc := range []struct {
		in   Sample
		to   Type
		ok   bool
		want string
	}{
		{Sample{T: TStr, B: []byte("42")}, TSint, true, "42"},
		{Sample{T: TStr, B: []byte("-7")}, TSint, true, "-7"},
		{Sample{T: TStr, B: []byte("4x")}, TSint, true, "4"},
		{Sample{T: TStr, B: []byte("abc")}, TSint, true, "0"},
		{Sample{T: TStr, B: []byte("")}, TSint, false, ""},
		{Sample{T: TStr, B: []byte("10.1.2.3")}, TIPv4, true, "10.1.2.3"},
		{Sample{T: TStr, B: []byte("::1")}, TIPv4, false, ""},
		{Sample{T: TSint, I: 0x0a000001}, TIPv4, true, "10.0.0.1"},
		{Sample{T: TSint, I: 5}, TBool, true, "1"},
		{Sample{T: TBin, B: []byte("ab\x00cd")}, TStr, true, "ab"},
		{Sample{T: TBool, I: 1}, TIPv4, false, ""},
		{Sample{T: TIPv4}, TBool, false, ""},
		{Sample{T: TBool, I: 1}, TBin, true, "\x00\x00\x00\x00\x00\x00\x00\x01"},
	} {
		s := tc.in
		if tc.to == TIPv4 && tc.in.T == TIPv4 {
			continue
		}
		ok := cast(r, &s, tc.to)
		if ok != tc.ok {
			t.Errorf("cast %v to %v: ok %v, want %v", tc.in, tc.to, ok, tc.ok)
			continue
		}
		if ok {
			if got := string(AppendText(nil, r, &s)); got != tc.want {
				t.Errorf("cast %v to %v = %q, want %q", tc.in, tc.to, got, tc.want)
			}
		}
	}
}

func TestACLMatching(t *testing.T) {
	dir := t.TempDir()
	pats := filepath.Join(dir, "hosts.lst")
	// Leading blanks are skipped, trailing ones are part of the pattern.
	os.WriteFile(pats, []byte("# hosts\nfoo.org \n\n  example.com\n"), 0o644)
	mapf := filepath.Join(dir, "hosts.map")
	os.WriteFile(mapf, []byte("example.com be1\nother.net be2\n"), 0o644)
	for _, tc := range []struct {
		acl  string
		want bool
	}{
		{"path /api/v1/users", true},
		{"path /api", false},
		{"path_beg /api/", true},
		{"path_end /users", true},
		{"path_sub v1", true},
		{"path_reg ^/api/v[0-9]+/", true},
		{"path_dir v1", true},
		{"path_dir api/v1", true},
		{"path_dir pi", false},
		{"path_len 13", true},
		{"path_len 1:12", false},
		{"path -m len 10:", true},
		{"hdr(host) example.com", false},
		{"hdr(host) -i example.com", true},
		{"hdr_dom(host) -i example", true},
		{"hdr_dom(host) -i exam", false},
		{"hdr_beg(host) -i EXAMPLE.", true},
		{"hdr(accept) application/json", true}, // any element
		{"hdr(x-multi) one", true},
		{"hdr(x-multi) three", false},
		{"hdr_cnt(x-multi) 2", true},
		{"hdr_cnt(x-multi) gt 2", false},
		{"hdr_cnt(x-multi) ge 2", true},
		{"req.hdr_val(content-length) eq 0", true},
		{"hdr(x-none) -m found", false},
		{"hdr(host) -m found", true},
		{"hdr(host)", false}, // no pattern: nothing matches
		{"src 192.0.2.0/24", true},
		{"src 192.0.2.0/255.255.255.0", true},
		{"src 10.0.0.0/8 ::1", false},
		{"src_port 40000", true},
		{"method GET HEAD", true},
		{"method POST", false},
		{"always_true", true},
		{"always_false", false},
		{"hdr(host) -i -f " + pats, true},
		{"str(foo.org) -f " + pats, false},
		{"hdr(host) -i -M -f " + mapf, true},
		{"hdr(host) -m reg -i ^example\\.", true},
		{"str(abc) -m bin 616263", true},
		{"int(5) 1:4 6:9", false},
		{"int(5) 1:4 5", true},
		{"bool(0) -m bool", false},
		{"str(x) -m sub -- -x", false},
		{"var(txn.nothing) -m found", false},
	} {
		term, err := CompileACL(nil, strings.Fields(tc.acl))
		if err != nil {
			t.Errorf("%s: %v", tc.acl, err)
			continue
		}
		if got := term.Eval(request(t, testReq)); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.acl, got, tc.want)
		}
	}
}

func TestACLErrors(t *testing.T) {
	for _, tc := range []struct{ acl, want string }{
		{"bogus x", "unknown fetch method 'bogus' in ACL expression 'bogus'."},
		{"path -m nope x", "unknown matching method 'nope'"},
		{"path -q x", "'-q' : unknown flag"},
		{"src nothere", "'nothere' is not a valid IPv4 or IPv6 address"},
		{"path_len abc", "'abc' is not a number"},
		{"path -f /nonexistent/file", "failed to open pattern file </nonexistent/file>"},
		{"path_reg (", "regex '(' is invalid"},
	} {
		_, err := CompileACL(nil, strings.Fields(tc.acl))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.acl, err, tc.want)
		}
	}
}

func TestConditions(t *testing.T) {
	named := map[string][]*Term{}
	api, _ := CompileACL(nil, []string{"path_beg", "/api"})
	named["is_api"] = []*Term{api}
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{"if is_api", true},
		{"unless is_api", false},
		{"if !is_api", false},
		{"if is_api METH_GET", true},
		{"if METH_POST || is_api", true},
		{"if METH_POST or !is_api", false},
		{"if HTTP_1.1 HTTP_URL_SLASH", true},
		{"if HTTP_1.0", false},
		{"if { path_end /users } { src 192.0.2.7 }", true},
		{"if ! { method GET }", false},
		{"if LOCALHOST", false},
		{"if TRUE", true},
		{"if FALSE", false},
		{"if HTTP_CONTENT", false},
	} {
		c, err := CompileCond(nil, strings.Fields(tc.cond), named)
		if err != nil {
			t.Errorf("%s: %v", tc.cond, err)
			continue
		}
		if got := c.Eval(request(t, testReq)); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.cond, got, tc.want)
		}
	}
	if _, err := CompileCond(nil, []string{"if", "nope"}, named); err == nil || err.Error() != "no such ACL : 'nope'" {
		t.Errorf("unknown ACL: %v", err)
	}
}

func TestLogFormatExpr(t *testing.T) {
	e, err := CompileLF(nil, "%[hdr(host)] %[path]%% %[hdr(missing)]|%[src]")
	if err != nil {
		t.Fatal(err)
	}
	got := string(e.AppendTo(nil, request(t, testReq)))
	if want := "Example.COM /api/v1/users% |192.0.2.7"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := CompileLF(nil, "%[path"); err == nil {
		t.Error("an unclosed expression was accepted")
	}
}

// An HTTP action's format writes its samples' control characters %XX,
// as HAProxy's LOG_OPT_HTTP: "a\r\nb\tc\x7f" from a sample cannot end a
// header line; the format's own text is left as written.
func TestLogFormatHTTPEncoding(t *testing.T) {
	e, err := CompileLF(nil, "<%[str(YQ0KYgljfw==),b64dec]>")
	if err != nil {
		t.Fatal(err)
	}
	r := request(t, testReq)
	if got := string(e.AppendTo(nil, r)); got != "<a\r\nb\tc\x7f>" {
		t.Errorf("plain format: %q", got)
	}
	e.HTTP()
	if got, want := string(e.AppendTo(nil, r)), "<a%0D%0Ab\tc%7F>"; got != want {
		t.Errorf("HTTP format: %q, want %q", got, want)
	}
}

func TestVariables(t *testing.T) {
	r := request(t, testReq)
	pv := &ProcVars{}
	r.Vars.Proc = pv
	n, _ := ParseVarName("txn.user")
	r.Vars.Set(n, &Sample{T: TStr, B: []byte("alice")})
	p, _ := ParseVarName("proc.x")
	r.Vars.Set(p, &Sample{T: TSint, I: 3})
	e, _ := CompileLF(nil, "%[var(txn.user)]-%[var(proc.x)]")
	if got := string(e.AppendTo(nil, r)); got != "alice-3" {
		t.Errorf("got %q", got)
	}
	term, err := CompileACL(nil, []string{"var(txn.user)", "-m", "str", "alice"})
	if err != nil || !term.Eval(r) {
		t.Errorf("variable ACL: %v", err)
	}
	r.Vars.Clear(ScopeTxn)
	if r.Vars.Has(n) || !r.Vars.Has(p) {
		t.Error("Clear(txn) did not clear only the transaction's variables")
	}
	if _, err := ParseVarName("foo.bar"); err == nil {
		t.Error("bad scope accepted")
	}
}

func TestEvalAllocatesNothing(t *testing.T) {
	r := request(t, testReq)
	c, err := CompileCond(nil, strings.Fields("if { hdr_dom(host) -i example.com } { path_beg /api } || { src 10.0.0.0/8 }"), nil)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := CompileLF(nil, "%[hdr(host)]%[path]%[src]")
	var b []byte
	allocs := testing.AllocsPerRun(100, func() {
		c.Eval(r)
		b = e.AppendTo(b[:0], r)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per evaluation", allocs)
	}
}
