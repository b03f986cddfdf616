//go:build regtest

// Package cache runs the same caching configuration on goha and on
// HAProxy 2.6, each in front of its own origin, and compares what clients
// get: which responses are stored and served again (the origin's counter
// in the body, res.cache_hit in a field, show cache's entries), Age, 304s,
// Vary variants, and above all the framing of every response, read
// strictly, on keep-alive and pipelined connections mixing hits and
// misses.
package cache

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// The origin answers each path by its last segment: a canned head, and a
// body naming the path and how many times the origin was asked for it,
// so that a response served from a cache repeats an earlier count.
var canned = map[string]string{
	"cl":          "Cache-Control: max-age=60",
	"chunked":     "Cache-Control: max-age=60\r\nTransfer-Encoding: chunked",
	"nostore":     "Cache-Control: no-store, max-age=60",
	"nocache":     "Cache-Control: no-cache",
	"private":     "Cache-Control: private, max-age=60",
	"public":      "Cache-Control: public",
	"publicmax":   "Cache-Control: public, max-age=60",
	"maxage0":     "Cache-Control: max-age=0",
	"smaxage":     "Cache-Control: s-maxage=30",
	"badmaxage":   "Cache-Control: max-age=abc",
	"expires":     "Expires: Thu, 01 Jan 2099 00:00:00 GMT",
	"expiresbad":  "Expires: garbage",
	"privateeq":   "Cache-Control: private=\"x-user\", max-age=60",
	"maxagequote": "Cache-Control: max-age=\"30\"",
	"smaxage0":    "Cache-Control: s-maxage=0, max-age=60",
	"ccmulti":     "Cache-Control: max-age=60\r\nCache-Control: no-store",
	"ccupper":     "CACHE-CONTROL: MAX-AGE=60, PUBLIC",
	"lmbad":       "Last-Modified: garbage\r\nDate: Tue, 01 Dec 2026 00:00:00 GMT",
	"ccspaces":    "Cache-Control:  max-age=60 ,  no-cache ",
	"expirespast": "Expires: Thu, 01 Jan 2004 00:00:00 GMT",
	"lm":          "Last-Modified: Tue, 01 Dec 2026 00:00:00 GMT",
	"etag":        "ETag: \"v1\"",
	"weaketag":    "ETag: W/\"v1\"\r\nCache-Control: max-age=60",
	"none":        "Content-Type: text/plain",
	"pragma":      "Pragma: no-cache\r\nCache-Control: max-age=60",
	"cookie":      "Cache-Control: max-age=60\r\nSet-Cookie: a=b",
	"cookienc":    "Cache-Control: max-age=60, no-cache=\"set-cookie\"\r\nSet-Cookie: a=b",
	"varyae":      "Cache-Control: max-age=60\r\nVary: accept-encoding",
	"varygz":      "Cache-Control: max-age=60\r\nVary: Accept-Encoding\r\nContent-Encoding: gzip",
	"varyupper":   "Cache-Control: max-age=60\r\nVary: accept-encoding\r\nContent-Encoding: GZIP",
	"varyref":     "Cache-Control: max-age=60\r\nVary: referer",
	"varyboth":    "Cache-Control: max-age=60\r\nVary: accept-encoding, referer",
	"varyua":      "Cache-Control: max-age=60\r\nVary: user-agent",
	"varystar":    "Cache-Control: max-age=60\r\nVary: *",
	"age":         "Cache-Control: max-age=60\r\nAge: 10",
	"agestale":    "Cache-Control: max-age=60\r\nAge: 100",
	"agebad":      "Cache-Control: max-age=60\r\nAge: x",
	"s201":        "Cache-Control: max-age=60",
	"s203":        "Cache-Control: max-age=60",
	"s204":        "Cache-Control: max-age=60",
	"s301":        "Cache-Control: max-age=60\r\nLocation: /elsewhere",
	"s404":        "Cache-Control: max-age=60",
	"s500":        "Cache-Control: max-age=60",
	"big":         "Cache-Control: max-age=60",
	"bigchunked":  "Cache-Control: max-age=60\r\nTransfer-Encoding: chunked",
	"close":       "Cache-Control: max-age=60\r\nConnection: close",
	"empty":       "Cache-Control: max-age=60",
}

