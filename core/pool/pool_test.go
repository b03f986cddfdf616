package pool

import (
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// pconn is one end of an in-memory pipe; the other end tells whether the
// pool closed it.
type pconn struct {
	net.Conn
	peer net.Conn
}

func newConn(t testing.TB) *pconn {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return &pconn{Conn: a, peer: b}
}

// closed reports whether our end was closed, as the peer sees it.
func (c *pconn) closed() bool {
	c.peer.SetReadDeadline(time.Now())
	var b [1]byte
	_, err := c.peer.Read(b[:])
	return errors.Is(err, io.EOF)
}

// alive is a liveness probe of the kind a caller would supply: a
// non-blocking read that sees the server's close.
func alive(c *pconn) bool {
	c.SetReadDeadline(time.Now())
	var b [1]byte
	_, err := c.Read(b[:])
	c.SetReadDeadline(time.Time{})
	return errors.Is(err, os.ErrDeadlineExceeded)
}

func newSet(t testing.TB, o Options) *Set[*pconn] {
	t.Helper()
	p, err := NewSet[*pconn](o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newServer(t testing.TB, p *Set[*pconn], st Settings) *Server[*pconn] {
	t.Helper()
	s, err := p.NewServer(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func track(t testing.TB, s *Server[*pconn]) *Entry[*pconn] {
	return s.Track(newConn(t), s.Gen())
}

func settings(mut func(*Settings)) Settings {
	st := DefaultSettings()
	if mut != nil {
		mut(&st)
	}
	return st
}

func TestLayout(t *testing.T) {
	if n := unsafe.Sizeof(shard[*pconn]{}); n != cacheLine {
		t.Fatalf("shard is %d bytes, want %d", n, cacheLine)
	}
	if n := unsafe.Sizeof(paddedCounter{}); n != cacheLine {
		t.Fatalf("paddedCounter is %d bytes, want %d", n, cacheLine)
	}
}

func TestParseMode(t *testing.T) {
	for i, name := range []string{"never", "safe", "aggressive", "always"} {
		m, err := ParseMode(name)
		if err != nil || m != Mode(i) || m.String() != name {
			t.Errorf("ParseMode(%q) = %v, %v", name, m, err)
		}
	}
	for _, bad := range []string{"", "Safe", "sometimes", "safe "} {
		if _, err := ParseMode(bad); !errors.Is(err, ErrMode) {
			t.Errorf("ParseMode(%q) err = %v, want ErrMode", bad, err)
		}
	}
}

func TestValidation(t *testing.T) {
	if _, err := NewSet[*pconn](Options{}); !errors.Is(err, ErrThreads) {
		t.Errorf("zero threads: %v", err)
	}
	if _, err := NewSet[*pconn](Options{Threads: 1, MaxIdle: -1}); !errors.Is(err, ErrLimit) {
		t.Errorf("negative idle cap: %v", err)
	}
	p := newSet(t, Options{Threads: 1})
	for _, c := range []struct {
		mut  func(*Settings)
		want error
	}{
		{func(s *Settings) { s.LowConn = -1 }, ErrLowConn},
		{func(s *Settings) { s.MaxConn = -2 }, ErrMaxConn},
		{func(s *Settings) { s.PurgeDelay = -1 }, ErrPurgeDelay},
		{func(s *Settings) { s.MaxReuse = -2 }, ErrMaxReuse},
		{func(s *Settings) { s.Mode = 4 }, ErrMode},
	} {
		if _, err := p.NewServer(settings(c.mut), nil); !errors.Is(err, c.want) {
			t.Errorf("got %v, want %v", err, c.want)
		}
	}
	d := DefaultSettings()
	if d.LowConn != 0 || d.MaxConn != -1 || d.PurgeDelay != 5*time.Second || d.MaxReuse != -1 || d.Mode != ReuseSafe {
		t.Errorf("defaults = %+v", d)
	}
}

// The keep rule: a shard with nothing for the server keeps the
// connection whatever the estimate; otherwise used+idle must stay within
// max(used, need_est) + pool-low-conn.
func TestReleaseEstimateRule(t *testing.T) {
	for _, low := range []int{0, 1} {
		p := newSet(t, Options{Threads: 2})
		s := newServer(t, p, settings(func(st *Settings) { st.LowConn = low }))
		c1 := track(t, s)
		if !s.Release(0, c1, false) {
			t.Fatal("first connection of shard 0 not kept")
		}
		c2, c3 := track(t, s), track(t, s) // used=2, need_est=2, idle=1
		// used+idle = 3 against max(2,2)+low.
		if kept := s.Release(0, c2, false); kept != (low >= 1) {
			t.Errorf("low=%d: second connection of shard 0 kept=%v", low, kept)
		}
		if kept := c2.Conn.closed(); kept == (low >= 1) {
			t.Errorf("low=%d: closed=%v disagrees with Release", low, kept)
		}
		if !s.Release(1, c3, false) {
			t.Errorf("low=%d: first connection of shard 1 not kept over the estimate", low)
		}
		if st := s.Stats(); st.Used != 0 || st.IdleCur != int64(2+min(low, 1)) {
			t.Errorf("low=%d: stats %+v", low, st)
		}
	}
}

// A safe connection is kept by a shard that has idle connections but no
// safe one; an unsafe one is not.
func TestReleaseOwnShardSafePreference(t *testing.T) {
	p := newSet(t, Options{Threads: 1})
	s := newServer(t, p, DefaultSettings())
	a := track(t, s)
	s.Release(0, a, false)
	b, c := track(t, s), track(t, s) // used 2, est 2, idle 1: estimate full
	if !s.Release(0, b, true) {
		t.Error("safe connection not kept by a shard without safe connections")
	}
	if s.Release(0, c, false) {
		t.Error("unsafe connection kept over the estimate")
	}
	if st := s.Stats(); st.IdleNb != 1 || st.SafeNb != 1 {
		t.Errorf("idle_nb=%d safe_nb=%d", st.IdleNb, st.SafeNb)
	}
}

func TestMaxConn(t *testing.T) {
	t.Run("cap", func(t *testing.T) {
		p := newSet(t, Options{Threads: 1})
		s := newServer(t, p, settings(func(st *Settings) { st.MaxConn = 2; st.LowConn = 100 }))
		es := []*Entry[*pconn]{track(t, s), track(t, s), track(t, s)}
		var kept []bool
		for _, e := range es {
			kept = append(kept, s.Release(0, e, true))
		}
		if !slices.Equal(kept, []bool{true, true, false}) || !es[2].Conn.closed() {
			t.Errorf("kept %v", kept)
		}
		if st := s.Stats(); st.IdleCur != 2 || st.IdleLim != 2 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("zero", func(t *testing.T) {
		p := newSet(t, Options{Threads: 2})
		s := newServer(t, p, settings(func(st *Settings) { st.MaxConn = 0 }))
		e := track(t, s)
		if s.Release(0, e, true) || !e.Conn.closed() {
			t.Error("pool-max-conn 0 kept a connection")
		}
		if s.Get(0, NotFirst) != nil || s.CloseAll() != 0 {
			t.Error("pool-max-conn 0 has something pooled")
		}
		if st := s.Stats(); st.Used != 0 || st.IdleLim != 0 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("unlimited", func(t *testing.T) {
		p := newSet(t, Options{Threads: 1})
		s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 100 }))
		var es []*Entry[*pconn]
		for range 50 {
			es = append(es, track(t, s))
		}
		for _, e := range es {
			if !s.Release(0, e, true) {
				t.Fatal("pool-max-conn -1 refused a connection within the estimate")
			}
		}
		if st := s.Stats(); st.IdleCur != 50 || st.IdleLim != -1 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestNeverKept(t *testing.T) {
	for name, st := range map[string]Settings{
		"http-reuse never":   settings(func(st *Settings) { st.Mode = ReuseNever }),
		"pool-purge-delay 0": settings(func(st *Settings) { st.PurgeDelay = 0 }),
		"max-reuse 0":        settings(func(st *Settings) { st.MaxReuse = 0 }),
	} {
		p := newSet(t, Options{Threads: 1})
		s := newServer(t, p, st)
		e := track(t, s)
		if s.Release(0, e, true) || !e.Conn.closed() {
			t.Errorf("%s: connection kept", name)
		}
		if got := s.Stats(); got.Used != 0 || got.IdleCur != 0 || got.Closed.Release != 1 {
			t.Errorf("%s: stats %+v", name, got)
		}
	}
}

// max-reuse n lets a connection carry n+1 requests.
func TestMaxReuse(t *testing.T) {
	p := newSet(t, Options{Threads: 1})
	s := newServer(t, p, settings(func(st *Settings) { st.MaxReuse = 2 }))
	e := track(t, s)
	for req := 1; ; req++ {
		if e.Uses() != req || e.Reused() != (req > 1) {
			t.Fatalf("request %d: uses=%d reused=%v", req, e.Uses(), e.Reused())
		}
		if !s.Release(0, e, true) {
			if req != 3 {
				t.Fatalf("closed after %d requests, want 3", req)
			}
			break
		}
		if e = s.Get(0, NotFirst); e == nil {
			t.Fatalf("request %d: nothing to reuse", req+1)
		}
	}
	p2 := newSet(t, Options{Threads: 1})
	s2 := newServer(t, p2, DefaultSettings())
	e = track(t, s2)
	for range 10 {
		if !s2.Release(0, e, true) {
			t.Fatal("max-reuse -1 closed a connection")
		}
		e = s2.Get(0, NotFirst)
	}
}

func TestFDWatermarks(t *testing.T) {
	var fds atomic.Int64
	p := newSet(t, Options{Threads: 2, UsedFDs: func() int { return int(fds.Load()) }, LowFDs: 10, HighFDs: 20})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 100 }))

	fds.Store(20)
	e := track(t, s)
	if s.Release(0, e, true) {
		t.Error("kept at the high watermark")
	}
	fds.Store(10)
	a, b := track(t, s), track(t, s)
	if !s.Release(0, a, true) {
		t.Error("own-shard rule refused between watermarks")
	}
	if s.Release(0, b, true) {
		t.Error("estimate rule applied between watermarks")
	}
	// Between the watermarks takeover ignores pool-low-conn.
	if s.Get(1, NotFirst) == nil {
		t.Error("no takeover with descriptors short")
	}
}

func TestGlobalIdleCap(t *testing.T) {
	p := newSet(t, Options{Threads: 1, MaxIdle: 3})
	s1 := newServer(t, p, settings(func(st *Settings) { st.LowConn = 100 }))
	s2 := newServer(t, p, settings(func(st *Settings) { st.LowConn = 100 }))
	a, b, c, d := track(t, s1), track(t, s1), track(t, s2), track(t, s2)
	got := []bool{s1.Release(0, a, true), s1.Release(0, b, true), s2.Release(0, c, true), s2.Release(0, d, true)}
	if !slices.Equal(got, []bool{true, true, true, false}) {
		t.Errorf("kept %v", got)
	}
	// Freed room is usable again.
	if e := s1.Get(0, NotFirst); e == nil || !s2.Release(0, track(t, s2), true) {
		t.Error("room not given back")
	}
}

// Get follows HAProxy's http-reuse table.
func TestGetReuseTable(t *testing.T) {
	type key struct {
		mode     Mode
		safeConn bool
		notFirst bool
	}
	want := map[key]bool{
		{ReuseSafe, false, false}: false, {ReuseSafe, true, false}: false,
		{ReuseSafe, false, true}: true, {ReuseSafe, true, true}: true,
		{ReuseAggressive, false, false}: false, {ReuseAggressive, true, false}: true,
		{ReuseAggressive, false, true}: true, {ReuseAggressive, true, true}: true,
		{ReuseAlways, false, false}: true, {ReuseAlways, true, false}: true,
		{ReuseAlways, false, true}: true, {ReuseAlways, true, true}: true,
	}
	for k, ok := range want {
		p := newSet(t, Options{Threads: 1})
		s := newServer(t, p, settings(func(st *Settings) { st.Mode = k.mode }))
		s.Release(0, track(t, s), k.safeConn)
		var f Flags
		if k.notFirst {
			f = NotFirst
		}
		if got := s.Get(0, f) != nil; got != ok {
			t.Errorf("%v safe=%v notFirst=%v: got=%v want %v", k.mode, k.safeConn, k.notFirst, got, ok)
		}
	}
}

// Later requests prefer idle connections, first requests in "always"
// prefer safe ones.
func TestGetPreference(t *testing.T) {
	p := newSet(t, Options{Threads: 1})
	s := newServer(t, p, settings(func(st *Settings) { st.Mode = ReuseAlways; st.LowConn = 10 }))
	idle, safe := track(t, s), track(t, s)
	s.Release(0, idle, false)
	s.Release(0, safe, true)
	if e := s.Get(0, NotFirst); e != idle {
		t.Error("second request did not take the idle connection first")
	}
	s.Release(0, idle, false)
	if e := s.Get(0, 0); e != safe {
		t.Error("first request in always mode did not take the safe connection first")
	}
	// Most recently released first.
	a := track(t, s)
	s.Release(0, safe, true)
	s.Release(0, a, true)
	if e := s.Get(0, 0); e != a {
		t.Error("not the most recently released connection")
	}
}

// A first request in always mode that finds no safe connection it may
// take (the only one is a sibling's, below pool-low-conn) takes an idle
// one, as HAProxy's connect_server does, rather than dialling.
func TestGetAlwaysFallsBackToIdle(t *testing.T) {
	p := newSet(t, Options{Threads: 2})
	s := newServer(t, p, settings(func(st *Settings) { st.Mode = ReuseAlways; st.LowConn = 10 }))
	safe, idle := track(t, s), track(t, s)
	s.Release(1, safe, true)
	s.Release(0, idle, false)
	if e := s.Get(0, 0); e != idle {
		t.Fatalf("first request in always mode got %v, want the thread's idle connection", e)
	}
	// Aggressive mode never gives an idle connection to a first request.
	p2 := newSet(t, Options{Threads: 2})
	s2 := newServer(t, p2, settings(func(st *Settings) { st.Mode = ReuseAggressive; st.LowConn = 10 }))
	safe2, idle2 := track(t, s2), track(t, s2)
	s2.Release(1, safe2, true)
	s2.Release(0, idle2, false)
	if e := s2.Get(0, 0); e != nil {
		t.Fatalf("first request in aggressive mode got an idle connection")
	}
}

func TestTakeoverGate(t *testing.T) {
	var fds atomic.Int64
	p := newSet(t, Options{Threads: 2, UsedFDs: func() int { return int(fds.Load()) }, LowFDs: 1000})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 3 }))
	fill := func(n int) {
		var es []*Entry[*pconn]
		for range n {
			es = append(es, track(t, s))
		}
		for _, e := range es {
			if !s.Release(1, e, true) {
				t.Fatal("fill: not kept")
			}
		}
	}
	fill(2)
	if s.Get(0, NotFirst) != nil {
		t.Fatal("takeover below pool-low-conn")
	}
	if got := p.FDTakeover(nil); !slices.Equal(got, []uint32{0, 0}) {
		t.Fatalf("fd_takeover %v", got)
	}
	if s.Get(0, NotFirst|FDShort) == nil {
		t.Fatal("no takeover when the caller says descriptors run short")
	}
	fds.Store(1000)
	if s.Get(0, NotFirst) == nil {
		t.Fatal("no takeover at the low descriptor watermark")
	}
	fds.Store(0)
	fill(3)
	if s.Get(0, NotFirst) == nil {
		t.Fatal("no takeover at pool-low-conn")
	}
	if got := p.FDTakeover(nil); !slices.Equal(got, []uint32{3, 0}) {
		t.Fatalf("fd_takeover %v", got)
	}
	if st := s.Stats(); st.IdleCur != 2 || !slices.Equal(st.IdlePerThread, []int64{0, 2}) {
		t.Errorf("stats %+v", st)
	}
	p.ClearFDTakeover()
	if got := p.FDTakeover(nil); !slices.Equal(got, []uint32{0, 0}) {
		t.Errorf("after clear: %v", got)
	}

	ps := newSet(t, Options{Threads: 2, NoShare: true})
	s2 := newServer(t, ps, DefaultSettings())
	s2.Release(1, track(t, s2), true)
	if s2.Get(0, NotFirst) != nil {
		t.Error("takeover with sharing off")
	}
}

// fillShards puts n[t] pooled connections on each shard t, all kept by
// the estimate rule.
func fillShards(t *testing.T, s *Server[*pconn], n []int) [][]*Entry[*pconn] {
	t.Helper()
	out := make([][]*Entry[*pconn], len(n))
	for th, k := range n {
		for range k {
			out[th] = append(out[th], track(t, s))
		}
	}
	for th := range n {
		for _, e := range out[th] {
			if !s.Release(th, e, false) {
				t.Fatalf("fill: shard %d refused", th)
			}
		}
	}
	return out
}

// The round-robin scan spreads takeovers over the siblings; the scan
// from zero drains shard 1 first, then shard 2.
func TestTakeoverScanOrder(t *testing.T) {
	for _, c := range []struct {
		scan Scan
		want []int64
	}{
		{ScanRoundRobin, []int64{0, 2, 2, 2}},
		{ScanFromZero, []int64{0, 0, 2, 4}},
	} {
		p := newSet(t, Options{Threads: 4, Scan: c.scan})
		s := newServer(t, p, DefaultSettings())
		fillShards(t, s, []int{0, 4, 4, 4})
		for range 6 {
			if s.Get(0, NotFirst) == nil {
				t.Fatal("takeover failed")
			}
		}
		if got := s.Stats().IdlePerThread; !slices.Equal(got, c.want) {
			t.Errorf("scan %d: idle per thread %v, want %v", c.scan, got, c.want)
		}
		if got := p.FDTakeover(nil); got[0] != 6 {
			t.Errorf("fd_takeover %v", got)
		}
	}
}

// The rotating start moves past the shard a connection was found on,
// including the own shard, and scans every sibling (no shard is skipped
// as the v2.2.0 loop skipped its start).
func TestTakeoverRotation(t *testing.T) {
	p := newSet(t, Options{Threads: 3})
	s := newServer(t, p, DefaultSettings())
	fillShards(t, s, []int{1, 0, 1})
	if s.Get(0, NotFirst) == nil || s.NextTakeoverForTest() != 1 {
		t.Fatalf("own hit: next_takeover=%d, want 1", s.NextTakeoverForTest())
	}
	if s.Get(0, NotFirst) == nil || s.NextTakeoverForTest() != 0 {
		t.Fatalf("takeover from 2: next_takeover=%d, want 0", s.NextTakeoverForTest())
	}
	fillShards(t, s, []int{0, 1, 0})
	// The scan starts at 0 (the caller itself, skipped) and must reach 1.
	if s.Get(2, NotFirst) == nil {
		t.Fatal("sibling at the start+1 not scanned")
	}
	// The start is 0 and the only connection is there: the scan must
	// look at its own start shard.
	p2 := newSet(t, Options{Threads: 3})
	s2 := newServer(t, p2, DefaultSettings())
	fillShards(t, s2, []int{1, 0, 0})
	if s2.Get(1, NotFirst) == nil {
		t.Fatal("start shard not scanned")
	}
}

// HAProxy's worked example: used=10, idle=30, max_used=20, need_est=16.
func TestPurgeArithmetic(t *testing.T) {
	p := newSet(t, Options{Threads: 4})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 1000 }))
	es := fillShards(t, s, []int{10, 8, 7, 5})
	s.SetCountersForTest(10, 20, 16)

	// exceed = 10+30-20 = 20, half 10; quotas 10*n/30+1 = 4,3,3,2.
	if n := s.PurgeOnce(); n != 12 {
		t.Fatalf("first purge closed %d, want 12", n)
	}
	st := s.Stats()
	if !slices.Equal(st.IdlePerThread, []int64{6, 5, 4, 3}) || st.NeedEst != 20 || st.UsedMax != 10 || st.Closed.Purge != 12 {
		t.Fatalf("after first purge: %+v", st)
	}
	// Coldest first.
	for i, e := range es[0] {
		if e.Conn.closed() != (i < 4) {
			t.Errorf("shard 0 entry %d closed=%v", i, e.Conn.closed())
		}
	}
	// exceed = 10+18-20 = 8, half 4; quotas 4*n/18+1 = 2,2,1,1;
	// need_est = max((20+10)/2, 10) = 15.
	if n := s.PurgeOnce(); n != 6 {
		t.Fatalf("second purge closed %d, want 6", n)
	}
	st = s.Stats()
	if !slices.Equal(st.IdlePerThread, []int64{4, 3, 3, 2}) || st.NeedEst != 15 || st.UsedMax != 10 {
		t.Fatalf("after second purge: %+v", st)
	}
	if _, ok := s.ListedGensForTest(); !ok {
		t.Error("lists and counters disagree")
	}
}

