package sample

import (
	"encoding/hex"
	"net"
	"strings"
	"testing"

	"goha/core/http1"
)

// evalText evaluates expr on r: its text, or "<none>" without a sample.
// A ",hex" at the end shows the bytes in upper-case hexadecimal (the
// converter's output) without needing the converter.
func fetchText(t *testing.T, r *Request, expr string) string {
	t.Helper()
	expr, hexOut := strings.CutSuffix(expr, ",hex")
	e, err := CompileExpr(nil, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	var s Sample
	if !e.Eval(r, &s) {
		return "<none>"
	}
	if hexOut {
		return strings.ToUpper(hex.EncodeToString(s.B))
	}
	return string(AppendText(nil, r, &s))
}

// withResponse makes r handle raw as the response to its request.
func withResponse(t *testing.T, r *Request, raw string) *Request {
	t.Helper()
	h := &http1.Head{}
	if _, err := h.ParseResponse([]byte(raw), http1.MethodOther); err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	r.Req, r.Head = r.Head, h
	return r
}

const cookieReq = "GET /p?a=1&b=2;c=x3&a=4&empty=&n=-12z HTTP/1.1\r\nHost: h\r\n" +
	"Cookie: cook1=0; cook2=123; cook3=22\r\nCookie: $Version=1; cook2 = \"q;v\" ; noeq; cook4=7x\r\n" +
	"Authorization: Basic YWxpY2U6czNjcjN0\r\nX-Fwd: 10.1.2.3:8080\r\nX-Fwd: junk\r\nX-Six: 2001:db8::1\r\n\r\n"

func TestFetchesL7(t *testing.T) {
	for _, tc := range []struct {
		req, expr, want string
	}{
		// URL parameters: the first occurrence; '&', ';' and the
		// delimiter separate them.
		{cookieReq, "url_param(a)", "1"},
		{cookieReq, "urlp(b)", "2"},
		{cookieReq, "urlp(c)", "x3"},
		{cookieReq, "urlp(empty)", ""},
		{cookieReq, "urlp(nope)", "<none>"},
		{cookieReq, "urlp", "1"},
		{cookieReq, "urlp_val(n)", "-12"},
		{cookieReq, "urlp_val(c)", "0"},
		{"GET /x;k=v?z=1 HTTP/1.1\r\nHost: h\r\n\r\n", "urlp(k,;)", "v?z=1"}, // '?' no longer separates
		{"GET /x;k=v?z=1 HTTP/1.1\r\nHost: h\r\n\r\n", "urlp(z,;)", "<none>"},
		{"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", "urlp(a)", "<none>"},
		{"GET /x?xid=3&id=4 HTTP/1.1\r\nHost: h\r\n\r\n", "urlp(id)", "4"},

		// Cookies: the cook.vtc cases, then quoting, blanks, '$'
		// attributes and cookies without '='.
		{cookieReq, "req.cook_cnt", "5"},
		{cookieReq, "req.cook_val", "0"},
		{cookieReq, "req.cook_val(cook2)", "-14"}, // the last cook2 is "q;v": '"' is 14 below '0' (strl2ic)
		{cookieReq, "req.cook(cook2)", "\"q;v\""},
		{cookieReq, "cook(cook1)", "0"},
		{cookieReq, "cook", "0"},
		{cookieReq, "cook_cnt(cook2)", "2"},
		{cookieReq, "cook_val(cook4)", "7"},
		{cookieReq, "cook(noeq)", "<none>"},
		{cookieReq, "cook($Version)", "<none>"},
		{cookieReq, "cookie(cook3)", "22"},
		{"GET / HTTP/1.1\r\nHost: h\r\nCookie: cook1=0; cook2=123; cook3=22\r\n\r\n", "req.cook_val(cook2)", "123"},
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", "cook_cnt", "0"},
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", "cook", "<none>"},

		// Headers as a block, as names, as addresses, as numbers.
		{"GET / HTTP/1.1\r\nHost: H\r\nX-A: 1\r\nConnection: close\r\n\r\n", "req.hdrs", "host: H\r\nx-a: 1\r\n\r\n"},
		{"GET / HTTP/1.1\r\nHost: H\r\nX-A: 1\r\n\r\n", "req.hdrs_bin,hex", "04686F7374014803782D6101310000"},
		{"GET / HTTP/1.1\r\nHost: H\r\nX-A: 1\r\n\r\n", "req.hdr_names", "host,x-a"},
		{"GET / HTTP/1.1\r\nHost: H\r\nX-A: 1\r\n\r\n", "req.hdr_names(:)", "host:x-a"},
		{cookieReq, "req.hdr_ip(x-fwd,1)", "10.1.2.3"},
		{cookieReq, "req.hdr_ip(x-fwd)", "<none>"}, // the last one is not an address
		{cookieReq, "hdr_ip(x-six)", "2001:db8::1"},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: 1.2.3.4:99999\r\n\r\n", "hdr_ip(x)", "<none>"},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: 1.2.3.4x\r\n\r\n", "hdr_ip(x)", "<none>"},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: 42abc\r\n\r\n", "req.hdr_val(x)", "42"},
		{"GET / HTTP/1.1\r\nHost: h\r\nX: 1 2\r\n\r\n", "hdr_val(x)", "-58"}, // HAProxy's strl2ic: (1*10-16)*10+2
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", "hdr_val(x)", "<none>"},

		// Hashes of the URL (computed with an independent implementation
		// of HAProxy's sdbm and full_hash).
		{testReq, "base32", "3071707720"},
		{testReq, "url32", "1382537726"},
		{testReq, "base32+src,hex", "B7168A48C0000207"},
		{testReq, "baseq", "Example.COM/api/v1/users?id=3&x=y"},
		{"GET http://10.0.0.1:8080/x HTTP/1.1\r\nHost: 10.0.0.1:8080\r\n\r\n", "url_ip", "10.0.0.1"},
		{"GET http://10.0.0.1:8080/x HTTP/1.1\r\nHost: 10.0.0.1:8080\r\n\r\n", "url_port", "8080"},
		{"GET HTTPS://10.0.0.1/x HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", "url_port", "443"},
		{"GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n", "url_ip", "<none>"},
		{"GET /x HTTP/1.1\r\nHost: h\r\n\r\n", "url_port", "<none>"},

		// Authorization: alice:s3cr3t.
		{cookieReq, "http_auth_type", "Basic"},
		{cookieReq, "http_auth_user", "alice"},
		{cookieReq, "http_auth_pass", "s3cr3t"},
		{"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: basic YWxpY2U6\r\n\r\n", "http_auth_pass", ""},
		{"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Basic YWxpY2U\r\n\r\n", "http_auth_user", "<none>"},
		{"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Basic bm9jb2xvbg==\r\n\r\n", "http_auth_user", "<none>"},
		{"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer  tok.en\r\n\r\n", "http_auth_type", "Bearer"},
		{"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer  tok.en\r\n\r\n", "http_auth_bearer", "tok.en"},
		{"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer  tok.en\r\n\r\n", "http_auth_user", "<none>"},
		{"GET / HTTP/1.1\r\nHost: h\r\nX-Tok: Bearer abc\r\n\r\n", "http_auth_bearer(x-tok)", "abc"},
		{"GET / HTTP/1.1\r\nHost: h\r\nX-Tok: Basic abc\r\n\r\n", "http_auth_bearer(x-tok)", ""},
		{"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Digest x\r\n\r\n", "http_auth_type", "<none>"},
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", "http_auth_type", "<none>"},

		{"GET / HTTP/1.0\r\nHost: h\r\n\r\n", "capture.req.ver", "HTTP/1.0"},
		{testReq, "capture.req.ver", "HTTP/1.1"},
		// Without a stream that tells them, no sample.
		{testReq, "http_first_req", "<none>"},
		{testReq, "capture.req.method", "<none>"},
		{testReq, "req.body", "<none>"},
		{testReq, "req.body_len", "<none>"},
		{testReq, "req.body_param", "<none>"},
	} {
		r := request(t, tc.req)
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s on %q = %q, want %q", tc.expr, strings.SplitN(tc.req, "\r\n", 2)[0], got, tc.want)
		}
	}
}

