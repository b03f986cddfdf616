//go:build regtest

package smuggle

import "strings"

// vector is one framing case. raw is sent on one connection; steps, when
// set, replace it with several sends on several connections (each send
// waits for the previous exchange to go quiet).
type vector struct {
	name    string
	raw     string
	steps   []step
	backend string // extra backend lines
	// tunnel: the bytes after the head legitimately reach the origin
	// without going through the rules (an established CONNECT tunnel).
	tunnel bool
	// diff: goha differs from HAProxy on purpose and is at least as safe;
	// the reason, in one line.
	diff string
	// pending: goha differs from HAProxy unsafely, and the fix is under
	// way; the subtest is skipped with this reason.
	pending string
}

func (v *vector) plan() []step {
	if v.steps != nil {
		return v.steps
	}
	return []step{{0, v.raw}}
}

const (
	host  = "Host: x\r\n"
	admin = "GET /admin HTTP/1.1\r\nHost: x\r\n\r\n"
	next  = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"
	ws    = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)

// post is a POST to / with extra header lines and a body.
func post(hdrs, body string) string {
	return "POST / HTTP/1.1\r\n" + host + hdrs + "\r\n" + body
}

// chunked is a chunked POST whose body is raw chunk framing, followed by a
// request the deny rule must see.
func chunked(framing string) string {
	return post("Transfer-Encoding: chunked\r\n", framing) + admin
}

func get(hdrs string) string {
	return "GET / HTTP/1.1\r\n" + host + hdrs + "\r\n"
}