// need_est decays to the peak, so the last idle connection of a server
// that sees no traffic dies (the 2.2 backport that removed the round-up).
func TestPurgeDecay(t *testing.T) {
	p := newSet(t, Options{Threads: 2})
	s := newServer(t, p, DefaultSettings())
	s.Release(0, track(t, s), true)
	steps := []struct {
		killed     int
		est, maxed int64
	}{{0, 1, 0}, {0, 0, 0}, {1, 0, 0}, {0, 0, 0}}
	for i, w := range steps {
		n := s.PurgeOnce()
		st := s.Stats()
		if n != w.killed || st.NeedEst != w.est || st.UsedMax != w.maxed {
			t.Fatalf("purge %d: closed %d est %d max %d, want %+v", i+1, n, st.NeedEst, st.UsedMax, w)
		}
	}
	if st := s.Stats(); st.IdleCur != 0 {
		t.Errorf("idle %d", st.IdleCur)
	}
}

// Within a shard the purge takes the idle list before the safe list.
func TestPurgeListOrder(t *testing.T) {
	p := newSet(t, Options{Threads: 1})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 100 }))
	a, b, c := track(t, s), track(t, s), track(t, s)
	s.Release(0, a, true)
	s.Release(0, b, true)
	s.Release(0, c, false)
	s.SetCountersForTest(0, 1, 1) // exceed 2, half 1, quota 1*3/3+1 = 2
	if n := s.PurgeOnce(); n != 2 {
		t.Fatalf("closed %d", n)
	}
	if !c.Conn.closed() || !a.Conn.closed() || b.Conn.closed() {
		t.Error("wrong connections purged")
	}
}