var statusOf = map[string]string{
	"s201": "201 Created", "s203": "203 Non-Authoritative Information",
	"s204": "204 No Content", "s301": "301 Moved Permanently",
	"s404": "404 Not Found", "s500": "500 Internal Server Error",
}

// origin is a keep-alive HTTP/1.1 server answering canned responses.
type origin struct {
	mu    sync.Mutex // guards count
	count map[string]int
}

func (o *origin) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		method, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		path, _, _ := strings.Cut(rest, " ")
		clen := 0
		for {
			h, err := br.ReadString('\n')
			if err != nil {
				return
			}
			h = strings.TrimRight(h, "\r\n")
			if h == "" {
				break
			}
			name, value, _ := strings.Cut(h, ":")
			if strings.EqualFold(name, "content-length") {
				clen, _ = strconv.Atoi(strings.TrimSpace(value))
			}
		}
		if _, err := io.CopyN(io.Discard, br, int64(clen)); err != nil {
			return
		}
		o.mu.Lock()
		o.count[path]++
		n := o.count[path]
		o.mu.Unlock()
		name := path[strings.LastIndexByte(path, '/')+1:]
		if i := strings.IndexByte(name, '?'); i >= 0 {
			name = name[:i]
		}
		body := fmt.Sprintf("%s %s #%d\n", method, path, n)
		switch name {
		case "big", "bigchunked":
			body += strings.Repeat("x", 2000) + "\n"
		case "empty":
			body = ""
		}
		// sizeN and csizeN: a body of N bytes, with a length or chunked.
		if sz, ok := strings.CutPrefix(strings.TrimPrefix(name, "c"), "size"); ok {
			n, _ := strconv.Atoi(sz)
			body += strings.Repeat("y", max(0, n-len(body)))
			if name[0] == 'c' {
				name = "chunked"
			} else {
				name = "cl"
			}
		}
		status := statusOf[name]
		if status == "" {
			status = "200 OK"
		}
		fields := canned[name]
		if fields == "" {
			fields = canned["cl"]
		}
		var b strings.Builder
		fmt.Fprintf(&b, "HTTP/1.1 %s\r\n%s\r\n", status, fields)
		chunked := strings.Contains(fields, "chunked")
		closing := strings.Contains(fields, "Connection: close")
		switch {
		case status == "204 No Content":
			body = ""
		case chunked, closing:
		default:
			fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
		}
		b.WriteString("\r\n")
		if method != "HEAD" && status != "204 No Content" {
			if chunked {
				// Several chunks, so that a store that kept one would show.
				for len(body) > 0 {
					k := min(len(body), 7)
					fmt.Fprintf(&b, "%x\r\n%s\r\n", k, body[:k])
					body = body[k:]
				}
				b.WriteString("0\r\n\r\n")
			} else {
				b.WriteString(body)
			}
		}
		if _, err := io.WriteString(c, b.String()); err != nil || closing {
			return
		}
	}
}

