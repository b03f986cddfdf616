//go:build regtest

package log

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// lfFields is a custom log-format, one field per '|', with variables of
// every kind: addresses, names, timers, counters, request parts, flags
// (quote, hex, escape), a global flag (%o), sample fetches with a
// converter, separators that collapse, and %%.
var lfFields = []string{
	"%ci", "%cp", "[%tr]", "%ft", "%b/%s", "%TR/%Tw/%Tc/%Tr/%Ta", "%ST", "%B", "%U", "%CC", "%CS", "%tsc",
	"%ac/%fc/%bc/%sc/%rc", "%sq/%bq", "%hr %hs %{+Q}r", "%HM", "%HU", "%HP", "%HQ", "%HV",
	"%{+Q}[method]", "%[src]", "%[status]", "%[fe_name]/%[be_name]/%[srv_name]", "%[method,lower]",
	"%{+Q}b", "%{+X}ci", "%{+X}cp", "%pid", "%H", "100%%", "%{+Q,+E}HU", "%Ts", "%ms", "%Tt",
	"%si:%sp", "%lc", "[%t]", "%f", "%{+Q}o %s %{-Q}f %ci", "%{-Q}o[%T]", "[%Tl]", "[%trg]", "%{+X}Ts", "%{+X}ms",
	"%HPO", "%Tq", "%Th", "%Ti", "%Tu", "%Td", "%{-M}CC", "%{+Q}CC", "%ID", "%sslv", "%fi", "%{+X}fi", "%[dst]", "%rt",
	"%{+Q,+E}[str(a]b)]",
}

// lfMasks are the fields that may differ between goha and HAProxy, with a
// pattern both must still match.
var lfMasks = map[string]*regexp.Regexp{
	// Each proxy has its own client connections, accept dates and timings.
	"%cp":                 regexp.MustCompile(`^\d+$`),
	"%{+X}cp":             regexp.MustCompile(`^[0-9A-F]{4}$`),
	"[%tr]":               regexp.MustCompile(`^\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d\.\d{3}\]$`),
	"[%t]":                regexp.MustCompile(`^\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d\.\d{3}\]$`),
	"%Ts":                 regexp.MustCompile(`^\d{10}$`),
	"%ms":                 regexp.MustCompile(`^\d{3}$`),
	"%TR/%Tw/%Tc/%Tr/%Ta": regexp.MustCompile(`^-?\d+/-?\d+/-?\d+/-?\d+/\d+$`),
	"%Tt":                 regexp.MustCompile(`^\d+$`),
	"%Tu":                 regexp.MustCompile(`^\d+$`),
	"%Td":                 regexp.MustCompile(`^-?\d+$`),
	"%Tq":                 regexp.MustCompile(`^-?\d+$`),
	// goha counts the idle and handshake times in %TR (Ti and Th are 0).
	"%Ti":        regexp.MustCompile(`^\d+$`),
	"%Th":        regexp.MustCompile(`^\d+$`),
	"%{-Q}o[%T]": regexp.MustCompile(`^\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\]$`),
	"[%trg]":     regexp.MustCompile(`^\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\]$`),
	"[%Tl]":      regexp.MustCompile(`^\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\]$`),
	"%{+X}Ts":    regexp.MustCompile(`^[0-9A-F]{8}$`),
	"%{+X}ms":    regexp.MustCompile(`^[0-9A-F]{2,3}$`),
	// HAProxy may still count the previous request's connection, which it
	// closed first and frees once the client's close has arrived: one
	// more current connection then.
	"%ac/%fc/%bc/%sc/%rc": regexp.MustCompile(`^[12]/[12]/0/0/0$`),
	// Checked against each process's own pid below.
	"%pid": regexp.MustCompile(`^\d+$`),
}

var httpReqs = []string{
	"GET /a?x=1 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
	"POST /post HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
	"GET /missing HTTP/1.0\r\n\r\n",
	"HEAD /h HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
	"GET http://example.com/abs/p?q=1 HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n",
	"GET /sp%20ace?a=b&c=\\d] HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
	// Bad requests: no request line, timers unset.
	"GARBAGE\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\n",
}

// runLogFormat runs prog with a frontend fe (its log settings in feCfg) in
// front of origin, sends each request on its own connection and returns
// one log line per request, received on a UDP socket in raw format.
func runLogFormat(t *testing.T, prog, mode, feCfg, origin string, reqs []string) (*harness.Proc, []string) {
	logs := newLogSink(t)
	cfg := fmt.Sprintf(`
global
    log %s format raw local0 info

defaults
    mode %s
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${fe}"
    log global
%s
    default_backend be

backend be
    server s1 %s
`, logs.Addr(), mode, feCfg, origin)
	p := harness.Start(t, prog, cfg, "fe")
	var lines []string
	for _, r := range reqs {
		harness.RawRequest(t, p.Addrs["fe"], r, 5*time.Second)
		l, ok := logs.Line()
		if !ok {
			t.Fatalf("%s: no log line for %q\n%s", prog, r, p.Output())
		}
		lines = append(lines, l)
	}
	return p, lines
}