func TestPurgeTask(t *testing.T) {
	p := newSet(t, Options{Threads: 2})
	p.Start()
	defer p.Stop()
	s := newServer(t, p, settings(func(st *Settings) { st.PurgeDelay = 5 * time.Millisecond; st.LowConn = 100 }))
	fillShards(t, s, []int{3, 3})
	if !s.ArmedForTest() {
		t.Fatal("server not queued for purge")
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().IdleCur != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("idle connections never purged: %+v", s.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	for s.ArmedForTest() {
		if time.Now().After(deadline) {
			t.Fatal("empty server still queued")
		}
		time.Sleep(time.Millisecond)
	}
	// A new idle connection queues it again.
	s.Release(0, track(t, s), true)
	if !s.ArmedForTest() {
		t.Error("not requeued")
	}
	p.Stop()
	p.Stop()
}

func TestCloseAllGeneration(t *testing.T) {
	p := newSet(t, Options{Threads: 3})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 10 }))
	inUse := track(t, s)
	oldGen := s.Gen()
	pooled := fillShards(t, s, []int{1, 2, 1})
	if n := s.CloseAll(); n != 4 {
		t.Fatalf("CloseAll closed %d, want 4", n)
	}
	for _, l := range pooled {
		for _, e := range l {
			if !e.Conn.closed() {
				t.Error("pooled connection left open")
			}
		}
	}
	if st := s.Stats(); st.IdleCur != 0 || st.IdleNb != 0 || !slices.Equal(st.IdlePerThread, []int64{0, 0, 0}) {
		t.Errorf("stats %+v", st)
	}
	// The connection in use during the flush must not come back.
	if s.Release(0, inUse, true) || !inUse.Conn.closed() {
		t.Error("connection from before the flush pooled")
	}
	// Nor one dialled with the old generation after it.
	late := s.Track(newConn(t), oldGen)
	if s.Release(0, late, true) {
		t.Error("connection dialled with the old generation pooled")
	}
	fresh := track(t, s)
	if !s.Release(0, fresh, true) || s.Get(0, NotFirst) != fresh {
		t.Error("new generation not pooled")
	}
	if st := s.Stats(); st.Closed.Flush != 6 || st.Used != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Under concurrent releases, once CloseAll returns no connection of an
