package stream

import (
	"bufio"
	"errors"
	"goha/core"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"goha/core/config"
	"goha/core/diag"
)

// The helpers below are shared by the unit tests of listen, http, tcp,
// idle and backend: a process built from configuration text, origins that count
// what reaches them, and clients with bounded waits.

// unitWait bounds every wait for something that must happen: far above
// what it takes on a loaded machine, so that reaching it means it never
// happens.
const unitWait = 20 * time.Second

// unitQuiet is how long a test watches for something that must not
// happen (a held connection being served). A broken implementation may
// slip past it on a slow machine; a correct one never fails it.
const unitQuiet = 300 * time.Millisecond

// unitBind returns "fd@N" for a new listening socket on 127.0.0.1 with a
// port the system chose: bind lines refuse port 0. The descriptor is a
// bare duplicate that no *os.File owns, because the process's listener
// closes it once it has its own copy; a File's later Close (or finalizer)
// would close whatever reused the number meanwhile.
func unitBind(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		t.Fatal(err, derr)
	}
	return "fd@" + strconv.Itoa(fd)
}

// unitProc runs cfgText in-process until the test ends; every "@BIND@"
// in it becomes a listening socket of its own (see unitBind).
func unitProc(t *testing.T, cfgText string) *Process {
	t.Helper()
	for strings.Contains(cfgText, "@BIND@") {
		cfgText = strings.Replace(cfgText, "@BIND@", unitBind(t), 1)
	}
	d := &diag.Collector{}
	secs := config.Parse("unit.cfg", []byte(cfgText), config.Options{}, d)
	cfg := core.Build(secs, d)
	if d.HasAlert() {
		t.Fatalf("configuration: %v", d.All())
	}
	proc := New(cfg)
	if err := proc.Run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.Stop()
		// A stream still running would reach into the next test's
		// origins once their ports are reused.
		for end := time.Now().Add(unitWait); proc.curConns.Load() > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Errorf("%d client connections still served after the test", proc.curConns.Load())
				return
			}
		}
	})
	return proc
}

// unitFE is the address of frontend name's first listener.
func unitFE(t *testing.T, proc *Process, name string) string {
	t.Helper()
	fe := proc.Conf.FindProxy(name, core.CapFE)
	if fe == nil {
		t.Fatalf("no frontend %s", name)
	}
	ls := proc.Listeners(fe)
	if len(ls) == 0 {
		t.Fatalf("frontend %s listens nowhere", name)
	}
	return ls[0].String()
}

// unitOrigin is an HTTP origin; accepts counts the connections it took.
type unitOrigin struct {
	addr    string
	accepts atomic.Int32
	reqs    atomic.Int32
}

// newUnitOrigin serves h on 127.0.0.1 until the test ends, counting
// connections and requests.
func newUnitOrigin(t *testing.T, h http.HandlerFunc) *unitOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &unitOrigin{addr: ln.Addr().String()}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.reqs.Add(1)
			h(w, r)
		}),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				o.accepts.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return o
}

// okHandler answers every request with 200 and "ok".
func okHandler(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Write([]byte("ok"))
}

// unitClient is a client connection to the proxy.
type unitClient struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialUnit(t *testing.T, addr string) *unitClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &unitClient{t: t, c: c, br: bufio.NewReader(c)}
}

// send writes raw bytes.
func (u *unitClient) send(raw string) {
	u.t.Helper()
	u.c.SetWriteDeadline(time.Now().Add(unitWait))
	if _, err := io.WriteString(u.c, raw); err != nil {
		u.t.Fatalf("write: %v", err)
	}
}

