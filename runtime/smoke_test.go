package runtime

import "testing"

func TestSmoke(t *testing.T) {
	p := newProc(t, readFile(t, "testdata/golden.cfg"))
	ts := startServer(t, p)
	for _, c := range []string{"show servers state", "show stat", "get weight be1/s2", "show info", "help", "show foo", "foo", "show activity", "show servers conn", "show backend", "show cli sockets", "set maxconn"} {
		t.Logf("=== %s\n%s<EOF>", c, ts.send(t, LevelAdmin, c+"\n"))
	}
}
