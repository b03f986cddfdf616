package stream

import (
	"context"
	"errors"
	"goha/core"
	"net/http"
	"strconv"
	"testing"
	"time"

	"goha/core/lb"
)

// unitBackend returns the process's view of backend name.
func unitBackend(t *testing.T, proc *Process, name string) *proxy {
	t.Helper()
	p := proc.proxyOf(proc.Conf.FindProxy(name, core.CapBE))
	if p == nil || p.rt == nil {
		t.Fatalf("backend %s is not running", name)
	}
	return p
}

// pickCounts picks n times, releasing each slot at once, and counts the
// picks per server name.
func pickCounts(t *testing.T, be *proxy, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := 0; i < n; i++ {
		s, _, err := be.pick(context.Background(), lb.Key{}, nil)
		if err != nil {
			t.Fatalf("pick %d: %v", i, err)
		}
		got[s.Name]++
		s.releaseSlot()
	}
	return got
}

// queuedPick is the outcome of a pick made on another goroutine.
type queuedPick struct {
	s   *server
	err error
}

func pickAsync(ctx context.Context, be *proxy) <-chan queuedPick {
	ch := make(chan queuedPick, 1)
	go func() {
		s, _, err := be.pick(ctx, lb.Key{}, nil)
		ch <- queuedPick{s, err}
	}()
	return ch
}