// older generation is left in the pool.
func TestCloseAllRace(t *testing.T) {
	p := newSet(t, Options{Threads: 4})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 1000 }))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for th := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				e := s.Get(th, NotFirst)
				if e == nil {
					e = track(t, s)
				}
				s.Release(th, e, true)
			}
		}()
	}
	for range 200 {
		s.CloseAll()
		g := s.Gen()
		gens, ok := s.ListedGensForTest()
		if !ok {
			t.Fatal("lists and counters disagree")
		}
		for _, x := range gens {
			if x < g {
				t.Fatalf("generation %d pooled after the flush to %d", x, g)
			}
		}
	}
	close(stop)
	wg.Wait()
	if st := s.Stats(); st.Used != 0 {
		t.Errorf("used %d after all releases", st.Used)
	}
}

func TestDelete(t *testing.T) {
	p := newSet(t, Options{Threads: 2})
	s := newServer(t, p, DefaultSettings())
	e := track(t, s)
	s.Release(0, track(t, s), true)
	if n := s.Delete(); n != 1 || s.ArmedForTest() {
		t.Fatalf("Delete closed %d, queued %v", n, s.ArmedForTest())
	}
	if s.Release(0, e, true) || s.Release(1, track(t, s), true) {
		t.Error("deleted server pooled a connection")
	}
}

