package stream

import (
	"crypto/tls"
	"fmt"
	"goha/core"
	"net"
	"strings"
	"testing"
	"time"

	"goha/core/config"
	"goha/core/diag"
)

// logConf builds and prepares cfg (with "t.cfg" as its file name).
func logConf(t testing.TB, cfg string) (*Process, *diag.Collector) {
	t.Helper()
	d := &diag.Collector{}
	secs := config.Parse("t.cfg", []byte(cfg), config.Options{}, d)
	proc := New(core.Build(secs, d))
	proc.Prepare(d)
	return proc, d
}

func findProxy(t testing.TB, proc *Process, name string) *proxy {
	t.Helper()
	for _, p := range proc.proxies {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no proxy %s", name)
	return nil
}

// findServer is be's server name as a process that does not run sees it.
func findServer(be *proxy, name string) *server {
	return &server{Server: be.FindServer(name), be: be}
}

const logTestCfg = `
defaults
    timeout client 5s
    timeout server 5s
    timeout connect 5s

frontend fh
    mode http
    bind 127.0.0.1:1
    default_backend bh

backend bh
    mode http
    server s1 127.0.0.1:8081
    server s2 10.0.0.2:8082

frontend ft
    mode tcp
    bind 127.0.0.1:1
    default_backend bt

backend bt
    mode tcp
    server t1 127.0.0.1:9001
`

// logRig is a process whose access lines are captured.
type logRig struct {
	proc  *Process
	lines []string
}

func newLogRig(t testing.TB) (*logRig, *Process) {
	proc, d := logConf(t, logTestCfg)
	if d.HasAlert() {
		t.Fatalf("%v", d.All())
	}
	r := &logRig{proc: proc}
	r.proc.LogSink = func(fe *core.Proxy, msg []byte) { r.lines = append(r.lines, string(msg)) }
	return r, proc
}

func (r *logRig) last() string { return r.lines[len(r.lines)-1] }

// accept is a fixed accept date, 29/Nov/2026:23:05:07.042 UTC.
var testAccept = time.Date(2026, 11, 29, 23, 5, 7, 42e6, time.UTC)

func httpStreams(c *Process, t testing.TB) []streamInfo {
	fe, be := findProxy(t, c, "fh"), findProxy(t, c, "bh")
	s1 := findServer(be, "s1")
	cli := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40123}
	cli6 := &net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 443}
	mapped := &net.TCPAddr{IP: net.ParseIP("::ffff:198.51.100.9"), Port: 1}
	return []streamInfo{
		{accept: testAccept, client: cli, fe: fe, be: be, srv: s1, tw: 2 * time.Millisecond, tc: 3 * time.Millisecond, connected: true,
			tr: 15 * time.Millisecond, gotResp: true, ta: 40 * time.Millisecond, tt: 40 * time.Millisecond, trq: 1 * time.Millisecond,
			bytesOut: 1234, bytesIn: 56, status: 200, term: [2]byte{'-', '-'}, reqLine: []byte("GET /index.html?x=1 HTTP/1.1")},
		{accept: testAccept.Add(999 * time.Millisecond), client: cli6, fe: fe, be: be, status: 503, term: [2]byte{'S', 'C'},
			tt: 5 * time.Millisecond, ta: 5 * time.Millisecond, retries: 3, reqLine: []byte("POST /api HTTP/1.0")},
		{accept: testAccept, client: mapped, fe: fe, status: -1, term: [2]byte{'C', 'R'}},
		{accept: testAccept, client: cli, fe: fe, be: be, srv: s1, status: -1, term: [2]byte{'C', 'D'},
			tw: 0, tc: 1 * time.Millisecond, connected: true, tt: 7 * time.Millisecond, reqLine: []byte("PUT /up HTTP/1.1")},
	}
}