// Round robin over weights 1 and 3 gives each server its share of every
// cycle of picks, and the requests through the proxy follow the picks.
func TestBackendRoundRobinWeights(t *testing.T) {
	o1 := newUnitOrigin(t, okHandler)
	o2 := newUnitOrigin(t, okHandler)
	proc := unitProc(t, unitHTTPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    balance roundrobin
    server s1 `+o1.addr+` weight 1
    server s2 `+o2.addr+` weight 3
`)
	be := unitBackend(t, proc, "be")
	if got := pickCounts(t, be, 400); got["s1"] != 100 || got["s2"] != 300 {
		t.Errorf("400 picks gave %v, want s1:100 s2:300", got)
	}
	c := dialUnit(t, unitFE(t, proc, "fe"))
	for i := 0; i < 40; i++ {
		if r, _ := c.get("/" + strconv.Itoa(i)); r.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i, r.StatusCode)
		}
	}
	if n1, n2 := o1.reqs.Load(), o2.reqs.Load(); n1 != 10 || n2 != 30 {
		t.Errorf("40 requests reached the origins %d:%d, want 10:30", n1, n2)
	}
}

// A server at its maxconn takes no more streams: the next ones queue in
// the backend, in order, and each slot released lets one in.
func TestBackendServerMaxConnQueues(t *testing.T) {
	proc := unitProc(t, unitHTTPConf+`
backend be
    timeout queue 1h
    server s1 127.0.0.1:1 maxconn 1
`)
	be := unitBackend(t, proc, "be")
	s1, _, err := be.pick(context.Background(), lb.Key{}, nil)
	if err != nil || s1.Name != "s1" {
		t.Fatalf("first pick: %v, %v", s1, err)
	}
	if s1.TakeSlot() {
		t.Fatal("a server at maxconn 1 gave a second slot")
	}
	// nwait, not Qcur: a stream counts in Qcur before it takes its
	// place in the queue, and the order of places is what is checked.
	first := pickAsync(context.Background(), be)
	waitFor(t, "the first stream to queue", func() bool { return be.rt.nwait.Load() == 1 })
	second := pickAsync(context.Background(), be)
	waitFor(t, "the second stream to queue", func() bool { return be.rt.nwait.Load() == 2 })
	// Both wait for the one slot, which s1's first stream holds.
	select {
	case r := <-first:
		t.Fatalf("a queued stream got %v, %v while the server was full", r.s, r.err)
	case r := <-second:
		t.Fatalf("a queued stream got %v, %v while the server was full", r.s, r.err)
	default:
	}
	s1.releaseSlot()
	var r queuedPick
	select {
	case r = <-first:
	case r = <-second:
		t.Fatal("the stream queued second was let in first")
	case <-time.After(unitWait):
		t.Fatal("a released slot woke no queued stream")
	}
	if r.err != nil || r.s != s1 {
		t.Fatalf("first queued stream got %v, %v", r.s, r.err)
	}
	if q := be.BE.Qcur.Load(); q != 1 {
		t.Errorf("queue length %d after one stream left it, want 1", q)
	}
	r.s.releaseSlot()
	select {
	case r = <-second:
	case <-time.After(unitWait):
		t.Fatal("the second queued stream was never let in")
	}
	if r.err != nil || r.s != s1 {
		t.Fatalf("second queued stream got %v, %v", r.s, r.err)
	}
	r.s.releaseSlot()
	if q, m := be.BE.Qcur.Load(), be.BE.Qmax.Load(); q != 0 || m != 2 {
		t.Errorf("queue current/max = %d/%d, want 0/2", q, m)
	}
}

// A queued stream whose client goes away leaves the queue; one that waits
// past timeout queue gives up with errQueueTimeout.
func TestBackendQueueCancelAndTimeout(t *testing.T) {
	proc := unitProc(t, unitHTTPConf+`
backend be
    timeout queue 20ms
    server s1 127.0.0.1:1 maxconn 1
`)
	be := unitBackend(t, proc, "be")
	s1, _, err := be.pick(context.Background(), lb.Key{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.releaseSlot()
	if r := <-pickAsync(context.Background(), be); !errors.Is(r.err, errQueueTimeout) {
		t.Errorf("a stream queued past timeout queue got %v, %v; want errQueueTimeout", r.s, r.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := pickAsync(ctx, be)
	waitFor(t, "the stream to queue", func() bool { return be.BE.Qcur.Load() == 1 })
	cancel()
	if r := <-ch; !errors.Is(r.err, context.Canceled) {
		t.Errorf("a cancelled queued stream got %v, %v", r.s, r.err)
	}
	be.rt.qmu.Lock()
	left := len(be.rt.waiters)
	be.rt.qmu.Unlock()
	if left != 0 || be.BE.Qcur.Load() != 0 || be.rt.nwait.Load() != 0 {
		t.Errorf("the queue keeps %d waiters (Qcur %d, nwait %d) after they left", left, be.BE.Qcur.Load(), be.rt.nwait.Load())
	}
}

// Through the proxy: with the origin's one slot busy, a second client's
// request waits in the queue and is served once the first ends.
func TestBackendMaxConnQueuesRequests(t *testing.T) {
	entered := make(chan string, 2)
	release := make(chan struct{})
	o := newUnitOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		entered <- r.URL.Path
		if r.URL.Path == "/slow" {
			<-release
		}
		w.Write([]byte(r.URL.Path))
	})
	proc := unitProc(t, unitHTTPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    timeout queue 1h
    server s1 `+o.addr+` maxconn 1
`)
	addr := unitFE(t, proc, "fe")
	be := unitBackend(t, proc, "be")
	c1, c2 := dialUnit(t, addr), dialUnit(t, addr)
	c1.send("GET /slow HTTP/1.1\r\nHost: unit\r\n\r\n")
	if p := <-entered; p != "/slow" {
		t.Fatalf("origin got %s first", p)
	}
	c2.send("GET /next HTTP/1.1\r\nHost: unit\r\n\r\n")
	waitFor(t, "the second request to queue", func() bool { return be.BE.Qcur.Load() == 1 })
	select {
	case p := <-entered:
		t.Fatalf("origin got %s while its one slot was busy", p)
	default:
	}
	close(release)
	for i, c := range []*unitClient{c1, c2} {
		if r, _ := c.read("GET"); r.StatusCode != 200 {
			t.Fatalf("client %d: status %d", i+1, r.StatusCode)
		}
	}
	if m := be.BE.Qmax.Load(); m != 1 {
		t.Errorf("queue max %d, want 1", m)
	}
}