// read reads one response to a request of method, body included.
func (u *unitClient) read(method string) (*http.Response, string) {
	u.t.Helper()
	u.c.SetReadDeadline(time.Now().Add(unitWait))
	resp, err := http.ReadResponse(u.br, &http.Request{Method: method})
	if err != nil {
		u.t.Fatalf("reading the response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		u.t.Fatalf("reading the response body: %v", err)
	}
	return resp, string(b)
}

// get sends a GET for path and returns its response.
func (u *unitClient) get(path string) (*http.Response, string) {
	u.t.Helper()
	u.send("GET " + path + " HTTP/1.1\r\nHost: unit\r\n\r\n")
	return u.read("GET")
}

// held reports whether nothing came back for unitQuiet.
func (u *unitClient) held() bool {
	u.c.SetReadDeadline(time.Now().Add(unitQuiet))
	_, err := u.br.Peek(1)
	u.c.SetReadDeadline(time.Time{})
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// closed waits for the proxy to close the connection: EOF or a reset,
// with nothing read before.
func (u *unitClient) closed() error {
	u.c.SetReadDeadline(time.Now().Add(unitWait))
	b, err := io.ReadAll(u.br)
	if len(b) > 0 {
		return errors.New("unexpected bytes before the close: " + strconv.Quote(string(b)))
	}
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		return err
	}
	return nil
}

// waitFor polls cond until it holds or unitWait passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(unitWait); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitDone waits for ch to close or unitWait to pass.
func waitDone(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(unitWait):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// acceptLoopsDone closes its channel once every accept loop of proc has
// returned.
func acceptLoopsDone(proc *Process) <-chan struct{} {
	ch := make(chan struct{})
	go func() { proc.active.Wait(); close(ch) }()
	return ch
}

// refused says whether dialing addr is refused: nothing listens there.
func refused(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// unitEcho is a TCP origin that sends back what it reads and closes when
// its client has; its connections close when the test ends.
func unitEcho(t *testing.T) string {
	t.Helper()
	return unitServer(t, func(c net.Conn) { io.Copy(c, c) })
}

// unitServer is a TCP origin that runs handle on each connection, then
// closes it; it stops listening when the test ends.
func unitServer(t *testing.T, handle func(net.Conn)) string {
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
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// echo sends msg and waits for it to come back.
func (u *unitClient) echo(msg string) {
	u.t.Helper()
	u.send(msg)
	u.c.SetReadDeadline(time.Now().Add(unitWait))
	b := make([]byte, len(msg))
	if _, err := io.ReadFull(u.br, b); err != nil || string(b) != msg {
		u.t.Fatalf("echo of %q: %q, %v", msg, b, err)
	}
}

// readEcho waits for msg, sent before, to come back.
func (u *unitClient) readEcho(msg string) {
	u.t.Helper()
	u.c.SetReadDeadline(time.Now().Add(unitWait))
	b := make([]byte, len(msg))
	if _, err := io.ReadFull(u.br, b); err != nil || string(b) != msg {
		u.t.Fatalf("echo of %q: %q, %v", msg, b, err)
	}
}

const unitHTTPConf = `
global
    nbthread 1
defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
`

// The listener tests run in tcp mode in front of an echo: whether a
// connection is served shows in its first byte, whatever the protocol.
const unitTCPConf = `
global
    nbthread 1
defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
`

// A frontend or a bind at its maxconn leaves further connections in the
// kernel's queue, and takes them as served ones close.
func TestListenMaxConnHoldsAccepts(t *testing.T) {
	for _, tc := range []struct{ name, fe string }{
		{"frontend", "    bind @BIND@\n    maxconn 1\n"},
		{"bind", "    bind @BIND@ maxconn 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proc := unitProc(t, unitTCPConf+"frontend fe\n"+tc.fe+"    default_backend be\nbackend be\n    server s1 "+unitEcho(t)+"\n")
			addr := unitFE(t, proc, "fe")
			c1 := dialUnit(t, addr)
			c1.echo("one")
			// c2 is not checked, a known gap: the accept loop looks at
			// the limit before c1's stream has counted itself, then
			// blocks in accept(2), which takes c2 whatever the limit.
			c2 := dialUnit(t, addr)
			c2.send("two")
			c3 := dialUnit(t, addr)
			c3.send("three")
			if !c3.held() {
				t.Fatal("a connection over maxconn was served while the first stayed open")
			}
			c1.c.Close()
			c2.readEcho("two")
			c2.c.Close()
			c3.readEcho("three")
		})
	}
}

// disable frontend stops accepting, enable frontend resumes: the
// connections queued meanwhile are then served.
func TestListenDisableEnableFrontend(t *testing.T) {
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    server s1 `+unitEcho(t)+`
`)
	fe := proc.Conf.FindProxy("fe", core.CapFE)
	addr := unitFE(t, proc, "fe")
	dialUnit(t, addr).echo("before")
	if err := fe.DisableFrontend(); err != nil {
		t.Fatal(err)
	}
	// c1 is not checked, a known gap: the accept loop already waits in
	// accept(2) when the pause comes, and nothing wakes it, so it takes
	// c1 and serves it.
	c1 := dialUnit(t, addr)
	c1.send("one")
	c2 := dialUnit(t, addr)
	c2.send("two")
	if !c2.held() {
		t.Fatal("a disabled frontend served a new connection")
	}
	if err := fe.EnableFrontend(); err != nil {
		t.Fatal(err)
	}
	c1.readEcho("one")
	c2.readEcho("two")
}

// shutdown frontend closes its listeners for good (the port refuses
// connections and the accept loop ends); connections already
// established go on being served.
func TestListenShutdownFrontend(t *testing.T) {
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    server s1 `+unitEcho(t)+`
`)
	fe := proc.Conf.FindProxy("fe", core.CapFE)
	addr := unitFE(t, proc, "fe")
	c := dialUnit(t, addr)
	c.echo("before")
	fe.ShutdownFrontend()
	if ls := proc.Listeners(fe); len(ls) != 0 {
		t.Fatalf("listeners left after shutdown frontend: %v", ls)
	}
	waitDone(t, "the accept loop to end", acceptLoopsDone(proc))
	if !refused(addr) {
		t.Fatal("the frontend's port still accepts connections after shutdown frontend")
	}
	c.echo("after")
}

// SoftStop closes the listeners at once, then waits for the stream in
// flight, which gets its whole response (with a close, the process
// stopping), before it returns.
func TestListenSoftStopFinishesStream(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	o := newUnitOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		w.Write([]byte("finished"))
	})
	proc := unitProc(t, unitHTTPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    server s1 `+o.addr+`
`)
	addr := unitFE(t, proc, "fe")
	c := dialUnit(t, addr)
	c.send("GET /slow HTTP/1.1\r\nHost: unit\r\n\r\n")
	waitDone(t, "the request to reach the origin", entered)

	stopped := make(chan struct{})
	go func() { proc.SoftStop(0); close(stopped) }()
	waitFor(t, "the listeners to close", func() bool { return len(proc.Listeners(proc.Conf.FindProxy("fe", core.CapFE))) == 0 })
	if !refused(addr) {
		t.Error("a soft-stopping process still accepts connections")
	}
	select {
	case <-stopped:
		t.Fatal("SoftStop returned while a stream was in flight")
	default:
	}
	close(release)
	r, body := c.read("GET")
	if r.StatusCode != 200 || body != "finished" {
		t.Fatalf("stream in flight got %d %q, want 200 \"finished\"", r.StatusCode, body)
	}
	if !r.Close {
		t.Error("the last response of a stopping process does not announce the close")
	}
	if err := c.closed(); err != nil {
		t.Errorf("client connection after the last response: %v", err)
	}
	waitDone(t, "SoftStop to return", stopped)
}

// Stop closes every listener and ends every accept loop, whether it waits
// in accept(2) or for a connection slot, and closes the idle keep-alive
// connections parked meanwhile.
func TestListenStopEndsAcceptLoops(t *testing.T) {
	o := newUnitOrigin(t, okHandler)
	proc := unitProc(t, unitTCPConf+`
frontend full
    bind @BIND@
    maxconn 1
    default_backend echo
frontend open
    bind @BIND@
    bind @BIND@
    default_backend echo
frontend web
    mode http
    bind @BIND@
    default_backend web
backend echo
    server s1 `+unitEcho(t)+`
backend web
    mode http
    server s1 `+o.addr+`
`)
	if proc.idle == nil {
		t.Skip("no epoll: nothing parks")
	}
	full, open := unitFE(t, proc, "full"), unitFE(t, proc, "open")
	dialUnit(t, full).echo("full")
	dialUnit(t, open).echo("open")
	// "full" is then full, and its accept loop waits for a slot once a
	// second client has come (the first may leave it in accept(2), see
	// TestListenMaxConnHoldsAccepts); "open"'s loops wait in accept(2).
	// The second client may be served or held: it is not checked.
	dialUnit(t, full).send("more")
	idle := dialUnit(t, unitFE(t, proc, "web"))
	if r, _ := idle.get("/"); r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	waitFor(t, "the idle HTTP client to be parked", func() bool { return parkedCount(proc.idle) == 1 })
	proc.Stop()
	waitDone(t, "every accept loop to end", acceptLoopsDone(proc))
	for _, fe := range []string{"full", "open", "web"} {
		if ls := proc.Listeners(proc.Conf.FindProxy(fe, core.CapFE)); len(ls) != 0 {
			t.Errorf("frontend %s still listens on %v", fe, ls)
		}
	}
	if !refused(open) {
		t.Error("a stopped process still accepts connections")
	}
	if err := idle.closed(); err != nil {
		t.Errorf("parked client after Stop: %v", err)
	}
}
