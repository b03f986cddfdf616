package stream

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"goha/core"
)

const statsTestCfg = `
defaults
    mode http
backend b1
    server s1 127.0.0.1:1
    server s2 127.0.0.1:2
    server s3 127.0.0.1:3
backend b2
    server s1 127.0.0.1:4
`

func adminOf(t *testing.T, proc *Process, be, srv string) uint32 {
	t.Helper()
	_, s := proc.Conf.FindServerRef(be, srv)
	if s == nil {
		t.Fatalf("no server %s/%s", be, srv)
	}
	return s.AdminState()
}

// TestStatsPost pins how the admin form is read: the last b and action
// count, servers named before them are handled once both are known, an
// unknown server makes the outcome partial, a bad action or backend
// refuses the form.
func TestStatsPost(t *testing.T) {
	proc, d := logConf(t, statsTestCfg)
	if d.FatalAlerts() > 0 {
		t.Fatal(d)
	}
	for _, c := range []struct {
		body, want string
	}{
		{"", "NONE"},
		{"action=maint&b=b1", "NONE"},
		{"s=s1&s=s2&action=maint&b=b1", "DONE"},
		{"b=b2&s=s3&action=drain&b=%231", "DONE"},
		{"s=nosuch&s=s1&action=ready&b=b2", "PART"},
		{"s=s1&action=explode&b=b1", "ERRP"},
		{"s=s1&action=ready&b=nosuch", "ERRP"},
		{"s=s1&action=enable&b=b2", "NONE"}, // not in forced maintenance: not even counted
		{"s=s1&action=ready&b=b1&" + strings.Repeat("x", maxFormParam+1), "ERRP"},
		{"s=s2&action=ready&b=b1&bad=%zz", "NONE"}, // reading stops at the bad escape
	} {
		if got := proc.statsPost([]byte(c.body)); got != c.want {
			t.Errorf("%q: %s, want %s", c.body, got, c.want)
		}
	}
	if adminOf(t, proc, "b1", "s1")&core.AdminFMaint == 0 || adminOf(t, proc, "b1", "s2")&core.AdminFMaint == 0 {
		t.Error("b1/s1 and b1/s2 not in maintenance")
	}
	if adminOf(t, proc, "b1", "s3")&core.AdminFDrain == 0 {
		t.Error("b1/s3 (b=#1, the last b) not draining")
	}
	if adminOf(t, proc, "b2", "s1") != 0 {
		t.Error("b2/s1 not ready")
	}
}

func TestStatsQuery(t *testing.T) {
	for _, c := range []struct {
		q    string
		want statsQuery
	}{
		{"", statsQuery{}},
		{";csv;norefresh", statsQuery{format: statsCSV, noRefresh: true}},
		{"?;csv;scope=b1", statsQuery{format: statsCSV, scope: "b1"}},
		{";json;up;no-maint", statsQuery{format: statsJSON, up: true, noMaint: true}},
		{";st=DONE;up?scope=be", statsQuery{st: "DONE", up: true, scope: "be"}},
		{";st=WHAT;x", statsQuery{st: "UNKN"}},
		{";st=DONE", statsQuery{st: "DONE"}},
		{";st=DON", statsQuery{}},  // the code takes four characters
		{"?scope=b", statsQuery{}}, // HAProxy looks for scope= where eight characters fit
		{"?scope=b1", statsQuery{scope: "b1"}},
		{"?scope=a/b&x=1", statsQuery{}},
	} {
		if got := parseStatsQuery(c.q, true); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.q, got, c.want)
		}
	}
	if parseStatsQuery(";norefresh", false).noRefresh {
		t.Error(";norefresh taken without a refresh")
	}
}

func FuzzStatsForm(f *testing.F) {
	for _, s := range []string{"", "s=srv1&s=srv2&action=maint&b=%233", "b=a+b&action=drain", "%", "%4", "&&=&", "s=%00x", strings.Repeat("a", 3000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ps := parseStatsForm(body)
		if len(body) > 0 && len(ps) != bytes.Count(body, []byte("&"))+1 {
			t.Fatalf("%d parameters from %q", len(ps), body)
		}
		for _, p := range ps {
			if strings.IndexByte(p.key, 0) >= 0 || strings.IndexByte(p.value, 0) >= 0 {
				t.Fatalf("NUL kept in %q", body)
			}
			if p.tooLong && (p.key != "" || p.value != "") {
				t.Fatal("a refused parameter has a value")
			}
		}
	})
}

func FuzzStatsQuery(f *testing.F) {
	for _, s := range []string{"", ";csv", "?;csv;scope=b1", ";st=DONE;up;norefresh?scope=x", ";st=", "scope=" + strings.Repeat("z", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		sq := parseStatsQuery(q, true)
		if len(sq.scope) > maxStatsScope || !validProxyChars(sq.scope) {
			t.Fatalf("scope %q from %q", sq.scope, q)
		}
		if sq.st != "" && !slices.Contains(statsCodes, sq.st) {
			t.Fatalf("st %q from %q", sq.st, q)
		}
		if sq.scope != "" && !strings.Contains(q, "scope="+sq.scope) {
			t.Fatalf("scope %q not in %q", sq.scope, q)
		}
	})
}
