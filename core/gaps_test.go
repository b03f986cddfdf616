package core

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"goha/core/config"
	"goha/core/diag"
)

// gapLine builds a configuration whose line 2 is line, in a section where
// the keyword is valid, and returns the diagnostics of that line.
func gapLine(t *testing.T, kind string, line []string) []diag.Diag {
	t.Helper()
	at := diag.Pos{File: "t.cfg", Line: 2}
	secs := []config.Section{{Kind: kind, Pos: diag.Pos{File: "t.cfg", Line: 1}, Lines: []config.Line{{Pos: at, Words: line}}}}
	switch kind {
	case "backend", "listen":
		secs[0].Name = "px"
	case "frontend":
		secs[0].Name = "px"
		secs[0].Lines = append(secs[0].Lines, config.Line{Pos: diag.Pos{File: "t.cfg", Line: 3}, Words: []string{"bind", "127.0.0.1:1"}})
	}
	d := &diag.Collector{}
	Build(secs, d)
	var out []diag.Diag
	for _, x := range d.All() {
		if x.Pos == at {
			out = append(out, x)
		}
	}
	return out
}

// dummyArgs gives a keyword as many words as it takes.
func dummyArgs(n int) []string {
	if n == ArgsAny {
		n = 1
	}
	out := make([]string, n)
	for i := range out {
		out[i] = "x"
	}
	return out
}

// wantGap checks that the diagnostics of a line are exactly the report of
// gap g for kw: one ALERT or one WARNING that names it.
func wantGap(t *testing.T, ds []diag.Diag, g Gap, kw string) {
	t.Helper()
	if len(ds) != 1 {
		t.Fatalf("want one diagnostic, got %v", ds)
	}
	sev, msg := diag.Warning, fmt.Sprintf("'%s' is parsed but not implemented by goha yet; ignored.", kw)
	if g == Refused {
		sev, msg = diag.Alert, fmt.Sprintf("'%s' is not supported by goha.", kw)
	}
	if ds[0].Sev != sev || !strings.HasSuffix(ds[0].Msg, msg) {
		t.Errorf("got %v %q, want %v ending in %q", ds[0].Sev, ds[0].Msg, sev, msg)
	}
}

func TestSectionKeywordGaps(t *testing.T) {
	var names []string
	for name, k := range keywords {
		if k.Unimplemented != Implemented {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("no keyword has a gap: the test checks nothing")
	}
	for _, name := range names {
		k := keywords[name]
		t.Run(name, func(t *testing.T) {
			kind := "global"
			switch {
			case k.Scope&scopeGlobal != 0:
			case k.Scope&scopeBE != 0 && k.Scope&scopeFE != 0:
				kind = "listen"
			case k.Scope&scopeBE != 0:
				kind = "backend"
			default:
				kind = "frontend"
			}
			line := append(strings.Fields(name), dummyArgs(k.Args)...)
			wantGap(t, gapLine(t, kind, line), k.Unimplemented, name)
		})
	}
}

func TestNoOptionOfRefusedOptionAccepted(t *testing.T) {
	if keywords["option abortonclose"].Unimplemented != Refused {
		t.Skip("option abortonclose is no longer refused")
	}
	if ds := gapLine(t, "listen", []string{"no", "option", "abortonclose"}); len(ds) != 0 {
		t.Errorf("'no option abortonclose' asks for what goha does; got %v", ds)
	}
}

func TestServerKeywordGaps(t *testing.T) {
	n := 0
	for name, k := range serverKeywords {
		if k.Unimplemented == Implemented {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			line := append([]string{"server", "s", "127.0.0.1:1", name}, dummyArgs(k.Args)...)
			wantGap(t, gapLine(t, "backend", line), k.Unimplemented, name)
		})
	}
	if n == 0 {
		t.Fatal("no server keyword has a gap: the test checks nothing")
	}
}

func TestBindParamGaps(t *testing.T) {
	for name, g := range bindGaps {
		t.Run(name, func(t *testing.T) {
			if _, flag := bindFlags[name]; !flag {
				if _, param := bindParamArgs[name]; !param {
					t.Fatalf("'%s' has a gap but is no bind keyword", name)
				}
			}
			line := []string{"bind", "127.0.0.1:2", name}
			if n, ok := bindParamArgs[name]; ok {
				line = append(line, dummyArgs(n)...)
			}
			wantGap(t, gapLine(t, "frontend", line), g, name)
		})
	}
}

// TestProtoOnlyHTTP1 checks the keywords that accept the value that asks
// for HTTP/1, what goha speaks, and refuse the others.
func TestProtoOnlyHTTP1(t *testing.T) {
	for _, tc := range []struct {
		kind string
		line []string
		ok   bool
	}{
		{"backend", []string{"server", "s", "127.0.0.1:1", "proto", "h1"}, true},
		{"backend", []string{"server", "s", "127.0.0.1:1", "proto", "h2"}, false},
		{"backend", []string{"server", "s", "127.0.0.1:1", "ws", "auto"}, true},
		{"backend", []string{"server", "s", "127.0.0.1:1", "ws", "h2"}, false},
		{"frontend", []string{"bind", "127.0.0.1:2", "proto", "h1"}, true},
		{"frontend", []string{"bind", "127.0.0.1:2", "proto", "h2"}, false},
		{"global", []string{"ssl-server-verify", "required"}, true},
		{"global", []string{"ssl-server-verify", "none"}, true},
	} {
		ds := gapLine(t, tc.kind, tc.line)
		if tc.ok && len(ds) != 0 {
			t.Errorf("%q: got %v, want nothing", tc.line, ds)
		}
		if !tc.ok && (len(ds) != 1 || ds[0].Sev != diag.Alert || !strings.Contains(ds[0].Msg, "is not supported by goha.")) {
			t.Errorf("%q: got %v, want one alert", tc.line, ds)
		}
	}
}
