// Package clientnative runs HAProxy Technologies' client-native runtime
// client, the library behind the Data Plane API, against goha and against
// HAProxy 2.6, and checks that both give it the same answers.
package clientnative

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/haproxytech/client-native/v6/models"
	"github.com/haproxytech/client-native/v6/runtime"
	"github.com/haproxytech/client-native/v6/runtime/options"
)

const haproxyPath = "/usr/sbin/haproxy"

// cfgText has three backends: a dynamic one (weights can be anything), one
// with leastconn and a disabled server, and a static-rr one. No server is
// checked, so their state only changes through the socket. maxconn is set
// because HAProxy derives its default from the file descriptor limit. The frontend
// listens on an inherited socket (fd@) so that the test owns no fixed port.
const cfgText = `global
    maxconn 4000
    stats socket %s level admin
    stats timeout 10s

defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s

frontend fe_main
    bind "fd@${FE}"
    default_backend be_app

backend be_app
    balance roundrobin
    server s1 127.0.0.1:8001 weight 10
    server s2 127.0.0.1:8002 weight 20
    server s3 127.0.0.1:8003 weight 30

backend be_lc
    balance leastconn
    server a1 127.0.0.1:8011
    server a2 127.0.0.1:8012 disabled

backend be_static
    balance static-rr
    server r1 127.0.0.1:8021 weight 5
`

var (
	buildOnce sync.Once
	gohaBin   string
	buildErr  error
	buildDir  string
)

// TestMain removes the directory holding the goha binary built for the
// tests, which outlives any single test.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildGoha builds ../../cmd/goha once per test binary.
func buildGoha(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "goha-clientnative-")
		if buildErr != nil {
			return
		}
		gohaBin = filepath.Join(buildDir, "goha")
		root, err := filepath.Abs("../..")
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", gohaBin, "./cmd/goha")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/goha: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return gohaBin
}

// proc is a running goha or HAProxy with its admin socket.
type proc struct {
	name string
	cmd  *exec.Cmd
	sock string
	out  *strings.Builder
}

// start runs prog -d -f <cfg> and waits until the stats socket answers.
func start(t *testing.T, name, prog string) *proc {
	t.Helper()
	dir := t.TempDir()
	p := &proc{name: name, sock: filepath.Join(dir, "admin.sock"), out: &strings.Builder{}}
	cfg := filepath.Join(dir, "test.cfg")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(cfgText, p.sock)), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p.cmd = exec.Command(prog, "-d", "-f", cfg)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "FE=3")
	p.cmd.ExtraFiles = []*os.File{f}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("%s exited at start:\n%s", name, p.out.String())
		default:
		}
		if c, err := net.Dial("unix", p.sock); err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no stats socket after 10s", name)
		}
	}
}

// raw sends one command on its own connection, as socat does, and returns
// the whole reply.
func raw(t *testing.T, sock, cmd string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(bufio.NewReader(c))
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return string(b)
}

// serverLine returns the fields of one server's line of show servers
// state, with the last-change time masked.
func serverLine(t *testing.T, sock, be, srv string) []string {
	t.Helper()
	out := raw(t, sock, "show servers state "+be)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, " ")
		if len(f) >= 25 && f[1] == be && f[3] == srv {
			f[9] = "<time>"
			return f
		}
	}
	t.Fatalf("show servers state %s has no %s:\n%s", be, srv, out)
	return nil
}

// statusOf returns the status column of a server in show stat.
func statusOf(t *testing.T, sock, be, srv string) string {
	t.Helper()
	out := raw(t, sock, "show stat")
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, ",")
		if len(f) > 17 && f[0] == be && f[1] == srv {
			return f[17]
		}
	}
	t.Fatalf("show stat has no %s/%s", be, srv)
	return ""
}

func i64(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// fmtServer renders what the Data Plane API shows of a runtime server;
// last_time_change is left out (a time).
func fmtServer(s *models.RuntimeServer) string {
	return fmt.Sprintf("%s id=%s addr=%s port=%s admin=%s op=%s weight=%s",
		s.Name, s.ID, s.Address, i64(s.Port), s.AdminState, s.OperationalState, i64(s.Weight))
}

// timeStats are the show stat fields that hold times or durations.
var timeStats = regexp.MustCompile(`"(lastchg|lastsess|downtime|qtime|ctime|rtime|ttime|check_duration|agent_duration|pid)":[0-9]+,?`)

// fmtStats renders every stat row client-native decoded, times masked.
func fmtStats(t *testing.T, st models.NativeStats) []string {
	t.Helper()
	if st.Error != "" {
		t.Fatalf("GetStats: %s", st.Error)
	}
	var rows []string
	for _, s := range st.Stats {
		b, err := json.Marshal(s.Stats)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprintf("%s %s %s %s", s.Type, s.BackendName, s.Name, timeStats.ReplaceAllString(string(b), "")))
	}
	return rows
}

