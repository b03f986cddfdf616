package core

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"goha/core/config"
	"goha/core/diag"
)

func adminConf(t *testing.T) *Config {
	t.Helper()
	pos := diag.Pos{File: "t.cfg", Line: 1}
	ln := func(w ...string) config.Line { return config.Line{Pos: pos, Words: w} }
	secs := []config.Section{
		{Kind: "global", Pos: pos},
		{Kind: "backend", Name: "rr", Pos: pos, Lines: []config.Line{
			ln("balance", "roundrobin"),
			ln("server", "a", "127.0.0.1:1", "check"),
			ln("server", "b", "127.0.0.1:2", "weight", "50"),
			ln("server", "c", "127.0.0.1:3", "disabled"),
			ln("server", "t", "127.0.0.1:4", "track", "a"),
		}},
		{Kind: "backend", Name: "st", Pos: pos, Lines: []config.Line{
			ln("balance", "static-rr"),
			ln("server", "x", "127.0.0.1:5", "weight", "20"),
		}},
		{Kind: "backend", Name: "src", Pos: pos, Lines: []config.Line{
			ln("balance", "source"),
			ln("hash-type", "consistent"),
			ln("server", "y", "127.0.0.1:6"),
		}},
	}
	d := &diag.Collector{}
	c := Build(secs, d)
	if d.HasAlert() {
		t.Fatalf("%v", d.All())
	}
	return c
}

// serverObserver observes server changes only.
type serverObserver func(s *Server, ev ServerEvent)

func (f serverObserver) ServerChanged(s *Server, ev ServerEvent) { f(s, ev) }
func (serverObserver) ProxyChanged(*Proxy, ProxyEvent)           {}

type hookLog struct{ evs []ServerEvent }

func (h *hookLog) record(s *Server, ev ServerEvent) { h.evs = append(h.evs, ev) }

func TestStateTransitions(t *testing.T) {
	c := adminConf(t)
	var log hookLog
	var usableAtHook []bool
	c.SetObserver(serverObserver(func(s *Server, ev ServerEvent) {
		if s.Proxy.Name == "rr" && s.Name == "a" {
			log.record(s, ev)
			usableAtHook = append(usableAtHook, s.LBUsable())
		}
	}))
	_, a := c.FindServerRef("rr", "a")
	if a.CheckState.Load() != ChkStConfigured|ChkStEnabled || a.Health.Load() != 2 {
		t.Fatalf("initial check state %d health %d", a.CheckState.Load(), a.Health.Load())
	}
	a.SetMaint()
	if a.OpState() != OpStopped || a.AdminState() != AdminFMaint || a.CheckState.Load()&ChkStPaused == 0 || a.Health.Load() != 0 {
		t.Errorf("maint: op %d admin %d check %d health %d", a.OpState(), a.AdminState(), a.CheckState.Load(), a.Health.Load())
	}
	a.SetDrain()
	if a.OpState() != OpRunning || a.AdminState() != AdminFDrain || a.LBUsable() || a.Health.Load() != 2 {
		t.Errorf("drain: op %d admin %d usable %v", a.OpState(), a.AdminState(), a.LBUsable())
	}
	a.SetReady()
	if a.AdminState() != 0 || !a.LBUsable() {
		t.Errorf("ready: admin %d", a.AdminState())
	}
	// Hooks ran after each change, and saw it.
	// maint: 1 change; drain: set drain, leave maint; ready: leave drain.
	if len(log.evs) != 4 || usableAtHook[0] || usableAtHook[1] || usableAtHook[2] || !usableAtHook[3] {
		t.Errorf("hooks %v usable %v", log.evs, usableAtHook)
	}
	a.SetHealth(HealthDown)
	if a.OpState() != OpStopped || a.Health.Load() != 0 {
		t.Errorf("health down")
	}
	a.SetHealth(HealthStopping)
	if a.OpState() != OpStopping || a.Health.Load() != 4 {
		t.Errorf("health stopping: op %d health %d", a.OpState(), a.Health.Load())
	}
	a.SetHealth(HealthUp)
	if a.OpState() != OpRunning || a.Health.Load() != 4 {
		t.Errorf("health up")
	}
	_, tr := c.FindServerRef("rr", "t")
	if err := tr.SetHealth(HealthDown); !errors.Is(err, ErrTrackingServer) {
		t.Errorf("tracking: %v", err)
	}
	// `disabled` in the configuration: ready keeps CMAINT but serves.
	_, cs := c.FindServerRef("rr", "c")
	if cs.AdminState() != AdminFMaint|AdminCMaint || cs.LBUsable() {
		t.Fatalf("disabled server admin %d", cs.AdminState())
	}
	cs.SetReady()
	if cs.AdminState() != AdminCMaint || !cs.LBUsable() || cs.CheckState.Load() != ChkStPaused {
		t.Errorf("ready disabled server: admin %d usable %v check %d", cs.AdminState(), cs.LBUsable(), cs.CheckState.Load())
	}
}