func TestKillOne(t *testing.T) {
	p := newSet(t, Options{Threads: 3})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 10 }))
	own, sib := track(t, s), track(t, s)
	s.Release(0, own, true) // own shard: safe only, not a kill candidate
	s.Release(2, sib, true) // sibling: safe is taken when no idle
	if !s.KillOne(0) || !sib.Conn.closed() || own.Conn.closed() {
		t.Fatal("did not kill the sibling's connection")
	}
	mine := track(t, s)
	s.Release(0, mine, false)
	if !s.KillOne(0) || !mine.Conn.closed() {
		t.Fatal("did not kill the own idle connection first")
	}
	if s.KillOne(1) != true || s.KillOne(1) {
		t.Error("wrong result once the pool is empty")
	}
	if st := s.Stats(); st.Closed.FD != 3 || st.IdleCur != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestLivenessAndIdleTimeout(t *testing.T) {
	p := newSet(t, Options{Threads: 1})
	s, err := p.NewServer(settings(func(st *Settings) { st.LowConn = 10 }), alive)
	if err != nil {
		t.Fatal(err)
	}
	good, dead := track(t, s), track(t, s)
	s.Release(0, good, true)
	s.Release(0, dead, true)
	dead.Conn.peer.Close() // the server went away while idle
	if e := s.Get(0, NotFirst); e != good {
		t.Fatal("dead connection handed out or good one skipped")
	}
	if st := s.Stats(); st.Closed.Dead != 1 || st.IdleCur != 0 || st.Used != 1 {
		t.Errorf("stats %+v", st)
	}

	s2 := newServer(t, p, settings(func(st *Settings) { st.IdleTimeout = time.Millisecond }))
	old := track(t, s2)
	s2.Release(0, old, true)
	time.Sleep(5 * time.Millisecond)
	if s2.Get(0, NotFirst) != nil || !old.Conn.closed() {
		t.Error("connection idle past its timeout handed out")
	}
}

