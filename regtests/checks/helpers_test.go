// Package checks tests goha's health checks end to end: the built binary
// checking real peers (HTTP origins, TCP responders, agents, redis-server)
// on loopback. Where the outcome is HAProxy's behaviour, each scenario runs
// against HAProxy 2.6 too, and what operators see (show stat, show servers
// state, the server state lines on stderr, which server gets the traffic)
// is compared.
package checks

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"goha/regtests/internal/bin"
	"goha/regtests/internal/harness"
)

// proxies lists the programs each scenario runs against: goha always,
// HAProxy when installed. CHECKS_ONLY=goha|haproxy restricts the list.
func proxies(t *testing.T) []prog {
	only := os.Getenv("CHECKS_ONLY")
	var l []prog
	if only == "" || only == "goha" {
		l = append(l, prog{"goha", bin.Path(t, "goha")})
	}
	if only == "" || only == "haproxy" {
		if p, err := exec.LookPath("haproxy"); err == nil {
			l = append(l, prog{"haproxy", p})
		} else if p := "/usr/sbin/haproxy"; fileExists(p) {
			l = append(l, prog{"haproxy", p})
		}
	}
	return l
}

type prog struct{ name, path string }

func fileExists(p string) bool { return exec.Command("test", "-e", p).Run() == nil }

// head is the configuration's common part: an admin stats socket and
// short timeouts.
const head = `
global
    stats socket ${TMP}/admin.sock level admin
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
`

// run is one proxy process under test.
type run struct {
	t    *testing.T
	name string
	p    *harness.Proc
	sock string
}

