//go:build regtest

package runtime_test

import (
	"fmt"
	"goha/core/stream"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"goha/core"
	"goha/core/config"
	"goha/core/diag"
	"goha/regtests/internal/harness"
	"goha/runtime"
)

// bigConfig: 100 backends of 100 servers, one stats socket.
func bigConfig(sock string, port int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global\n    maxconn 1000\n    nbthread 4\n    stats socket %s level admin\n", sock)
	b.WriteString("defaults\n    mode http\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n")
	fmt.Fprintf(&b, "frontend fe\n    bind 127.0.0.1:%d\n    default_backend be0\n", port)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "backend be%d\n    balance roundrobin\n", i)
		for j := 0; j < 100; j++ {
			fmt.Fprintf(&b, "    server s%d 10.%d.%d.%d:80 weight %d\n", j, i%250, j/250, j%250+1, j%256+1)
		}
	}
	return b.String()
}

func benchSocket(b *testing.B, sock, cmd string) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		out, err := send(sock, cmd+"\n")
		if err != nil || !strings.HasSuffix(out, "\n\n") {
			b.Fatalf("%v %q", err, out[max(0, len(out)-40):])
		}
		n = len(out)
	}
	b.SetBytes(int64(n))
}

// BenchmarkBig10k measures show stat and show servers state on 10,000
// servers through the UNIX socket, HAProxy 2.6 against goha.
func BenchmarkBig10k(b *testing.B) {
	hap := "/usr/sbin/haproxy"
	if _, err := os.Stat(hap); err != nil {
		b.Skip("haproxy not installed")
	}
	dir := b.TempDir()
	hs, gs := filepath.Join(dir, "h.sock"), filepath.Join(dir, "g.sock")
	port := harness.FreePort(b)
	os.WriteFile(filepath.Join(dir, "h.cfg"), []byte(bigConfig(hs, port)), 0o644)
	cmd := exec.Command(hap, "-db", "-f", filepath.Join(dir, "h.cfg"))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	d := &diag.Collector{}
	cfg := core.Build(config.Parse("g.cfg", []byte(bigConfig(gs, port)), config.Options{}, d), d)
	srv, err := runtime.Serve(stream.New(cfg))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if out, err := send(hs, "show version\n"); err == nil && strings.HasSuffix(out, "\n\n") {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("haproxy did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range []string{"show stat", "show servers state"} {
		b.Run("haproxy/"+strings.ReplaceAll(c, " ", "_"), func(b *testing.B) { benchSocket(b, hs, c) })
		b.Run("goha/"+strings.ReplaceAll(c, " ", "_"), func(b *testing.B) { benchSocket(b, gs, c) })
	}
	_ = io.Discard
}
