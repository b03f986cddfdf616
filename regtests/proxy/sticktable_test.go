//go:build regtest

package proxy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// stickCfg is the rate-limiting recipes operators use: a per-source
// request rate limit, an abuse flag in gpc0, counters tracked from the
// connection and from the request, a backend that only holds a table,
// and the table converters.
const stickCfg = `
global
    stats socket ${TMP}/s.sock level admin
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${FE}"
    stick-table type ip size 100 expire 30s store http_req_rate(10s),http_req_cnt,gpc0,gpc0_rate(10s),conn_cur,conn_cnt,sess_cnt,bytes_in_cnt,bytes_out_cnt,http_err_cnt,gpt0
    tcp-request connection track-sc0 src
    http-request track-sc1 req.hdr(x-user) table users if { req.hdr(x-user) -m found }
    http-request sc-inc-gpc0(0) if { path_beg /bad }
    http-request sc-set-gpt0(0) 7 if { path_beg /flag }
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 10 }
    http-request deny if { sc0_get_gpc0 ge 2 }
    http-request return status 404 if { path_beg /missing }
    http-request return status 200 content-type text/plain lf-string "rate=%[sc0_http_req_rate] cur=%[sc0_conn_cur] gpc=%[sc0_get_gpc0] u=%[sc1_http_req_cnt] src=%[src_http_req_cnt] t=%[src,table_http_req_cnt(fe)] in=%[req.hdr(x-user),in_table(users)] trk=%[sc1_tracked] n=%[table_cnt(users)]\n"
backend users
    stick-table type string len 16 size 10 expire 30s store http_req_cnt,conn_cnt,gpc(2)
`

// stickSteps are requests, several per connection; a step whose path is
// empty is a CLI command.
var stickSteps = [][]string{
	{"/a", "/b"},
	{"/bad", "/flag"},
	{"u:alice /c", "u:alice /d", "u:bob /e"},
	{"/missing"},
	{"/bad"},
	{"/after-abuse"},
	{"cli:show table"},
	{"cli:show table fe"},
	{"cli:show table users"},
	{"cli:set table fe key 10.1.2.3 data.gpc0 5 data.http_req_rate 3"},
	{"cli:show table fe data.gpc0 gt 2"},
	{"cli:show table fe key 10.1.2.3"},
	{"cli:show table users data.http_req_cnt eq 2"},
	{"cli:clear table fe key 10.1.2.3"},
	{"cli:clear table users data.conn_cnt lt 2"},
	{"cli:show table users"},
	{"cli:set table fe key 10.1.2.3 data.nope 1"},
	{"cli:show table fe data.conn_cur xx 1"},
	{"cli:show table nope"},
	{"cli:clear table fe"},
	{"cli:show table fe"},
}

var (
	stickPtr = regexp.MustCompile(`0x[0-9a-f]+:`)
	stickExp = regexp.MustCompile(`exp=\d+`)
)

// runStick plays stickSteps against a proxy and returns the transcript.
func runStick(t *testing.T, prog string) string {
	p := harness.Start(t, prog, stickCfg, "FE")
	harness.WaitListening(t, p.Addrs["FE"], 5*time.Second)
	sock := p.Dir + "/s.sock"
	harness.WaitCLI(t, sock)
	var b strings.Builder
	for _, step := range stickSteps {
		if cmd, ok := strings.CutPrefix(step[0], "cli:"); ok {
			out := harness.MustSocket(t, sock, cmd)
			out = stickPtr.ReplaceAllString(out, "PTR:")
			out = stickExp.ReplaceAllString(out, "exp=X")
			fmt.Fprintf(&b, "> %s\n%s", cmd, out)
			continue
		}
		c, err := net.Dial("tcp", p.Addrs["FE"])
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for _, r := range step {
			user, path := "", r
			if u, rest, ok := strings.Cut(r, " "); ok {
				user, path = strings.TrimPrefix(u, "u:"), rest
			}
			req := "GET " + path + " HTTP/1.1\r\nHost: x\r\n"
			if user != "" {
				req += "X-User: " + user + "\r\n"
			}
			fmt.Fprintf(c, "%s\r\n", req)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, body, err := harness.ReadResponse(br, http.MethodGet)
			if err != nil {
				t.Fatalf("%s: %v", r, err)
			}
			fmt.Fprintf(&b, "%s -> %d %s", r, resp.StatusCode, strings.TrimSpace(body))
			b.WriteString("\n")
			if resp.Close {
				break
			}
		}
		c.Close()
		// The connection's end lowers conn_cur: wait for it as the
		// next step reads it.
		time.Sleep(50 * time.Millisecond)
	}
	return b.String()
}

// TestStickTablesAgainstHAProxy: tracking from the connection and from
// requests, gpc and gpt actions, rate limits, the sc_*, src_* and
// table_* samples and the show, set and clear table commands give what
// HAProxy 2.6 gives on the same configuration and traffic.
func TestStickTablesAgainstHAProxy(t *testing.T) {
	want := runStick(t, bin.HAProxy(t))
	got := runStick(t, bin.Path(t, "goha"))
	if got != want {
		t.Errorf("goha and HAProxy differ\n--- goha:\n%s\n--- haproxy:\n%s", got, want)
	}
	for _, s := range []string{"-> 429", "-> 403", "gpc0=2", "key=alice"} {
		if !strings.Contains(want, s) {
			t.Errorf("the scenario no longer shows %q:\n%s", s, want)
		}
	}
}