func tcpStreams(c *Process, t testing.TB) []streamInfo {
	fe, be := findProxy(t, c, "ft"), findProxy(t, c, "bt")
	t1 := findServer(be, "t1")
	cli := &net.TCPAddr{IP: net.ParseIP("203.0.113.4"), Port: 5555}
	return []streamInfo{
		{accept: testAccept, client: cli, fe: fe, be: be, srv: t1, tw: 0, tc: 2 * time.Millisecond, connected: true, tt: 1500 * time.Millisecond,
			bytesOut: 987654, bytesIn: 12, term: [2]byte{'-', '-'}},
		{accept: testAccept, client: cli, fe: fe, be: be, term: [2]byte{'s', 'Q'}, tw: 5 * time.Second, tt: 5 * time.Second},
		{accept: testAccept, client: cli, fe: fe, be: be, srv: t1, retries: 2, term: [2]byte{'S', 'C'}, tc: 9 * time.Millisecond, tt: 2 * time.Second},
		{accept: testAccept, client: cli, fe: fe, term: [2]byte{'P', 'R'}},
	}
}

// The engine, given HAProxy's own httplog and tcplog strings, prints the
// lines of the hand-written fast paths byte for byte.
func TestLogFormatMatchesFastPaths(t *testing.T) {
	r, c := newLogRig(t)
	fh, bh, ft, bt := findProxy(t, c, "fh"), findProxy(t, c, "bh"), findProxy(t, c, "ft"), findProxy(t, c, "bt")
	r.proc.curConns.Store(7)
	fh.FE.Scur.Store(4)
	bh.BE.Scur.Store(3)
	bh.BE.Qcur.Store(2)
	bh.FindServer("s1").Counters.Scur.Store(2)
	ft.FE.Scur.Store(1)
	bt.BE.Scur.Store(1)

	hf, err := compileLogFormat(nil, httpLogFormat, true)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := compileLogFormat(nil, tcpLogFormat, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, bd := range fh.Binds {
		bd.SetTLS(&tls.Config{})
	}
	for i, si := range httpStreams(c, t) {
		fh.logFmt = nil
		r.proc.logHTTP(&si)
		want := r.last()
		fh.logFmt = hf
		r.proc.logHTTP(&si)
		if got := r.last(); got != want || !strings.Contains(got, " fh~ ") {
			t.Errorf("http stream %d on TLS:\nengine   %q\nfast path %q", i, got, want)
		}
	}
	for _, bd := range fh.Binds {
		bd.SetTLS(nil)
	}
	for i, si := range httpStreams(c, t) {
		fh.logFmt = nil
		r.proc.logHTTP(&si)
		want := r.last()
		fh.logFmt = hf
		r.proc.logHTTP(&si)
		if got := r.last(); got != want {
			t.Errorf("http stream %d:\nengine   %q\nfast path %q", i, got, want)
		}
	}
	for i, si := range tcpStreams(c, t) {
		ft.logFmt = nil
		r.proc.logTCP(&si)
		want := r.last()
		ft.logFmt = tf
		r.proc.logTCP(&si)
		if got := r.last(); got != want {
			t.Errorf("tcp stream %d:\nengine   %q\nfast path %q", i, got, want)
		}
	}
	if len(r.lines) != 24 {
		t.Fatalf("%d lines logged, want 24", len(r.lines))
	}
	// A line known by heart, so that both paths cannot drift together.
	want := `192.0.2.7:40123 [29/Nov/2026:23:05:07.042] fh bh/s1 1/2/3/15/40 200 1234 - - ---- 7/4/2/1/0 0/2 "GET /index.html?x=1 HTTP/1.1"`
	if r.lines[9] != want {
		t.Fatalf("httplog line\n got %q\nwant %q", r.lines[9], want)
	}
}

func TestLogFormatVariables(t *testing.T) {
	r, c := newLogRig(t)
	hs := httpStreams(c, t)
	ts := tcpStreams(c, t)
	r.proc.PID = 4660
	paris := time.FixedZone("CET", 3600)
	cases := []struct {
		format string
		si     *streamInfo
		want   string
	}{
		{"100%% %ci", &hs[0], "100% 192.0.2.7"},
		{"   a    b   ", &hs[0], "a b "},
		{"%hr %hs %{+Q}r", &hs[0], `"GET /index.html?x=1 HTTP/1.1"`},
		{"[%hrl] [%hsl]", &hs[0], "[] []"},
		{"%HM|%HU|%HP|%HPO|%HQ|%HV", &hs[0], "GET|/index.html?x=1|/index.html|/index.html|?x=1|HTTP/1.1"},
		{"%HM %HU %HQ %{+Q}HV", &hs[2], `<BADREQ> <BADREQ> <BADREQ> "<BADREQ>"`},
		{"%r", &hs[2], "<BADREQ>"},
		{"%HQ.", &hs[1], "."},
		{"%{+Q}ci %{+X}ci:%{+X}cp %{+Q}cp", &hs[0], `"192.0.2.7" C0000207:9CBB 40123`},
		{"%ci %cp %{+X}ci", &hs[1], "2001:db8::1 443 20010DB8000000000000000000000001"},
		{"%ci", &hs[2], "198.51.100.9"},
		{"%f %b %s %{+Q}s %ft %{+Q}ft", &hs[1], `fh bh <NOSRV> "<NOSRV>" fh "fh"`},
		// A request that ended before its head was parsed has no stream,
		// hence no backend.
		{"%b/%s %[be_name] %[be_id] %{+Q}[srv_name]", &hs[2], `fh/<NOSRV> - - ""`},
		{"%si:%sp %{+X}sp %bi %{+Q}bi", &hs[0], `127.0.0.1:8081 1F91 - ""`},
		{"%si %sp", &hs[1], "- -"},
		{"%CC %{+Q}CS %{-M}CC| %ID %sslc %sslv", &hs[0], `- "" | - - -`},
		{"%Th %Ti %TR %Tq %Tw %Tc %Tr %Td %Ta %Tt %Tu", &hs[0], "0 0 1 1 2 3 15 19 40 40 40"},
		{"%Tw %Tc %Tr %Td", &hs[1], "-1 -1 -1 -1"},
		{"%TR %Tq %Tw %Td", &hs[2], "-1 -1 -1 -1"},
		{"%ST %B %U %ts %tsc", &hs[0], "200 1234 56 -- ----"},
		{"%ST %ts %tsc %rc", &hs[1], "503 SC SC-- 3"},
		{"%Tw %Tc %Td %Tt %ts %B", &ts[0], "0 2 1498 1500 -- 987654"},
		{"%Tw/%Tc/%Tt %ts", &ts[1], "5000/-1/5000 sQ"},
		{"%ST %b %s", &ts[3], "0 ft <NOSRV>"},
		{"[%t] [%tr] [%T] [%trg] [%Tl] [%trl] %Ts %{+X}Ts %ms %{+X}ms", &hs[0],
			"[29/Nov/2026:23:05:07.042] [29/Nov/2026:23:05:07.042] [29/Nov/2026:23:05:07 +0000] [29/Nov/2026:23:05:07 +0000] [29/Nov/2026:23:05:07 +0000] [29/Nov/2026:23:05:07 +0000] 1795993507 6B0CAFA3 042 2A"},
		{"%pid %{+X}pid", &hs[0], "4660 1234"},
		{"%{+Q}o %ci %{-Q}f %b", &hs[0], `"192.0.2.7" fh "bh"`},
		{"%{+Q,+X}o %ci %cp %f", &hs[0], `C0000207 9CBB "fh"`},
		{"%{+Q-Q}f %{Q}f %{+Z}f", &hs[0], "fh fh fh"},
		{"%[src] %[src_port] %[method] %[status] %[fe_name] %[be_name] %[srv_name] %[str(hi there)]", &hs[0],
			"192.0.2.7 40123 GET - fh bh s1 hi there"},
		{"%[srv_name] %{+Q}[srv_name] %[status] %[method]", &hs[2], `- "" - -`},
		{"%[capture.req.method] %[capture.req.uri] %[capture.req.ver]", &hs[0], "GET /index.html?x=1 HTTP/1.1"},
		{"%[fe_name,upper] %[str(AbC),lower] %{+Q}[method,lower]", &hs[0], `FH abc "get"`},
		{`%{+E}[str('a"b\c]d')] %{+Q,+E}f`, &hs[0], `a\"b\\c\]d "fh"`},
		{"-%-x", &hs[0], "--x"},
	}
	for _, tc := range cases {
		f, err := compileLogFormat(nil, tc.format, tc.si.fe.Mode == core.ModeHTTP)
		if err != nil {
			t.Errorf("%q: %v", tc.format, err)
			continue
		}
		if got := string(f.appendLine(nil, r.proc, tc.si)); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.format, got, tc.want)
		}
	}

	f, _ := compileLogFormat(nil, "%[fe_id] %[be_id] %[srv_id]", true)
	if got, want := string(f.appendLine(nil, r.proc, &hs[0])), fmt.Sprintf("%d %d %d", hs[0].fe.ID, hs[0].be.ID, hs[0].srv.ID); got != want || want == "0 0 0" {
		t.Errorf("ids: got %q, want %q", got, want)
	}

	// Local dates carry the zone's offset.
	si := hs[0]
	si.accept = testAccept.In(paris)
	f, _ = compileLogFormat(nil, "[%t] [%Tl] [%T]", true)
	if got, want := string(f.appendLine(nil, r.proc, &si)), "[30/Nov/2026:00:05:07.042] [30/Nov/2026:00:05:07 +0100] [29/Nov/2026:23:05:07 +0000]"; got != want {
		t.Errorf("zoned dates:\n got %q\nwant %q", got, want)
	}

	// %r escapes what would break the line, as HAProxy's #XX.
	si.reqLine = []byte("GET /a\"b#c\x01\xff HTTP/1.1")
	f, _ = compileLogFormat(nil, "%{+Q}r %{+E}HU", true)
	if got, want := string(f.appendLine(nil, r.proc, &si)), `"GET /a#22b#23c#01#FF HTTP/1.1" /a#22b#23c#01#FF`; got != want {
		t.Errorf("encoding:\n got %q\nwant %q", got, want)
	}
	si.reqLine = []byte(`GET /a\b]c HTTP/1.1`)
	if got, want := string(f.appendLine(nil, r.proc, &si)), `"GET /a\b]c HTTP/1.1" /a\\b\]c`; got != want {
		t.Errorf("escaping:\n got %q\nwant %q", got, want)
	}
	// Absolute-form targets: %HPO keeps only the path.
	si.reqLine = []byte("GET http://example.com/p/q?z HTTP/1.1")
	f, _ = compileLogFormat(nil, "%HPO %HP %HQ", true)
	if got, want := string(f.appendLine(nil, r.proc, &si)), "/p/q http://example.com/p/q ?z"; got != want {
		t.Errorf("absolute form:\n got %q\nwant %q", got, want)
	}
	si.reqLine = []byte("GET /old")
	f, _ = compileLogFormat(nil, "%HV %HU", true)
	if got, want := string(f.appendLine(nil, r.proc, &si)), "HTTP/0.9 /old"; got != want {
		t.Errorf("HTTP/0.9:\n got %q\nwant %q", got, want)
	}

	// A frontend that only has TLS binds is printed with a '~' by %ft.
	for _, bd := range hs[0].fe.Binds {
		bd.SetTLS(&tls.Config{})
	}
	f, _ = compileLogFormat(nil, "%ft %{+Q}ft %f", true)
	got := string(f.appendLine(nil, r.proc, &hs[0]))
	for _, bd := range hs[0].fe.Binds {
		bd.SetTLS(nil)
	}
	if want := `fh~ "fh~" fh`; got != want {
		t.Errorf("TLS frontend: got %q, want %q", got, want)
	}

	// %lc counts the frontend's lines, from 0.
	f, _ = compileLogFormat(nil, "%lc", true)
	for i := range 3 {
		if got := string(f.appendLine(nil, r.proc, &hs[0])); got != string(rune('0'+i)) {
			t.Fatalf("line %d: %%lc = %s", i, got)
		}
	}
	// %rt numbers lines in order.
	f, _ = compileLogFormat(nil, "%rt", true)
	a := string(f.appendLine(nil, r.proc, &hs[0]))
	b := string(f.appendLine(nil, r.proc, &hs[0]))
	if a == b {
		t.Fatalf("%%rt repeated: %s %s", a, b)
	}
}

