package proxy

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"goha/regtests/internal/bin"
)

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestEmbeddedDemo runs goha without -f, as the README's first command
// does: it serves at once through its two origins, logs each request on
// stdout, starts without a warning, and stops on SIGTERM.
func TestEmbeddedDemo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin.Path(t, "goha"))
	cmd.Env = append(os.Environ(), "GOHA_DEMO_ADDR="+addr)
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Error("the demo did not stop on SIGTERM")
		}
	}()
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/hello")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("demo answered %d: %s", resp.StatusCode, b)
			}
			body = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo never answered: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	}
	if !strings.Contains(body, "served through goha") {
		t.Fatalf("demo body %q", body)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stdout.String(), `"GET /hello HTTP/1.1"`); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no access log line on stdout:\n%s", stdout.String())
		}
	}
	if strings.Contains(stderr.String(), "[WARNING]") || strings.Contains(stderr.String(), "[ALERT]") {
		t.Fatalf("the demo starts with diagnostics:\n%s", stderr.String())
	}
}