func testOrigin(t *testing.T) *harness.Origin {
	return harness.NewOrigin(t, "s1", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Date", "Mon, 30 Nov 2026 00:00:00 GMT")
		fmt.Fprint(w, "hello\n")
	})
}

func formatLine(fields []string) string {
	return "    log-format \"" + strings.ReplaceAll(strings.Join(fields, "|"), `"`, `\"`) + "\""
}

// compareLines compares goha's and HAProxy's lines field by field: names
// labels the fields, masks gives the pattern that a field both may print
// differently must still match.
func compareLines(t *testing.T, sep string, names []string, masks map[string]*regexp.Regexp, got, want []string) {
	t.Helper()
	for i := range want {
		g, h := strings.Split(got[i], sep), strings.Split(want[i], sep)
		if len(g) != len(names) || len(h) != len(names) {
			t.Errorf("line %d: %d and %d fields, want %d\ngoha:    %q\nhaproxy: %q", i, len(g), len(h), len(names), got[i], want[i])
			continue
		}
		bad := false
		for k, name := range names {
			if re := masks[name]; re != nil {
				if !re.MatchString(g[k]) || !re.MatchString(h[k]) || !sameUnset(g[k], h[k]) {
					t.Errorf("line %d field %s: goha %q, haproxy %q, both must match %s with the same -1 timers", i, name, g[k], h[k], re)
					bad = true
				}
				continue
			}
			if g[k] != h[k] {
				t.Errorf("line %d field %s: goha %q, haproxy %q", i, name, g[k], h[k])
				bad = true
			}
		}
		if bad {
			t.Logf("goha:    %s\nhaproxy: %s", got[i], want[i])
		}
	}
}

// sameUnset says whether two timer fields (a/b/c) have their -1 (unset) in
// the same places.
func sameUnset(a, b string) bool {
	x, y := strings.Split(a, "/"), strings.Split(b, "/")
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if (x[i] == "-1") != (y[i] == "-1") {
			return false
		}
	}
	return true
}

// TestLogFormatAgainstHAProxy runs goha and HAProxy 2.6 on the same
// configuration and compares their lines field by field.
func TestLogFormatAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	o := testOrigin(t)
	gp, got := runLogFormat(t, bin.Path(t, "goha"), "http", formatLine(lfFields), o.Addr, httpReqs)
	hp, want := runLogFormat(t, haproxy, "http", formatLine(lfFields), o.Addr, httpReqs)
	compareLines(t, "|", lfFields, lfMasks, got, want)
	pid := slices.Index(lfFields, "%pid")
	for i := range got {
		g, h := strings.Split(got[i], "|"), strings.Split(want[i], "|")
		if len(g) > pid && len(h) > pid && (g[pid] != strconv.Itoa(gp.PID()) || h[pid] != strconv.Itoa(hp.PID())) {
			t.Errorf("line %d: %%pid goha %s (pid %d), haproxy %s (pid %d)", i, g[pid], gp.PID(), h[pid], hp.PID())
		}
	}
}

// tcpFields is a TCP-mode format: no HTTP variable is allowed there, and
// the bytes are the origin's, so %B and %U compare exactly.
var tcpFields = []string{
	"%ci", "%cp", "[%t]", "%ft", "%b/%s", "%Tw/%Tc/%Tt", "%B", "%U", "%ts", "%tsc", "%ac/%fc/%bc/%sc/%rc",
	"%sq/%bq", "%[src]", "%{+Q}[srv_name]", "%[be_name,upper]", "%{+Q}f", "%ST", "%si", "%lc", "%{+X}ci",
	"%hr %hsl %{+Q}s", "%Td",
}

func TestLogFormatTCPAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	o := testOrigin(t)
	reqs := httpReqs[:3]
	_, got := runLogFormat(t, bin.Path(t, "goha"), "tcp", formatLine(tcpFields), o.Addr, reqs)
	_, want := runLogFormat(t, haproxy, "tcp", formatLine(tcpFields), o.Addr, reqs)
	masks := map[string]*regexp.Regexp{
		"%cp":                 lfMasks["%cp"],
		"[%t]":                lfMasks["[%t]"],
		"%Tw/%Tc/%Tt":         regexp.MustCompile(`^\d+/\d+/\d+$`),
		"%Td":                 regexp.MustCompile(`^-?\d+$`),
		"%ac/%fc/%bc/%sc/%rc": lfMasks["%ac/%fc/%bc/%sc/%rc"],
	}
	compareLines(t, "|", tcpFields, masks, got, want)
}

