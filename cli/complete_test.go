package cli

import (
	"reflect"
	"testing"
)

func completionSession(t *testing.T) *Session {
	s := NewSession(Options{Addr: "/nonexistent"})
	s.tree = parseHelp(readTestdata(t, "help.txt"))
	s.backends = []string{"be", "be2", "other"}
	s.servers = []string{"be/s1", "be/s2", "other/web"}
	s.namesStale = false
	return s
}

func TestParseHelp(t *testing.T) {
	tree := parseHelp(readTestdata(t, "help.txt"))
	for _, path := range [][]string{{"show", "stat"}, {"show", "servers", "state"}, {"set", "server"}, {"get", "weight"}, {"help"}, {"quit"}, {"disable", "server"}} {
		n := tree
		for _, w := range path {
			n = n.children[w]
			if n == nil {
				t.Fatalf("no %q in the tree", path)
			}
		}
	}
	if args := tree.children["set"].children["server"].args; !reflect.DeepEqual(args, []string{"<bk>/<srv>", "[opts]"}) {
		t.Errorf("set server args = %q", args)
	}
	if tree.children["The"] != nil || tree.children["<bk>/<srv>"] != nil {
		t.Error("header or placeholder taken as a command")
	}
}

func TestComplete(t *testing.T) {
	s := completionSession(t)
	tests := []struct {
		line  string
		head  string
		cands []string
	}{
		{"sho", "", []string{"show "}},
		{"show serv", "show ", []string{"servers "}},
		{"show servers ", "show servers ", []string{"conn ", "state "}},
		{"show servers state b", "show servers state ", []string{"be ", "be2 "}},
		{"get weight ", "get weight ", []string{"be/", "other/"}},
		{"get weight be/", "get weight ", []string{"be/s1 ", "be/s2 "}},
		{"set server o", "set server ", []string{"other/"}},
		{"set server be/s1 st", "set server be/s1 ", []string{"state "}},
		{"set server be/s1 state ", "set server be/s1 state ", []string{"ready ", "drain ", "maint "}},
		{"set server be/s1 state maint ", "set server be/s1 state maint ", nil},
		{"disable server be/s", "disable server ", []string{"be/s1 ", "be/s2 "}},
		{"show stat | wh", "show stat | ", []string{"where "}},
		{"show stat | where ", "show stat | where ", nil},
		{"show version; show b", "show version; show ", []string{"backend "}},
		{"watch 1 show ba", "watch 1 show ", []string{"backend "}},
		{"wat", "", []string{"watch "}},
		{"frobnicate ", "frobnicate ", nil},
	}
	for _, tt := range tests {
		head, cands, tail := s.Complete(tt.line, len(tt.line))
		if head != tt.head || !reflect.DeepEqual(cands, tt.cands) || tail != "" {
			t.Errorf("Complete(%q) = %q, %q, %q; want %q, %q", tt.line, head, cands, tail, tt.head, tt.cands)
		}
	}
	// The cursor in the middle of the line keeps what follows it.
	if head, cands, tail := s.Complete("get wei be/s1", 7); head != "get " || !reflect.DeepEqual(cands, []string{"weight "}) || tail != " be/s1" {
		t.Errorf("mid-line: %q %q %q", head, cands, tail)
	}
}