// A server in maintenance is never picked; back to ready, it is again.
// With every server in maintenance, picking fails at once.
func TestBackendMaintNeverPicked(t *testing.T) {
	proc := unitProc(t, unitHTTPConf+`
backend be
    balance roundrobin
    server s1 127.0.0.1:1
    server s2 127.0.0.1:1
`)
	be := unitBackend(t, proc, "be")
	s1 := be.FindServer("s1")
	s1.SetMaint()
	if got := pickCounts(t, be, 50); got["s1"] != 0 || got["s2"] != 50 {
		t.Errorf("with s1 in maintenance, picks gave %v", got)
	}
	s1.SetReady()
	if got := pickCounts(t, be, 50); got["s1"] != 25 || got["s2"] != 25 {
		t.Errorf("with s1 ready again, picks gave %v, want 25 each", got)
	}
	s1.SetMaint()
	be.FindServer("s2").SetMaint()
	if s, _, err := be.pick(context.Background(), lb.Key{}, nil); !errors.Is(err, errNoServer) {
		t.Errorf("with every server in maintenance, pick gave %v, %v; want errNoServer", s, err)
	}
}

// add server reaches the picker (in maintenance until made ready, then
// serving), and del server takes the server out of it.
func TestBackendAddDelServer(t *testing.T) {
	o1 := newUnitOrigin(t, okHandler)
	o3 := newUnitOrigin(t, okHandler)
	proc := unitProc(t, unitHTTPConf+`
frontend fe
    bind @BIND@
    default_backend be
backend be
    balance roundrobin
    server s1 `+o1.addr+`
`)
	be := unitBackend(t, proc, "be")
	s3, errs := be.AddServer(proc.Conf, "s3", o3.addr, nil)
	if len(errs) != 0 {
		t.Fatalf("add server: %v", errs)
	}
	if be.rt.find(s3) == nil {
		t.Fatal("an added server is not in the backend's picker table")
	}
	if got := pickCounts(t, be, 20); got["s3"] != 0 {
		t.Errorf("a server added in maintenance was picked: %v", got)
	}
	s3.SetReady()
	if got := pickCounts(t, be, 20); got["s1"] != 10 || got["s3"] != 10 {
		t.Errorf("with s3 ready, picks gave %v, want 10 each", got)
	}
	c := dialUnit(t, unitFE(t, proc, "fe"))
	for i := 0; i < 4; i++ {
		if r, _ := c.get("/"); r.StatusCode != 200 {
			t.Fatalf("status %d", r.StatusCode)
		}
	}
	if n := o3.reqs.Load(); n != 2 {
		t.Errorf("the added server served %d of 4 requests, want 2", n)
	}

	s3.SetMaint()
	// The client has its response before the stream gives its slot back.
	waitFor(t, "the streams on s3 to end", func() bool { return s3.Served() == 0 })
	// A server with a stream on it cannot leave.
	if !be.rt.find(s3).TakeSlot() {
		t.Fatal("no slot on s3")
	}
	if err := be.DelServer(s3); !errors.Is(err, core.ErrServerBusy) {
		t.Errorf("del server with a stream on it: %v, want ErrServerBusy", err)
	}
	be.rt.find(s3).releaseSlot()
	if err := be.DelServer(s3); err != nil {
		t.Fatalf("del server: %v", err)
	}
	if be.rt.find(s3) != nil {
		t.Error("a deleted server is still in the picker table")
	}
	for _, s := range be.rt.servers() {
		if s.Server == s3 {
			t.Error("a deleted server is still listed")
		}
	}
	if got := pickCounts(t, be, 20); got["s1"] != 20 {
		t.Errorf("after del server, picks gave %v, want s1 only", got)
	}
	before := o3.reqs.Load()
	for i := 0; i < 4; i++ {
		if r, _ := c.get("/"); r.StatusCode != 200 {
			t.Fatalf("after del server: status %d", r.StatusCode)
		}
	}
	if n := o3.reqs.Load() - before; n != 0 {
		t.Errorf("a deleted server served %d requests", n)
	}
}
