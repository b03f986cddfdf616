package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerStateRoundTrip saves `show servers state` after run-time
// changes and restores it into a fresh process, as a reload does.
func TestServerStateRoundTrip(t *testing.T) {
	cfg := readFile(t, "testdata/golden.cfg")
	p1 := newProc(t, cfg)
	ts := startServer(t, p1)
	for _, c := range []string{"set server be1/s2 state maint", "set server be1/s3 state drain",
		"set weight be1/s3 7", "set server be2/t2 state ready", "set server be1/s1 addr 127.0.0.9 port 8080",
		"disable health be1/s1", "set server be2/t1 health down"} {
		if out := ts.send(t, LevelAdmin, c+"\n"); strings.HasPrefix(out, "No") || strings.HasPrefix(out, "Perm") {
			t.Fatalf("%s: %s", c, out)
		}
	}
	saved := ts.send(t, LevelAdmin, "show servers state\n")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state"), []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg2 := strings.Replace(cfg, "global\n", "global\n    server-state-base "+dir+"\n    server-state-file state\n", 1)
	cfg2 = strings.Replace(cfg2, "defaults\n", "defaults\n    load-server-state-from-file global\n", 1)
	p2 := newProc(t, cfg2)
	if errs := LoadServerStateFiles(p2.Conf); len(errs) > 0 {
		t.Fatal(errs)
	}
	ts2 := startServer(t, p2)
	// A running server comes back with a full health counter (HAProxy's
	// rule), so the health column is left out.
	noHealth := func(s string) string {
		lines := strings.Split(normalize(s), "\n")
		for i, ln := range lines {
			if f := strings.Fields(ln); len(f) == 25 && ln[0] != '#' {
				f[12] = "H"
				lines[i] = strings.Join(f, " ")
			}
		}
		return strings.Join(lines, "\n")
	}
	got := noHealth(ts2.send(t, LevelAdmin, "show servers state\n"))
	if want := noHealth(saved); got != want {
		t.Errorf("restored state differs:\n--- saved:\n%s--- restored:\n%s", want, got)
	}
}

// TestServerStateConfigWins checks HAProxy's precedence: a weight changed
// in the configuration is not overridden by the saved one, and a server
// no longer `disabled` in the configuration comes back ready.
func TestServerStateConfigWins(t *testing.T) {
	cfg := readFile(t, "testdata/golden.cfg")
	p := newProc(t, strings.Replace(strings.Replace(cfg, "weight 50", "weight 40", 1), " disabled", "", 1))
	state := "1\n# header\n" +
		"3 be1 2 s2 127.0.0.1 2 0 20 50 5 1 0 2 0 0 0 0 - 23412 - 0 0 - - 0\n" +
		"4 be2 2 t2 127.0.0.1 0 5 1 1 5 1 0 0 8 0 0 0 - 23415 - 0 0 - - 0\n" +
		"3 be1 9 gone 127.0.0.1 2 0 1 1 5 1 0 2 0 0 0 0 - 1 - 0 0 - - 0\n" +
		"bad line\n"
	errs := ApplyServerState(p.Conf, strings.NewReader(state), nil)
	if len(errs) != 1 {
		t.Fatalf("want one error for the bad line, got %v", errs)
	}
	_, s2 := p.Conf.FindServerRef("be1", "s2")
	if s2.UWeight() != 40 {
		t.Errorf("s2 weight %d, want the configured 40", s2.UWeight())
	}
	_, t2 := p.Conf.FindServerRef("be2", "t2")
	if t2.AdminState() != 0 {
		t.Errorf("t2 admin %d, want 0: the configuration no longer disables it", t2.AdminState())
	}
	if errs := ApplyServerState(p.Conf, strings.NewReader("2\n"), nil); len(errs) != 1 {
		t.Errorf("version 2 accepted")
	}
}
