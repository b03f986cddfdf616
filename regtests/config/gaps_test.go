package config

import (
	"strings"
	"testing"

	"goha/regtests/internal/bin"
)

// gapCases are valid HAProxy 2.6 configurations, each with a marked line
// holding a keyword goha does not implement. A refused one must stop goha
// -c with an ALERT that names the line and the keyword; a warned one must
// pass with a WARNING that does.
var gapCases = []struct {
	name    string
	cfg     string
	kw      string
	refused bool
}{
	{"tcp-request-silent-drop", inFrontend("!tcp-request content silent-drop"), "tcp-request content silent-drop", true},
	{"stats-show-modules", inFrontend("!stats show-modules"), "stats show-modules", false},
	{"filter-trace", inBackend("!filter trace"), "filter", true},
	{"capture-cookie", inFrontend("!capture cookie SRV len 10"), "capture cookie", true},
	{"tcp-request-session-silent-drop", inFrontend("!tcp-request session silent-drop"), "tcp-request session silent-drop", true},
	{"h1-case-adjust", inGlobal("!h1-case-adjust content-type Content-Type"), "h1-case-adjust", true},
	{"server-source", inBackend("!server s2 127.0.0.1:2 source 127.0.0.1"), "source", true},
	{"server-proto-h2", inBackend("!server s2 127.0.0.1:2 proto h2"), "proto h2", true},
	{"bind-netscaler", inFrontend("!bind 127.0.0.1:@PORT@ accept-netscaler-cip 1234"), "accept-netscaler-cip", true},
	{"cookie-dynamic", inBackend("!cookie SRV insert dynamic"), "cookie dynamic", true},
	{"force-persist", inBackend("!force-persist if TRUE"), "force-persist", true},
	{"cpu-map", inGlobal("!cpu-map 1 0"), "cpu-map", false},
	{"tcpka", inFrontend("!option tcpka"), "option tcpka", false},
	{"dh-param", inGlobal("!tune.ssl.default-dh-param 2048"), "tune.ssl.default-dh-param", false},
	{"bind-tfo", inFrontend("!bind 127.0.0.1:@PORT@ tfo"), "tfo", false},
	{"server-tfo", inBackend("!server s2 127.0.0.1:2 tfo"), "tfo", false},
}

func TestKeywordGaps(t *testing.T) {
	goha := bin.Path(t, "goha")
	haproxy := bin.HAProxy(t)
	for _, tc := range gapCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			at, _ := writeCase(t, dir, tc.cfg)
			if hcode, hmsgs := messages(t, haproxy, dir); hcode != 0 {
				t.Fatalf("haproxy -c refused the case, it tests nothing: %q", hmsgs)
			}
			code, msgs := messages(t, goha, dir)
			mine := about(msgs, at)
			want, wantCode, sev := "' is parsed but not implemented by goha yet; ignored.", 0, "WARNING "
			if tc.refused {
				want, wantCode, sev = "' is not supported by goha.", 1, "ALERT "
			}
			if code != wantCode {
				t.Errorf("goha -c exit status %d, want %d: %q", code, wantCode, msgs)
			}
			found := false
			for _, m := range mine {
				found = found || strings.HasPrefix(m, sev) && strings.HasSuffix(m, "'"+tc.kw+want)
			}
			if !found {
				t.Errorf("goha says nothing of '%s' at line %d as %s: %q", tc.kw, at, sev, msgs)
			}
		})
	}
}
