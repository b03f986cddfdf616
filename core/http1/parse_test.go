package http1

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// requestVectors are requests with the status HAProxy 2.6.12 answers them
// with (0: accepted). TestAgainstHAProxy replays them against the real
// binary when it is installed.
var requestVectors = []struct {
	name string
	raw  string
	want int
}{
	{"plain", "GET /ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"space-in-name", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo Bar: x\r\n\r\n", 400},
	{"space-before-colon", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo : x\r\n\r\n", 400},
	{"nul-in-value", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo: a\x00b\r\n\r\n", 0},
	{"nul-in-name", "GET /ok HTTP/1.1\r\nHost: a\r\nF\x00oo: ab\r\n\r\n", 400},
	{"ctl-in-value", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo: a\x01b\r\n\r\n", 0},
	{"high-in-value", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo: a\xffb\r\n\r\n", 0},
	{"bare-lf", "GET /ok HTTP/1.1\nHost: a\n\n", 0},
	{"bare-cr", "GET /ok HTTP/1.1\rHost: a\r\n\r\n", 400},
	{"cr-in-value", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo: a\rb\r\n\r\n", 400},
	{"obs-fold", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo: a\r\n b\r\n\r\n", 0},
	{"empty-name", "GET /ok HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", 400},
	{"no-colon", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo\r\n\r\n", 400},
	{"blank-value", "GET /ok HTTP/1.1\r\nHost: a\r\nFoo:   \r\n\r\n", 0},
	{"dup-cl-same", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 0},
	{"dup-cl-differ", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
	{"cl-list", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", 0},
	{"cl-list-differ", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\nabc", 400},
	{"cl-empty", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400},
	{"cl-trailing-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3,\r\n\r\nabc", 400},
	{"cl-leading-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: ,3\r\n\r\nabc", 400},
	{"cl-double-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3,,3\r\n\r\nabc", 400},
	{"cl-blank-element", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3, ,3\r\n\r\nabc", 400},
	{"cl-blank", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length:  \r\n\r\n", 400},
	{"version-2.0", "GET /ok HTTP/2.0\r\nHost: a\r\n\r\n", 0},
	{"version-1.2", "GET /ok HTTP/1.2\r\nHost: a\r\n\r\n", 0},
	{"version-0.9", "GET /ok HTTP/0.9\r\nHost: a\r\n\r\n", 0},
	{"cl-plus", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", 400},
	{"cl-negative", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: -3\r\n\r\nabc", 400},
	{"cl-overflow", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\nabc", 400},
	{"cl-and-te", "POST /ok HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 0},
	{"te-identity", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", 400},
	{"te-chunked-identity", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n", 400},
	{"te-gzip-chunked", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 422},
	{"te-chunked-twice", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400},
	{"te-two-fields", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
	{"te-leading-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,chunked\r\n\r\n0\r\n\r\n", 422},
	{"te-leading-comma-space", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked\r\n\r\n0\r\n\r\n", 422},
	{"te-leading-double-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,,chunked\r\n\r\n0\r\n\r\n", 422},
	{"te-leading-blank-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:  ,chunked\r\n\r\n0\r\n\r\n", 422},
	{"te-trailing-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n\r\n0\r\n\r\n", 0},
	{"te-trailing-comma-space", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, \r\n\r\n0\r\n\r\n", 0},
	{"te-trailing-double-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,,\r\n\r\n0\r\n\r\n", 400},
	{"te-trailing-blank-element", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, ,\r\n\r\n0\r\n\r\n", 400},
	{"te-blank-before-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked ,\r\n\r\n0\r\n\r\n", 0},
	{"te-inner-empty", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip,,chunked\r\n\r\n0\r\n\r\n", 422},
	{"te-only-comma", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ,\r\n\r\n0\r\n\r\n", 400},
	{"te-blank", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:   \r\n\r\n0\r\n\r\n", 400},
	{"te-empty", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n0\r\n\r\n", 400},
	{"te-upper", "POST /ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: CHUNKED\r\n\r\n0\r\n\r\n", 0},
	{"te-http10", "POST /ok HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0},
	{"version-junk", "GET /ok HTTP/1.x\r\nHost: a\r\n\r\n", 400},
	{"http09", "GET /ok\r\n\r\n", 400},
	{"version-2", "GET /ok HTTP/2.0\r\nHost: a\r\n\r\n", 0},
	{"version-lower", "GET /ok http/1.1\r\nHost: a\r\n\r\n", 400},
	{"uri-ctl", "GET /o\x01k HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"uri-high", "GET /ok\xff HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"uri-fragment", "GET /ok#x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"method-bad", "G(T /ok HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"two-spaces", "GET  /ok  HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"tabs", "GET\t/ok\tHTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"leading-crlf", "\r\n\r\nGET /ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"no-host", "GET /ok HTTP/1.1\r\n\r\n", 0},
	{"host-twice-same", "GET /ok HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 0},
	{"host-twice-differ", "GET /ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
	{"absolute-host-differ", "GET http://b/ok HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"absolute-default-port", "GET http://a:80/ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"absolute-other-port", "GET http://a:81/ok HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"absolute-https-port", "GET https://a:443/ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"absolute-wrong-default", "GET http://a:443/ok HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"host-default-port", "GET http://a/ok HTTP/1.1\r\nHost: a:80\r\n\r\n", 0},
	{"host-other-port", "GET http://a:80/ok HTTP/1.1\r\nHost: a:81\r\n\r\n", 400},
	{"asterisk-get", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"asterisk-options", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"other-scheme-differ", "GET ftp://b/x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"other-scheme-same", "GET ftp://a/x HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"broken-scheme", "GET http:/x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"double-slash-path", "GET //x HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"connect", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", 0},
	{"connect-host-differ", "CONNECT a:443 HTTP/1.1\r\nHost: b\r\n\r\n", 400},
	{"connect-path", "CONNECT /x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"connect-scheme", "CONNECT http://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"connect-no-port", "CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"connect-empty-port", "CONNECT a: HTTP/1.1\r\n\r\n", 400},
	{"connect-no-host", "CONNECT a:8443 HTTP/1.1\r\n\r\n", 0},
	{"authority-as-path", "GET a:80 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"absolute-no-path", "GET http://a HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"absolute-query-no-path", "GET http://a?x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"absolute-empty-userinfo", "GET http://@a/ HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"absolute-empty-authority", "GET http:// HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"digit-scheme", "GET 1http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"absolute-userinfo", "GET http://u:p@a/ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"absolute-upper-scheme", "GET HTTP://b/ok HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"absolute-host-case", "GET http://A/ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"no-scheme-target", "GET a HTTP/1.1\r\nHost: b\r\n\r\n", 400},
	{"no-scheme-target-path", "GET a/x HTTP/1.1\r\nHost: b\r\n\r\n", 400},
	{"no-scheme-target-same", "GET a/x HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"absolute-no-host", "GET http://b/ok HTTP/1.1\r\n\r\n", 0},
	{"absolute-host-same", "GET http://a/ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"get10-body", "GET /ok HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc", 413},
	{"websocket-no-key", "GET /ok HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n", 400},
	{"websocket", "GET /ok HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", 0},
	{"space-in-uri", "GET /o k HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"empty-uri", "GET  HTTP/1.1\r\nHost: a\r\n\r\n", 400},
	{"lower-method", "get /ok HTTP/1.1\r\nHost: a\r\n\r\n", 0},
	{"100-fields", "GET /ok HTTP/1.1\r\n" + fields(100) + "\r\n", 0},
	{"101-fields", "GET /ok HTTP/1.1\r\n" + fields(101) + "\r\n", 400},
	{"101-fields-one-merged", "GET /ok HTTP/1.1\r\nHost: a\r\n" + fields(99) + "Host: a\r\n\r\n", 0},
	{"102-fields-one-merged", "GET /ok HTTP/1.1\r\nHost: a\r\n" + fields(100) + "Host: a\r\n\r\n", 400},
	{"head-at-htx-limit", "GET /ok HTTP/1.1\r\nX: " + strings.Repeat("a", 15252) + "\r\n\r\n", 0},
	{"head-over-htx-limit", "GET /ok HTTP/1.1\r\nX: " + strings.Repeat("a", 15253) + "\r\n\r\n", 400},
	// HTX estimate: 37 + 14 for the request line, 95 * (8+11+140) for the
	// long fields, 8+1+W for Y: the limit 15312 is met at W = 147.
	{"many-fields-at-htx-limit", "GET /ok HTTP/1.1\r\n" + strings.Repeat("X-Long-Name: "+strings.Repeat("v", 140)+"\r\n", 95) + "Y: " + strings.Repeat("w", 147) + "\r\n\r\n", 0},
	{"many-fields-over-htx-limit", "GET /ok HTTP/1.1\r\n" + strings.Repeat("X-Long-Name: "+strings.Repeat("v", 140)+"\r\n", 95) + "Y: " + strings.Repeat("w", 148) + "\r\n\r\n", 400},
	{"blanks-inflate-raw", "GET /ok HTTP/1.1\r\nX:" + strings.Repeat(" ", 8000) + "a" + strings.Repeat(" ", 8000) + "\r\n\r\n", 0},
	{"head-15000", "GET /ok HTTP/1.1\r\nX: " + strings.Repeat("a", 15000-25) + "\r\n\r\n", 0},
	{"head-15400", "GET /ok HTTP/1.1\r\nX: " + strings.Repeat("a", 15400-25) + "\r\n\r\n", 400},
	{"uri-20000", "GET /" + strings.Repeat("a", 20000) + " HTTP/1.1\r\n\r\n", 400},
}

func fields(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("X-H")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(": v\r\n")
	}
	return b.String()
}

// parseStatus runs the parser over a complete request as core would (the
// whole buffer at once) and returns the status it leads to.
func parseStatus(t *testing.T, raw string) (int, *Head, int) {
	t.Helper()
	h := &Head{}
	buf := []byte(raw)
	n, err := h.ParseRequest(buf)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not *Error", err)
		}
		return e.Status(), h, 0
	}
	if n == 0 {
		t.Fatalf("incomplete head")
	}
	return 0, h, n
}

func TestRequestVectors(t *testing.T) {
	for _, v := range requestVectors {
		t.Run(v.name, func(t *testing.T) {
			got, _, _ := parseStatus(t, v.raw)
			if got != v.want {
				t.Fatalf("status %d, want %d", got, v.want)
			}
		})
	}
}

func TestRequestFraming(t *testing.T) {
	tests := []struct {
		raw       string
		body      BodyKind
		cl        int64
		keepAlive bool
		rewrite   bool
		flags     Flags
	}{
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", BodyNone, 0, true, false, FlagVer11 | FlagHost},
		{"GET / HTTP/1.0\r\n\r\n", BodyNone, 0, false, false, 0},
		{"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", BodyNone, 0, true, false, FlagConnKeepAlive},
		{"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", BodyNone, 0, false, false, FlagVer11 | FlagConnClose},
		{"GET / HTTP/1.1\r\nConnection: Keep-Alive, CLOSE\r\n\r\n", BodyNone, 0, false, false, FlagVer11 | FlagConnClose | FlagConnKeepAlive},
		{"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n", BodyLength, 10, true, false, FlagVer11 | FlagContentLength},
		{"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", BodyNone, 0, true, false, FlagVer11 | FlagContentLength},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", BodyChunked, 0, true, false, FlagVer11 | FlagChunked | FlagTransferEncoding},
		// Smuggling guard: chunked wins, CL dropped, close after.
		{"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", BodyChunked, 0, false, true,
			FlagVer11 | FlagChunked | FlagTransferEncoding | FlagForceClose},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", BodyChunked, 0, false, true,
			FlagVer11 | FlagChunked | FlagTransferEncoding | FlagForceClose},
		{"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", BodyChunked, 0, false, false,
			FlagChunked | FlagTransferEncoding | FlagForceClose | FlagCloseServer},
		{"POST / HTTP/1.0\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", BodyChunked, 0, false, true,
			FlagChunked | FlagTransferEncoding | FlagForceClose | FlagCloseServer},
		{"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", BodyLength, 3, true, true, FlagVer11 | FlagContentLength},
		// A CONNECT has no body: its framing fields are removed.
		{"CONNECT a:443 HTTP/1.1\r\nContent-Length: 3\r\n\r\n", BodyNone, 0, true, true, FlagVer11},
		{"CONNECT a:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", BodyNone, 0, true, true, FlagVer11 | FlagCloseServer},
		{"GET / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n", BodyLength, 3, true, false, FlagVer11 | FlagExpect100 | FlagContentLength},
		// An upgrade request with a body loses its Upgrade header.
		{"POST / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 1\r\n\r\n", BodyLength, 1, true, true, FlagVer11 | FlagContentLength},
		{"GET / HTTP/1.1\nHost: a\n\n", BodyNone, 0, true, true, FlagVer11 | FlagHost},
	}
	for _, tt := range tests {
		st, h, _ := parseStatus(t, tt.raw)
		if st != 0 {
			t.Errorf("%q: status %d", tt.raw, st)
			continue
		}
		if h.Body != tt.body || h.ContentLength != tt.cl || h.KeepAlive() != tt.keepAlive ||
			(h.Flags&FlagRewrite != 0) != tt.rewrite || h.Flags&^FlagRewrite != tt.flags {
			t.Errorf("%q: body %v cl %d ka %v flags %b, want %v %d %v %b (rewrite %v)", tt.raw,
				h.Body, h.ContentLength, h.KeepAlive(), h.Flags, tt.body, tt.cl, tt.keepAlive, tt.flags, tt.rewrite)
		}
	}
}

func TestRequestAccessors(t *testing.T) {
	raw := "\r\nGET http://user@Example.com:8080/a/b.html?x=1&y HTTP/1.1\r\nHost: example.com:8080\r\n" +
		"X-Multi: a, b\r\nx-multi: c\r\nContent-Length: 0\r\n\r\nNEXT"
	st, h, n := parseStatus(t, raw)
	if st != 0 {
		t.Fatalf("status %d", st)
	}
	if n != len(raw)-4 || h.Start() != 2 {
		t.Fatalf("len %d start %d", n, h.Start())
	}
	checks := []struct{ got, want string }{
		{string(h.MethodBytes()), "GET"},
		{string(h.Path()), "/a/b.html"},
		{string(h.Query()), "x=1&y"},
		{string(h.Authority()), "Example.com:8080"},
		{string(h.Host()), "example.com:8080"},
		{string(h.Version()), "HTTP/1.1"},
		{string(h.Raw()), raw[2 : len(raw)-4]},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if h.Method != MethodGET {
		t.Errorf("method %v", h.Method)
	}
	var vals []string
	for i := h.Index("X-MULTI", 0); i >= 0; i = h.Index("X-MULTI", i+1) {
		for v, rest, ok := NextValue(h.Value(i)); ok; v, rest, ok = NextValue(rest) {
			vals = append(vals, string(v))
		}
	}
	if strings.Join(vals, "|") != "a|b|c" {
		t.Errorf("values %q", vals)
	}
	if v, ok := h.Get("content-length"); !ok || string(v) != "0" {
		t.Errorf("content-length %q %v", v, ok)
	}
}

func TestErrorOffsets(t *testing.T) {
	tests := []struct {
		raw  string
		kind ErrorKind
		off  int
	}{
		{"GET /ok HTTP/1.1\r\nFoo Bar: x\r\n\r\n", ErrHeaderName, 21},
		{"GET /ok HTTP/1.1\r\n: x\r\n\r\n", ErrHeaderName, 18},
		{"G(T / HTTP/1.1\r\n\r\n", ErrRequestLine, 1},
		{"GET /o\x01 HTTP/1.1\r\n\r\n", ErrRequestLine, 6},
		{"GET / HTTP/1.x\r\n\r\n", ErrVersion, 6},
		{"GET /\r\n\r\n", ErrVersion, 5},
		{"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", ErrContentLength, 51},
		{"GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", ErrLineEnd, 21},
		{"\r\n\r\nG(T / HTTP/1.1\r\n\r\n", ErrRequestLine, 5},
		{"\rX", ErrLineEnd, 1},
	}
	for _, tt := range tests {
		h := &Head{}
		_, err := h.ParseRequest([]byte(tt.raw))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: err %v", tt.raw, err)
			continue
		}
		if e.Kind != tt.kind || e.Offset != tt.off {
			t.Errorf("%q: %v at %d, want %v at %d", tt.raw, e.Kind, e.Offset, tt.kind, tt.off)
		}
	}
}

// TestIncremental feeds every request vector one byte at a time, as a slow
// client would, and checks the outcome matches the one-shot parse.
func TestIncremental(t *testing.T) {
	for _, v := range requestVectors {
		want, _, wantN := parseStatus(t, v.raw)
		h := &Head{}
		got, gotN := -1, 0
		for i := 1; i <= len(v.raw); i++ {
			buf := []byte(v.raw[:i])
			n, err := h.ParseRequest(buf)
			if err != nil {
				got = err.(*Error).Status()
				break
			}
			if n > 0 {
				got, gotN = 0, n
				break
			}
		}
		if got != want || gotN != wantN {
			t.Errorf("%s: incremental %d/%d, one-shot %d/%d", v.name, got, gotN, want, wantN)
		}
	}
}

func TestTooLarge(t *testing.T) {
	h := &Head{MaxSize: 64}
	buf := []byte("GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 100))
	if n, err := h.ParseRequest(buf[:40]); n != 0 || err != nil {
		t.Fatalf("partial: %d %v", n, err)
	}
	_, err := h.ParseRequest(buf)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrTooLarge || e.Status() != 400 || e.Offset != 64 {
		t.Fatalf("err %v", err)
	}
	// An invalid byte before the limit is reported instead.
	h = &Head{MaxSize: 64}
	_, err = h.ParseRequest([]byte("GET / HTTP/1.1\r\nX Y: " + strings.Repeat("a", 100)))
	if !errors.As(err, &e) || e.Kind != ErrHeaderName {
		t.Fatalf("err %v", err)
	}
	// Exactly at the limit is fine.
	raw := "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 64-23) + "\r\n\r\n"
	h = &Head{MaxSize: 64}
	if n, err := h.ParseRequest([]byte(raw)); n != 64 || err != nil {
		t.Fatalf("at limit (%d bytes): %d %v", len(raw), n, err)
	}
}

func TestObsFoldRewritten(t *testing.T) {
	buf := []byte("GET / HTTP/1.1\r\nFoo: a\r\n\tb\r\nBar: c\r\n\r\n")
	h := &Head{}
	if _, err := h.ParseRequest(buf); err != nil {
		t.Fatal(err)
	}
	if v, _ := h.Get("foo"); string(v) != "a  \tb" {
		t.Fatalf("folded value %q", v)
	}
	var rw Rewriter
	if got := string(rw.Head(h)); got != "GET / HTTP/1.1\r\nFoo: a  \tb\r\nBar: c\r\n\r\n" {
		t.Fatalf("rebuilt %q", got)
	}
}

func TestResponses(t *testing.T) {
	tests := []struct {
		raw    string
		method Method
		status int // 0 accepted, else error status
		code   int
		body   BodyKind
		ka     bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", MethodGET, 0, 200, BodyLength, true},
		{"HTTP/1.1 200 OK\r\n\r\n", MethodGET, 0, 200, BodyUntilClose, false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", MethodHEAD, 0, 200, BodyNone, true},
		{"HTTP/1.1 204 No Content\r\n\r\n", MethodGET, 0, 204, BodyNone, true},
		{"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", MethodGET, 0, 304, BodyNone, true},
		{"HTTP/1.1 100 Continue\r\n\r\n", MethodPOST, 0, 100, BodyNone, true},
		{"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: x\r\n\r\n", MethodGET, 0, 101, BodyTunnel, false},
		{"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n", MethodGET, 502, 101, BodyTunnel, false},
		{"HTTP/1.1 200 OK\r\n\r\n", MethodCONNECT, 0, 200, BodyTunnel, false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", MethodGET, 0, 200, BodyChunked, true},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", MethodGET, 502, 200, BodyChunked, true},
		{"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", MethodGET, 0, 200, BodyLength, false},
		{"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n", MethodGET, 0, 200, BodyLength, true},
		{"HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n", MethodGET, 0, 200, BodyLength, true},
		{"HTTP/1.1 2000 OK\r\n\r\n", MethodGET, 0, 2000, BodyUntilClose, false},
		{"HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", MethodGET, 0, 20, BodyNone, true},
		{"HTTP/1.1 65736 OK\r\n\r\n", MethodGET, 0, 200, BodyUntilClose, false},
		{"HTTP/1.1 abc OK\r\n\r\n", MethodGET, 502, 0, 0, false},
		{"HTTP/1 200 OK\r\n\r\n", MethodGET, 502, 0, 0, false},
		{"garbage\r\n\r\n", MethodGET, 502, 0, 0, false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", MethodGET, 502, 0, 0, false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", MethodGET, 0, 200, BodyChunked, false},
	}
	for _, tt := range tests {
		h := &Head{}
		n, err := h.ParseResponse([]byte(tt.raw), tt.method)
		if err != nil {
			if e := err.(*Error); e.Status() != tt.status {
				t.Errorf("%q: %v, want status %d", tt.raw, err, tt.status)
			}
			continue
		}
		if tt.status != 0 {
			t.Errorf("%q: accepted, want %d", tt.raw, tt.status)
			continue
		}
		if n != len(tt.raw) || h.Status != tt.code || h.Body != tt.body || h.KeepAlive() != tt.ka {
			t.Errorf("%q: n %d status %d body %v ka %v", tt.raw, n, h.Status, h.Body, h.KeepAlive())
		}
	}
}

func TestHeadReuseNoAlloc(t *testing.T) {
	h := &Head{}
	buf := []byte(browserRequest)
	if _, err := h.ParseRequest(buf); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := h.ParseRequest(buf); err != nil || n != len(buf) {
			t.Fatal(n, err)
		}
		_ = h.Path()
		_, _ = h.Get("accept-encoding")
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per parse", allocs)
	}
}

func TestNextValue(t *testing.T) {
	var got []string
	for v, rest, ok := NextValue([]byte(" ,a , b,,c\t, ")); ok; v, rest, ok = NextValue(rest) {
		got = append(got, string(v))
	}
	if strings.Join(got, "|") != "a|b|c" {
		t.Fatalf("%q", got)
	}
	if _, _, ok := NextValue([]byte(" , ")); ok {
		t.Fatal("blank list yielded a value")
	}
	if !bytes.Equal(trimLWS([]byte(" \tx y\t ")), []byte("x y")) {
		t.Fatal("trim")
	}
}

func TestDropBodilessFraming(t *testing.T) {
	cases := []struct {
		raw    string
		method Method
		kept   bool
	}{
		{"HTTP/1.1 100 Continue\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", MethodGET, false},
		{"HTTP/1.1 101 Switching Protocols\r\nContent-Length: 5\r\n\r\n", MethodGET, false},
		{"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", MethodGET, false},
		{"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", MethodHEAD, false},
		{"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", MethodGET, true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", MethodHEAD, true},
	}
	for _, c := range cases {
		var h Head
		if _, err := h.ParseResponse([]byte(c.raw), c.method); err != nil {
			t.Fatalf("%q: %v", c.raw, err)
		}
		h.DropBodilessFraming()
		var rw Rewriter
		out := string(rw.Head(&h))
		kept := strings.Contains(out, "Content-Length") || strings.Contains(out, "Transfer-Encoding")
		if kept != c.kept {
			t.Errorf("%q: sent as %q", c.raw, out)
		}
	}
}
