package diag

import (
	"strings"
	"testing"
)

// Keyword lists as HAProxy 2.6 offers them to its suggestion machinery
// (global and proxy "common" lists, server keywords).
var (
	globalKws = []string{
		"global", "daemon", "master-worker", "noepoll", "nokqueue",
		"noevports", "nopoll", "busy-polling", "set-dumpable",
		"insecure-fork-wanted", "insecure-setuid-wanted", "nosplice",
		"nogetaddrinfo", "noreuseport", "quiet", "zero-warning",
		"tune.runqueue-depth", "tune.maxpollevents", "tune.maxaccept",
		"tune.recv_enough", "tune.buffers.limit",
		"tune.buffers.reserve", "tune.bufsize", "tune.maxrewrite",
		"tune.idletimer", "tune.rcvbuf.client", "tune.rcvbuf.server",
		"tune.sndbuf.client", "tune.sndbuf.server", "tune.pipesize",
		"tune.http.cookielen", "tune.http.logurilen", "tune.http.maxhdr",
		"tune.comp.maxlevel", "tune.pattern.cache-size", "uid", "gid",
		"external-check", "user", "group", "nbproc", "maxconn",
		"ssl-server-verify", "maxconnrate", "maxsessrate", "maxsslrate",
		"maxcomprate", "maxpipes", "maxzlibmem", "maxcompcpuusage", "ulimit-n",
		"chroot", "description", "node", "pidfile", "unix-bind", "log",
		"log-send-hostname", "server-state-base", "server-state-file",
		"log-tag", "spread-checks", "max-spread-checks", "cpu-map", "setenv",
		"presetenv", "unsetenv", "resetenv", "strict-limits", "localpeer",
		"numa-cpu-mapping", "defaults", "listen", "frontend", "backend",
		"peers", "resolvers", "cluster-secret", "nbthread", "stats",
	}
	proxyKws = []string{
		"listen", "frontend", "backend", "defaults", "server",
		"default-server", "server-template", "bind", "monitor-net",
		"monitor-uri", "mode", "id", "description", "disabled", "enabled",
		"bind-process", "acl", "dynamic-cookie-key", "cookie", "email-alert",
		"persist", "appsession", "load-server-state-from-file",
		"server-state-file-name", "max-session-srv-conns", "capture",
		"retries", "http-request", "http-response", "http-after-response",
		"http-send-name-header", "block", "redirect", "use_backend",
		"use-server", "force-persist", "ignore-persist", "force-persist",
		"stick-table", "stick", "stats", "option", "default_backend",
		"http-reuse", "monitor", "transparent", "maxconn", "backlog",
		"fullconn", "dispatch", "balance", "hash-type",
		"hash-balance-factor", "unique-id-format", "unique-id-header",
		"log-format", "log-format-sd", "log-tag", "log", "source", "usesrc",
		"error-log-format", "timeout", "tcp-request", "tcp-response",
	}
	serverKws = []string{
		"backup", "cookie", "disabled", "enabled", "error-limit", "ws", "id",
		"init-addr", "log-proto", "maxconn", "maxqueue", "max-reuse",
		"minconn", "namespace", "no-backup", "no-send-proxy",
		"no-send-proxy-v2", "no-tfo", "non-stick", "observe", "on-error",
		"on-marked-down", "on-marked-up", "pool-low-conn", "pool-max-conn",
		"pool-purge-delay", "proto", "proxy-v2-options", "redir",
		"resolve-net", "resolve-opts", "resolve-prefer", "resolvers",
		"send-proxy", "send-proxy-v2", "slowstart", "source", "stick", "tfo",
		"track", "socks4", "usesrc", "weight", "addr", "agent-check",
		"agent-inter", "agent-port", "check", "check-send-proxy", "fall",
		"inter", "fastinter", "downinter", "port", "rise",
	}
)

