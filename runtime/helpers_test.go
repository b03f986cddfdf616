package runtime

import (
	"goha/core/stream"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
)

// newProc builds a process from configuration text, failing the test on
// any alert.
func newProc(t testing.TB, text string) *stream.Process {
	t.Helper()
	d := &diag.Collector{}
	// Without a maxconn, HAProxy and goha derive one from the descriptor
	// limit of the machine: pin it so that replies do not depend on it.
	text = "global\n    maxconn 4096\n" + text
	secs := config.Parse("test.cfg", []byte(text), config.Options{Version: "2.6.12"}, d)
	cfg := core.Build(secs, d)
	p := stream.New(cfg)
	// Prepare runs the global section's set-var lines, as at start-up.
	p.Prepare(d)
	if d.HasAlert() {
		for _, x := range d.All() {
			t.Logf("%s", x.Text())
		}
		t.Fatalf("configuration has alerts")
	}
	return p
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testServer serves p on one UNIX socket per level and returns the paths.
type testServer struct {
	srv   *Server
	paths map[Level]string
}

func startServer(t testing.TB, p *stream.Process) *testServer {
	t.Helper()
	dir := t.TempDir()
	ts := &testServer{srv: NewServer(p), paths: map[Level]string{}}
	for _, l := range []Level{LevelUser, LevelOperator, LevelAdmin} {
		path := filepath.Join(dir, l.String()+".sock")
		err := ts.srv.Open(core.StatsSocket{Addr: path, Args: []string{"level", l.String(), "mode", "600"}})
		if err != nil {
			t.Fatal(err)
		}
		ts.paths[l] = path
	}
	t.Cleanup(ts.srv.Close)
	return ts
}

// send writes in on a new connection, half-closes, and reads to EOF.
func (ts *testServer) send(t testing.TB, l Level, in string) string {
	t.Helper()
	c, err := net.Dial("unix", ts.paths[l])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, in); err != nil {
		t.Fatal(err)
	}
	c.(*net.UnixConn).CloseWrite()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
