package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// gohaBinary builds cmd/goha once for the tests of this file.
func gohaBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "goha-master-test-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "goha")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// mw is one goha -W process under test.
type mw struct {
	cmd    *exec.Cmd
	dir    string
	pid    string // pid file
	mcli   string // master CLI socket
	fe     string // address of the frontend the worker serves through fd 3
	output output
	done   chan struct{}
	status *os.ProcessState
}

// output is the processes' stdout and stderr, a file rather than a pipe:
// exec.Cmd.Wait would otherwise also wait for every holder of the pipe.
type output struct{ f *os.File }

func (o output) String() string {
	b, _ := os.ReadFile(o.f.Name())
	return string(b)
}

// startMW starts goha -W -S <unix> -p <pidfile> with a frontend bound to an
// inherited listening socket, as VTest passes them: the listener is fd 3 in
// the master, and the worker must serve it under the same number.
func startMW(t *testing.T) *mw {
	t.Helper()
	bin := gohaBinary(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	defer lf.Close()
	cfg := filepath.Join(dir, "cfg")
	err = os.WriteFile(cfg, []byte(`
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s

frontend fe
    bind "fd@${FE}"
    http-request return status 200 content-type text/plain string "worker"
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	m := &mw{dir: dir, pid: filepath.Join(dir, "pid"), mcli: filepath.Join(dir, "master.sock"),
		fe: ln.Addr().String(), done: make(chan struct{})}
	m.cmd = exec.Command(bin, "-d", "-W", "-S", m.mcli+",mode,600", "-f", cfg, "-p", m.pid)
	m.cmd.Env = append(os.Environ(), "FE=3")
	m.cmd.ExtraFiles = []*os.File{lf}
	out, err := os.Create(filepath.Join(dir, "output"))
	if err != nil {
		t.Fatal(err)
	}
	m.output = output{out}
	m.cmd.Stdout = out
	m.cmd.Stderr = out
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		m.cmd.Wait()
		m.status = m.cmd.ProcessState
		close(m.done)
	}()
	t.Cleanup(func() {
		select {
		case <-m.done:
		default:
			m.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-m.done:
			case <-time.After(5 * time.Second):
				m.cmd.Process.Kill()
				<-m.done
			}
		}
		out.Close()
	})
	// Ready when the pid file names the master and the master CLI answers.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(m.pid)
		if err == nil && strings.TrimSpace(string(b)) != "" {
			if c, err := net.Dial("unix", m.mcli); err == nil {
				c.Close()
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("master not ready; output:\n%s", m.output)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return m
}

// cli sends one line to the master CLI, half-closes like VTest does, and
// returns everything until the master closes.
func (m *mw) cli(t *testing.T, line string) string {
	t.Helper()
	c, err := net.Dial("unix", m.mcli)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, line+"\n")
	c.(*net.UnixConn).CloseWrite()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (m *mw) wait(t *testing.T) *os.ProcessState {
	t.Helper()
	select {
	case <-m.done:
		return m.status
	case <-time.After(10 * time.Second):
		t.Fatalf("goha -W did not exit; output:\n%s", m.output)
		return nil
	}
}

func workerPid(t *testing.T, showProc string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^([0-9]+) +worker `)
	mm := re.FindStringSubmatch(showProc)
	if mm == nil {
		t.Fatalf("no worker in show proc:\n%s", showProc)
	}
	n, _ := strconv.Atoi(mm[1])
	return n
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestMasterWorkerPidFileAndShowProc(t *testing.T) {
	m := startMW(t)
	b, err := os.ReadFile(m.pid)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), strconv.Itoa(m.cmd.Process.Pid); got != want {
		t.Fatalf("pid file holds %q, want the master's pid %s", got, want)
	}
	fi, err := os.Stat(m.mcli)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("master socket mode %v, want 0600", fi.Mode().Perm())
	}

	out := m.cli(t, "show proc")
	re := regexp.MustCompile(`^#<PID>          <type>          <reloads>       <uptime>        <version>      \n` +
		strconv.Itoa(m.cmd.Process.Pid) + ` +master          0 \[failed: 0\]   0d00h00m0[0-9]s     \S+\n` +
		`# workers\n` +
		`[0-9]+ +worker          0               0d00h00m0[0-9]s     \S+\n` +
		`# programs\n\n$`)
	if !re.MatchString(out) {
		t.Fatalf("show proc:\n%q", out)
	}
	wpid := workerPid(t, out)
	if wpid == m.cmd.Process.Pid || !alive(wpid) {
		t.Fatalf("worker pid %d is not a live child", wpid)
	}

	// The worker serves the socket it inherited as fd 3.
	c, err := net.Dial("tcp", m.fe)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, _ := io.ReadAll(bufio.NewReader(c))
	if !strings.HasPrefix(string(resp), "HTTP/1.1 200") || !strings.HasSuffix(string(resp), "worker") {
		t.Fatalf("frontend through the worker answered %q", resp)
	}

	if got := m.cli(t, "show version"); !strings.HasSuffix(got, "\n\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("show version: %q", got)
	}
	if got := m.cli(t, "@!1 show info"); got != "Can't find the target PID matching the prefix '@!1'\n\n" {
		t.Errorf("@!1: %q", got)
	}
	if got := m.cli(t, "show foo"); !strings.HasPrefix(got, "Unknown command") || !strings.HasSuffix(got, "\n\n") {
		t.Errorf("unknown command: %q", got)
	}
}

func TestMasterWorkerPrompt(t *testing.T) {
	m := startMW(t)
	c, err := net.Dial("unix", m.mcli)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	readUntil := func(suffix string) string {
		var b strings.Builder
		for !strings.HasSuffix(b.String(), suffix) {
			ch, err := r.ReadByte()
			if err != nil {
				t.Fatalf("read after %q: %v", b.String(), err)
			}
			b.WriteByte(ch)
		}
		return b.String()
	}
	io.WriteString(c, "prompt\n")
	if got := readUntil("master> "); got != "master> " {
		t.Fatalf("prompt: %q", got)
	}
	io.WriteString(c, "show proc\n")
	if got := readUntil("master> "); !strings.Contains(got, "# workers\n") || !strings.HasSuffix(got, "# programs\n\nmaster> ") {
		t.Fatalf("show proc in prompt mode: %q", got)
	}
	io.WriteString(c, "quit\n")
	if rest, _ := io.ReadAll(r); len(rest) != 0 {
		t.Fatalf("quit answered %q", rest)
	}
}

func TestMasterWorkerSignals(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{
		{syscall.SIGINT, 130}, // what VTest expects from -W
		{syscall.SIGTERM, 0},  // HAProxy's master treats the worker's 143 as clean
		{syscall.SIGUSR1, 0},  // soft stop
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			m := startMW(t)
			wpid := workerPid(t, m.cli(t, "show proc"))
			m.cmd.Process.Signal(tc.sig)
			st := m.wait(t)
			if got := st.ExitCode(); got != tc.want {
				t.Fatalf("exit code %d (%v), want %d; output:\n%s", got, st, tc.want, m.output)
			}
			if alive(wpid) {
				t.Fatalf("worker %d survived its master", wpid)
			}
			if _, err := os.Stat(m.pid); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("pid file left behind: %v", err)
			}
		})
	}
}