// The errors are HAProxy 2.6's, as haproxy -c prints them.
func TestLogFormatErrors(t *testing.T) {
	cases := []struct {
		format string
		tcp    bool
		want   string
	}{
		{"%ci %xyz %[path]", false, "no such format variable 'xyz'. If you wanted to emit the '%' character verbatim, you need to use '%%'"},
		{"%ci %[nosuch] %{+Q}", false, "failed to parse sample expression <nosuch] %{+Q}> : unknown fetch method 'nosuch'"},
		{"%ci %[path", false, "sample fetch <path> may not be reliably used here because it needs 'HTTP request headers' which is not available here"},
		{"%[path]", false, "sample fetch <path]> may not be reliably used here because it needs 'HTTP request headers' which is not available here"},
		{"%[req.hdr(host)]", false, "sample fetch <req.hdr(host)]> may not be reliably used here because it needs 'HTTP request headers' which is not available here"},
		{"%[hdr(host)]", false, "sample fetch <hdr(host)]> may not be reliably used here because it needs 'HTTP request headers,HTTP response headers' which is not available here"},
		{"%[res.hdr(server)]", false, "sample fetch <res.hdr(server)]> may not be reliably used here because it needs 'HTTP response headers' which is not available here"},
		{"%ci %HM 50%", true, "format variable 'HM' is reserved for HTTP mode"},
		{"%ci %{+Q} 5% x", false, "parse argument modifier without variable name near '%{+Q}'"},
		{"%ci %{+Q", false, "truncated line after '+Q'"},
		{"%", false, "truncated line after '%'"},
		{"%[src,lower", false, "missing ']' after 'src,lower'"},
		{"%[src,nosuch]", false, "failed to parse sample expression <src,nosuch]> : unknown converter 'nosuch'"},
		{"%[src,]", false, "failed to parse sample expression <src,]> : unknown converter ''"},
		{"%[str(abc]x", false, "failed to parse sample expression <str(abc]x> : fetch method 'str' : expected ')'"},
		{"%[req.len]", false, "sample fetch <req.len]> may not be reliably used here because it needs 'request buffer' which is not available here"},
		{"%[res.payload(0,1)]", false, "sample fetch <res.payload(0,1)]> may not be reliably used here because it needs 'response buffer' which is not available here"},
		{"%[hdr_cnt]", false, "sample fetch <hdr_cnt]> may not be reliably used here because it needs 'HTTP request headers' which is not available here"},
		{"%[cookie(a)]", false, "sample fetch <cookie(a)]> may not be reliably used here because it needs 'HTTP request headers,HTTP response headers' which is not available here"},
		{"%[req.ssl_sni,lower]", false, "sample fetch <req.ssl_sni,lower]> may not be reliably used here because it needs 'request buffer' which is not available here"},
		{"%[str(a),nosuch(1)]", false, "failed to parse sample expression <str(a),nosuch(1)]> : unknown converter 'nosuch'"},
		{"%[]", false, "failed to parse sample expression <]> : missing fetch method"},
		{"%[src x]", false, "expected ']' after 'src', but found ' '"},
		{"%[src(1)]", false, "failed to parse sample expression <src(1)]> : fetch method 'src' : expected ')' before '1)]'"},
		{"%ci % x", false, "unexpected variable name near ' ' at position 5 line : '%ci % x'. Maybe you want to write a single '%', use the syntax '%%'"},
		{"%5", false, "unexpected variable name near '5' at position 1 line : '%5'. Maybe you want to write a single '%', use the syntax '%%'"},
	}
	for _, tc := range cases {
		_, err := compileLogFormat(nil, tc.format, !tc.tcp)
		if err == nil {
			t.Errorf("%q compiled", tc.format)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.format, err, tc.want)
		}
	}
}