// The expectations were captured from HAProxy 2.6.12 (`haproxy -c` on a
// configuration with each misspelling); "" means HAProxy offered nothing.
func TestBestMatchAgainstHAProxy(t *testing.T) {
	tests := []struct {
		word string
		kws  []string
		want string
	}{
		{"maxconnn", globalKws, "maxconn"},
		{"nbthrad", globalKws, "nbthread"},
		{"deamon", globalKws, "daemon"},
		{"tune.bufsiz", globalKws, "tune.bufsize"},
		{"timout", proxyKws, "timeout"},
		{"mdoe", proxyKws, "mode"},
		{"defualt_backend", proxyKws, "default_backend"},
		{"use-backend", proxyKws, "use_backend"},
		{"optoin", proxyKws, "option"},
		{"xyzzy", proxyKws, ""},
		{"blance", proxyKws, "balance"},
		{"balanse", proxyKws, "balance"},
		{"sever", proxyKws, "server"},
		{"wieght", serverKws, "weight"},
		{"chek", serverKws, "check"},
		{"inetr", serverKws, "inter"},
		{"maxcon", serverKws, "maxconn"},
		{"rise2", serverKws, "rise"},
	}
	for _, tt := range tests {
		if got := BestMatch(tt.word, tt.kws); got != tt.want {
			t.Errorf("BestMatch(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestFingerprintCells(t *testing.T) {
	f := WordFingerprint("Ab1-")
	want := map[int]uint8{
		1: 1, 2: 1, 27: 1, 28: 1, // classes present
		32*28 + 1:  1, // begin -> a
		32*1 + 2:   1, // a -> b
		32*2 + 27:  1, // b -> digit
		32*27 + 28: 1, // digit -> other
		32*28 + 28: 1, // other -> end
	}
	for i, v := range f {
		if v != want[i] {
			t.Errorf("cell %d = %d, want %d", i, v, want[i])
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"weight", "weight", 0},
		{"WEIGHT", "weight", 0}, // case-folded
		{"a", "b", 6},           // presence, begin->x and x->end for both
		{"ab", "ba", 6},
		{"1", "9", 0}, // digits are one class
		{"", "", 0},
	}
	for _, tt := range tests {
		fa, fb := WordFingerprint(tt.a), WordFingerprint(tt.b)
		if got := Distance(&fa, &fb); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(&fb, &fa); got != tt.want {
			t.Errorf("Distance not symmetric for %q, %q", tt.a, tt.b)
		}
	}
}

// A multi-word fingerprint is the sum of its words' transitions, which is
// what the CLI compares for commands like "show servers state".
func TestFingerprintAddAccumulates(t *testing.T) {
	var multi Fingerprint
	multi.Add("show")
	multi.Add("stat")
	a, b := WordFingerprint("show"), WordFingerprint("stat")
	for i := range multi {
		sum := a[i] + b[i]
		if i < 32 && sum > 1 {
			sum = 1 // row 0 marks presence only
		}
		if multi[i] != sum {
			t.Fatalf("cell %d = %d, want %d", i, multi[i], sum)
		}
	}
	multi.Reset()
	if multi != (Fingerprint{}) {
		t.Fatal("Reset left cells set")
	}
}

func TestBestMatchThresholdAndTies(t *testing.T) {
	// Too far from everything: nothing suggested.
	if got := BestMatch("zzzzzzzz", []string{"balance", "mode"}); got != "" {
		t.Errorf("got %q, want no suggestion", got)
	}
	// A short candidate is rejected when the distance exceeds twice its
	// length even if the word itself is long.
	if got := BestMatch("abcdefghij", []string{"a"}); got != "" {
		t.Errorf("got %q, want no suggestion", got)
	}
	// Equal distances (4 each): the first candidate wins.
	if got := BestMatch("ab", []string{"abd", "abc"}); got != "abd" {
		t.Errorf("tie: got %q, want abd", got)
	}
	if got := BestMatch("ab", []string{"abc", "abd"}); got != "abc" {
		t.Errorf("tie: got %q, want abc", got)
	}
	if got := BestMatch("x", nil); got != "" {
		t.Errorf("no candidates: got %q", got)
	}
	// Long repeated runs wrap the byte counters instead of panicking.
	long := make([]byte, 600)
	for i := range long {
		long[i] = 'a'
	}
	f := WordFingerprint(string(long))
	if f[32*1+1] != uint8(599%256) {
		t.Errorf("a->a counter = %d, want %d", f[32*1+1], 599%256)
	}
}

func BenchmarkBestMatch(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		BestMatch("defualt_backend", proxyKws)
	}
}

func TestPrintFromHidesDiagnostics(t *testing.T) {
	var c Collector
	c.Add(Diag{Sev: Diagnostic, Pos: Pos{"f", 1}, Parsing: true, Tight: true, Msg: "'d'."})
	c.Add(Diag{Sev: Notice, Pos: Pos{"f", 2}, Parsing: true, Tight: true, Msg: "'n'."})
	var b strings.Builder
	c.PrintFrom(&b, 7, Notice)
	if got, want := b.String(), "[NOTICE]   (7) : config : parsing [f:2]: 'n'.\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b.Reset()
	c.PrintFrom(&b, 7, Diagnostic)
	if got, want := b.String(), "[DIAG]     (7) : config : parsing [f:1]: 'd'.\n[NOTICE]   (7) : config : parsing [f:2]: 'n'.\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