// option httplog clf goes through the same engine.
func TestHTTPLogCLFAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	o := testOrigin(t)
	_, got := runLogFormat(t, bin.Path(t, "goha"), "http", "    option httplog clf", o.Addr, httpReqs[:4])
	_, want := runLogFormat(t, haproxy, "http", "    option httplog clf", o.Addr, httpReqs[:4])
	// HAProxy's clf format, split on spaces (the date and %r hold some).
	names := []string{"ci", "-", "-", "[date", "+0000]", "method", "uri", "version", "ST", "B", `""`, `""`, "cp", "ms", "ft", "b", "s",
		"TR", "Tw", "Tc", "Tr", "Ta", "tsc", "ac", "fc", "bc", "sc", "rc", "sq", "bq", "CC", "CS", "end"}
	num := regexp.MustCompile(`^\d+$`)
	masks := map[string]*regexp.Regexp{
		"[date": regexp.MustCompile(`^\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d$`),
		"cp":    num, "ms": regexp.MustCompile(`^\d{3}$`), "B": num,
		"TR": num, "Tw": num, "Tc": num, "Tr": num, "Ta": num,
		// See lfMasks' %ac/%fc.
		"ac": regexp.MustCompile(`^[12]$`), "fc": regexp.MustCompile(`^[12]$`),
	}
	compareLines(t, " ", names, masks, got, want)
}

// TestLogFormatCheck: a bad format is refused by goha -c with HAProxy's
// message at the log-format line.
func TestLogFormatCheck(t *testing.T) {
	cfg := `
defaults
    mode http
    timeout connect 2s
    timeout client 5s
    timeout server 5s

frontend fe
    bind 127.0.0.1:18099
    log 127.0.0.1:514 local0
    log-format "%ci %xyz"
    default_backend be

backend be
    server s1 127.0.0.1:18098
`
	for _, prog := range []string{bin.Path(t, "goha"), bin.HAProxy(t)} {
		out, code := checkConfig(t, prog, cfg)
		want := "config : Parsing [test.cfg:11]: failed to parse log-format : no such format variable 'xyz'. If you wanted to emit the '%' character verbatim, you need to use '%%'."
		if code == 0 || !strings.Contains(out, want) || !strings.Contains(out, "[ALERT]") {
			t.Errorf("%s -c: exit %d\n%s\nwant an ALERT with %q", prog, code, out, want)
		}
	}
}

// checkConfig runs prog -c on cfg, saved as test.cfg in a new directory.
func checkConfig(t *testing.T, prog, cfg string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "-c", "-f", "test.cfg")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// A tcp stream whose server refused the connection, or that found no
// usable server, logs the same unset (-1) timers and termination state as
// in HAProxy: %Tc is -1 when no connection was established.
func TestTCPLogConnectErrorsAgainstHAProxy(t *testing.T) {
	haproxy := bin.HAProxy(t)
	run := func(prog string) []string {
		logs := newLogSink(t)
		cfg := fmt.Sprintf(`
global
    log %s format raw local0
defaults
    mode tcp
    log global
    option tcplog
    timeout connect 1s
    timeout client 2s
    timeout server 2s
    retries 0
frontend refused
    bind "fd@${refused}"
    default_backend refused
frontend none
    bind "fd@${none}"
    default_backend none
backend refused
    server r1 127.0.0.1:1
backend none
    server n1 127.0.0.1:1 disabled
`, logs.Addr())
		p := harness.Start(t, prog, cfg, "refused", "none")
		var lines []string
		for _, fe := range []string{"refused", "none"} {
			harness.RawRequest(t, p.Addrs[fe], "hello\n", 3*time.Second)
			l, ok := logs.Line()
			if !ok {
				t.Fatalf("%s: no log line for %s", prog, fe)
			}
			lines = append(lines, l)
		}
		return lines
	}
	got, want := run(bin.Path(t, "goha")), run(haproxy)
	// ci:cp [date] fe be/srv Tw/Tc/Tt bytes term counts queues
	for i := range got {
		g, h := strings.Fields(got[i]), strings.Fields(want[i])
		if len(g) != len(h) || len(g) < 9 {
			t.Fatalf("goha %q\nhaproxy %q", got[i], want[i])
		}
		if g[2] != h[2] || g[3] != h[3] || g[5] != h[5] || g[6] != h[6] || g[7] != h[7] || g[8] != h[8] || !sameUnset(g[4], h[4]) {
			t.Errorf("goha:    %s\nhaproxy: %s", got[i], want[i])
		}
	}
}
