package runtime

import (
	"bufio"
	"io"
	"strings"

	"testing"
)

// TestShowEventsWait checks `show events <sink> -w`: events stream until
// the client sends anything, then the reply ends normally.
func TestShowEventsWait(t *testing.T) {
	proc := newProc(t, readFile(t, "testdata/golden.cfg")+"\nring myring\n    description test\n    size 16384\n")
	ts := startServer(t, proc)
	rg := proc.Conf.LogRegistry().Ring("myring")
	if rg == nil {
		t.Fatal("no ring myring")
	}
	rg.Write([]byte("<133>first event"))
	if out := ts.send(t, LevelAdmin, "show events\n"); !strings.HasPrefix(out, eventsListHeader) ||
		!strings.Contains(out, "\n    myring     : type=buffer, 0 dropped, test\n") || !strings.HasSuffix(out, "\n\n") {
		t.Errorf("list: %q", out)
	}
	if out := ts.send(t, LevelAdmin, "show events nosuch\n"); out != "No such event sink\n\n" {
		t.Errorf("unknown sink: %q", out)
	}
	if out := ts.send(t, LevelUser, "show events myring\n"); out != "Permission denied\n\n" {
		t.Errorf("user level: %q", out)
	}
	c := ts.dial(t)
	defer c.Close()
	io.WriteString(c, "show events myring -w\n")
	r := bufio.NewReader(c)
	if ln, _ := r.ReadString('\n'); ln != "<133>first event\n" {
		t.Fatalf("first: %q", ln)
	}
	rg.Write([]byte("<133>last event"))
	if ln, _ := r.ReadString('\n'); ln != "<133>last event\n" {
		t.Fatalf("second: %q", ln)
	}
	io.WriteString(c, "x")
	rest, _ := io.ReadAll(r)
	if string(rest) != "\n" {
		t.Errorf("after a key: %q", rest)
	}
}