// start runs cfg (head is prepended) with a frontend listener named fe
// when the configuration binds it.
func start(t *testing.T, pr prog, cfg string) *run {
	t.Helper()
	var ls []string
	if strings.Contains(cfg, "${fe}") {
		ls = append(ls, "fe")
	}
	p := harness.Start(t, pr.path, head+cfg, ls...)
	r := &run{t: t, name: pr.name, p: p, sock: filepath.Join(p.Dir, "admin.sock")}
	deadline := time.Now().Add(harness.Patience)
	for {
		if c, err := net.Dial("unix", r.sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("%s: the stats socket never came up:\n%s", pr.name, p.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

// cli runs one stats socket command and returns the reply.
func (r *run) cli(cmd string) string {
	r.t.Helper()
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		r.t.Fatalf("%s: %v", r.name, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, cmd+"\n")
	b, err := io.ReadAll(c)
	if err != nil {
		r.t.Fatalf("%s: %q: %v", r.name, cmd, err)
	}
	return string(b)
}

// stat returns the `show stat` fields of be/srv by column name.
func (r *run) stat(be, srv string) map[string]string {
	r.t.Helper()
	out := r.cli("show stat")
	rd := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# ")))
	rd.FieldsPerRecord = -1
	recs, err := rd.ReadAll()
	if err != nil || len(recs) == 0 {
		r.t.Fatalf("%s: show stat: %v\n%s", r.name, err, out)
	}
	hdr := recs[0]
	for _, rec := range recs[1:] {
		if len(rec) > 1 && rec[0] == be && rec[1] == srv {
			m := map[string]string{}
			for i, h := range hdr {
				if i < len(rec) && h != "" {
					m[h] = rec[i]
				}
			}
			return m
		}
	}
	r.t.Fatalf("%s: no %s/%s in show stat:\n%s", r.name, be, srv, out)
	return nil
}

// view is what an operator sees of a server: show stat's status,
// check_status and check_code, and show servers state's op state, admin
// state, user weight, check status, result, health, check state and agent
// state (0-based columns 5-7 and 10-14).
type view struct {
	Status, CheckStatus, CheckCode string
	State                          string
}

func (v view) String() string {
	return fmt.Sprintf("stat=%q/%q/%q state=%q", v.Status, v.CheckStatus, v.CheckCode, v.State)
}

func (r *run) view(be, srv string) view {
	r.t.Helper()
	m := r.stat(be, srv)
	return view{Status: m["status"], CheckStatus: m["check_status"], CheckCode: m["check_code"], State: r.state(be, srv)}
}

// state returns columns 5-7 and 10-14 of be/srv's `show servers state` line.
func (r *run) state(be, srv string) string {
	r.t.Helper()
	out := r.cli("show servers state " + be)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 15 && f[1] == be && f[3] == srv {
			return strings.Join([]string{f[5], f[6], f[7], f[10], f[11], f[12], f[13], f[14]}, " ")
		}
	}
	r.t.Fatalf("%s: no %s/%s in show servers state:\n%s", r.name, be, srv, out)
	return ""
}

// waitStatus polls show stat until be/srv's status is want.
func (r *run) waitStatus(be, srv, want string, d time.Duration) view {
	r.t.Helper()
	return r.waitView(be, srv, d, fmt.Sprintf("status %q", want), func(v view) bool { return v.Status == want })
}

// waitView polls until match accepts the server's settled view. "* "
// before the check status means a check is running right now (HAProxy
// shows it so): such a view is not settled, and is not offered to match.
func (r *run) waitView(be, srv string, d time.Duration, what string, match func(view) bool) view {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		v := r.view(be, srv)
		if !strings.HasPrefix(v.CheckStatus, "* ") && match(v) {
			return v
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: %s/%s: waited %v for %s, have %v\n%s", r.name, be, srv, d, what, v, r.p.Output())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

var (
	logPrefix = regexp.MustCompile(`^\[(WARNING|ALERT|NOTICE)\] +\(\d+\) : `)
	duration  = regexp.MustCompile(`check duration: \d+ms`)
)

// events returns the server and backend state lines printed on stderr,
// without their pid prefix and with check durations blanked.
func (r *run) events() []string {
	var l []string
	for _, line := range strings.Split(r.p.Output(), "\n") {
		if !logPrefix.MatchString(line) {
			continue
		}
		line = logPrefix.ReplaceAllString(line, "")
		for _, p := range []string{"Server ", "Backup Server ", "backend ", "Health check ", "Agent check "} {
			if strings.HasPrefix(line, p) {
				l = append(l, duration.ReplaceAllString(line, "check duration: Xms"))
				break
			}
		}
	}
	return l
}

// waitEvent polls stderr until a state line containing s appears. When
// that line leaves the backend with no server, the backend's own line is
// a separate write that may come a moment later: it waits for that too,
// so that callers comparing all lines see both.
func (r *run) waitEvent(s string, d time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		evs := r.events()
		for i, e := range evs {
			if !strings.Contains(e, s) {
				continue
			}
			if !strings.Contains(e, " 0 active and 0 backup servers left.") {
				return
			}
			for _, later := range evs[i+1:] {
				if strings.HasSuffix(later, " has no server available!") {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: waited %v for a line with %q; output:\n%s", r.name, d, s, r.p.Output())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// hits sends n requests, each on a new connection, and counts the
// servers that answered (by body); failures count under their status.
func (r *run) hits(n int) map[string]int {
	r.t.Helper()
	m := map[string]int{}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for i := 0; i < n; i++ {
		resp, err := c.Get("http://" + r.p.Addrs["fe"] + "/")
		if err != nil {
			m["error"]++
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			m[fmt.Sprint(resp.StatusCode)]++
			continue
		}
		m[strings.TrimSpace(string(b))]++
	}
	return m
}

// switchable is an HTTP origin that can be stopped and started again on
// the same port, and whose status code can be changed.
type switchable struct {
	t      *testing.T
	name   string
	addr   string
	code   atomic.Int32
	mu     sync.Mutex // guards srv
	srv    *http.Server
	served atomic.Int64
}

func newSwitchable(t *testing.T, name string) *switchable {
	// A port below the kernel's ephemeral range: while the origin is
	// stopped, no listener of another test, bound to port 0, can take it
	// (a check would then pass against that one).
	var ln net.Listener
	var err error
	for i := 0; i < 20; i++ {
		if ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	o := &switchable{t: t, name: name, addr: ln.Addr().String()}
	o.code.Store(200)
	o.serve(ln)
	t.Cleanup(o.stop)
	return o
}

func (o *switchable) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			o.served.Add(1)
		}
		w.WriteHeader(int(o.code.Load()))
		fmt.Fprintf(w, "%s\n", o.name)
	})}
	o.mu.Lock()
	o.srv = srv
	o.mu.Unlock()
	go srv.Serve(ln)
}

func (o *switchable) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.srv != nil {
		o.srv.Close()
		o.srv = nil
	}
}

func (o *switchable) restart() {
	o.t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", o.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		o.t.Fatalf("relisten on %s: %v", o.addr, err)
	}
	o.serve(ln)
}

// responder is a TCP peer that answers each connection with what reply
// returns for the bytes received (read until a line end or 200ms), then
// closes; a nil reply means: never answer, hold the connection.
type responder struct {
	addr  string
	ln    net.Listener
	reply atomic.Value // func(got string) *string
	conns atomic.Int64
	rst   atomic.Bool // reset connections at once
	greet atomic.Bool // answer at once, without reading (agents get nothing)
}

func newResponder(t *testing.T, reply func(got string) *string) *responder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &responder{addr: ln.Addr().String(), ln: ln}
	r.reply.Store(reply)
	var wg sync.WaitGroup
	held := make(chan net.Conn, 1024)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.conns.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r.rst.Load() {
					c.(*net.TCPConn).SetLinger(0)
					c.Close()
					return
				}
				got := ""
				if !r.greet.Load() {
					c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
					got, _ = bufio.NewReader(c).ReadString('\n')
				}
				out := r.reply.Load().(func(string) *string)(got)
				if out == nil {
					select {
					case held <- c:
					default:
						c.Close()
					}
					return
				}
				io.WriteString(c, *out)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		close(held)
		for c := range held {
			c.Close()
		}
	})
	return r
}

func (r *responder) set(reply func(got string) *string) { r.reply.Store(reply) }

func always(s string) func(string) *string { return func(string) *string { return &s } }

// port returns the port part of host:port.
func port(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// compare fails when goha and HAProxy disagree on what operators see.
func compare(t *testing.T, what string, got map[string]string) {
	t.Helper()
	for name, v := range got {
		t.Logf("%s, %s:\n%s", what, name, v)
	}
	g, okG := got["goha"]
	h, okH := got["haproxy"]
	if okG && okH && g != h {
		t.Errorf("%s differs:\n goha:    %s\n haproxy: %s", what, g, h)
	}
}