// Configuration: which directive applies, where errors are reported, and
// the warning for a format nobody reads.
func TestLogFormatConfig(t *testing.T) {
	c, d := logConf(t, `
defaults
    mode http
    log 127.0.0.1:5140 local0
    log-format "%ci %b"
    timeout client 5s
    timeout server 5s
    timeout connect 5s

frontend inherit
    bind 127.0.0.1:1
    default_backend be

frontend own
    bind 127.0.0.1:1
    log-format "%ci %f"
    default_backend be

frontend httplog
    bind 127.0.0.1:1
    option httplog
    default_backend be

frontend clf
    bind 127.0.0.1:1
    option httplog clf
    default_backend be

frontend again
    bind 127.0.0.1:1
    option httplog
    log-format "%s"
    default_backend be

backend be
    server s1 127.0.0.1:1
`)
	if d.HasAlert() {
		t.Fatalf("%v", d.All())
	}
	want := map[string]string{"inherit": "%ci %b", "own": "%ci %f", "httplog": "", "clf": clfLogFormat, "again": "%s"}
	for name, src := range want {
		p := findProxy(t, c, name)
		switch {
		case src == "" && p.logFmt != nil:
			t.Errorf("%s: log format %q, want the httplog fast path", name, p.logFmt.src)
		case src != "" && (p.logFmt == nil || p.logFmt.src != src):
			t.Errorf("%s: log format %+v, want %q", name, p.logFmt, src)
		}
	}
	if p := findProxy(t, c, "be"); p.logFmt != nil {
		t.Errorf("backend has a log format")
	}

	_, d = logConf(t, `
defaults
    mode http
    log-format "%ci %zz"
    timeout client 5s
    timeout server 5s
    timeout connect 5s

frontend a
    bind 127.0.0.1:1
    log 127.0.0.1:5140 local0
    default_backend be

frontend b
    bind 127.0.0.1:1
    log 127.0.0.1:5140 local0
    log-format "%[url]"
    default_backend be

listen c
    bind 127.0.0.1:1
    option tcplog
    mode tcp
    server s1 127.0.0.1:1

backend be
    server s1 127.0.0.1:1
`)
	var got []string
	for _, x := range d.All() {
		got = append(got, x.Sev.Tag()+" "+x.Text())
	}
	wantDiags := []string{
		"[ALERT]   config : Parsing [t.cfg:4]: failed to parse log-format : no such format variable 'zz'. If you wanted to emit the '%' character verbatim, you need to use '%%'.",
		"[ALERT]   config : Parsing [t.cfg:17]: failed to parse log-format : sample fetch <url]> may not be reliably used here because it needs 'HTTP request headers' which is not available here.",
		"[WARNING] config : log format ignored for proxy 'c' since it has no log address.",
	}
	for i := range got {
		got[i] = strings.Join(strings.Fields(got[i]), " ")
	}
	for i := range wantDiags {
		wantDiags[i] = strings.Join(strings.Fields(wantDiags[i]), " ")
	}
	if strings.Join(got, "\n") != strings.Join(wantDiags, "\n") {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantDiags, "\n"))
	}
}

