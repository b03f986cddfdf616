package gohactl

import (
	"bufio"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakePeer serves a UNIX socket with fn; these peers misbehave on purpose.
func fakePeer(t *testing.T, fn func(c net.Conn, r *bufio.Reader)) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "peer")
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
				fn(c, bufio.NewReader(c))
			}()
		}
	}()
	return p
}

// greet answers like a stats socket until the command that matters.
func greet(c net.Conn, r *bufio.Reader) string {
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			return ""
		}
		switch l = strings.TrimSuffix(l, "\n"); l {
		case "prompt", "set severity-output number":
			c.Write([]byte("\n> "))
		default:
			return l
		}
	}
}

func TestBadPeers(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	big := strings.Repeat("x", 99) + "\n"
	tests := []struct {
		name   string
		peer   func(c net.Conn, r *bufio.Reader)
		args   []string
		code   int
		stderr string
	}{
		{"closes mid-reply", func(c net.Conn, r *bufio.Reader) {
			greet(c, r)
			c.Write([]byte("# pxname,svname\nbe,s1\n"))
		}, nil, 3, "closed in the middle of a reply"},
		{"stops mid-reply", func(c net.Conn, r *bufio.Reader) {
			greet(c, r)
			c.Write([]byte("# pxname,svname\nbe,s1\n"))
			time.Sleep(3 * time.Second)
		}, nil, 3, "nothing received for 500ms"},
		{"sends garbage", func(c net.Conn, r *bufio.Reader) {
			c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			time.Sleep(time.Second)
		}, nil, 3, `not a stats socket: ` + "%s" + ` answered "SSH-2.0`},
		{"sends nothing", func(c net.Conn, r *bufio.Reader) {
			time.Sleep(3 * time.Second)
		}, nil, 3, `did not answer "prompt" within 500ms`},
		{"hangs up at once", func(c net.Conn, r *bufio.Reader) {}, nil, 3, "closed the connection during the greeting"},
		{"10 MB reply over the limit", func(c net.Conn, r *bufio.Reader) {
			greet(c, r)
			w := bufio.NewWriter(c)
			w.WriteString("# col\n")
			for i := 0; i < 100000; i++ {
				w.WriteString(big)
			}
			w.WriteString("\n> ")
			w.Flush()
		}, []string{"-max-reply", "1M"}, 3, "reply too large: more than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := fakePeer(t, tt.peer)
			args := append([]string{"-S", addr, "-t", "500ms"}, tt.args...)
			r := gohactl(t, home, "", nil, append(args, "show", "stat")...)
			want := tt.stderr
			if strings.Contains(want, "%s") {
				want = strings.Replace(want, "%s", addr, 1)
			}
			if r.code != tt.code || !strings.Contains(r.stderr, want) || r.stdout != "" {
				t.Errorf("got %+v, want status %d and %q", r, tt.code, want)
			}
		})
	}
}

// A 10 MB reply within the limit is printed whole.
func TestLargeReply(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("y", 99) + "\n"
	addr := fakePeer(t, func(c net.Conn, r *bufio.Reader) {
		greet(c, r)
		w := bufio.NewWriter(c)
		for i := 0; i < 100000; i++ {
			w.WriteString(line)
		}
		w.WriteString("\n> ")
		w.Flush()
		greet(c, r)
	})
	r := gohactl(t, t.TempDir(), "", nil, "-S", addr, "-t", "2s", "show", "stat")
	if r.code != 0 || len(r.stdout) != 100000*len(line) || r.stderr != "" {
		t.Errorf("status %d, %d bytes out, stderr %q", r.code, len(r.stdout), r.stderr)
	}
}
