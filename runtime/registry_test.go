package runtime

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRegisterPanics(t *testing.T) {
	run := func(name string, c *Command) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		Register(c)
	}
	noop := func(*Ctx) {}
	run("duplicate", &Command{Words: []string{"show", "stat"}, Usage: "show stat", Help: "x", Run: noop})
	run("no usage", &Command{Words: []string{"zz", "top"}, Help: "x", Run: noop})
	run("six words", &Command{Words: strings.Fields("a b c d e f"), Usage: "a", Help: "x", Run: noop})
	run("no handler", &Command{Words: []string{"zz", "nohandler"}, Usage: "zz", Help: "x"})
}

func TestLookupLongestPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"show servers state be1": "show servers state",
		"show servers conn":      "show servers conn",
		"set maxconn server x 1": "set maxconn server",
		"set server be/s weight": "set server",
		"set weight":             "set weight",
		"show servers":           "",
		"shows stat":             "",
	} {
		c := lookup(strings.Fields(in))
		got := ""
		if c != nil {
			got = strings.Join(c.Words, " ")
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestJSONOutputs checks that show stat json and show info json are valid
// JSON with one object per typed line.
func TestJSONOutputs(t *testing.T) {
	ts := startServer(t, newProc(t, readFile(t, "testdata/golden.cfg")))
	var rows [][]map[string]any
	out := ts.send(t, LevelAdmin, "show stat json\n")
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("show stat json: %v", err)
	}
	typed := strings.Count(ts.send(t, LevelAdmin, "show stat typed\n"), "\n") - 1
	n := 0
	for _, r := range rows {
		n += len(r)
	}
	if len(rows) != 8 || n != typed {
		t.Errorf("json: %d rows, %d cells; typed has %d lines", len(rows), n, typed)
	}
	var info []map[string]any
	out = ts.send(t, LevelAdmin, "show info json\n")
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("show info json: %v", err)
	}
	if typed := strings.Count(ts.send(t, LevelAdmin, "show info typed\n"), "\n") - 1; len(info) != typed {
		t.Errorf("info json %d fields, typed %d", len(info), typed)
	}
	if v := info[1]["value"].(map[string]any)["value"]; v == "" {
		t.Errorf("no version in %v", info[1])
	}
}