// option httplog in a TCP frontend falls back to tcplog, with HAProxy's
// warning at the directive's line (here inherited from defaults); backends
// are not concerned.
func TestLogFormatHTTPLogInTCP(t *testing.T) {
	c, d := logConf(t, `
defaults
    option httplog
    timeout client 5s
    timeout server 5s
    timeout connect 5s

frontend t
    mode tcp
    bind 127.0.0.1:1
    log 127.0.0.1:5140 local0
    default_backend bt

backend bt
    mode tcp
    server s1 127.0.0.1:1
`)
	all := d.All()
	if len(all) != 1 || all[0].Sev != diag.Warning || all[0].Text() != "config : parsing [t.cfg:3] : 'option httplog' not usable with frontend 't' (needs 'mode http'). Falling back to 'option tcplog'." {
		t.Fatalf("diagnostics: %+v", all)
	}
	if findProxy(t, c, "t").logFmt != nil {
		t.Fatalf("the TCP frontend has a log format")
	}
}

// Building a line allocates nothing. (The pooled buffer is left out: under
// the race detector sync.Pool drops buffers on purpose.)
func TestLogFormatNoAlloc(t *testing.T) {
	r, c := newLogRig(t)
	si := httpStreams(c, t)[0]
	// A running stream hands its log line the view its rules read.
	si.view = si.logView(r.proc)
	f, err := compileLogFormat(nil, httpLogFormat+" %{+Q}[method] %[src] %[fe_name,upper] %HP %T %Tl %{+X}ci %fi %{+E}r %[str(abc),upper,lower] %[src_port] %{+Q,+E}[fe_id]", true)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { buf = f.appendLine(buf[:0], r.proc, &si) }); n != 0 {
		t.Fatalf("%v allocations per line", n)
	}
}

