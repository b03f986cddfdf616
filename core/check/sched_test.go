package check

import (
	"bufio"
	"context"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func waitReport(t *testing.T, ch chan Report, ok func(Report) bool) Report {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case r := <-ch:
			if ok(r) {
				return r
			}
		case <-deadline:
			t.Fatal("no matching report")
		}
	}
}

// settleGoroutines waits until the goroutine count drops back to base.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if runtime.NumGoroutine() <= base {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	n := runtime.Stack(buf, true)
	t.Fatalf("goroutines: %d > %d\n%s", runtime.NumGoroutine(), base, buf[:n])
}

func TestSchedulerRunTime(t *testing.T) {
	base := runtime.NumGoroutine()
	up := newResponder(t, func(c net.Conn) {})
	other := newResponder(t, func(c net.Conn) {})
	rec := &recorder{reports: make(chan Report, 100)}
	s := NewServer(ServerConfig{Backend: "be", Name: "s1", Addr: "127.0.0.1", Port: up.port(),
		Health: &Settings{Inter: 30 * time.Millisecond, Rise: 1, Fall: 1}}, rec)
	sc := NewScheduler(10, 0)
	if err := sc.Start([]*Server{s}); err != nil {
		t.Fatal(err)
	}
	waitReport(t, rec.reports, func(r Report) bool { return r.Outcome.Status == StatusL4OK })

	// Point the check at a closed port: the server goes down.
	s.Health.SetPort(closedPort(t))
	waitReport(t, rec.reports, func(r Report) bool { return r.Verdict == VerdictDown })
	// check-port back to a live one.
	s.Health.SetPort(other.port())
	waitReport(t, rec.reports, func(r Report) bool { return r.Verdict == VerdictUp })

	// disable health: no probe runs any more. The port changes with it,
	// so that a probe that was already running, whose report may come
	// any time later, is told apart (L4OK) from one that ran while
	// disabled (L4CON).
	s.Health.Disable()
	s.Health.SetPort(closedPort(t))
	for s.Health.Snapshot().State&StInProgress != 0 {
		time.Sleep(5 * time.Millisecond)
	}
	// Four intervals without a probe.
	quiet := time.After(120 * time.Millisecond)
	for waiting := true; waiting; {
		select {
		case r := <-rec.reports:
			if r.Outcome.Status != StatusL4OK {
				t.Fatalf("a probe ran while disabled: %+v", r.Outcome)
			}
		case <-quiet:
			waiting = false
		}
	}
	s.Health.Enable()
	waitReport(t, rec.reports, func(r Report) bool { return r.Outcome.Status == StatusL4Con })
	s.Health.SetPort(other.port())
	waitReport(t, rec.reports, func(r Report) bool { return r.Outcome.Status == StatusL4OK })

	// server address change (set server addr) applies to the next probe.
	s.Health.SetPort(0)
	s.SetAddr("127.0.0.1", closedPort(t))
	waitReport(t, rec.reports, func(r Report) bool { return r.Outcome.Status == StatusL4Con })

	sc.Stop()
	if err := sc.Add(s); err != ErrStopped {
		t.Fatalf("Add after Stop: %v", err)
	}
	up.close()
	other.close()
	settleGoroutines(t, base)
}

type agentRec struct {
	recorder
	applied chan AgentReply
}

func (a *agentRec) ApplyAgent(srv *Server, r *AgentReply) string {
	a.applied <- *r
	if r.Weight == "300%" {
		return "Relative weight must be positive."
	}
	return ""
}

func TestSchedulerAgent(t *testing.T) {
	var mu sync.Mutex
	reply := "up 300%\n"
	got := make(chan string, 100)
	agent := newResponder(t, func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- line
		mu.Lock()
		io.WriteString(c, reply)
		mu.Unlock()
	})
	rec := &agentRec{recorder: recorder{reports: make(chan Report, 100)}, applied: make(chan AgentReply, 100)}
	s := NewServer(ServerConfig{Backend: "be", Name: "a1", Addr: "127.0.0.1", Port: 1,
		Agent: &Settings{Inter: 30 * time.Millisecond, Port: agent.port(), AgentSend: "hello\n"}}, rec)
	sc := NewScheduler(0, 0)
	sc.Start([]*Server{s})
	defer sc.Stop()
	r := waitReport(t, rec.reports, func(r Report) bool { return r.Agent })
	if r.Outcome.Desc != "via agent : up (Relative weight must be positive.)" || r.Outcome.Status != StatusL7OK {
		t.Fatalf("%+v", r.Outcome)
	}
	if a := <-rec.applied; a.Weight != "300%" || a.Health != "up" {
		t.Fatalf("%+v", a)
	}
	if l := <-got; l != "hello\n" {
		t.Fatalf("agent got %q", l)
	}
	s.Agent.SetAgentSend("bye\n")
	mu.Lock()
	reply = "down #maintenance\n"
	mu.Unlock()
	waitReport(t, rec.reports, func(r Report) bool {
		return r.Verdict == VerdictDown && r.Outcome.Desc == "via agent : down (maintenance)"
	})
	for l := range got {
		if l == "bye\n" {
			break
		}
	}
}

