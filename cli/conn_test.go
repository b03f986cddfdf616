package cli

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// listen serves each connection to a UNIX socket in a temporary directory
// with fn, and returns the socket's path.
func listen(t *testing.T, fn func(net.Conn)) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				fn(c)
			}()
		}
	}()
	return p
}

// promptServer speaks the prompt-mode protocol like a stats socket, with
// replies from answer. An answer of "" with close=true hangs up without
// replying; payload lines are echoed, after one "+ " per line as HAProxy
// 2.6 writes them.
type promptServer struct {
	answer func(cmd string) (reply string, close bool)
	conns  atomic.Int32
}

func (ps *promptServer) serve(c net.Conn) {
	ps.conns.Add(1)
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.TrimSuffix(line, "\n")
		switch {
		case cmd == "prompt", cmd == "set severity-output number":
			c.Write([]byte("\n> "))
		case cmd == "quit":
			return
		case strings.HasSuffix(cmd, " <<"):
			var b strings.Builder
			b.WriteString("+ ")
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == "\n" {
					break
				}
				b.WriteString("+ ")
			}
			c.Write([]byte(b.String() + "[6]: payload for " + strings.TrimSuffix(cmd, " <<") + "\n\n> "))
		default:
			reply, hangup := ps.answer(cmd)
			if reply != "" {
				c.Write([]byte(reply))
			}
			if hangup {
				return
			}
		}
	}
}

func TestDialNotAStatsSocket(t *testing.T) {
	tests := []struct {
		name  string
		serve func(net.Conn)
		want  string
	}{
		{"silent", func(c net.Conn) { time.Sleep(2 * time.Second) }, "did not answer"},
		{"garbage", func(c net.Conn) { c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) }, `answered "H`},
		{"almost", func(c net.Conn) { c.Write([]byte("\n>>")) }, "answered"},
		{"hangs up", func(c net.Conn) {}, "closed the connection"},
		{"endless garbage", func(c net.Conn) {
			junk := bytes.Repeat([]byte("x"), 1<<16)
			for i := 0; i < 160; i++ {
				if _, err := c.Write(junk); err != nil {
					return
				}
			}
		}, "answered"},
	}
	for _, tt := range tests {
		addr := listen(t, tt.serve)
		start := time.Now()
		_, err := Dial(Options{Addr: addr, Timeout: 300 * time.Millisecond})
		if !errors.Is(err, ErrNotStatsSocket) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrNotStatsSocket with %q", tt.name, err, tt.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", tt.name, d)
		}
	}
}

func TestDialNothingListening(t *testing.T) {
	_, err := Dial(Options{Addr: filepath.Join(t.TempDir(), "none"), Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("got %v", err)
	}
}

func TestExecReplies(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 10<<20/17)
	ps := &promptServer{answer: func(cmd string) (string, bool) {
		switch cmd {
		case "show version":
			return "[6]: 2.6.12\n\n> ", false
		case "get weight be/zz":
			return "[3]: No such server.\n\n> ", false
		case "big":
			return "# col\n" + big + "\n> ", false
		case "cut":
			return "# pxname,svname\nbe,s1\n", true
		case "stall":
			return "# pxname,svname\n", false
		case `set server be/s1 agent-send a\ b\;c`:
			return "\n> ", false
		}
		return "[6]: Unknown command, but maybe one of the following ones is a better match:\n\n> ", false
	}}
	addr := listen(t, ps.serve)
	c, err := Dial(Options{Addr: addr, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Exec("show version", nil)
	if err != nil || r.Text != "2.6.12\n" || r.IsError() {
		t.Errorf("show version: %+v %v", r, err)
	}
	r, err = c.Exec("get weight be/zz", nil)
	if err != nil || r.Text != "No such server.\n" || !r.IsError() {
		t.Errorf("error reply: %+v %v", r, err)
	}
	line, _ := EncodeWords([]string{"set", "server", "be/s1", "agent-send", "a b;c"})
	if r, err = c.Exec(line, nil); err != nil || r.IsError() {
		t.Errorf("escaped words not understood: %+v %v", r, err)
	}
	r, err = c.Exec("add map #0 <<", []string{"k1 v1", "k2 v2"})
	if err != nil || r.Text != "payload for add map #0\n" {
		t.Errorf("payload: %+v %v", r, err)
	}
	r, err = c.Exec("big", nil)
	if err != nil || len(r.Text) != len("# col\n")+len(big) {
		t.Errorf("10 MB reply: %d bytes, %v", len(r.Text), err)
	}
	if _, err = c.Exec("cut", nil); !errors.Is(err, ErrConnLost) || !strings.Contains(err.Error(), "middle of a reply") {
		t.Errorf("cut: %v", err)
	}

	c2, err := Dial(Options{Addr: addr, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err = c2.Exec("stall", nil); !errors.Is(err, ErrTimeout) {
		t.Errorf("stall: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stall took %v", d)
	}
	c2.Abort()

	c3, err := Dial(Options{Addr: addr, Timeout: 3 * time.Second, MaxReply: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = c3.Exec("big", nil); !errors.Is(err, ErrReplyTooLarge) {
		t.Errorf("limit: %v", err)
	}
	c3.Abort()
}

// A session whose connection the server closed while idle reconnects before
// the next command and says so.
func TestSessionReconnects(t *testing.T) {
	ps := &promptServer{answer: func(cmd string) (string, bool) {
		if cmd == "bye" {
			return "\n> ", true
		}
		return "[6]: ok " + cmd + "\n\n> ", false
	}}
	addr := listen(t, ps.serve)
	var notes bytes.Buffer
	s := NewSession(Options{Addr: addr, Timeout: time.Second})
	s.Notice = &notes
	defer s.Close()
	if r, err := s.Exec("bye", nil); err != nil || r.Text != "" {
		t.Fatalf("bye: %+v %v", r, err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for s.conn.Alive() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r, err := s.Exec("one", nil)
	if err != nil || r.Text != "ok one\n" {
		t.Fatalf("after hang-up: %+v %v", r, err)
	}
	if !strings.Contains(notes.String(), "reconnecting") {
		t.Errorf("no notice: %q", notes.String())
	}
	if n := ps.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestRunScriptStatus(t *testing.T) {
	ps := &promptServer{answer: func(cmd string) (string, bool) {
		switch cmd {
		case "show backend":
			return "# name\nbe\n\n> ", false
		case "get weight be/zz":
			return "[3]: No such server.\n\n> ", false
		}
		return "[6]: ok\n\n> ", false
	}}
	addr := listen(t, ps.serve)
	s := NewSession(Options{Addr: addr, Timeout: time.Second})
	defer s.Close()
	var out, errOut bytes.Buffer
	code := RunScript(s, strings.NewReader("show backend | table\n\nadd map #0 <<\nk v\n\nshow backend\n"), &out, &errOut)
	if code != ExitOK || out.String() != "name\nbe\npayload for add map #0\n# name\nbe\n" || errOut.Len() != 0 {
		t.Errorf("status %d, out %q, err %q", code, out.String(), errOut.String())
	}
	out.Reset()
	code = RunScript(s, strings.NewReader("get weight be/zz\nshow backend\nshow 'unterminated\n"), &out, &errOut)
	if code != ExitUsage || out.String() != "# name\nbe\n" || !strings.Contains(errOut.String(), "No such server.") || !strings.Contains(errOut.String(), "unterminated") {
		t.Errorf("status %d, out %q, err %q", code, out.String(), errOut.String())
	}
}