// persistCfg sticks clients to servers: by a URL parameter (stick on),
// by a session id the server hands out (store-response, then match on
// the cookie), with srvkey addr in the second table.
const persistCfg = `
global
    stats socket ${TMP}/s.sock level admin
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${FE}"
    use_backend sess if { path_beg /s }
    use_backend persist if { path_beg /q }
    default_backend byparam
backend byparam
    balance roundrobin
    stick-table type string len 32 size 100 expire 1m store http_req_cnt
    stick on urlp(client)
    server a @A@
    server b @B@
    server c @C@
backend persist
    balance roundrobin
    option persist
    stick-table type string len 32 size 100
    stick on urlp(client)
    server a @A@ check inter 1h
    server b @B@ check inter 1h
    server c @C@ check inter 1h
backend sess
    balance roundrobin
    stick-table type string len 32 size 100 srvkey addr
    stick match req.cook(sid)
    stick store-response res.hdr(x-sid)
    server a @A@
    server b @B@
    server c @C@
`

// TestStickPersistenceAgainstHAProxy: stick on, stick match and stick
// store-response send a client back to the server that served it, a
// server in maintenance or down loses its clients to another one (which
// they then stick to) unless option persist keeps them, and the tables
// show what HAProxy 2.6's show.
func TestStickPersistenceAgainstHAProxy(t *testing.T) {
	var addrs []string
	for _, n := range []string{"a", "b", "c"} {
		n := n
		o := harness.NewOrigin(t, n, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Sid", "sid-"+n+"-"+r.URL.Query().Get("u"))
			fmt.Fprintf(w, "%s", n)
		})
		addrs = append(addrs, o.Addr)
	}
	cfg := strings.NewReplacer("@A@", addrs[0], "@B@", addrs[1], "@C@", addrs[2]).Replace(persistCfg)
	run := func(prog string) string {
		p := harness.Start(t, prog, cfg, "FE")
		harness.WaitListening(t, p.Addrs["FE"], 5*time.Second)
		harness.WaitCLI(t, p.Dir+"/s.sock")
		var b strings.Builder
		get := func(path, cookie string) string {
			req, _ := http.NewRequest("GET", "http://"+p.Addrs["FE"]+path, nil)
			if cookie != "" {
				req.Header.Set("Cookie", cookie)
			}
			// A new connection per request: persistence, not reuse.
			resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body strings.Builder
			bufio.NewReader(resp.Body).WriteTo(&body)
			return body.String()
		}
		for _, c := range []string{"x", "y", "z", "x", "y", "w", "x", "z"} {
			fmt.Fprintf(&b, "client=%s -> %s\n", c, get("/p?client="+c, ""))
			fmt.Fprintf(&b, "persist client=%s -> %s\n", c, get("/q?client="+c, ""))
		}
		for _, u := range []string{"1", "2", "3"} {
			first := get("/s?u="+u, "")
			sid := "sid-" + first + "-" + u
			fmt.Fprintf(&b, "u=%s first=%s", u, first)
			for i := 0; i < 3; i++ {
				fmt.Fprintf(&b, " again=%s", get("/s?u="+u, "sid="+sid))
			}
			b.WriteString("\n")
		}
		// A stuck server in maintenance, then down: its clients go to
		// another server and stick to it; with option persist
		// (persist backend), a down server keeps them, one in
		// maintenance does not.
		for _, step := range []string{"set server byparam/a state maint", "set server persist/a state maint"} {
			harness.MustSocket(t, p.Dir+"/s.sock", step)
		}
		for _, c := range []string{"x", "y", "z", "w"} {
			fmt.Fprintf(&b, "maint client=%s -> %s\n", c, get("/p?client="+c, ""))
		}
		for _, c := range []string{"x", "y"} {
			fmt.Fprintf(&b, "persist-maint client=%s -> %s\n", c, get("/q?client="+c, ""))
		}
		harness.MustSocket(t, p.Dir+"/s.sock", "set server persist/a state ready")
		harness.MustSocket(t, p.Dir+"/s.sock", "set server persist/a health down")
		for _, c := range []string{"x", "y"} {
			fmt.Fprintf(&b, "persist-down client=%s -> %s\n", c, get("/q?client="+c, ""))
		}
		for _, tb := range []string{"byparam", "sess", "persist"} {
			out := harness.MustSocket(t, p.Dir+"/s.sock", "show table "+tb)
			out = stickPtr.ReplaceAllString(out, "PTR:")
			out = stickExp.ReplaceAllString(out, "exp=X")
			b.WriteString(out)
		}
		return b.String()
	}
	want := run(bin.HAProxy(t))
	got := run(bin.Path(t, "goha"))
	if got != want {
		t.Errorf("goha and HAProxy differ\n--- goha:\n%s\n--- haproxy:\n%s", got, want)
	}
	if !strings.Contains(want, "server_key=127.0.0.1:") || !strings.Contains(want, "maint client=x -> b") || strings.Count(want, "server_id=") != 11 {
		t.Errorf("the scenario no longer stores servers:\n%s", want)
	}
}