func TestBackendUpDown(t *testing.T) {
	c := adminConf(t)
	p := c.FindProxy("rr", CapBE)
	for _, s := range p.ServerList() {
		s.SetMaint()
	}
	up, _, downs, _ := p.BackendState()
	if up || downs != 1 {
		t.Errorf("all in maint: up %v downs %d", up, downs)
	}
	_, b := c.FindServerRef("rr", "b")
	b.SetReady()
	if up, _, _, _ := p.BackendState(); !up {
		t.Errorf("one ready: still down")
	}
}

func TestParseWeight(t *testing.T) {
	c := adminConf(t)
	_, b := c.FindServerRef("rr", "b") // iweight 50, dynamic algorithm
	_, x := c.FindServerRef("st", "x") // iweight 20, static-rr
	_, y := c.FindServerRef("src", "y")
	for _, tc := range []struct {
		s    *Server
		in   string
		want int
		err  error
	}{
		{b, "10", 10, nil}, {b, "0", 0, nil}, {b, "256", 256, nil}, {b, "257", 0, ErrWeightRange},
		{b, "-1", 0, ErrWeightRange}, {b, "50%", 25, nil}, {b, "600%", 256, nil}, {b, "99999999999%", 256, nil},
		{b, "-5%", 0, ErrWeightNegative}, {b, "", 0, ErrWeightMissing}, {b, "x", 0, ErrWeightEmpty},
		{b, "10x", 0, ErrWeightTrailing}, {b, "300x", 0, ErrWeightRange}, {b, "1.5", 0, ErrWeightTrailing},
		{b, " 7", 7, nil}, {b, "+7", 7, nil}, {b, "5%x", 0, ErrWeightTrailing},
		{x, "100%", 20, nil}, {x, "0%", 0, nil}, {x, "20", 20, nil}, {x, "0", 0, nil},
		{x, "50%", 0, ErrStaticWeight}, {x, "21", 0, ErrStaticWeight},
		{y, "3", 3, nil}, // consistent hashing is dynamic
	} {
		w, err := tc.s.ParseWeight(tc.in)
		if w != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s %q: got %d, %v; want %d, %v", tc.s.Name, tc.in, w, err, tc.want, tc.err)
		}
	}
}

