package cli

import (
	"reflect"
	"sync"
	"testing"
	"time"
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

func TestCompleteColumns(t *testing.T) {
	var mu sync.Mutex // guards sent
	var sent []string
	ps := &promptServer{answer: func(cmd string) (string, bool) {
		mu.Lock()
		sent = append(sent, cmd)
		mu.Unlock()
		if cmd == "show stat" {
			return "# pxname,svname,status,scur,\nbe,s1,UP,0,\n\n> ", false
		}
		return "\n> ", false
	}}
	s := NewSession(Options{Addr: listen(t, ps.serve), Timeout: 3 * time.Second})
	defer s.Close()
	tests := []struct {
		line, head string
		cands      []string
	}{
		{"show stat | cols pxname,s", "show stat | cols pxname,", []string{"svname", "status", "scur"}},
		{"show stat | cols sv", "show stat | cols ", []string{"svname"}},
		{"show stat | where st", "show stat | where ", []string{"status"}},
		{"show stat | where status=U", "show stat | where ", nil},
		{"show stat | where status=UP | sort sc", "show stat | where status=UP | sort ", []string{"scur "}},
		{"show version; show stat | cols p", "show version; show stat | cols ", []string{"pxname"}},
		{"set weight be/s1 3 | cols p", "set weight be/s1 3 | cols ", nil},
		{"show stat | grep x", "show stat | grep ", nil},
	}
	for _, tt := range tests {
		head, cands, _ := s.Complete(tt.line, len(tt.line))
		if head != tt.head || !reflect.DeepEqual(cands, tt.cands) {
			t.Errorf("Complete(%q) = %q, %q; want %q, %q", tt.line, head, cands, tt.head, tt.cands)
		}
	}
	// The header is asked once, and nothing but show commands is run.
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(sent, []string{"show stat"}) {
		t.Errorf("commands sent for completion: %q", sent)
	}
}
