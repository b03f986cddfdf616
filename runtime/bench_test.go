package runtime

import (
	"bufio"
	"fmt"
	"goha/core/stream"
	"io"
	"net"
	"strings"
	"testing"
)

// bigConfig has nb backends of ns servers each.
func bigConfig(nb, ns int) string {
	var b strings.Builder
	b.WriteString("global\n    maxconn 1000\n    nbthread 4\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n")
	b.WriteString("frontend fe\n    bind 127.0.0.1:23400\n    default_backend be0\n")
	for i := 0; i < nb; i++ {
		fmt.Fprintf(&b, "backend be%d\n    balance roundrobin\n", i)
		for j := 0; j < ns; j++ {
			fmt.Fprintf(&b, "    server s%d 10.%d.%d.%d:80 weight %d\n", j, i%250, j/250, j%250+1, j%256+1)
		}
	}
	return b.String()
}

func benchCtx(p *stream.Process, args ...string) *Ctx {
	s := &session{srv: NewServer(p), w: bufio.NewWriterSize(io.Discard, 64<<10), level: LevelAdmin}
	return &Ctx{Args: args, Proc: p, W: s.w, s: s}
}

// BenchmarkShowStat10k dumps show stat for 10,000 servers (100 backends
// of 100), without the socket.
func BenchmarkShowStat10k(b *testing.B) {
	p := newProc(b, bigConfig(100, 100))
	c := benchCtx(p, "show", "stat")
	b.ReportAllocs()
	for b.Loop() {
		cmdShowStat(c)
		c.s.w.Flush()
	}
}

func BenchmarkShowServersState10k(b *testing.B) {
	p := newProc(b, bigConfig(100, 100))
	c := benchCtx(p, "show", "servers", "state")
	b.ReportAllocs()
	for b.Loop() {
		cmdShowServersState(c)
		c.s.w.Flush()
	}
}

// BenchmarkSetWeightPrompt sends `set server <b>/<s> weight <w>` over one
// prompt-mode connection, one command at a time (wait for each prompt).
func BenchmarkSetWeightPrompt(b *testing.B) {
	benchSetWeight(b, 1)
}

// BenchmarkSetWeightPromptPipelined writes 64 commands before reading
// their 64 prompts.
func BenchmarkSetWeightPromptPipelined(b *testing.B) {
	benchSetWeight(b, 64)
}

func benchSetWeight(b *testing.B, depth int) {
	ts := startServer(b, newProc(b, bigConfig(1, 16)))
	c, err := net.Dial("unix", ts.paths[LevelAdmin])
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	io.WriteString(c, "prompt\n")
	buf := make([]byte, 3)
	io.ReadFull(r, buf)
	cmds := make([][]byte, 16*8)
	for i := range cmds {
		cmds[i] = fmt.Appendf(nil, "set server be0/s%d weight %d\n", i%16, i%200+1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var out []byte
	for i := 0; i < b.N; i += depth {
		n := min(depth, b.N-i)
		out = out[:0]
		for j := 0; j < n; j++ {
			out = append(out, cmds[(i+j)%len(cmds)]...)
		}
		c.Write(out)
		for j := 0; j < n; j++ {
			if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "\n> " {
				b.Fatalf("reply %q %v", buf, err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}