// Compiling is total: any input compiles or fails with an error, never
// panics, and a compiled format evaluates. A format with neither '%' nor a
// space prints itself.
func FuzzCompileLogFormat(f *testing.F) {
	for _, s := range []string{httpLogFormat, tcpLogFormat, clfLogFormat, "%", "%{", "%{+Q}", "%[", "%[src", "%[str(", "%[src,lower,upper]",
		"%%%", "% ", "%{+Q,+X,-M,+E}o %ci", "%[str()]", "%{}ci", "%[str(a)b]", "a%-b", "%HPO%HQ%HV", "\x00%\xff"} {
		f.Add(s)
	}
	r, c := newLogRig(f)
	hs := httpStreams(c, f)
	ts := tcpStreams(c, f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, http := range []bool{true, false} {
			lf, err := compileLogFormat(nil, s, http)
			if err != nil {
				if err.Error() == "" {
					t.Fatalf("%q: empty error", s)
				}
				continue
			}
			streams := ts
			if http {
				streams = hs
			}
			for i := range streams {
				lf.appendLine(nil, r.proc, &streams[i])
			}
			if !strings.ContainsAny(s, "% ") {
				if got := string(lf.appendLine(nil, r.proc, &streams[0])); got != s {
					t.Fatalf("%q printed %q", s, got)
				}
			}
		}
	})
}