func TestFetchesResponse(t *testing.T) {
	const resp = "HTTP/1.0 200 OK\r\nSet-Cookie: SID=abc; Path=/; x=1\r\nSet-Cookie: lang=fr\r\nX-Ip: 192.0.2.1\r\nContent-Length: 0\r\n\r\n"
	for _, tc := range []struct{ expr, want string }{
		{"res.cook(SID)", "abc"},
		{"scook(x)", "<none>"}, // only the first pair of a Set-Cookie names a cookie
		{"res.cook", "abc"},
		// Counting goes on after each value found, and each time the
		// pair that follows is a first pair (HAProxy's cook_cnt).
		{"res.cook_cnt", "4"},
		{"scook_cnt(lang)", "1"},
		{"res.cook_val(SID)", "0"},
		{"res.hdr_ip(x-ip)", "192.0.2.1"},
		{"shdr_val(content-length)", "0"},
		{"res.hdr_names", "set-cookie,set-cookie,x-ip,content-length"},
		{"capture.res.ver", "HTTP/1.0"},
		{"capture.req.ver", "HTTP/1.1"},
		{"cookie(lang)", "fr"},
		{"req.cook(cook1)", "<none>"},
		{"path", "/api/v1/users"},
	} {
		r := withResponse(t, request(t, testReq), resp)
		if got := fetchText(t, r, tc.expr); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// An ACL sees every value of a multi-valued fetch.
func TestFetchesL7Iterate(t *testing.T) {
	for _, tc := range []struct {
		acl  string
		want bool
	}{
		{"urlp(a) 4", true},
		{"urlp(a) 5", false},
		{"urlp 2", true},
		{"cook(cook2) 123", true},
		{"req.cook(cook2) \"q;v\"", true},
		{"cook -m found", true},
		{"req.hdr_ip(x-fwd) 10.1.2.0/24", true},
		{"hdr_ip(x-six) 2001:db8::/32", true},
		{"urlp_val(n) lt 0", true},
		{"cook_val(cook3) eq 22", true},
		{"http_auth_user alice", true},
	} {
		term, err := CompileACL(nil, strings.Fields(tc.acl))
		if err != nil {
			t.Errorf("%s: %v", tc.acl, err)
			continue
		}
		if got := term.Eval(request(t, cookieReq)); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.acl, got, tc.want)
		}
	}
}