func TestDoneDetachMisuse(t *testing.T) {
	p := newSet(t, Options{Threads: 1})
	s := newServer(t, p, DefaultSettings())
	a, b := track(t, s), track(t, s)
	s.Done(a)
	if !a.Conn.closed() {
		t.Error("Done did not close")
	}
	c := s.Detach(b)
	if c != b.Conn || b.Conn.closed() {
		t.Error("Detach closed or lost the connection")
	}
	if st := s.Stats(); st.Used != 0 || st.UsedMax != 2 || st.Connects != 2 {
		t.Errorf("stats %+v", st)
	}
	defer func() {
		if recover() == nil {
			t.Error("second release did not panic")
		}
	}()
	s.Release(0, a, true)
}

// A private connection raises the peak and the estimate, counts as a
// connect, and is not left in the used count.
func TestCountPrivate(t *testing.T) {
	p := newSet(t, Options{Threads: 1})
	s := newServer(t, p, DefaultSettings())
	a := track(t, s)
	s.CountPrivate()
	if st := s.Stats(); st.Used != 1 || st.UsedMax != 2 || st.NeedEst != 2 || st.Connects != 2 {
		t.Errorf("stats %+v", st)
	}
	s.Done(a)
}

func TestStats(t *testing.T) {
	p := newSet(t, Options{Threads: 2})
	s := newServer(t, p, settings(func(st *Settings) { st.LowConn = 10 }))
	a, b, c := track(t, s), track(t, s), track(t, s)
	s.Release(0, a, false)
	s.Release(1, b, true)
	st := s.Stats()
	want := Stats{PurgeDelay: 5 * time.Second, Used: 1, UsedMax: 3, NeedEst: 3, IdleNb: 1, SafeNb: 1,
		IdleLim: -1, IdleCur: 2, Connects: 3}
	if st.PurgeDelay != want.PurgeDelay || st.Used != want.Used || st.UsedMax != want.UsedMax ||
		st.NeedEst != want.NeedEst || st.IdleNb != want.IdleNb || st.SafeNb != want.SafeNb ||
		st.IdleLim != want.IdleLim || st.IdleCur != want.IdleCur || st.Connects != want.Connects ||
		!slices.Equal(st.IdlePerThread, []int64{1, 1}) {
		t.Errorf("stats %+v", st)
	}
	_ = c
}

