package runtime

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/core"
)

func TestSocatOneShot(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		t.Skip("socat not installed")
	}
	ts := startServer(t, newProc(t, readFile(t, "testdata/golden.cfg")))
	cmd := exec.Command("sh", "-c", "echo 'show info' | socat stdio unix-connect:"+ts.paths[LevelAdmin])
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "Name: HAProxy\nVersion: ") || !strings.HasSuffix(string(out), "Tainted: 0\n\n") {
		t.Errorf("show info through socat: %q", out)
	}
	// Two commands on one line, each reply ending in one empty line.
	out, err = exec.Command("sh", "-c", "echo 'get weight be1/s2;show version' | socat stdio unix-connect:"+ts.paths[LevelUser]).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "50 (initial 50)\n\n" + core.Version + "\n\n"; string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestSocatPrompt drives an interactive session through socat, the way
// hatop does.
func TestSocatPrompt(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		t.Skip("socat not installed")
	}
	ts := startServer(t, newProc(t, readFile(t, "testdata/golden.cfg")))
	cmd := exec.Command("socat", "stdio", "unix-connect:"+ts.paths[LevelAdmin])
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	r := bufio.NewReader(outp)
	expect := func(want string) {
		t.Helper()
		buf := make([]byte, len(want))
		if _, err := io.ReadFull(r, buf); err != nil || string(buf) != want {
			t.Fatalf("got %q (%v), want %q", buf, err, want)
		}
	}
	io.WriteString(in, "prompt\n")
	expect("\n> ")
	io.WriteString(in, "set timeout cli 60\n")
	expect("\n> ")
	io.WriteString(in, "set weight be1/s1 33\n")
	expect("\n> ")
	io.WriteString(in, "get weight be1/s1\n")
	expect("33 (initial 1)\n\n> ")
	io.WriteString(in, "show version;get weight be1/s2\n")
	expect(core.Version + "\n\n> 50 (initial 50)\n\n> ")
	io.WriteString(in, "quit\n")
	if rest, _ := io.ReadAll(r); len(rest) != 0 {
		t.Errorf("bytes after quit: %q", rest)
	}
	in.Close()
}