const config = `
global
    stats socket ${TMP}/stats.sock level admin
    log LOGSOCK format raw local0

defaults
    mode http
    log global
    log-format "LOG %{+Q}r %b/%s %ST %B %tsc %[res.cache_hit]"
    timeout connect 5s
    timeout client 10s
    timeout server 10s

cache small
    total-max-size 1
    max-object-size 1000
    max-age 60
    process-vary on

cache tiny
    total-max-size 1
    max-object-size 400000
    max-age 60

cache novary
    total-max-size 1
    max-age 60

frontend fe
    bind "fd@${FE}"
    http-request set-var(txn.path) path
    use_backend novary if { path_beg /nv/ }
    use_backend tiny if { path_beg /tiny/ }
    default_backend be

backend be
    http-request cache-use small
    http-response cache-store small
    http-response set-header X-Hit %[res.cache_hit]
    http-response set-status 299 if { res.cache_hit } { var(txn.path) -m sub /setstatus/ }
    http-response deny if { res.cache_hit } { var(txn.path) -m sub /deny/ }
    http-response redirect location /moved if { res.cache_hit } { var(txn.path) -m sub /redirect/ }
    http-response return status 203 content-type text/plain string from-rule if { res.cache_hit } { var(txn.path) -m sub /return/ }
    http-after-response set-header X-After %[res.cache_hit]
    # The cache gives its rules the whole body; a sample's line ends
    # must not end the field. (Without wait-for-body, goha gives a
    # server's response no res.body: a documented difference.)
    http-response set-header X-Body "%[res.body]" if { res.cache_hit } { var(txn.path) -m sub /body/ }
    server s1 ORIGIN

frontend fe2
    bind "fd@${FE2}"
    http-request cache-use small
    http-response cache-store small
    http-response set-header X-Hit %[res.cache_hit]
    default_backend be2

# A hit in the frontend's rules never reaches this backend.
backend be2
    http-request deny if { req.hdr(x-deny) -m found }
    http-response set-header X-Be-Resp 1
    server s1 ORIGIN

backend tiny
    http-request cache-use tiny
    http-response cache-store tiny
    http-response set-header X-Hit %[res.cache_hit]
    server s1 ORIGIN

backend novary
    http-request cache-use novary
    http-response cache-store novary
    http-response set-header X-Hit %[res.cache_hit]
    server s1 ORIGIN
`

// proxyRun is one proxy with its own origin.
type proxyRun struct {
	name  string
	p     *harness.Proc
	o     *origin
	addr  string
	addr2 string // the frontend with the cache rules
	// requests counts the responses the client read, each of which
	// has its log line.
	requests int
	mu       sync.Mutex // guards logs
	logs     []string
}

func start(t *testing.T, name, prog string) *proxyRun {
	o := &origin{count: map[string]int{}}
	oaddr := harness.TCPServer(t, o.serve)
	// The log lines come on a socket of their own: the proxies' output
	// has other things, and goha's -d echoes its log there. A UDP socket
	// with a large buffer, not a UNIX datagram one: the kernel queues ten
	// datagrams at most on the latter (net.unix.max_dgram_qlen), and a
	// proxy drops the lines that do not fit, as syslog senders do, when
	// the reader falls behind on a loaded machine.
	lc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	lc.SetReadBuffer(4 << 20)
	sock := lc.LocalAddr().String()
	t.Cleanup(func() { lc.Close() })
	pr := &proxyRun{name: name, o: o}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := lc.Read(b)
			if err != nil {
				return
			}
			pr.mu.Lock()
			pr.logs = append(pr.logs, strings.TrimSpace(string(b[:n])))
			pr.mu.Unlock()
		}
	}()
	cfg := strings.NewReplacer("ORIGIN", oaddr, "LOGSOCK", sock).Replace(config)
	p := harness.Start(t, prog, cfg, "FE", "FE2")
	t.Cleanup(p.Stop)
	pr.p, pr.addr, pr.addr2 = p, p.Addrs["FE"], p.Addrs["FE2"]
	harness.WaitListening(t, pr.addr, 5*time.Second)
	harness.WaitListening(t, pr.addr2, 5*time.Second)
	return pr
}

// logLines returns the log lines of requests received so far; HAProxy's
// line for WaitListening's connection, which sent none, is left out.
func (pr *proxyRun) logLines() []string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	var out []string
	for _, l := range pr.logs {
		if !strings.Contains(l, "<BADREQ>") {
			out = append(out, l)
		}
	}
	return out
}

// response is what a strict HTTP/1.1 client makes of one response.
type response struct {
	status  string
	fields  map[string][]string
	framing string
	body    string
}