func TestAddDelServer(t *testing.T) {
	c := adminConf(t)
	rr := c.FindProxy("rr", CapBE)
	var added, deleted *Server
	c.SetObserver(serverObserver(func(s *Server, ev ServerEvent) {
		switch ev {
		case SrvEvAdded:
			added = s
		case SrvEvDeleted:
			deleted = s
		}
	}))
	s, errs := rr.AddServer(c, "d", "127.0.0.1:9", []string{"weight", "7", "check"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if added != s || s.ID != 5 || s.AdminState() != AdminFMaint || s.CheckState.Load() != ChkStConfigured || s.EWeight() != 1 {
		t.Errorf("added: id %d admin %d check %d eweight %d", s.ID, s.AdminState(), s.CheckState.Load(), s.EWeight())
	}
	if _, errs := rr.AddServer(c, "d", "127.0.0.1:9", nil); len(errs) != 1 || !errors.Is(errs[0], ErrServerExists) {
		t.Errorf("duplicate: %v", errs)
	}
	if _, errs := c.FindProxy("st", CapBE).AddServer(c, "z", "127.0.0.1:9", nil); len(errs) != 1 || !errors.Is(errs[0], ErrNotDynamicLB) {
		t.Errorf("static backend: %v", errs)
	}
	_, a := c.FindServerRef("rr", "a")
	if err := rr.DelServer(a); !errors.Is(err, ErrServerInUse) {
		t.Errorf("tracked server: %v", err)
	}
	_, b := c.FindServerRef("rr", "b")
	if err := rr.DelServer(b); !errors.Is(err, ErrNotInMaint) {
		t.Errorf("running server: %v", err)
	}
	if err := rr.DelServer(s); err != nil || deleted != s || rr.FindServer("d") != nil {
		t.Errorf("del: %v", err)
	}
}

func TestSetAddrPort(t *testing.T) {
	c := adminConf(t)
	_, a := c.FindServerRef("rr", "a")
	gen := a.Addr().Gen
	var evs []ServerEvent
	c.SetObserver(serverObserver(func(s *Server, ev ServerEvent) {
		if s == a {
			evs = append(evs, ev)
		}
	}))
	a.SetAddrPort(netip.MustParseAddr("::1"), true, 0, false)
	if got := a.Addr(); got.IP.String() != "::1" || got.Port != 1 || got.Gen != gen+1 {
		t.Errorf("addr %+v", got)
	}
	a.SetAddrPort(netip.Addr{}, false, 99, true)
	if got := a.Addr(); got.IP.String() != "::1" || got.Port != 99 || got.Gen != gen+2 {
		t.Errorf("port %+v", got)
	}
	if len(evs) != 2 || evs[0] != SrvEvAddr {
		t.Errorf("events %v", evs)
	}
}

func FuzzParseWeight(f *testing.F) {
	for _, s := range []string{"10", "50%", "-1%", "x", "10x", "99999999999999999999", "+3", " 4", "%"} {
		f.Add(s)
	}
	c := &Config{}
	p := &Proxy{Name: "b", Cap: CapBE, ProxyConf: ProxyConf{Balance: []string{"static-rr"}}}
	s := &Server{Proxy: p, Name: "s", IWeight: 10}
	c.Proxies = []*Proxy{p}
	f.Fuzz(func(t *testing.T, in string) {
		w, err := s.ParseWeight(in)
		if err == nil && (w < 0 || w > 256 || (w != 0 && w != 10)) {
			t.Fatalf("%q: weight %d accepted by a static backend", in, w)
		}
	})
}

func TestTrackPropagation(t *testing.T) {
	c := adminConf(t)
	_, a := c.FindServerRef("rr", "a")
	_, tr := c.FindServerRef("rr", "t")
	a.SetMaint()
	if tr.AdminState() != AdminIMaint || tr.OpState() != OpStopped || tr.LBUsable() {
		t.Errorf("tracked in maint: tracker admin %d op %d", tr.AdminState(), tr.OpState())
	}
	a.SetDrain()
	if tr.AdminState() != AdminIDrain || tr.OpState() != OpRunning {
		t.Errorf("tracked in drain: tracker admin %d op %d", tr.AdminState(), tr.OpState())
	}
	a.SetReady()
	if tr.AdminState() != 0 || !tr.LBUsable() {
		t.Errorf("tracked ready: tracker admin %d", tr.AdminState())
	}
	a.SetHealth(HealthDown)
	if tr.OpState() != OpStopped {
		t.Errorf("tracked down: tracker op %d", tr.OpState())
	}
	// Leaving maintenance while the tracked server is down keeps it down.
	tr.SetMaint()
	tr.SetReady()
	if tr.OpState() != OpStopped {
		t.Errorf("tracker left maint while tracked is down: op %d", tr.OpState())
	}
	a.SetHealth(HealthUp)
	if tr.OpState() != OpRunning {
		t.Errorf("tracked up: tracker op %d", tr.OpState())
	}
}

func TestTrackLoopIgnored(t *testing.T) {
	pos := diag.Pos{File: "t.cfg", Line: 1}
	ln := func(w ...string) config.Line { return config.Line{Pos: pos, Words: w} }
	d := &diag.Collector{}
	c := Build([]config.Section{{Kind: "backend", Name: "b", Pos: pos, Lines: []config.Line{
		ln("server", "x", "127.0.0.1:1", "check", "track", "y"),
		ln("server", "y", "127.0.0.1:2", "check", "track", "x"),
	}}}, d)
	_, x := c.FindServerRef("b", "x")
	done := make(chan struct{})
	go func() {
		x.SetMaint()
		x.SetReady()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("state propagation loops")
	}
}