func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"never", "safe", "aggressive", "always", "", "SAFE", "alway"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMode(s)
		if err == nil && m.String() != s {
			t.Fatalf("ParseMode(%q) = %v", s, m)
		}
		if err != nil && !errors.Is(err, ErrMode) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// qconn is a connection whose Quiet answer the test sets.
type qconn struct {
	*pconn
	noisy bool
}

func (c *qconn) Quiet() bool { return !c.noisy }

// A connection that is not quiet (bytes arrived while it was idle) is
// closed by Get, never handed out.
func TestQuieterNotHandedOut(t *testing.T) {
	p, err := NewSet[*qconn](Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.NewServer(settings(func(st *Settings) { st.LowConn = 10 }), nil)
	if err != nil {
		t.Fatal(err)
	}
	quiet := s.Track(&qconn{pconn: newConn(t)}, s.Gen())
	noisy := s.Track(&qconn{pconn: newConn(t)}, s.Gen())
	s.Release(0, quiet, true)
	s.Release(0, noisy, true)
	noisy.Conn.noisy = true
	if e := s.Get(0, NotFirst); e != quiet {
		t.Fatal("a connection holding unread bytes was handed out, or the quiet one skipped")
	}
	if !noisy.Conn.closed() {
		t.Error("the connection holding unread bytes was not closed")
	}
	if st := s.Stats(); st.Closed.Dead != 1 || st.IdleCur != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A pooled connection its server has closed no longer counts against the
// idle limits once Release needs the room: with one thread and no spare
// (LowConn 0), the second connection is kept only because the first,
// dead one is reaped.
func TestReleaseReapsClosed(t *testing.T) {
	p, err := NewSet[*qconn](Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.NewServer(settings(func(st *Settings) { st.LowConn = 0 }), nil)
	if err != nil {
		t.Fatal(err)
	}
	// One connection in use at a time keeps the estimated need at one.
	dead := s.Track(&qconn{pconn: newConn(t)}, s.Gen())
	s.Release(0, dead, false)
	dead.Conn.noisy = true
	live := s.Track(&qconn{pconn: newConn(t)}, s.Gen())
	if !s.Release(0, live, false) {
		t.Fatal("a live connection was refused while a closed one held its place")
	}
	if !dead.Conn.closed() {
		t.Error("the closed connection was not closed in turn")
	}
	if e := s.Get(0, NotFirst); e != live {
		t.Error("the live connection is not the one handed out")
	}
	if st := s.Stats(); st.Closed.Dead != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A connection made for some requests only (its key: an SNI, a
// destination, a PROXY header) goes to those alone, on its own shard and
// by takeover, and the warmest with the key wins; one without a key never
// goes to a request that has one, nor the other way round.
func TestGetKey(t *testing.T) {
	p := newSet(t, Options{Threads: 2})
	s := newServer(t, p, settings(func(st *Settings) { st.Mode = ReuseAlways }))
	plain, a1, a2, b := track(t, s), track(t, s), track(t, s), track(t, s)
	a1.SetKey(1)
	a2.SetKey(1)
	b.SetKey(2)
	for _, e := range []*Entry[*pconn]{a1, plain, a2, b} {
		if !s.Release(0, e, false) {
			t.Fatal("not kept")
		}
	}
	if e := s.GetKey(0, NotFirst, 3); e != nil {
		t.Fatal("a key no connection has got one")
	}
	if e := s.GetKey(0, NotFirst, 1); e != a2 {
		t.Fatal("key 1 did not get its warmest connection")
	}
	if e := s.Get(0, NotFirst); e != plain {
		t.Fatal("a request without key did not get the connection without key")
	}
	if e := s.Get(0, NotFirst); e != nil {
		t.Fatal("a request without key got a keyed connection")
	}
	if e := s.GetKey(1, NotFirst|FDShort, 2); e != b {
		t.Fatal("no takeover of the sibling's connection with the key")
	}
	if e := s.GetKey(1, NotFirst|FDShort, 1); e != a1 {
		t.Fatal("no takeover of the sibling's other key")
	}
	if got := p.FDTakeover(nil); !slices.Equal(got, []uint32{0, 2}) {
		t.Fatalf("fd_takeover %v", got)
	}
}