// readResponse reads one response to a request with method, framed as
// RFC 9112 says; it fails on anything a client could not delimit.
func readResponse(br *bufio.Reader, method string) (*response, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("status line: %v (%q)", err, line)
	}
	if !strings.HasSuffix(line, "\r\n") || !strings.HasPrefix(line, "HTTP/1.") || len(line) < 14 {
		return nil, fmt.Errorf("bad status line %q", line)
	}
	r := &response{status: line[9:12], fields: map[string][]string{}}
	for {
		h, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("head: %v", err)
		}
		if !strings.HasSuffix(h, "\r\n") {
			return nil, fmt.Errorf("bare LF in head %q", h)
		}
		h = h[:len(h)-2]
		if h == "" {
			break
		}
		name, value, ok := strings.Cut(h, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("bad field %q", h)
		}
		name = strings.ToLower(name)
		r.fields[name] = append(r.fields[name], strings.TrimSpace(value))
	}
	te, cl := r.fields["transfer-encoding"], r.fields["content-length"]
	if len(te) > 0 && len(cl) > 0 {
		return nil, fmt.Errorf("both transfer-encoding and content-length")
	}
	if len(cl) > 1 {
		return nil, fmt.Errorf("several content-length fields %v", cl)
	}
	code, _ := strconv.Atoi(r.status)
	switch {
	case method == "HEAD" || code == 204 || code == 304 || code < 200:
		r.framing = "none"
		// A 304 from the cache keeps the stored Transfer-Encoding in
		// HAProxy 2.6.12, not in goha, which follows 2.6.0's reg-tests
		// (cache/if-none-match.vtc): both are bodiless for a client.
		if len(te) > 0 && code != 304 {
			r.framing += " te=" + strings.Join(te, ",")
		}
		if len(cl) > 0 {
			r.framing += " cl=" + cl[0]
		}
		return r, nil
	case len(te) > 0:
		if len(te) != 1 || !strings.EqualFold(te[0], "chunked") {
			return nil, fmt.Errorf("transfer-encoding %v", te)
		}
		r.framing = "chunked"
		var body bytes.Buffer
		for {
			sz, err := br.ReadString('\n')
			if err != nil || !strings.HasSuffix(sz, "\r\n") {
				return nil, fmt.Errorf("chunk size %q: %v", sz, err)
			}
			n, err := strconv.ParseUint(strings.TrimRight(sz, "\r\n"), 16, 32)
			if err != nil {
				return nil, fmt.Errorf("chunk size %q", sz)
			}
			if n == 0 {
				break
			}
			if _, err := io.CopyN(&body, br, int64(n)); err != nil {
				return nil, err
			}
			crlf := make([]byte, 2)
			if _, err := io.ReadFull(br, crlf); err != nil || string(crlf) != "\r\n" {
				return nil, fmt.Errorf("chunk end %q", crlf)
			}
		}
		for {
			tr, err := br.ReadString('\n')
			if err != nil {
				return nil, fmt.Errorf("trailers: %v", err)
			}
			if tr == "\r\n" {
				break
			}
		}
		r.body = body.String()
	case len(cl) > 0:
		n, err := strconv.Atoi(cl[0])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("content-length %q", cl[0])
		}
		r.framing = "cl"
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("body: %v", err)
		}
		r.body = string(b)
	default:
		r.framing = "close"
		b, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		r.body = string(b)
	}
	return r, nil
}

// shown is the part of a response the comparison looks at: status,
// framing, body, and the fields a cache could get wrong. Age is shown as
// present or not: its value depends on the clock.
func (r *response) shown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s] ", r.status, r.framing)
	for _, f := range []string{"x-hit", "x-after", "x-be-resp", "x-body", "etag", "vary", "content-encoding", "set-cookie", "cache-control", "location", "content-type"} {
		if v, ok := r.fields[f]; ok {
			fmt.Fprintf(&b, "%s=%s ", f, strings.Join(v, "|"))
		}
	}
	if a, ok := r.fields["age"]; ok {
		n, err := strconv.Atoi(a[0])
		switch {
		case len(a) != 1 || err != nil || n < 0:
			fmt.Fprintf(&b, "age=bad%v ", a)
		case n >= 10:
			b.WriteString("age>=10 ")
		default:
			b.WriteString("age ")
		}
	}
	if len(r.body) > 80 {
		// A long body is told by its start and its length.
		fmt.Fprintf(&b, "%q... (%d bytes)", r.body[:40], len(r.body))
	} else {
		fmt.Fprintf(&b, "%q", r.body)
	}
	return b.String()
}

