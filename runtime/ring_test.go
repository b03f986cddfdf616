package runtime

import (
	"bufio"
	"io"

	"testing"

	"goha/ring"
)

// TestShowEventsWait checks `show events <sink> -w`: events stream until
// the client sends anything, then the reply ends normally.
func TestShowEventsWait(t *testing.T) {
	ts := startServer(t, newProc(t, readFile(t, "testdata/golden.cfg")))
	old := Events
	defer func() { Events = old }()
	Events = func(w io.Writer, args []string, stop <-chan struct{}) error {
		if len(args) == 0 {
			io.WriteString(w, "header\n    myring     : type=buffer, 0 dropped, test\n")
			return nil
		}
		if args[0] != "myring" {
			return ring.ErrNoSuchSink
		}
		io.WriteString(w, "<133>first event\n")
		w.(interface{ Flush() error }).Flush()
		if stop != nil {
			<-stop
			io.WriteString(w, "<133>last event\n")
		}
		return nil
	}
	if out := ts.send(t, LevelAdmin, "show events\n"); out != eventsListHeader+"    myring     : type=buffer, 0 dropped, test\n\n" {
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
	io.WriteString(c, "x")
	rest, _ := io.ReadAll(r)
	if string(rest) != "<133>last event\n\n" {
		t.Errorf("after a key: %q", rest)
	}
}
