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