// req is one request of a case: its method, path (the case's prefix is
// put in front) and extra fields.
type req struct {
	method, path, fields string
}

func (q req) raw(prefix string, last bool) string {
	var b strings.Builder
	method, version, body := q.method, "1.1", ""
	if m, ok := strings.CutSuffix(method, "/1.0"); ok {
		method, version = m, "1.0"
	}
	// A GET may carry a body, which must not be read as the next request
	// when the cache answers it.
	switch method {
	case "GET+length":
		method, body = "GET", "Content-Length: 14\r\n"
	case "GET+chunked":
		method, body = "GET", "Transfer-Encoding: chunked\r\n"
	}
	fmt.Fprintf(&b, "%s %s%s HTTP/%s\r\nHost: cache.test\r\n", method, prefix, q.path, version)
	if version == "1.0" && !last {
		b.WriteString("Connection: keep-alive\r\n")
	}
	if q.fields != "" {
		b.WriteString(q.fields + "\r\n")
	}
	if q.method == "POST" {
		b.WriteString("Content-Length: 3\r\n")
	}
	b.WriteString(body)
	if last {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	switch q.method {
	case "POST":
		b.WriteString("abc")
	case "GET+length":
		b.WriteString("GET /x HTTP/1.")
	case "GET+chunked":
		b.WriteString("e\r\nGET /x HTTP/1.\r\n0\r\n\r\n")
	}
	return b.String()
}

func get(path string, fields ...string) req {
	return req{"GET", path, strings.Join(fields, "\r\n")}
}

func head(path string, fields ...string) req {
	return req{"HEAD", path, strings.Join(fields, "\r\n")}
}

// A case is a sequence of requests on one connection; each runs twice,
// once a request at a time and once pipelined, under its own prefix.
type cacheCase struct {
	name string // a name starting with "frontend-": on fe2
	reqs []req
}

// twice asks for the path twice: the second is a hit when the first was
// stored.
func twice(path string, fields ...string) []req {
	return []req{get(path, fields...), get(path, fields...)}
}

// sizes asks twice for bodies of sizes around the cache's
// max-object-size (1000), which counts the head too.
func sizes(kind string) []req {
	var r []req
	for _, n := range []int{800, 850, 870, 880, 890, 900, 910, 920, 950, 1000} {
		p := fmt.Sprintf("/%s%d", kind, n)
		r = append(r, get(p), get(p))
	}
	return r
}

var cases = []cacheCase{
	{"content-length", twice("/cl")},
	{"chunked", []req{get("/chunked"), get("/chunked"), head("/chunked"), get("/chunked")}},
	{"no-store", twice("/nostore")},
	{"no-cache", twice("/nocache")},
	{"private", twice("/private")},
	{"public-no-freshness", twice("/public")},
	{"public-max-age", twice("/publicmax")},
	{"max-age-0", twice("/maxage0")},
	{"s-maxage", twice("/smaxage")},
	{"bad-max-age", twice("/badmaxage")},
	{"expires", twice("/expires")},
	{"expires-past", twice("/expirespast")},
	{"expires-invalid", twice("/expiresbad")},
	{"private-with-value", twice("/privateeq")},
	{"max-age-quoted", twice("/maxagequote")},
	{"s-maxage-0", twice("/smaxage0")},
	{"two-cache-control", twice("/ccmulti")},
	{"uppercase-cache-control", twice("/ccupper")},
	{"spaces-cache-control", twice("/ccspaces")},
	{"last-modified-invalid", []req{get("/lmbad"), get("/lmbad", "If-Modified-Since: Tue, 01 Dec 2026 00:00:00 GMT"),
		get("/lmbad", "If-Modified-Since: Mon, 30 Nov 2026 00:00:00 GMT"), get("/lmbad", "If-Modified-Since: garbage")}},
	{"last-modified", []req{get("/lm"), get("/lm"),
		get("/lm", "If-Modified-Since: Wed, 02 Dec 2026 00:00:00 GMT"),
		get("/lm", "If-Modified-Since: Mon, 30 Nov 2026 00:00:00 GMT"), get("/lm")}},
	{"etag", []req{get("/etag"), get("/etag", `If-None-Match: "v1"`), get("/etag", `If-None-Match: "v2"`),
		get("/etag", `If-None-Match: W/"v1"`), get("/etag", "If-None-Match: *"), head("/etag", `If-None-Match: "v1"`)}},
	{"weak-etag", []req{get("/weaketag"), get("/weaketag", `If-None-Match: "v1"`), get("/weaketag")}},
	{"chunked-304", []req{get("/chunked"), get("/chunked", "If-Modified-Since: Thu, 01 Jan 2099 00:00:00 GMT"), get("/chunked")}},
	{"no-validator", twice("/none")},
	{"pragma", twice("/pragma")},
	{"set-cookie", twice("/cookie")},
	{"set-cookie-no-cache", twice("/cookienc")},
	{"authorization", []req{get("/cl", "Authorization: Basic eDp5"), get("/cl"), get("/cl", "Authorization: Basic eDp5")}},
	{"request-no-cache", []req{get("/cl"), get("/cl", "Cache-Control: no-cache"), get("/cl", "Pragma: no-cache"), get("/cl", "Cache-Control: max-age=0"), get("/cl")}},
	{"request-directives", []req{get("/cl"), get("/cl", "Cache-Control: NO-CACHE"), get("/cl", "Cache-Control: max-stale=5"),
		get("/cl", "Cache-Control: min-fresh=5"), get("/cl", "Cache-Control: only-if-cached", "Pragma: no-cache"),
		get("/cl", "Cache-Control: no-transform, no-store"), get("/cl")}},
	{"request-no-store", []req{get("/cl", "Cache-Control: no-store"), get("/cl")}},
	{"vary-accept-encoding", []req{get("/varyae", "Accept-Encoding: gzip"), get("/varyae", "Accept-Encoding: gzip"),
		get("/varyae", "Accept-Encoding: br"), get("/varyae"), get("/varyae", "Accept-Encoding: br, gzip")}},
	{"vary-gzip", []req{get("/varygz", "Accept-Encoding: gzip"), get("/varygz", "Accept-Encoding: deflate, gzip"),
		get("/varygz", "Accept-Encoding: br"), get("/varygz", "Accept-Encoding: gzip;q=0, br")}},
	{"vary-weights", []req{get("/varygz", "Accept-Encoding: gzip"), get("/varygz", "Accept-Encoding: gzip;q=0.0"),
		get("/varygz", "Accept-Encoding: GZIP ; Q=0"), get("/varygz", "accept-encoding: x-gzip, *;q=0")}},
	{"vary-many-encodings", []req{get("/varyae", "Accept-Encoding: "+strings.Repeat("gzip, ", 15)+"br"),
		get("/varyae", "Accept-Encoding: "+strings.Repeat("gzip, ", 15)+"br"), get("/varyae"), get("/varyae")}},
	{"vary-uppercase-encoding", twice("/varyupper", "Accept-Encoding: gzip")},
	{"vary-referer", []req{get("/varyref", "Referer: /a"), get("/varyref", "Referer: /a"), get("/varyref", "Referer: /b"), get("/varyref")}},
	{"vary-both", []req{get("/varyboth", "Referer: /a", "Accept-Encoding: gzip"), get("/varyboth", "Referer: /a", "Accept-Encoding: gzip"), get("/varyboth", "Referer: /a")}},
	{"vary-user-agent", twice("/varyua", "User-Agent: x")},
	{"vary-star", twice("/varystar")},
	{"vary-off", twice("/nv/varyae", "Accept-Encoding: gzip")},
	{"no-vary-off", twice("/nv/cl")},
	// Three objects of 390 kB in a 1 MB cache: which one makes room
	// for the third, after a hit on the first.
	{"eviction", []req{get("/tiny/a/size390000"), get("/tiny/b/size390000"), get("/tiny/a/size390000"),
		get("/tiny/c/size390000"), get("/tiny/b/size390000"), get("/tiny/a/size390000"), get("/tiny/c/size390000")}},
	{"server-age", twice("/age")},
	{"server-age-stale", twice("/agestale")},
	{"server-age-bad", twice("/agebad")},
	{"status-201", twice("/s201")},
	{"status-203", twice("/s203")},
	{"status-204", twice("/s204")},
	{"status-301", twice("/s301")},
	{"status-404", twice("/s404")},
	{"status-500", twice("/s500")},
	{"too-big", twice("/big")},
	{"too-big-chunked", twice("/bigchunked")},
	{"empty-body", []req{get("/empty"), get("/empty"), head("/empty")}},
	{"head-first", []req{head("/cl"), get("/cl"), head("/cl"), get("/cl")}},
	{"post-invalidates", []req{get("/cl"), get("/cl"), {"POST", "/cl", ""}, get("/cl"), get("/cl")}},
	{"query", []req{get("/cl?a=1"), get("/cl?a=2"), get("/cl?a=1")}},
	{"http-response-rules", []req{get("/setstatus/cl"), get("/setstatus/cl"), get("/deny/cl"), get("/deny/cl"),
		get("/redirect/cl"), get("/redirect/cl"), get("/return/cl"), get("/return/cl"), get("/return/cl", `If-None-Match: "x"`), get("/cl")}},
	{"body-in-a-field", []req{get("/body/cl"), get("/body/cl"), head("/body/cl"), get("/body/chunked"), get("/body/chunked")}},
	{"get-with-body", []req{get("/cl"), {"GET+length", "/cl", ""}, get("/cl"), {"GET+chunked", "/cl", ""}, get("/other"), head("/cl")}},
	{"http-1.0", []req{{"GET/1.0", "/cl", ""}, get("/cl"), {"GET/1.0", "/cl", ""}, get("/cl")}},
	{"sizes", sizes("size")},
	{"sizes-chunked", sizes("csize")},
	{"frontend-hit", []req{get("/cl"), get("/cl", "X-Deny: 1"), get("/other", "X-Deny: 1"), head("/cl", "X-Deny: 1"), get("/cl")}},
	{"mixed", []req{get("/chunked"), get("/cl"), head("/chunked"), get("/chunked"), get("/etag"),
		get("/etag", `If-None-Match: "v1"`), get("/chunked"), get("/s404"), get("/cl"), head("/cl")}},
}

// closeCase is a response delimited by the server's close: the client
// connection ends with it, so it runs alone.
var closeCase = cacheCase{name: "close-delimited", reqs: []req{get("/close")}}

// run plays c on a new connection under prefix, pipelined or a request at
// a time, and returns what the client made of each response, then
// whether anything came after the last one.
func run(addr, prefix string, c cacheCase, pipelined bool) ([]string, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(harness.Patience))
	br := bufio.NewReader(conn)
	var out []string
	if pipelined {
		var all strings.Builder
		for i, q := range c.reqs {
			all.WriteString(q.raw(prefix, i == len(c.reqs)-1))
		}
		if _, err := io.WriteString(conn, all.String()); err != nil {
			return nil, err
		}
	}
	for i, q := range c.reqs {
		if !pipelined {
			if _, err := io.WriteString(conn, q.raw(prefix, i == len(c.reqs)-1)); err != nil {
				return out, err
			}
		}
		r, err := readResponse(br, q.method)
		if err != nil {
			return out, fmt.Errorf("response %d: %v", i+1, err)
		}
		out = append(out, fmt.Sprintf("%s %s%s -> %s", q.method, prefix, q.path, r.shown()))
		if r.framing == "close" {
			break
		}
	}
	// Each case ends with Connection: close: nothing may follow the last
	// response but the close.
	rest, err := io.ReadAll(br)
	if err != nil {
		return out, fmt.Errorf("after the last response: %v", err)
	}
	if len(rest) > 0 {
		return out, fmt.Errorf("%d bytes after the last response: %q", len(rest), rest)
	}
	return out, nil
}

