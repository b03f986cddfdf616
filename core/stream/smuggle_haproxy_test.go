//go:build regtest

package stream

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSmuggleSeedsHAProxy runs FuzzSmuggle's seeds and the corpus in
// testdata/fuzz/FuzzSmuggle through HAProxy
// 2.6 with the same rules and origin, and checks the same invariants:
// HAProxy holds them, so they are fair to ask of goha.
func TestSmuggleSeedsHAProxy(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy"
		if _, err := os.Stat(bin); err != nil {
			t.Skip("haproxy is not installed")
		}
	}
	inputs := map[string][]byte{}
	for i, s := range smuggleSeeds {
		inputs[fmt.Sprintf("seed#%d", i)] = []byte(s)
	}
	for name, data := range smuggleCorpus(t) {
		inputs[name] = data
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			a, b := smuggleSplit(data)
			o := newSmuggleOrigin(t)
			defer o.close()
			runSmuggle(t, startSmuggleHAProxy(t, bin, o.addr()), o, a, b, nil)
		})
	}
}

// smuggleCorpus reads the inputs kept in testdata/fuzz/FuzzSmuggle.
func smuggleCorpus(t *testing.T) map[string][]byte {
	dir := filepath.Join("testdata", "fuzz", "FuzzSmuggle")
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<22)
		if !sc.Scan() || sc.Text() != "go test fuzz v1" {
			t.Fatalf("%s: not a fuzz corpus file", e.Name())
		}
		if !sc.Scan() {
			t.Fatalf("%s: no value", e.Name())
		}
		v, ok := strings.CutPrefix(sc.Text(), "[]byte(")
		v, ok2 := strings.CutSuffix(v, ")")
		s, err := strconv.Unquote(v)
		if !ok || !ok2 || err != nil {
			t.Fatalf("%s: cannot read %q", e.Name(), sc.Text())
		}
		out[e.Name()] = []byte(s)
	}
	return out
}

// startSmuggleHAProxy runs HAProxy with smuggleRules in front of origin,
// on a listening socket it inherits, and returns its address.
func startSmuggleHAProxy(t *testing.T, bin, origin string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg := filepath.Join(t.TempDir(), "smuggle.cfg")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(smuggleRules, "fd@3", origin)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.ExtraFiles = []*os.File{f}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("haproxy said:\n%s", out.String())
		}
	})
	return addr
}
