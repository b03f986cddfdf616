// Package harness runs goha (or HAProxy, for comparison) on a configuration
// with listening sockets handed over as fd@N, so that tests never race for
// ports, and provides small origin servers.
package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Proc is a running proxy.
type Proc struct {
	t       testing.TB
	cmd     *exec.Cmd
	Dir     string
	Addrs   map[string]string // listener name -> host:port
	out     *lockedBuf
	done    chan struct{}
	waitErr error
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start runs prog -d -f <cfg>. Every `${NAME}` listed in listeners is given
// a listening socket on 127.0.0.1:0, passed as a file descriptor whose
// number is put in the environment under NAME, so the configuration says
// `bind "fd@${NAME}"`; a name written "udp:NAME" gets a bound UDP socket
// instead, for `dgram-bind "fd@${NAME}"`. ${TMP} expands to the run
// directory.
func Start(t testing.TB, prog, cfg string, listeners ...string) *Proc {
	t.Helper()
	return StartArgs(t, prog, nil, cfg, listeners...)
}

// StartArgs is Start with more command-line arguments (before -f).
func StartArgs(t testing.TB, prog string, args []string, cfg string, listeners ...string) *Proc {
	t.Helper()
	dir := t.TempDir()
	p := &Proc{t: t, Dir: dir, Addrs: map[string]string{}, out: &lockedBuf{}, done: make(chan struct{})}
	cfg = strings.ReplaceAll(cfg, "${TMP}", dir)
	path := filepath.Join(dir, "test.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, append(append([]string{"-d"}, args...), "-f", path)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMP="+dir)
	for i, name := range listeners {
		var f *os.File
		var addr string
		if n, ok := strings.CutPrefix(name, "udp:"); ok {
			name = n
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			if f, err = pc.(*net.UDPConn).File(); err != nil {
				t.Fatal(err)
			}
			pc.Close()
			addr = pc.LocalAddr().String()
		} else {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			if f, err = ln.(*net.TCPListener).File(); err != nil {
				t.Fatal(err)
			}
			ln.Close()
			addr = ln.Addr().String()
		}
		defer f.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", name, 3+i))
		p.Addrs[name] = addr
	}
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.cmd = cmd
	go func() { p.waitErr = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Stop)
	return p
}

// Output is what the proxy printed so far.
func (p *Proc) Output() string { return p.out.String() }

// PID is the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM and waits (SIGKILL after 5 s).
func (p *Proc) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Exited reports whether the process is gone.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitOutput polls the output until it contains s.
func (p *Proc) WaitOutput(s string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if strings.Contains(p.Output(), s) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// RSS returns the resident set size in kB and its peak (VmHWM).
func (p *Proc) RSS() (cur, peak int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "VmRSS:" {
			cur, _ = strconv.Atoi(f[1])
		}
		if len(f) >= 2 && f[0] == "VmHWM:" {
			peak, _ = strconv.Atoi(f[1])
		}
	}
	return
}

// FDs counts the process's open descriptors.
func (p *Proc) FDs() int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.PID()))
	return len(ents)
}

// Origin is an HTTP server that answers with its name and counts the
// connections it accepted.
type Origin struct {
	Name  string
	Addr  string
	Conns atomic.Int64
	Reqs  atomic.Int64
	srv   *http.Server
	ln    net.Listener
}

// NewOrigin starts an origin; handler may be nil (answers "<name>\n").
func NewOrigin(t testing.TB, name string, handler http.HandlerFunc) *Origin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &Origin{Name: name, Addr: ln.Addr().String(), ln: ln}
	if handler == nil {
		handler = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Server", name)
			io.Copy(io.Discard, r.Body)
			fmt.Fprintf(w, "%s\n", name)
		}
	}
	o.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.Reqs.Add(1)
			handler(w, r)
		}),
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				o.Conns.Add(1)
			}
		},
	}
	go o.srv.Serve(ln)
	t.Cleanup(func() { o.srv.Close() })
	return o
}

// Close stops the origin.
func (o *Origin) Close() { o.srv.Close() }

// WaitListening polls addr until it accepts a TCP connection.
func WaitListening(t testing.TB, addr string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s does not accept connections", addr)
}