func TestUnixSocketModeAndReplace(t *testing.T) {
	p := newProc(t, readFile(t, "testdata/golden.cfg"))
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	// A stale socket left by a dead process is replaced.
	old, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	old.(*net.UnixListener).SetUnlinkOnClose(false)
	old.Close()
	srv := NewServer(p)
	defer srv.Close()
	if err := srv.Open(core.StatsSocket{Addr: path, Args: []string{"mode", "640", "level", "admin"}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("mode %v, want socket 0640", fi.Mode())
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	// Symbolic links and regular files are never replaced.
	link := filepath.Join(dir, "link.sock")
	target := filepath.Join(dir, "precious")
	os.WriteFile(target, []byte("x"), 0o600)
	os.Symlink(target, link)
	if err := srv.Open(core.StatsSocket{Addr: link}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlink: err %v", err)
	}
	if err := srv.Open(core.StatsSocket{Addr: target}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("regular file: err %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "x" {
		t.Errorf("target changed")
	}
	srv.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket file left after close: %v", err)
	}
}

func TestUnixBindDefaults(t *testing.T) {
	dir := t.TempDir()
	cfg := strings.Replace(readFile(t, "testdata/golden.cfg"), "global\n", "global\n    unix-bind prefix "+dir+"/ mode 604\n", 1)
	srv := NewServer(newProc(t, cfg))
	defer srv.Close()
	if err := srv.Open(core.StatsSocket{Addr: "a.sock"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(core.StatsSocket{Addr: "b.sock", Args: []string{"mode", "600"}}); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"a.sock": 0o604, "b.sock": 0o600} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want mode %v", name, fi.Mode(), err, mode)
		}
	}
}

func TestTCPAndFDSockets(t *testing.T) {
	p := newProc(t, readFile(t, "testdata/golden.cfg"))
	srv := NewServer(p)
	defer srv.Close()
	if err := srv.Open(core.StatsSocket{Addr: "ipv4@127.0.0.1:0", Args: []string{"level", "user"}}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	ln.Close()
	defer f.Close()
	if err := srv.Open(core.StatsSocket{Addr: fmt.Sprintf("fd@%d", f.Fd()), Args: []string{"level", "admin"}}); err != nil {
		t.Fatal(err)
	}
	socks := srv.Sockets()
	if len(socks) != 2 || !strings.HasPrefix(socks[0], "ipv4@127.0.0.1:") || !strings.HasSuffix(socks[0], " user all") ||
		!strings.HasSuffix(socks[1], " admin all") {
		t.Fatalf("sockets %q", socks)
	}
	for _, s := range socks {
		addr := strings.Fields(strings.TrimPrefix(s, "ipv4@"))[0]
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "show cli level\n")
		c.(*net.TCPConn).CloseWrite()
		b, _ := io.ReadAll(c)
		c.Close()
		lvl := strings.Fields(s)[1]
		if string(b) != lvl+"\n\n" {
			t.Errorf("%s: %q", s, b)
		}
	}
}

// dial opens a raw connection to the admin socket.
func (ts *testServer) dial(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", ts.paths[LevelAdmin])
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func TestBadClients(t *testing.T) {
	p := newProc(t, strings.Replace(readFile(t, "testdata/golden.cfg"), "stats timeout 5s", "stats timeout 300ms", 1))
	ts := startServer(t, p)
	goroutines := goruntime.NumGoroutine()

	// A 1 MB line gets HAProxy 3.2's message, then the connection closes.
	lc := ts.dial(t)
	go func() {
		io.WriteString(lc, strings.Repeat("x", 1<<20)+"\n")
	}()
	b, _ := io.ReadAll(lc)
	lc.Close()
	if string(b) != tooBig {
		t.Errorf("long line: %q", b)
	}

	// So does a payload that would not fit in a buffer.
	pc := ts.dial(t)
	go func() {
		io.WriteString(pc, "show version <<\n")
		for i := 0; i < 100; i++ {
			io.WriteString(pc, strings.Repeat("p", 1000)+"\n")
		}
	}()
	b, _ = io.ReadAll(pc)
	pc.Close()
	if string(b) != tooBig {
		t.Errorf("long payload: %q", b)
	}

	// A 16000-byte line still fits, as in 2.6.
	if out := ts.send(t, LevelAdmin, "get weight be1/s2"+strings.Repeat(" ", 16000)+"\n"); out != "50 (initial 50)\n\n" {
		t.Errorf("16 kB line: %q", out)
	}

	// Garbage bytes are an unknown command, not a crash.
	if out := ts.send(t, LevelAdmin, "\x00\xff\x01\x1b[A;;\\\n"); !strings.HasPrefix(out, "Unknown command") {
		t.Errorf("garbage: %q", out)
	}

	// A line without LF before the client half-closes is dropped (2.6).
	if out := ts.send(t, LevelAdmin, "show version"); out != "" {
		t.Errorf("unterminated line: %q", out)
	}

	// An idle client is closed after the stats timeout, without a word.
	c := ts.dial(t)
	start := time.Now()
	b, _ = io.ReadAll(c)
	c.Close()
	if len(b) != 0 || time.Since(start) > 5*time.Second {
		t.Errorf("idle client: %q after %v", b, time.Since(start))
	}

	// A client that never reads does not block the others.
	c = ts.dial(t)
	for i := 0; i < 50; i++ {
		io.WriteString(c, "prompt\n")
		io.WriteString(c, strings.Repeat("show stat\n", 20))
	}
	if out := ts.send(t, LevelAdmin, "show version\n"); out != core.Version+"\n\n" {
		t.Errorf("while a client does not read: %q", out)
	}
	c.Close()

	// Everything started for those clients ends.
	deadline := time.Now().Add(15 * time.Second)
	for goruntime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines left, had %d", n, goroutines)
	}
}

// TestConcurrentShowStat runs 200 clients doing show stat in a loop: every
// reply must be complete, and nothing may leak.
func TestConcurrentShowStat(t *testing.T) {
	cfg := strings.Replace(readFile(t, "testdata/golden.cfg"), "global\n", "global\n    stats maxconn 50\n", 1)
	ts := startServer(t, newProc(t, cfg))
	want := ts.send(t, LevelAdmin, "show stat\n")
	fds := openFDs()
	goroutines := goruntime.NumGoroutine()
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad, total := 0, 0
	stop := time.Now().Add(2 * time.Second)
	if testing.Short() {
		stop = time.Now().Add(300 * time.Millisecond)
	}
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				c, err := net.Dial("unix", ts.paths[LevelOperator])
				if err != nil {
					mu.Lock()
					bad++
					mu.Unlock()
					return
				}
				c.SetDeadline(time.Now().Add(20 * time.Second))
				io.WriteString(c, "show stat\n")
				b, _ := io.ReadAll(c)
				c.Close()
				mu.Lock()
				total++
				if normalize(string(b)) != normalize(want) {
					bad++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if bad > 0 || total == 0 {
		t.Errorf("%d bad replies out of %d", bad, total)
	}
	deadline := time.Now().Add(15 * time.Second)
	for (goruntime.NumGoroutine() > goroutines || openFDs() > fds) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > goroutines {
		t.Errorf("goroutines: %d after, %d before", n, goroutines)
	}
	if n := openFDs(); n > fds {
		t.Errorf("fds: %d after, %d before", n, fds)
	}
	t.Logf("%d replies", total)
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}