func TestStrl2ic(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"", 0}, {"0", 0}, {"123", 123}, {"-45", -45}, {"12a3", 12}, {"-", 0},
		{"4294967297", 1}, // 32-bit wrap
		{"1/", 10 - 1},    // a character below '0' is added, not refused
	} {
		if got := strl2ic([]byte(tc.in)); got != tc.want {
			t.Errorf("strl2ic(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestHashSrcIPv6(t *testing.T) {
	r := request(t, testReq)
	r.Client = &net.TCPAddr{IP: net.ParseIP("2001:db8::7"), Port: 1}
	if got := fetchText(t, r, "base32+src,hex"); got != "B7168A48"+"20010DB8000000000000000000000007" {
		t.Errorf("base32+src = %s", got)
	}
}

func FuzzCookieValue(f *testing.F) {
	for _, s := range []string{"a=1; b=2", "$v=1; a=\"x;y\"", "a", "=", " a = b ,c=d", "\"", "a=\"\\"} {
		f.Add(s, "a", true)
	}
	f.Fuzz(func(t *testing.T, v, name string, list bool) {
		for from, n := 0, 0; n < 1000; n++ {
			vs, ve, next, ok := cookieValue([]byte(v), from, name, list)
			if !ok {
				return
			}
			if vs > ve || ve > len(v) || next <= from {
				t.Fatalf("%q from %d: %d %d %d", v, from, vs, ve, next)
			}
			from = next
		}
		t.Fatal("no end")
	})
}

func FuzzURLParam(f *testing.F) {
	for _, s := range []string{"a=1&b=2", "a", "=&=;", "aa=1&a=2"} {
		f.Add(s, "a")
	}
	f.Fuzz(func(t *testing.T, q, name string) {
		s := Sample{iter: true}
		for n := 0; n < 1000; n++ {
			if !paramFetch([]byte(q), name, '?', &s) || !s.more {
				return
			}
		}
		t.Fatal("no end")
	})
}

// The usual HTTP and stream fetches allocate nothing once warm (an IPv6
// address in a header is parsed by net/netip, which may allocate).
func TestFetchesAllocateNothing(t *testing.T) {
	r := request(t, cookieReq)
	r.Stream = &testStream{fe: "fe", be: "be", srv: "s1", listener: "foo"}
	e, err := CompileLF(nil, "%[urlp(a)]%[cook(cook2)]%[req.cook_cnt]%[base32]%[hdr_ip(x-fwd,1)]%[req.hdr_val(x-fwd)]%[http_auth_user]%[fe_name]%[be_name]%[srv_name]%[so_name]%[req.hdrs]")
	if err != nil {
		t.Fatal(err)
	}
	acl, err := CompileCond(nil, strings.Fields("if { urlp(a) 4 } { cook(cook2) -m found }"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	if n := testing.AllocsPerRun(100, func() { b = e.AppendTo(b[:0], r); acl.Eval(r) }); n != 0 {
		t.Errorf("%v allocations per evaluation", n)
	}
}
