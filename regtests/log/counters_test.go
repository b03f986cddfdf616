//go:build regtest

package log

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// The traffic counters show stat gives after the same requests, goha's
// against HAProxy 2.6's: forwarded requests with and without a body, and
// replies the proxy makes itself (no server, denies in the frontend and in
// the backend, return rules in both). HAProxy counts bytes in its internal form
// of each message (the log's %B and %U likewise), and counts a stream in a
// backend as soon as it is switched to it.
var counterFields = []string{
	"stot", "bin", "bout", "dreq", "dresp", "ereq", "econ", "eresp",
	"hrsp_1xx", "hrsp_2xx", "hrsp_3xx", "hrsp_4xx", "hrsp_5xx", "hrsp_other", "lbtot",
	"req_tot", "intercepted", "cli_abrt", "srv_abrt", "wretr", "wredis", "connect", "reuse",
	"h1_open_connections", "h1_open_streams", "h1_total_connections", "h1_total_streams",
	"h1_bytes_in", "h1_bytes_out",
}

var counterRequests = []string{
	"GET /fwd HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST /fwd HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
	"GET /missing HTTP/1.1\r\nHost: x\r\nUser-Agent: test\r\n\r\n",
	"GET /none HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /deny HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /bedeny HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /r HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /ber HTTP/1.1\r\nHost: x\r\n\r\n",
}

func runCounters(t *testing.T, prog, origin string) map[string]map[string]string {
	cfg := fmt.Sprintf(`
global
    stats socket ${TMP}/s.sock level admin
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}"
    http-request deny if { path /deny }
    http-request return status 200 content-type text/plain string hi if { path /r }
    use_backend none if { path /none }
    use_backend bedeny if { path /bedeny }
    use_backend beret if { path /ber }
    default_backend be
frontend idle
    bind "fd@${idle}"
    default_backend be
backend be
    server s1 %s
backend none
    server n1 127.0.0.1:1 disabled
backend bedeny
    http-request deny
    server d1 %s
backend beret
    http-request return status 200 content-type text/plain string be
    server r1 %s
`, origin, origin, origin)
	p := harness.Start(t, prog, cfg, "fe", "idle")
	for _, r := range counterRequests {
		c, err := net.Dial("tcp", p.Addrs["fe"])
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte(r))
		if _, err := readOneResponse(bufio.NewReader(c)); err != nil {
			t.Fatalf("%s: %q: %v", prog, r, err)
		}
		c.Close()
	}
	sock := filepath.Join(p.Dir, "s.sock")
	// The last connection's stream may still be ending.
	polls := settle(t, sock, "fe", 0)
	rows := showStat(t, sock)
	// show info's process-wide counts, stats-socket connections
	// included: this one, the one above, and settle's, whose number
	// varies and is taken off.
	info := map[string]string{}
	for _, l := range strings.Split(harness.MustSocket(t, sock, "show info"), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			info[k] = v
		}
	}
	for _, k := range []string{"CumConns", "CumReq"} {
		if n, err := strconv.Atoi(info[k]); err == nil {
			info[k] = strconv.Itoa(n - polls)
		}
	}
	rows["show info"] = info
	return rows
}

// settle waits until frontend fe has want current sessions, and returns
// how many stats-socket connections it made.
func settle(t *testing.T, sock, fe string, want int) int {
	t.Helper()
	return harness.WaitScur(t, sock, fe, "FRONTEND", want)
}

// Maxconn is HAProxy's default, which depends on the listeners.
var infoFields = []string{"CumConns", "CumReq", "Listeners", "CurrConns", "Maxconn", "Hard_maxconn"}

func TestCountersAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	o := testOrigin(t)
	got := runCounters(t, bin.Path(t, "goha"), o.Addr)
	want := runCounters(t, haproxy, o.Addr)
	compareRows(t, got, want, func(key string) []string {
		if key == "show info" {
			return infoFields
		}
		return counterFields
	})
}

// compareRows compares the fields that fieldsOf names for each of
// HAProxy's rows with goha's.
func compareRows(t *testing.T, got, want map[string]map[string]string, fieldsOf func(key string) []string) {
	t.Helper()
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("goha has no show stat row %s", key)
			continue
		}
		for _, f := range fieldsOf(key) {
			if g[f] != w[f] {
				t.Errorf("%s %s: goha %q, HAProxy %q", key, f, g[f], w[f])
			}
		}
	}
}

// The same for mode tcp: streams forwarded to an echo server (one still
// open when the counters are read) and one to a backend without a usable
// server. Every backend connection counts among its server's used ones.
func TestTCPCountersAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	echo := harness.TCPServer(t, func(c net.Conn) { defer c.Close(); io.Copy(c, c) })
	run := func(prog string) map[string]map[string]string {
		cfg := fmt.Sprintf(`
global
    stats socket ${TMP}/s.sock level admin
defaults
    mode tcp
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend fe
    bind "fd@${fe}"
    default_backend be
frontend fe2
    bind "fd@${fe2}"
    default_backend none
backend be
    server s1 %s
backend none
    server n1 127.0.0.1:1 disabled
`, echo)
		p := harness.Start(t, prog, cfg, "fe", "fe2")
		echoOnce := func(c net.Conn) {
			c.SetDeadline(time.Now().Add(3 * time.Second))
			io.WriteString(c, "hello world\n")
			if _, err := io.ReadFull(c, make([]byte, 12)); err != nil {
				t.Fatalf("%s: echo: %v", prog, err)
			}
		}
		for i := 0; i < 2; i++ {
			c, err := net.Dial("tcp", p.Addrs["fe"])
			if err != nil {
				t.Fatal(err)
			}
			echoOnce(c)
			c.Close()
			// Let the stream end before the next one starts.
			settle(t, filepath.Join(p.Dir, "s.sock"), "fe", 0)
		}
		open, err := net.Dial("tcp", p.Addrs["fe"])
		if err != nil {
			t.Fatal(err)
		}
		defer open.Close()
		echoOnce(open)
		c, err := net.Dial("tcp", p.Addrs["fe2"])
		if err != nil {
			t.Fatal(err)
		}
		// Nothing is sent: what HAProxy counts of bytes that arrive
		// while it finds no server depends on when they arrive.
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.ReadAll(c)
		c.Close()
		settle(t, filepath.Join(p.Dir, "s.sock"), "fe2", 0)
		rows := showStat(t, filepath.Join(p.Dir, "s.sock"))
		return rows
	}
	got, want := run(bin.Path(t, "goha")), run(haproxy)
	// smax is left out: when a stream that its client closed ends
	// depends on scheduling, in both proxies.
	fields := []string{"scur", "stot", "bin", "bout", "econ", "lbtot", "connect", "reuse",
		"used_conn_cur", "need_conn_est", "idle_conn_cur", "safe_conn_cur"}
	compareRows(t, got, want, func(string) []string { return fields })
}
