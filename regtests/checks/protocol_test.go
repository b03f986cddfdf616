package checks

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHTTPCheckExpectStatus: option httpchk with `http-check expect status
// 200` marks a server answering 503 DOWN (L7STS 503) and UP again once it
// answers 200.
func TestHTTPCheckExpectStatus(t *testing.T) {
	evs, views := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		s1.code.Store(503)
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    option httpchk GET /health
    http-check expect status 200
    server s1 %s check inter 200 rise 2 fall 1
    server s2 %s check inter 200 rise 2 fall 1
`, s1.addr, s2.addr))
		down := r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("Server be/s1 is DOWN", time.Second)
		if m := r.hits(6); m["s2"] != 6 {
			t.Errorf("%s: s1 down, traffic %v", pr.name, m)
		}
		s1.code.Store(200)
		up := r.waitStatus("be", "s1", "UP", 3*time.Second)
		r.waitEvent("Server be/s1 is UP", time.Second)
		if want := `stat="DOWN"/"L7STS"/"503"`; !strings.HasPrefix(down.String(), want) {
			t.Errorf("%s: down: %v, want %s", pr.name, down, want)
		}
		if want := `stat="UP"/"L7OK"/"200"`; !strings.HasPrefix(up.String(), want) {
			t.Errorf("%s: up: %v, want %s", pr.name, up, want)
		}
		ev := strings.Join(r.events(), "\n")
		for _, want := range []string{
			`Server be/s1 is DOWN, reason: Layer7 wrong status, code: 503, info: "Service Unavailable", check duration: Xms. 1 active and 0 backup servers left.`,
			`Server be/s1 is UP, reason: Layer7 check passed, code: 200, check duration: Xms. 2 active and 0 backup servers online.`,
		} {
			if !strings.Contains(ev, want) {
				t.Errorf("%s: missing state line %q in\n%s", pr.name, want, ev)
			}
		}
		evs[pr.name], views[pr.name] = ev, down.String()+" / "+up.String()
		r.p.Stop()
	}
	compare(t, "state lines", evs)
	compare(t, "views", views)
}

// TestTCPCheckSendExpect: a tcp-check ruleset against a small TCP
// responder: PONG passes, anything else fails with L7RSP.
func TestTCPCheckSendExpect(t *testing.T) {
	evs, views := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		resp := newResponder(t, always("PONG\r\n"))
		r := start(t, pr, fmt.Sprintf(`
backend be
    mode tcp
    option tcp-check
    tcp-check send PING\r\n
    tcp-check expect string PONG
    server s1 %s check inter 200 rise 1 fall 1
`, resp.addr))
		up := r.waitView("be", "s1", 3*time.Second, "L7OK", func(v view) bool { return v.CheckStatus == "L7OK" })
		resp.set(always("PANG\r\n"))
		down := r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("Server be/s1 is DOWN", time.Second)
		info := r.stat("be", "s1")["last_chk"]
		if want := "TCPCHK did not match content 'PONG' at step 2"; info != want {
			t.Errorf("%s: last_chk %q, want %q", pr.name, info, want)
		}
		if want := `stat="UP"/"L7OK"/"0"`; !strings.HasPrefix(up.String(), want) {
			t.Errorf("%s: up: %v, want %s", pr.name, up, want)
		}
		if want := `stat="DOWN"/"L7RSP"/""`; !strings.HasPrefix(down.String(), want) {
			t.Errorf("%s: down: %v, want %s", pr.name, down, want)
		}
		evs[pr.name], views[pr.name] = strings.Join(r.events(), "\n"), up.String()+" / "+down.String()+" / "+info
		r.p.Stop()
	}
	compare(t, "state lines", evs)
	compare(t, "views", views)
}

// TestRedisCheck: option redis-check against a real redis-server, stopped
// by its PID.
func TestRedisCheck(t *testing.T) {
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	evs, views := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		addr := freeAddr(t)
		cmd := exec.Command(redis, "--port", port(addr), "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir(), "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		stop := func() {
			select {
			case <-done:
				return
			default:
			}
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		}
		t.Cleanup(stop)
		waitDial(t, addr)
		r := start(t, pr, fmt.Sprintf(`
backend be
    mode tcp
    option redis-check
    server s1 %s check inter 200 rise 1 fall 1
`, addr))
		up := r.waitView("be", "s1", 3*time.Second, "L7OK", func(v view) bool { return v.CheckStatus == "L7OK" })
		if info := r.stat("be", "s1")["last_chk"]; info != "Redis server is ok" {
			t.Errorf("%s: last_chk %q", pr.name, info)
		}
		stop()
		down := r.waitStatus("be", "s1", "DOWN", 3*time.Second)
		r.waitEvent("Server be/s1 is DOWN", time.Second)
		if want := `stat="DOWN"/"L4CON"/""`; !strings.HasPrefix(down.String(), want) {
			t.Errorf("%s: down: %v, want %s", pr.name, down, want)
		}
		evs[pr.name], views[pr.name] = strings.Join(r.events(), "\n"), up.String()+" / "+down.String()
		r.p.Stop()
	}
	compare(t, "state lines", evs)
	compare(t, "views", views)
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitDial(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never accepted: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDisableOn404: with http-check disable-on-404, a running server
// answering 404 goes NOLB (stopping, L7OKC) and gets no new traffic; a
// 200 brings it back.
func TestDisableOn404(t *testing.T) {
	evs, views := map[string]string{}, map[string]string{}
	for _, pr := range proxies(t) {
		s1 := newSwitchable(t, "s1")
		s2 := newSwitchable(t, "s2")
		r := start(t, pr, fmt.Sprintf(`
frontend fe
    bind "fd@${fe}"
    default_backend be
backend be
    option httpchk GET /health
    http-check disable-on-404
    server s1 %s check inter 200 rise 1 fall 1
    server s2 %s check inter 200 rise 1 fall 1
`, s1.addr, s2.addr))
		r.waitView("be", "s1", 3*time.Second, "a first check", func(v view) bool { return v.CheckStatus == "L7OK" })
		s1.code.Store(404)
		nolb := r.waitStatus("be", "s1", "NOLB", 3*time.Second)
		r.waitEvent("Server be/s1 is stopping", time.Second)
		if m := r.hits(6); m["s2"] != 6 {
			t.Errorf("%s: s1 NOLB, traffic %v", pr.name, m)
		}
		s1.code.Store(200)
		up := r.waitStatus("be", "s1", "UP", 3*time.Second)
		r.waitEvent("Server be/s1 is UP", time.Second)
		if want := `stat="NOLB"/"L7OKC"/"404"`; !strings.HasPrefix(nolb.String(), want) {
			t.Errorf("%s: nolb: %v, want %s", pr.name, nolb, want)
		}
		evs[pr.name], views[pr.name] = strings.Join(r.events(), "\n"), nolb.String()+" / "+up.String()
		r.p.Stop()
	}
	compare(t, "state lines", evs)
	compare(t, "views", views)
}
