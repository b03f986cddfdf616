package cli

import (
	"reflect"
	"testing"
)

func TestCommandFromArgs(t *testing.T) {
	tests := []struct {
		args []string
		want []Command
	}{
		{[]string{"show", "stat"}, []Command{{Words: []string{"show", "stat"}}}},
		{[]string{"set", "server", "be/s1", "agent-send", "a b;c"}, []Command{{Words: []string{"set", "server", "be/s1", "agent-send", "a b;c"}}}},
		{[]string{"show stat | cols a,b"}, []Command{{Words: []string{"show", "stat"}, Stages: [][]string{{"cols", "a,b"}}}}},
		{[]string{"show", "stat", "|", "where", "a=b", "|", "cols", "a"}, []Command{{Words: []string{"show", "stat"}, Stages: [][]string{{"where", "a=b"}, {"cols", "a"}}}}},
		{[]string{"watch", "1", "show stat | cols a"}, []Command{{Words: []string{"watch", "1", "show", "stat"}, Stages: [][]string{{"cols", "a"}}}}},
		{[]string{"watch", "1", "show", "info"}, []Command{{Words: []string{"watch", "1", "show", "info"}}}},
	}
	for _, tt := range tests {
		got, err := commandFromArgs(tt.args)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("commandFromArgs(%q) = %#v, %v; want %#v", tt.args, got, err, tt.want)
		}
	}
	for _, bad := range [][]string{{"show", "stat", "|"}, {"watch", "1", "a; b"}, {"'x"}} {
		if _, err := commandFromArgs(bad); err == nil {
			t.Errorf("commandFromArgs(%q) accepted", bad)
		}
	}
}
