// Package bin builds the project's binaries once per test process, so that
// regtests run the real goha and gohactl.
package bin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string
	err  error
	out  []byte
)

func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func build() {
	dir, err = os.MkdirTemp("", "goha-bin-")
	if err != nil {
		return
	}
	for _, name := range []string{"goha", "gohactl"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root()
		out, err = cmd.CombinedOutput()
		if err != nil {
			return
		}
	}
}

// Path returns the path of a built binary ("goha" or "gohactl").
func Path(t testing.TB, name string) string {
	t.Helper()
	once.Do(build)
	if err != nil {
		t.Fatalf("building binaries: %v\n%s", err, out)
	}
	return filepath.Join(dir, name)
}

// HAProxy returns the path of the real haproxy, or skips the test.
func HAProxy(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("haproxy")
	if err != nil {
		if _, err2 := os.Stat("/usr/sbin/haproxy"); err2 == nil {
			return "/usr/sbin/haproxy"
		}
		t.Skip("haproxy is not installed")
	}
	return p
}
