package core

import (
	"strings"
	"testing"
	"time"
)

// TestStatsKeywords checks what the stats keywords build: any of them
// enables the page; a proxy keeps its defaults' page until its own first
// stats line, which starts afresh as in HAProxy.
func TestStatsKeywords(t *testing.T) {
	cfg, msgs := buildText(t, `
defaults
    mode http
    stats uri /d
    stats refresh 1500ms
backend inherits
    server s 127.0.0.1:1
backend own
    stats realm R
    stats auth a:b
    stats auth nopass
    stats scope .
    stats scope inherits
    stats admin if TRUE
    stats show-node n1
    stats show-desc two words
    stats hide-version
    stats show-legends
    server s 127.0.0.1:1
backend none
    server s 127.0.0.1:1
defaults
    mode http
backend after
    server s 127.0.0.1:1
`)
	for _, m := range msgs {
		if strings.HasPrefix(m, "[ALERT]") {
			t.Fatal(msgs)
		}
	}
	in := cfg.FindProxy("inherits", CapBE).Stats
	if in == nil || in.URI != "/d" || in.Refresh != 2*time.Second {
		t.Fatalf("inherited page: %+v", in)
	}
	own := cfg.FindProxy("own", CapBE).Stats
	if own == nil || own.URI != DefaultStatsURI || own.Refresh != 0 || own.Realm != "R" ||
		len(own.Users) != 2 || own.Users[1] != (StatsUser{Name: "nopass"}) ||
		strings.Join(own.Scopes, ",") != ".,inherits" || len(own.Admin) != 1 ||
		!own.ShowNode || own.Node != "n1" || own.Desc != "two words" || !own.HideVersion || !own.Legends {
		t.Fatalf("own page: %+v", own)
	}
	if cfg.FindProxy("after", CapBE).Stats != nil {
		t.Fatal("a defaults section without stats lines gave a page")
	}
}

func TestStatsKeywordErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"stats admin", "'stats admin' requires either 'if' or 'unless' followed by a condition."},
		{"stats refresh 5x", "unexpected character 'x' in argument to stats refresh interval."},
		{"stats refresh 3000000000", "timer overflow in argument <3000000000> to stats refresh interval"},
		{"stats uri", "'uri' needs an URI prefix."},
		{"stats show-node a/b", "'stats show-node' invalid node name"},
		{"stats bogus", "unknown stats parameter 'bogus', expects 'admin', "},
		{"stats", "missing keyword in 'stats', expects "},
		{"stats http-request deny\n    stats http-request allow", "previous 'stats' action has no condition attached, further entries are NOOP."},
		{"stats http-request frobnicate", "'http-request' expects "},
		{"stats realm R\n    stats http-request deny if TRUE", "proxy 'b': stats 'auth'/'realm' and 'http-request' can't be used at the same time."},
	} {
		_, msgs := buildText(t, "defaults\n    mode http\nbackend b\n    "+c.line+"\n")
		if !strings.Contains(strings.Join(msgs, "\n"), c.want) {
			t.Errorf("%q: %q, want %q", c.line, msgs, c.want)
		}
	}
	_, msgs := buildText(t, "defaults\n    mode http\n    stats admin if TRUE\n    stats http-request deny\n")
	if all := strings.Join(msgs, "\n"); !strings.Contains(all, "'stats admin' not allowed in 'defaults' section.") ||
		!strings.Contains(all, "'stats' not allowed in 'defaults' section.") {
		t.Errorf("stats admin and http-request in defaults: %q", msgs)
	}
	cfg, msgs := buildText(t, "defaults\n    mode tcp\nlisten l\n    stats enable\n    server s 127.0.0.1:1\n")
	if cfg.FindProxy("l", CapFE).Stats != nil || !strings.Contains(strings.Join(msgs, "\n"), "'stats' statement ignored for proxy 'l' as it requires HTTP mode.") {
		t.Errorf("stats in tcp mode: %q", msgs)
	}
}

// TestProxyIDs checks HAProxy's automatic proxy ids, which the stats page's
// form names backends by: from 1, or from 2 once a global stats line made
// HAProxy's GLOBAL frontend.
func TestProxyIDs(t *testing.T) {
	for _, c := range []struct {
		global string
		first  int
	}{
		{"", 1},
		{"global\n    nbthread 1\n", 1},
		{"global\n    stats timeout 5s\n", 2},
		{"global\n    stats maxconn 5\n", 2},
		{"global\n    stats socket /tmp/x.sock\n", 2},
	} {
		cfg, _ := buildText(t, c.global+"defaults\n    mode http\nbackend a\n    server s 127.0.0.1:1\nbackend b\n    id 7\nbackend c\n")
		if a, b, cc := cfg.FindProxy("a", CapBE).ID, cfg.FindProxy("b", CapBE).ID, cfg.FindProxy("c", CapBE).ID; a != c.first || b != 7 || cc != c.first+1 {
			t.Errorf("%q: ids %d %d %d", c.global, a, b, cc)
		}
	}
}