// A probe slower than inter never overlaps the next one.
func TestOneProbeInFlight(t *testing.T) {
	var cur, max atomic.Int32
	slow := newResponder(t, func(c net.Conn) {
		n := cur.Add(1)
		for {
			m := max.Load()
			if n <= m || max.CompareAndSwap(m, n) {
				break
			}
		}
		io.Copy(io.Discard, c)
		cur.Add(-1)
	})
	rec := &recorder{reports: make(chan Report, 100)}
	rules := backendRules(t, w("option", "tcp-check"), w("tcp-check", "send", "x"), w("tcp-check", "expect", "string", "y"))
	s := NewServer(ServerConfig{Addr: "127.0.0.1", Port: slow.port(), Timeouts: Timeouts{Check: 80 * time.Millisecond},
		Health: &Settings{Rules: rules, Inter: 5 * time.Millisecond}}, rec)
	sc := NewScheduler(0, 0)
	sc.Start([]*Server{s})
	for i := 0; i < 3; i++ {
		r := waitReport(t, rec.reports, func(Report) bool { return true })
		if r.Outcome.Status != StatusL7TOut {
			t.Fatalf("%+v", r.Outcome)
		}
	}
	sc.Stop()
	if m := max.Load(); m != 1 {
		t.Fatalf("%d probes in flight at once", m)
	}
}

func TestSpreadStart(t *testing.T) {
	var servers []*Server
	for i := 0; i < 100; i++ {
		servers = append(servers, NewServer(ServerConfig{Addr: "127.0.0.1", Port: 1,
			Health: &Settings{Inter: time.Hour}}, nil))
	}
	// Short checks do not set the spread window.
	servers = append(servers, NewServer(ServerConfig{Addr: "127.0.0.1", Port: 1, Health: &Settings{Inter: 10 * time.Millisecond}}, nil))
	sc := NewScheduler(0, 10*time.Second)
	first := sc.firstOffsets(servers)
	seen := map[time.Duration]bool{}
	for _, s := range servers[:100] {
		d := first[s.Health]
		if d < 0 || d >= 10*time.Second {
			t.Fatalf("first probe after %v, beyond max-spread-checks", d)
		}
		seen[d] = true
	}
	if len(seen) != 100 {
		t.Fatalf("first probes not spread: %d distinct offsets", len(seen))
	}
	// i-th of n starts after window*i/n.
	if d := first[servers[50].Health]; d != 10*time.Second*50/101 {
		t.Fatalf("offset %v", d)
	}
	if sc.jitter(time.Second) != time.Second {
		t.Fatal("jitter without spread-checks")
	}
	sc2 := NewScheduler(50, 0)
	for i := 0; i < 100; i++ {
		if d := sc2.jitter(time.Second); d < 500*time.Millisecond || d > 1500*time.Millisecond {
			t.Fatalf("jitter %v", d)
		}
	}
}

func TestNoLeakBadPeers(t *testing.T) {
	base := runtime.NumGoroutine()
	peers := []*responder{
		newResponder(t, func(c net.Conn) { io.Copy(io.Discard, c) }),
		newResponder(t, func(c net.Conn) { io.WriteString(c, "\xff\xfe garbage\r\n") }),
		newResponder(t, func(c net.Conn) { readSome(c); c.(*net.TCPConn).SetLinger(0) }),
	}
	rulesets := []*Rules{
		backendRules(t, w("option", "httpchk")),
		backendRules(t, w("option", "redis-check")),
		backendRules(t, w("option", "mysql-check", "user", "u")),
		backendRules(t, w("option", "ldap-check")),
		backendRules(t, w("option", "smtpchk")),
		AgentRules("x\n"),
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for _, p := range peers {
		for _, r := range rulesets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := Run(ctx, r, p.target(), Timeouts{Inter: 100 * time.Millisecond})
				if o.Result() != ResultFailed && o.Status != StatusChecked {
					t.Errorf("bad peer passed: %+v", o)
				}
			}()
		}
	}
	wg.Wait()
	// Cancelling a probe stuck on a silent peer ends it at once.
	done := make(chan Outcome)
	go func() { done <- Run(ctx, rulesets[0], peers[0].target(), Timeouts{Inter: time.Hour}) }()
	time.Sleep(30 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("cancelled probe still running")
	}
	for _, p := range peers {
		p.close()
	}
	settleGoroutines(t, base)
}

// The agent's reply and the verdict are applied before the probe's
// connection closes, as in HAProxy: an agent that sees the close can rely
// on the new state (HAProxy's agent-check reg-test does).
func TestAgentAppliedBeforeClose(t *testing.T) {
	closed := make(chan struct{})
	agent := newResponder(t, func(c net.Conn) {
		io.WriteString(c, "75%,maint,down\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c)
		close(closed)
	})
	rec := &closeWatcher{agentRec: agentRec{recorder: recorder{reports: make(chan Report, 100)}, applied: make(chan AgentReply, 100)}, closed: closed}
	s := NewServer(ServerConfig{Backend: "be", Name: "a1", Addr: "127.0.0.1", Port: 1,
		Agent: &Settings{Inter: time.Hour, Port: agent.port()}}, rec)
	sc := NewScheduler(0, 0)
	sc.Start([]*Server{s})
	defer sc.Stop()
	r := waitReport(t, rec.reports, func(r Report) bool { return r.Agent })
	if rec.sawClose {
		t.Fatal("the agent saw the connection close before the verdict was reported")
	}
	if r.Verdict != VerdictDown {
		t.Fatalf("%+v", r)
	}
	if a := <-rec.applied; a.Weight != "75%" || a.Admin != "maint" {
		t.Fatalf("%+v", a)
	}
}

// closeWatcher is an agent reporter that, when the verdict comes, watches
// for a while whether the agent has already seen its connection close.
type closeWatcher struct {
	agentRec
	closed   chan struct{}
	sawClose bool
}

func (w *closeWatcher) CheckResult(r Report) {
	select {
	case <-w.closed:
		w.sawClose = true
	case <-time.After(300 * time.Millisecond):
	}
	w.agentRec.CheckResult(r)
}
