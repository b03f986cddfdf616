package runtime

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"goha/core"
	"goha/core/stream"
)

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"show stat", "a;b;c", `a\;b`, `x\ y  z`, `\\`, `\`, ";;", "\t a \t", strings.Repeat("w ", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds := splitCommands(line)
		if len(cmds) == 0 {
			t.Fatal("no command")
		}
		total := 0
		for _, c := range cmds {
			total += len(c)
			words := splitWords(c)
			if len(words) > maxArgs {
				t.Fatalf("%d words", len(words))
			}
			for _, w := range words {
				if w == "" {
					t.Fatalf("empty word in %q", c)
				}
			}
		}
		if total+len(cmds)-1 != len(line) {
			t.Fatalf("split lost bytes: %q -> %q", line, cmds)
		}
	})
}

func FuzzStatArgs(f *testing.F) {
	conf := newProc(f, readFile(f, "testdata/golden.cfg")).Conf
	for _, s := range []string{"", "typed", "be1 4 -1", "-1 -1 -1 json up", "nosuch 1 2", "3 -1", "2147483648 1 1 no-maint desc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fl, msg := stream.ParseStatArgs(conf, strings.Fields(in))
		if msg != "" && msg != "No such proxy." {
			t.Fatalf("unexpected error %q", msg)
		}
		if msg == "" && fl.Bound && fl.IID == 0 {
			t.Fatal("bound to proxy 0")
		}
	})
}

func FuzzSetAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.2|80", "::1|", "foo|", "1.2.3.4|abc", "1.2.3.4|+5", "1.2.3.4|99999999999999", "fe80::1%eth0|1"} {
		f.Add(s)
	}
	p := newProc(f, readFile(f, "testdata/golden.cfg"))
	_, s := p.Conf.FindServerRef("be1", "s2")
	f.Fuzz(func(t *testing.T, in string) {
		addr, port, hasPort := strings.Cut(in, "|")
		msg := setAddr(s, addr, port, hasPort)
		if !strings.HasSuffix(msg, " by 'stats socket command'") {
			t.Fatalf("%q: %q", in, msg)
		}
		if a := s.Addr(); a == nil || !a.IP.IsValid() {
			t.Fatalf("%q left the server without an address", in)
		}
	})
}

// FuzzSession feeds arbitrary bytes to a session, as a client would, and
// checks that it ends and that every reply is valid text ending in LF.
func FuzzSession(f *testing.F) {
	p := newProc(f, strings.Replace(readFile(f, "testdata/golden.cfg"), "stats timeout 5s", "stats timeout 200ms", 1))
	srv := NewServer(p)
	si := &socketInfo{name: "fuzz", opts: SocketOptions{Level: LevelAdmin}}
	for _, s := range []string{"show stat\n", "prompt\nshow info;help\nquit\n", "set weight be1/s1 50%\nget weight be1/s1\n",
		"show version <<\nx\n\n", "add server be1/z 127.0.0.1:1\ndel server be1/z\n", "\x00\xff\n", "set server be1/s2 addr ::1 port 9\n",
		"experimental-mode on; set var proc.x fmt %[date]-%[var(proc.int5)]; get var proc.x\n",
		"experimental-mode on; set var proc.y,ifnotexists expr str(a),concat(\\ ,proc.x,)\n"} {
		f.Add([]byte(s))
	}
	var mu sync.Mutex // sessions change shared state: run one at a time
	f.Fuzz(func(t *testing.T, in []byte) {
		mu.Lock()
		defer mu.Unlock()
		c1, c2 := net.Pipe()
		done := make(chan struct{})
		go func() {
			srv.newSession(c1, si).serve()
			c1.Close()
			close(done)
		}()
		go func() {
			c2.SetWriteDeadline(time.Now().Add(time.Second))
			c2.Write(in)
		}()
		c2.SetReadDeadline(time.Now().Add(5 * time.Second))
		out, _ := io.ReadAll(c2)
		c2.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("session did not end")
		}
		if len(out) > 0 && out[len(out)-1] != '\n' && out[len(out)-1] != ' ' {
			t.Fatalf("reply does not end a line: %q", out[max(0, len(out)-40):])
		}
		_ = utf8.Valid(out)
		// Undo what the input changed, so that runs stay independent.
		for _, be := range p.Conf.Proxies {
			for _, s := range be.ServerList() {
				if s.Dynamic {
					s.SetMaint()
					be.DelServer(s)
				}
			}
		}
		_ = core.Version
	})
}