var entryRE = regexp.MustCompile(`^0x[0-9a-f]+ (hash:\d+ vary:0x[0-9a-f]+ size:(\d+) \(\d+ blocks\)),`)

// entries lists show cache's entries, by cache in order then by key and
// secondary key, which are HAProxy's: the same requests store the same.
func entries(t *testing.T, p *harness.Proc) []string {
	out := harness.MustSocket(t, p.Dir+"/stats.sock", "show cache")
	var list []string
	cache := -1
	for _, l := range strings.Split(out, "\n") {
		if m := entryRE.FindStringSubmatch(l); m != nil {
			// A body over a buffer's size took HAProxy as many data
			// blocks as reads, four bytes each: the size of such an
			// object is not compared, its blocks are.
			if n, _ := strconv.Atoi(m[2]); n > 16000 {
				m[1] = strings.Replace(m[1], "size:"+m[2], "size:large", 1)
			}
			list = append(list, fmt.Sprintf("show cache: cache %d %s", cache, m[1]))
		} else if strings.Contains(l, "(shctx:") {
			cache++
		}
	}
	sort.Strings(list)
	return list
}

func TestCacheAgainstHAProxy(t *testing.T) {
	hap := bin.HAProxy(t)
	runs := []*proxyRun{start(t, "goha", bin.Path(t, "goha")), start(t, "haproxy", hap)}
	got := map[string][]string{}
	for _, pr := range runs {
		var trace []string
		for _, c := range cases {
			for _, pipelined := range []bool{false, true} {
				prefix := "/seq/" + c.name
				if pipelined {
					prefix = "/pipe/" + c.name
				}
				for _, p := range []string{"/nv/", "/tiny/"} {
					if strings.HasPrefix(c.reqs[0].path, p) {
						prefix = p[:len(p)-1] + prefix
					}
				}
				addr := pr.addr
				if strings.HasPrefix(c.name, "frontend-") {
					addr = pr.addr2
				}
				out, err := run(addr, prefix, c, pipelined)
				pr.requests += len(out)
				if err != nil {
					t.Errorf("%s, %s: %v\n%s", pr.name, prefix, err, strings.Join(out, "\n"))
				}
				trace = append(trace, out...)
			}
		}
		// Twice on new connections: the second shows whether the first
		// was stored.
		for range 2 {
			out, err := run(pr.addr, "/seq/close", closeCase, false)
			pr.requests += len(out)
			if err != nil {
				t.Errorf("%s, close-delimited: %v\n%s", pr.name, err, strings.Join(out, "\n"))
			}
			trace = append(trace, out...)
		}
		trace = append(trace, entries(t, pr.p)...)
		// Each request's log line: its backend and server (<CACHE> for
		// a hit), status, bytes and termination state.
		var logs []string
		harness.Eventually(t, pr.name+"'s log lines", func() bool {
			logs = pr.logLines()
			return len(logs) >= pr.requests
		})
		// A stream may be logged after its client has gone on to the
		// next connection: the lines are compared in order of request.
		sort.Strings(logs)
		trace = append(trace, logs...)
		got[pr.name] = trace
	}
	g, h := got["goha"], got["haproxy"]
	for i := 0; i < max(len(g), len(h)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(h) {
			b = h[i]
		}
		if a != b {
			t.Errorf("differs:\n  goha:    %s\n  haproxy: %s", a, b)
		}
	}
	if testing.Verbose() {
		t.Logf("goha's trace:\n%s\nHAProxy's trace:\n%s", strings.Join(g, "\n"), strings.Join(h, "\n"))
	}
}
