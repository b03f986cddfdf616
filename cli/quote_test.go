package cli

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		want []Command
		err  bool
	}{
		{"show stat", []Command{{Words: []string{"show", "stat"}}}, false},
		{"  get weight   be/s1  ", []Command{{Words: []string{"get", "weight", "be/s1"}}}, false},
		{"set server be/s1 agent-send 'hello world'", []Command{{Words: []string{"set", "server", "be/s1", "agent-send", "hello world"}}}, false},
		{`set server be/s1 agent-send "a;b"`, []Command{{Words: []string{"set", "server", "be/s1", "agent-send", "a;b"}}}, false},
		{`set server be/s1 agent-send a\ b`, []Command{{Words: []string{"set", "server", "be/s1", "agent-send", "a b"}}}, false},
		{"show version; show backend", []Command{{Words: []string{"show", "version"}}, {Words: []string{"show", "backend"}}}, false},
		{"show servers state #3", []Command{{Words: []string{"show", "servers", "state", "#3"}}}, false},
		{"show stat | cols pxname,svname | where status=UP", []Command{{
			Words:  []string{"show", "stat"},
			Stages: [][]string{{"cols", "pxname,svname"}, {"where", "status=UP"}},
		}}, false},
		{"show stat|table", []Command{{Words: []string{"show", "stat"}, Stages: [][]string{{"table"}}}}, false},
		{`show stat | where 'status=MAINT (via be/s1)'`, []Command{{Words: []string{"show", "stat"}, Stages: [][]string{{"where", "status=MAINT (via be/s1)"}}}}, false},
		{"add map #0 <<", []Command{{Words: []string{"add", "map", "#0", "<<"}}}, false},
		{";;", nil, false},
		{"", nil, false},
		{"show 'stat", nil, true},
		{`show stat\`, nil, true},
		{"show stat |", nil, true},
		{"| cols a", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseLine(tt.line)
		if tt.err {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseLine(%q) error = %v, want ErrSyntax", tt.line, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLine(%q): %v", tt.line, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseLine(%q) = %#v, want %#v", tt.line, got, tt.want)
		}
	}
}

func TestEncodeWords(t *testing.T) {
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"show", "stat"}, "show stat"},
		{[]string{"set", "server", "be/s1", "agent-send", "hello world"}, `set server be/s1 agent-send hello\ world`},
		{[]string{"x", "a;b"}, `x a\;b`},
		{[]string{"x", `a\b`}, `x a\\b`},
		{[]string{"x", "a\tb"}, "x a\\\tb"},
		{[]string{"x", "'quoted'"}, "x 'quoted'"},
		{[]string{"add", "map", "#0", "<<"}, "add map #0 <<"},
	}
	for _, tt := range tests {
		got, err := EncodeWords(tt.words)
		if err != nil || got != tt.want {
			t.Errorf("EncodeWords(%q) = %q, %v; want %q", tt.words, got, err, tt.want)
		}
		if back := DecodeWords(got); !reflect.DeepEqual(back, tt.words) {
			t.Errorf("DecodeWords(%q) = %q, want %q", got, back, tt.words)
		}
	}
	for _, bad := range [][]string{{"x", ""}, {"x", "a\nb"}, {"x", "a\rb"}} {
		if _, err := EncodeWords(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("EncodeWords(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
}

// A line typed in the shell reaches the server as the same words.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"show stat", `a "b c" 'd;e' f\ g`, "x | where a=b ; y", "#1 '#2'", `"\"" '\'`, "a\tb\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, err := ParseLine(line)
		if err != nil {
			return
		}
		for _, c := range cmds {
			if len(c.Words) == 0 {
				t.Fatalf("empty command from %q", line)
			}
			enc, err := EncodeWords(c.Words)
			if err != nil {
				continue
			}
			if back := DecodeWords(enc); !reflect.DeepEqual(back, c.Words) {
				t.Fatalf("%q: words %q encoded %q decoded %q", line, c.Words, enc, back)
			}
		}
	})
}