// RawRequest sends raw bytes on a new connection and returns everything the
// peer sends until it closes or the timeout passes.
func RawRequest(t testing.TB, addr string, raw string, timeout time.Duration) string {
	t.Helper()
	// A loopback connect is quick, but a loaded machine may not run
	// this process for a second or more.
	c, err := net.DialTimeout("tcp", addr, Patience)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

// Get sends GET path on a keep-alive client and returns the status and body.
func Get(t testing.TB, c *http.Client, addr, path string) (int, string) {
	t.Helper()
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ReadResponse reads one response from br.
func ReadResponse(br *bufio.Reader, method string) (*http.Response, string, error) {
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// Socket runs one stats-socket command through socat, as an operator
// would, and returns the reply; err is socat's (e.g. nothing listening
// yet).
func Socket(sock, cmd string) (string, error) {
	c := exec.Command("socat", "stdio", "unix-connect:"+sock)
	c.Stdin = strings.NewReader(cmd + "\n")
	out, err := c.CombinedOutput()
	return string(out), err
}

// MustSocket is Socket for a socket that must answer.
func MustSocket(t testing.TB, sock, cmd string) string {
	t.Helper()
	out, err := Socket(sock, cmd)
	if err != nil {
		t.Fatalf("socat %q: %v\n%s", cmd, err, out)
	}
	return out
}

// TCPServer accepts connections on a loopback port until the test ends,
// each served by handle on its own goroutine, and returns the address.
func TCPServer(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// handedOut are the ports FreePort returned in this test binary: it never
// returns one twice, so that a test asking for several gets different ones.
var (
	freeMu    sync.Mutex // guards handedOut
	handedOut = map[int]bool{}
)

// FreePort probes a free TCP port below 32768, for the tests that need a
// port number in a configuration (a bind goha or HAProxy opens itself):
// other programs' outgoing connections take ports from the ephemeral
// range above it.
func FreePort(t testing.TB) int {
	t.Helper()
	for i := 0; i < 200; i++ {
		p := 20000 + rand.Intn(12000)
		freeMu.Lock()
		taken := handedOut[p]
		freeMu.Unlock()
		if taken {
			// Free now, perhaps, but a caller may be about to bind it.
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err == nil {
			ln.Close()
			freeMu.Lock()
			handedOut[p] = true
			freeMu.Unlock()
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

// Patience bounds every wait for a state: long enough that only a hang
// reaches it on a loaded machine, since a wait that gives up early turns
// slowness into a failure.
const Patience = 20 * time.Second

// Eventually polls cond until it holds and fails the test, naming what
// it waited for, if it still does not after Patience.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Within(Patience, cond) {
		t.Fatalf("still waiting after %v for %s", Patience, what)
	}
}

// Within polls cond until it holds or d has passed, and reports whether
// it held.
func Within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// WaitSocket runs a stats-socket command until ok accepts its reply, and
// returns the last reply and how many connections to the socket it made
// (they count in show info's totals).
func WaitSocket(t testing.TB, sock, cmd string, ok func(reply string) bool) (string, int) {
	t.Helper()
	var out string
	n := 0
	Eventually(t, fmt.Sprintf("%q on %s", cmd, sock), func() bool {
		n++
		var err error
		out, err = Socket(sock, cmd)
		return err == nil && ok(out)
	})
	return out, n
}

// WaitCLI waits until the stats socket at sock answers.
func WaitCLI(t testing.TB, sock string) {
	t.Helper()
	WaitSocket(t, sock, "show info", func(string) bool { return true })
}

// ParseStat splits show stat's CSV into rows keyed "proxy/server", each a
// map from column name to value.
func ParseStat(out string) map[string]map[string]string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	rows := map[string]map[string]string{}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "# ") {
		return rows
	}
	head := strings.Split(strings.TrimPrefix(lines[0], "# "), ",")
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) < 2 {
			continue
		}
		row := map[string]string{}
		for i, name := range head {
			if i < len(f) {
				row[name] = f[i]
			}
		}
		rows[f[0]+"/"+f[1]] = row
	}
	return rows
}

// WaitScur waits until show stat gives row proxy/server (server
// "FRONTEND" or "BACKEND" for the proxy's own rows) want current
// sessions, and returns how many socket connections that took.
func WaitScur(t testing.TB, sock, proxy, server string, want int) int {
	t.Helper()
	key, w := proxy+"/"+server, strconv.Itoa(want)
	last, n := "", 0
	if !Within(Patience, func() bool {
		n++
		out, err := Socket(sock, "show stat")
		if err != nil {
			last = err.Error()
			return false
		}
		last = ParseStat(out)[key]["scur"]
		return last == w
	}) {
		t.Fatalf("%s has scur %q after %v, want %d", key, last, Patience, want)
	}
	return n
}

// Signal sends sig to the proxy.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }
