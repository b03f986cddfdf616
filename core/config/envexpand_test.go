package config

import "testing"

func TestExpandEnv(t *testing.T) {
	env := func(n string) (string, bool) {
		v, ok := map[string]string{"IP": "127.0.0.1", "P": "80", "E": ""}[n]
		return v, ok
	}
	for _, c := range []struct{ in, want string }{
		{"${IP}:${P}", "127.0.0.1:80"},
		{"$IP:$P", "127.0.0.1:80"},
		{"${NOPE}:81", ":81"},
		{"${E}x", "x"},
		{"$", ""},
		{"a$-b", "a-b"},
		{"1.2.3.4:${P", "1.2.3.4:80"},
		{"1.2.3.4:$P}", "1.2.3.4:80}"},
		{"1.2.3.4:${P}}", "1.2.3.4:80}"},
		{"x${IP}${P}y", "x127.0.0.180y"},
		{"plain:80", "plain:80"},
	} {
		if got := ExpandEnv(c.in, env); got != c.want {
			t.Errorf("ExpandEnv(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLineEnvIsASnapshot(t *testing.T) {
	cfg := "global\n  setenv A 1\n  maxconn 1\n  setenv A 2\n  maxconn 2\n"
	secs := Parse("t.cfg", []byte(cfg), Options{Getenv: func(string) (string, bool) { return "", false }}, nil)
	lines := secs[0].Lines
	for i, want := range []string{"", "1", "1", "2"} {
		if v, _ := lines[i].Env("A"); v != want {
			t.Errorf("line %d %v sees A=%q, want %q", i, lines[i].Words, v, want)
		}
	}
}