// A worker that dies on its own takes the master with it, with the
// worker's status.
func TestMasterExitsWithWorker(t *testing.T) {
	m := startMW(t)
	wpid := workerPid(t, m.cli(t, "show proc"))
	syscall.Kill(wpid, syscall.SIGKILL)
	st := m.wait(t)
	if got := st.ExitCode(); got != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit code %d, want %d; output:\n%s", got, 128+int(syscall.SIGKILL), m.output)
	}
	if !strings.Contains(m.output.String(), fmt.Sprintf("Current worker (%d) exited with code 137 (Killed)", wpid)) {
		t.Errorf("no exit notice in:\n%s", m.output)
	}
}

func TestSplitCommands(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"show proc", []string{"show proc"}},
		{"@1 show info; @1 show stat", []string{"@1 show info", " @1 show stat"}},
		{`set server a\;b`, []string{`set server a\;b`}},
		{"", []string{""}},
		{`trailing\`, []string{`trailing\`}},
	} {
		got := splitCommands(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("splitCommands(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestUptime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		3 * time.Second:                       "0d00h00m03s",
		(26*3600 + 61) * time.Second:          "1d02h01m01s",
		(10*86400 + 59*60 + 59) * time.Second: "10d00h59m59s",
	} {
		if got := uptime(d); got != want {
			t.Errorf("uptime(%v) = %s, want %s", d, got, want)
		}
	}
}

// splitCommands only cuts: joining its pieces with ';' gives the line back.
func FuzzSplitCommands(f *testing.F) {
	for _, s := range []string{"show proc", "a;b;;c", `a\;b`, `\`, `x\\;y`, "@1 show info; @!12 show stat"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if got := strings.Join(splitCommands(line), ";"); got != line {
			t.Fatalf("splitCommands(%q) joined back to %q", line, got)
		}
	})
}

// TestMasterWorkerModes: the master CLI keeps the session's expert and
// experimental modes and turns them on in the worker before each command
// it sends there, answering nothing itself; replies are HAProxy 2.6.12's
// (with goha's empty line after each).
func TestMasterWorkerModes(t *testing.T) {
	m := startMW(t)
	for _, c := range []struct{ in, want string }{
		{"experimental-mode on", ""},
		{"@1 set var proc.a int(6)", "This command is restricted to experimental mode only.\n\n"},
		{"experimental-mode on; @1 set var proc.a int(5); @1 get var proc.a", "\nproc.a: type=sint value=<5>\n\n"},
		{"@1 experimental-mode on; @1 set var proc.a int(7)", "\nThis command is restricted to experimental mode only.\n\n"},
		{"expert-mode on; @1 expert-mode; @1 experimental-mode", "expert-mode is ON\n\nexperimental-mode is OFF\n\n"},
		{"expert-mode on; experimental-mode on; expert-mode off; @1 expert-mode; @1 experimental-mode", "expert-mode is OFF\n\nexperimental-mode is ON\n\n"},
	} {
		if got := m.cli(t, c.in); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

// TestMasterWorkerModesPrompt: in prompt mode the master handles the mode
// commands even while a worker is the session's target, and shows the
// modes in its prompt, as 2.6.12 does (its replies lack the empty line
// goha ends each with).
func TestMasterWorkerModesPrompt(t *testing.T) {
	m := startMW(t)
	c, err := net.Dial("unix", m.mcli)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	readUntil := func(suffix string) string {
		var b strings.Builder
		for !strings.HasSuffix(b.String(), suffix) {
			ch, err := r.ReadByte()
			if err != nil {
				t.Fatalf("read after %q: %v", b.String(), err)
			}
			b.WriteByte(ch)
		}
		return b.String()
	}
	io.WriteString(c, "prompt\n")
	readUntil("master> ")
	io.WriteString(c, "expert-mode on\n")
	if got := readUntil("> "); got != "master(e)> " {
		t.Fatalf("expert-mode on: %q", got)
	}
	io.WriteString(c, "@1\n")
	pid := strings.TrimSuffix(readUntil("(e)> "), "(e)> ")
	for _, step := range []struct{ in, want string }{
		{"experimental-mode on", pid + "(xe)> "},
		{"set var proc.a int(9)", "\n" + pid + "(xe)> "},
		{"get var proc.a", "proc.a: type=sint value=<9>\n\n" + pid + "(xe)> "},
		{"expert-mode", pid + "(x)> "},
		{"experimental-mode off", pid + "> "},
		{"set var proc.a int(10)", "This command is restricted to experimental mode only.\n\n" + pid + "> "},
	} {
		io.WriteString(c, step.in+"\n")
		if got := readUntil("> "); got != step.want {
			t.Fatalf("%q: %q, want %q", step.in, got, step.want)
		}
	}
}