// session runs the Data Plane API's runtime calls on one process and
// returns what it saw, line by line, to be compared between HAProxy and
// goha. Expected values are checked on the way, so that a change that is
// not applied fails even if both implementations agree.
func session(t *testing.T, p *proc) []string {
	t.Helper()
	var log []string
	add := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }

	rt, err := runtime.New(context.Background(), options.Socket(p.sock))
	if err != nil {
		t.Fatalf("%s: runtime.New: %v", p.name, err)
	}

	info, err := rt.GetInfo()
	if err != nil || info.Info == nil {
		t.Fatalf("%s: GetInfo: %v %+v", p.name, err, info)
	}
	if info.Info.Version == "" || info.Info.Pid == nil || *info.Info.Pid != int64(p.cmd.Process.Pid) {
		t.Errorf("%s: GetInfo: version %q pid %s, want the process's pid %d", p.name, info.Info.Version, i64(info.Info.Pid), p.cmd.Process.Pid)
	}
	add("info nbthread-set=%v maxconn=%s", info.Info.Nbthread != nil, i64(info.Info.MaxConn))
	// GetVersion caches the first answer in a package variable, so the
	// second process's Version line is parsed here the same way.
	if _, err := rt.GetVersion(); err != nil {
		t.Errorf("%s: GetVersion: %v", p.name, err)
	}
	var v runtime.HAProxyVersion
	if err := v.ParseHAProxyVersion(info.Info.Version); err != nil {
		t.Errorf("%s: Version %q: %v", p.name, info.Info.Version, err)
	} else {
		add("version %d.%d", v.Major(), v.Minor())
	}

	for _, be := range []string{"be_app", "be_lc", "be_static"} {
		srvs, err := rt.GetServersState(be)
		if err != nil {
			t.Fatalf("%s: GetServersState(%s): %v", p.name, be, err)
		}
		for _, s := range srvs {
			add("servers %s: %s", be, fmtServer(s))
		}
	}
	if _, err := rt.GetServersState("nosuch"); err == nil {
		t.Errorf("%s: GetServersState(nosuch) succeeded", p.name)
	}
	log = append(log, fmtStats(t, rt.GetStats())...)

	// state reads a server through client-native and through the socket.
	state := func(be, srv string) *models.RuntimeServer {
		s, err := rt.GetServerState(be, srv)
		if err != nil {
			t.Fatalf("%s: GetServerState(%s/%s): %v", p.name, be, srv, err)
		}
		add("server %s: %s", be, fmtServer(s))
		add("socket %s/%s: %s | %s", be, srv, strings.Join(serverLine(t, p.sock, be, srv), " "), statusOf(t, p.sock, be, srv))
		return s
	}
	check := func(what string, err error) {
		if err != nil {
			t.Errorf("%s: %s: %v", p.name, what, err)
			add("%s: error", what)
			return
		}
		add("%s: ok", what)
	}

	check("weight s1 42", rt.SetServerWeight("be_app", "s1", "42"))
	check("weight s2 50%", rt.SetServerWeight("be_app", "s2", "50%"))
	if s := state("be_app", "s1"); i64(s.Weight) != "42" {
		t.Errorf("%s: s1 weight %s after SetServerWeight 42", p.name, i64(s.Weight))
	}
	if s := state("be_app", "s2"); i64(s.Weight) != "10" {
		t.Errorf("%s: s2 weight %s after SetServerWeight 50%%", p.name, i64(s.Weight))
	}
	if got := raw(t, p.sock, "get weight be_app/s1"); got != "42 (initial 10)\n\n" {
		t.Errorf("%s: get weight be_app/s1 = %q", p.name, got)
	}
	check("weight r1 0%", rt.SetServerWeight("be_static", "r1", "0%"))
	state("be_static", "r1")

	for _, st := range []string{"maint", "drain", "ready"} {
		check("state s1 "+st, rt.SetServerState("be_app", "s1", st))
		s := state("be_app", "s1")
		if s.AdminState != st {
			t.Errorf("%s: s1 admin_state %q after SetServerState %s", p.name, s.AdminState, st)
		}
		want := map[string]string{"maint": "MAINT", "drain": "DRAIN", "ready": "no check"}[st]
		if got := statusOf(t, p.sock, "be_app", "s1"); got != want {
			t.Errorf("%s: show stat status of s1 %q after state %s, want %q", p.name, got, st, want)
		}
	}
	check("state a2 ready", rt.SetServerState("be_lc", "a2", "ready"))
	state("be_lc", "a2")

	check("addr s3 127.0.0.2:8033", rt.SetServerAddr("be_app", "s3", "127.0.0.2", 8033))
	if s := state("be_app", "s3"); s.Address != "127.0.0.2" || i64(s.Port) != "8033" {
		t.Errorf("%s: s3 at %s:%s after SetServerAddr", p.name, s.Address, i64(s.Port))
	}
	check("addr s3 127.0.0.3", rt.SetServerAddr("be_app", "s3", "127.0.0.3", 0))
	if s := state("be_app", "s3"); s.Address != "127.0.0.3" || i64(s.Port) != "8033" {
		t.Errorf("%s: s3 at %s:%s after SetServerAddr without port", p.name, s.Address, i64(s.Port))
	}

	check("disable s2", rt.DisableServer("be_app", "s2"))
	if s := state("be_app", "s2"); s.AdminState != "maint" {
		t.Errorf("%s: s2 admin_state %q after DisableServer", p.name, s.AdminState)
	}
	check("enable s2", rt.EnableServer("be_app", "s2"))
	state("be_app", "s2")
	check("health s2 down", rt.SetServerHealth("be_app", "s2", "down"))
	if s := state("be_app", "s2"); s.OperationalState != "down" {
		t.Errorf("%s: s2 operational_state %q after SetServerHealth down", p.name, s.OperationalState)
	}
	check("health s2 up", rt.SetServerHealth("be_app", "s2", "up"))
	state("be_app", "s2")

	// HAProxy reports a bad address as a warning ([4]), which client-native
	// does not count as an error; the server keeps its address.
	check("addr s3 not-an-ip", rt.SetServerAddr("be_app", "s3", "not-an-ip", 0))
	if s := state("be_app", "s3"); s.Address != "127.0.0.3" {
		t.Errorf("%s: s3 at %s after a bad SetServerAddr", p.name, s.Address)
	}

	// Dynamic servers, as the Data Plane API adds and removes them.
	check("add dyn1", rt.AddServer("be_app", "dyn1", "127.0.0.1:8009 weight 7"))
	if s := state("be_app", "dyn1"); s.AdminState != "maint" || i64(s.Weight) != "7" || s.ID != "4" {
		t.Errorf("%s: new server dyn1: %s", p.name, fmtServer(s))
	}
	check("ready dyn1", rt.SetServerState("be_app", "dyn1", "ready"))
	state("be_app", "dyn1")
	check("maint dyn1", rt.SetServerState("be_app", "dyn1", "maint"))
	check("del dyn1", rt.DeleteServer("be_app", "dyn1"))
	if _, err := rt.GetServerState("be_app", "dyn1"); err == nil {
		t.Errorf("%s: dyn1 still there after DeleteServer", p.name)
	}

	check("maxconn fe_main 500", rt.SetFrontendMaxConn("fe_main", 500))
	check("clear counters", rt.ClearCounters())

	// Errors as the Data Plane API reports them; the socket path is
	// client-native's prefix and differs between the two runs.
	for _, e := range []struct {
		what string
		err  error
	}{
		{"weight nosuch", rt.SetServerWeight("be_app", "nosuch", "5")},
		{"state nosuchbe", rt.SetServerState("nosuchbe", "s1", "maint")},
		{"weight r1 7 (static)", rt.SetServerWeight("be_static", "r1", "7")},
		{"weight s1 300", rt.SetServerWeight("be_app", "s1", "300")},
		{"add s1 again", rt.AddServer("be_app", "s1", "127.0.0.1:8001")},
		{"del s2 (not in maintenance)", rt.DeleteServer("be_app", "s2")},
		{"add to static", rt.AddServer("be_static", "dyn2", "127.0.0.1:8029")},
	} {
		if e.err == nil {
			t.Errorf("%s: %s succeeded", p.name, e.what)
			add("%s: ok", e.what)
			continue
		}
		add("%s: %s", e.what, strings.ReplaceAll(e.err.Error(), p.sock, "<sock>"))
	}

	// The whole table once more, after the changes.
	log = append(log, fmtStats(t, rt.GetStats())...)
	out, err := rt.ExecuteRaw("show servers state")
	if err != nil {
		t.Errorf("%s: ExecuteRaw(show servers state): %v", p.name, err)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, " "); len(f) >= 25 && !strings.HasPrefix(l, "#") {
			f[9] = "<time>"
			l = strings.Join(f, " ")
		}
		add("raw %s", l)
	}
	return log
}

// TestClientNative runs the same calls against HAProxy 2.6 and goha and
// compares what client-native returned.
func TestClientNative(t *testing.T) {
	var want []string
	if _, err := os.Stat(haproxyPath); err == nil {
		want = session(t, start(t, "haproxy", haproxyPath))
	} else {
		t.Logf("%s not installed: goha is checked alone", haproxyPath)
	}
	got := session(t, start(t, "goha", buildGoha(t)))
	if testing.Verbose() {
		t.Logf("goha:\n%s", strings.Join(got, "\n"))
	}
	if want == nil {
		return
	}
	n := max(len(want), len(got))
	for i := 0; i < n; i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("line %d differs:\nhaproxy: %s\ngoha:    %s", i, w, g)
		}
	}
}