func vectors() []*vector {
	big := strings.Repeat("a", 16000)
	many := strings.Repeat("X-Many: 1\r\n", 101)
	return []*vector{
		// Content-Length.
		{name: "cl-basic", raw: post("Content-Length: 5\r\n", "hello") + admin},
		{name: "cl-duplicate-same", raw: post("Content-Length: 5\r\nContent-Length: 5\r\n", "hello") + admin},
		{name: "cl-duplicate-differ", raw: post("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!") + admin},
		{name: "cl-list-same", raw: post("Content-Length: 5, 5\r\n", "hello") + admin},
		{name: "cl-list-differ", raw: post("Content-Length: 5, 6\r\n", "hello!") + admin},
		{name: "cl-trailing-comma", raw: post("Content-Length: 5,\r\n", "hello") + admin,
			pending: "Content-Length: 5,"},
		{name: "cl-leading-comma", raw: post("Content-Length: ,5\r\n", "hello") + admin,
			pending: "Content-Length: 5,"},
		{name: "cl-list-no-space", raw: post("Content-Length: 5,5\r\n", "hello") + admin},
		{name: "cl-plus", raw: post("Content-Length: +5\r\n", "hello") + admin},
		{name: "cl-negative", raw: post("Content-Length: -1\r\n", "hello") + admin},
		{name: "cl-inner-space", raw: post("Content-Length: 1 0\r\n", "helloworld") + admin},
		{name: "cl-hex", raw: post("Content-Length: 0x5\r\n", "hello") + admin},
		{name: "cl-leading-zeros", raw: post("Content-Length: 0005\r\n", "hello") + admin},
		{name: "cl-overflow", raw: post("Content-Length: 99999999999999999999\r\n", "hello") + admin},
		{name: "cl-empty", raw: post("Content-Length: \r\n", "hello") + admin},
		{name: "cl-tabs", raw: post("Content-Length:\t5\t\r\n", "hello") + admin},
		{name: "cl-space-before-colon", raw: post("Content-Length : 5\r\n", "hello") + admin},
		{name: "cl-name-case", raw: post("cONTENT-lENGTH: 5\r\n", "hello") + admin},
		{name: "cl-zero-then-request", raw: post("Content-Length: 0\r\n", "") + admin},
		{name: "cl-short-body", raw: post("Content-Length: 20\r\n", "hello")},
		{name: "cl-get-with-body", raw: "GET / HTTP/1.1\r\n" + host + "Content-Length: 5\r\n\r\nhello" + admin},
		{name: "cl-body-is-request", raw: post("Content-Length: 32\r\n", admin) + next},

		// Transfer-Encoding, alone and with Content-Length.
		{name: "te-basic", raw: chunked("5\r\nhello\r\n0\r\n\r\n")},
		{name: "te-cl-first", raw: post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nG") + admin},
		{name: "te-cl-last", raw: post("Transfer-Encoding: chunked\r\nContent-Length: 6\r\n", "0\r\n\r\nG") + admin},
		{name: "te-cl-body-is-request", raw: post("Content-Length: 37\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"+admin) + next},
		{name: "te-uppercase", raw: post("Transfer-Encoding: CHUNKED\r\n", "0\r\n\r\n") + admin},
		{name: "te-space-before-colon", raw: post("Transfer-Encoding : chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-tab-value", raw: post("Transfer-Encoding:\tchunked\t\r\n", "0\r\n\r\n") + admin},
		{name: "te-chunked-identity", raw: post("Transfer-Encoding: chunked, identity\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-identity", raw: post("Transfer-Encoding: identity\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-identity-chunked", raw: post("Transfer-Encoding: identity, chunked\r\n", "0\r\n\r\n") + admin},
		{name: "te-chunked-twice", raw: post("Transfer-Encoding: chunked, chunked\r\n", "0\r\n\r\n") + admin},
		{name: "te-two-fields", raw: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n") + admin},
		{name: "te-two-fields-identity-last", raw: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-two-fields-identity-first", raw: post("Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n") + admin},
		{name: "te-leading-comma", raw: post("Transfer-Encoding: ,chunked\r\n", "0\r\n\r\n") + admin,
			pending: "not yet filed: Transfer-Encoding ',chunked' is taken as chunked and forwarded unchanged, HAProxy refuses it (422)"},
		{name: "te-trailing-comma", raw: post("Transfer-Encoding: chunked,\r\n", "0\r\n\r\n") + admin},
		{name: "te-identity-chunked-no-space", raw: post("Transfer-Encoding: identity,chunked\r\n", "0\r\n\r\n") + admin},
		{name: "te-gzip-chunked", raw: post("Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n") + admin},
		{name: "te-chunked-gzip", raw: post("Transfer-Encoding: chunked, gzip\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-xchunked", raw: post("Transfer-Encoding: xchunked\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-quoted", raw: post("Transfer-Encoding: \"chunked\"\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-obs-fold", raw: post("Transfer-Encoding:\r\n chunked\r\n", "0\r\n\r\n") + admin},
		{name: "te-vtab-value", raw: post("Transfer-Encoding: \x0bchunked\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-nul-value", raw: post("Transfer-Encoding: chunked\x00\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-underscore-name", raw: post("Transfer_Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n") + admin},
		{name: "te-unknown", raw: post("Transfer-Encoding: foo\r\n", "0\r\n\r\n") + admin},

		// Chunk sizes and extensions.
		{name: "chunk-size-overflow", raw: chunked("FFFFFFFFFFFFFFFF1\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-13-digits", raw: chunked("0000000000005\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-14-digits", raw: chunked("00000000000005\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-leading-zeros", raw: chunked("0005\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-0x", raw: chunked("0x5\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-negative", raw: chunked("-5\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-trailing-tab", raw: chunked("5\t\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-leading-space", raw: chunked(" 5\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-trailing-space", raw: chunked("5 \r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-size-uppercase", raw: chunked("A\r\n0123456789\r\n0\r\n\r\n")},
		{name: "chunk-size-empty", raw: chunked("\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-ext", raw: chunked("5;a=b\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-ext-quoted", raw: chunked("5;a=\"x;y\"\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-ext-huge", raw: chunked("5;" + strings.Repeat("e", 20000) + "\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-ext-on-last", raw: chunked("5\r\nhello\r\n0;x=y\r\n\r\n")},
		{name: "chunk-ext-bare-lf", raw: chunked("5;a\nhello\r\n0\r\n\r\n"),
			pending: "bare-LF chunk framing"},
		{name: "chunk-bare-lf", raw: chunked("5\nhello\n0\n\n"),
			pending: "bare-LF chunk framing"},
		{name: "chunk-data-bare-lf", raw: chunked("5\r\nhello\n0\r\n\r\n"),
			pending: "bare-LF chunk framing"},
		{name: "chunk-size-bare-lf", raw: chunked("5\nhello\r\n0\r\n\r\n"),
			pending: "bare-LF chunk framing"},
		{name: "chunk-last-bare-lf", raw: chunked("5\r\nhello\r\n0\n\r\n"),
			pending: "bare-LF chunk framing"},
		{name: "chunk-end-bare-lf", raw: chunked("5\r\nhello\r\n0\r\n\n"),
			pending: "bare-LF chunk framing"},
		{name: "chunk-trailer-bare-lf", raw: chunked("5\r\nhello\r\n0\r\nX-T: 1\n\n"),
			pending: "bare-LF chunk framing"},
		{name: "chunk-size-cr-cr-lf", raw: chunked("5\r\r\nhello\r\n0\r\n\r\n")},
		{name: "chunk-bare-cr", raw: chunked("5\rhello\r\n0\r\n\r\n")},
		{name: "chunk-data-longer", raw: chunked("5\r\nhelloXX\r\n0\r\n\r\n")},
		{name: "chunk-data-shorter", raw: chunked("5\r\nhel\r\n0\r\n\r\n")},
		{name: "chunk-no-crlf-after-data", raw: chunked("5\r\nhello0\r\n\r\n")},
		{name: "chunk-trailer", raw: chunked("5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n")},
		{name: "chunk-trailer-bad", raw: chunked("5\r\nhello\r\n0\r\nbad trailer\r\n\r\n")},
		{name: "chunk-hides-request", raw: chunked("20\r\n" + admin[:32] + "\r\n0\r\n\r\n")},

		// Line ends, control bytes and obs-fold in heads.
		{name: "head-bare-lf", raw: "GET / HTTP/1.1\nHost: x\n\n" + "GET /admin HTTP/1.1\nHost: x\n\n"},
		{name: "head-leading-empty-lines", raw: "\r\n\r\n" + get("") + admin},
		{name: "head-bare-cr-in-value", raw: get("X-A: a\rb\r\n") + admin},
		{name: "head-bare-cr-line-end", raw: "GET / HTTP/1.1\r" + host + "\r\n" + admin},
		{name: "head-cr-cr-lf", raw: get("X-A: a\r\r\n") + admin},
		{name: "name-nul", raw: get("X\x00A: 1\r\n") + admin},
		{name: "name-ctl", raw: get("X\x01A: 1\r\n") + admin},
		{name: "name-space", raw: get("X A: 1\r\n") + admin},
		{name: "name-empty", raw: get(": x\r\n") + admin},
		{name: "name-high-bit", raw: get("X\xffA: 1\r\n") + admin},
		{name: "value-nul", raw: get("X-A: a\x00b\r\n") + admin},
		{name: "value-ctl", raw: get("X-A: a\x01b\r\n") + admin},
		{name: "value-del", raw: get("X-A: a\x7fb\r\n") + admin},
		{name: "value-high-bit", raw: get("X-A: a\xffb\r\n") + admin},
		{name: "header-no-colon", raw: get("X-A\r\n") + admin},
		{name: "obs-fold-value", raw: get("X-A: a\r\n  b\r\n") + admin},
		{name: "obs-fold-first-field", raw: "GET / HTTP/1.1\r\n X-A: a\r\n" + host + "\r\n" + admin},
		{name: "obs-fold-content-length", raw: post("Content-Length:\r\n 5\r\n", "hello") + admin},

		// Request lines.
		{name: "rl-double-space", raw: "GET  /  HTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-tabs", raw: "GET\t/\tHTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-trailing-space", raw: "GET / HTTP/1.1 \r\n" + host + "\r\n" + admin},
		{name: "rl-absolute-uri", raw: "GET http://x/ HTTP/1.1\r\n" + host + "\r\n" + "GET http://x/admin HTTP/1.1\r\n" + host + "\r\n"},
		{name: "rl-absolute-uri-userinfo", raw: "GET http://u@x/admin HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "rl-authority-no-scheme", raw: "GET x/admin HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "rl-double-slash", raw: "GET //admin HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "rl-absolute-uri-other-host", raw: "GET http://y/ HTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-http09", raw: "GET /\r\n\r\n" + admin},
		{name: "rl-http10-no-host", raw: "GET / HTTP/1.0\r\n\r\n"},
		{name: "rl-http12", raw: "GET / HTTP/1.2\r\n" + host + "\r\n" + admin,
			pending: "HTTP/2.0 request line (HTTP/1.2 too: the version is forwarded as received, HAProxy sends HTTP/1.1)"},
		{name: "rl-http20", raw: "GET / HTTP/2.0\r\n" + host + "\r\n" + admin,
			pending: "HTTP/2.0 request line"},
		{name: "rl-lowercase-version", raw: "GET / http/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-lowercase-method", raw: "get /admin HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "rl-space-in-target", raw: "GET /a b HTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-ctl-in-target", raw: "GET /\x01 HTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-fragment", raw: "GET /#x HTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-asterisk", raw: "OPTIONS * HTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "rl-encoded-admin", raw: "GET /%61dmin HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "rl-dot-segments", raw: "GET /x/../admin HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "host-duplicate-differ", raw: get("Host: y\r\n") + admin},
		{name: "host-duplicate-same", raw: get("Host: x\r\n") + admin},

		// Oversized heads.
		{name: "oversized-value", raw: get("X-Big: "+big+"\r\n") + admin},
		{name: "oversized-target", raw: "GET /" + big + " HTTP/1.1\r\n" + host + "\r\n" + admin},
		{name: "too-many-fields", raw: get(many) + admin},

		// Pipelining after responses without a body, and upgrades.
		{name: "pipeline-head", raw: "HEAD / HTTP/1.1\r\n" + host + "\r\n" + admin + next},
		{name: "pipeline-204", raw: "GET /s204 HTTP/1.1\r\n" + host + "\r\n" + admin + next},
		{name: "pipeline-304", raw: "GET /s304 HTTP/1.1\r\n" + host + "\r\n" + admin + next},
		{name: "pipeline-three", raw: get("") + admin + next},
		{name: "pipeline-connection-close", raw: get("Connection: close\r\n") + next},
		{name: "expect-100-continue", raw: post("Expect: 100-continue\r\nContent-Length: 5\r\n", "hello") + admin},
		{name: "head-with-body", raw: "HEAD / HTTP/1.1\r\n" + host + "Content-Length: 5\r\n\r\nhello" + admin},
		{name: "connection-names-x-ruled", raw: get("Connection: X-Ruled\r\n") + admin},
		{name: "upgrade-refused", steps: []step{{0, get(ws)}, {0, admin}}},
		{name: "upgrade-accepted", steps: []step{{0, "GET /r-101 HTTP/1.1\r\n" + host + ws + "\r\n"}, {0, admin}}, tunnel: true},
		{name: "upgrade-unsolicited-101", steps: []step{{0, "GET /r-101 HTTP/1.1\r\n" + host + "\r\n"}, {0, admin}}},
		{name: "upgrade-h2c", steps: []step{{0, "GET /r-101 HTTP/1.1\r\n" + host + "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"}, {0, admin}}},
		{name: "upgrade-without-key", raw: get("Connection: upgrade\r\nUpgrade: websocket\r\n") + admin},

		// CONNECT and HTTP/1.0.
		{name: "connect", raw: "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n" + admin},
		{name: "connect-content-length", raw: "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\nContent-Length: 10\r\n\r\n" + "POST / HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n" + admin,
			pending: "CONNECT with Content-Length"},
		{name: "connect-chunked", raw: "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + admin,
			diff: "with the CONNECT fix goha drops the Transfer-Encoding of a CONNECT (it has no body) and the server answers; HAProxy forwards it and the exchange waits for a body"},
		{name: "connect-tunnel", raw: "CONNECT x:200 HTTP/1.1\r\nHost: x:200\r\n\r\n" + admin, tunnel: true,
			pending: "CONNECT tunnel data"},
		{name: "http10", raw: "GET / HTTP/1.0\r\n\r\n" + admin},
		{name: "http10-keep-alive", raw: "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + "GET /admin HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + "GET /next HTTP/1.0\r\n\r\n"},
		{name: "http10-keep-alive-content-length", raw: "POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello" + "GET /admin HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
		{name: "http10-chunked", raw: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" + admin[:32] + "\r\n0\r\n\r\n" + admin,
			pending: "HTTP/1.0+chunked keep-alive/reuse"},
		{name: "http10-chunked-keep-alive", raw: "POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" + admin[:32] + "\r\n0\r\n\r\n" + admin,
			pending: "HTTP/1.0+chunked keep-alive/reuse"},
		{name: "http10-chunked-and-length", raw: "POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + admin,
			pending: "HTTP/1.0+chunked keep-alive/reuse"},
		{name: "http10-get-with-body", raw: "GET / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello" + admin},

		// Responses that do not fit their request.
		{name: "resp-two-responses",
			steps:   []step{{0, "GET /r-double HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n"},
		{name: "resp-body-longer-than-length",
			steps:   []step{{0, "GET /r-longbody HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n"},
		{name: "resp-stray-while-idle",
			steps:   []step{{0, "GET /r-stray-idle HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n", pending: "idle server connections with stray data"},
		{name: "resp-length-and-chunked",
			steps:   []step{{0, "GET /r-cl-te HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n"},
		{name: "resp-length-differ",
			steps:   []step{{0, "GET /r-cl-differ HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n"},
		{name: "resp-chunked-bare-lf", raw: "GET /r-chunked-bare-lf HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "resp-close-delimited", raw: "GET /r-close-delimited HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "resp-1xx-storm", raw: "GET /r-1xx HTTP/1.1\r\n" + host + "\r\n" + next},
		{name: "resp-head-with-body",
			steps:   []step{{0, "HEAD /r-headbody HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n"},
		{name: "resp-204-with-body",
			steps:   []step{{0, "GET /r-204body HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n",
			pending: "not yet filed: a 204's Content-Length reaches the client, HAProxy removes it"},
		{name: "resp-304-with-body",
			steps:   []step{{0, "GET /r-304body HTTP/1.1\r\n" + host + "\r\n"}, {1, next}, {0, next}},
			backend: "    http-reuse always\n"},
	}
}