func BenchmarkLogFormat(b *testing.B) {
	r, c := newLogRig(b)
	r.proc.LogSink = func(*core.Proxy, []byte) {}
	si := httpStreams(c, b)[0]
	hf, err := compileLogFormat(nil, httpLogFormat, true)
	if err != nil {
		b.Fatal(err)
	}
	custom, err := compileLogFormat(nil, `%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %tsc %{+Q}r %[src] %{+Q}[method,lower] %HP %T`, true)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		f    *logFormat
	}{{"httplog-fastpath", nil}, {"httplog-engine", hf}, {"custom", custom}} {
		b.Run(bc.name, func(b *testing.B) {
			si.fe.logFmt = bc.f
			b.ReportAllocs()
			for b.Loop() {
				r.proc.logHTTP(&si)
			}
		})
	}
	si.fe.logFmt = nil
}

func TestAppendPad(t *testing.T) {
	for _, v := range []int{0, 7, 9, 10, 42, 99, 100, 123, 999, 1000, 2026, 123456} {
		for w := 1; w <= 4; w++ {
			got := string(appendPad([]byte("x"), v, w))
			if want := fmt.Sprintf("x%0*d", w, v); got != want {
				t.Errorf("appendPad(%d, %d) = %q, want %q", v, w, got, want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { appendPad(make([]byte, 0, 8), 987, 3) }); n != 0 {
		t.Errorf("appendPad allocates %v times", n)
	}
}
