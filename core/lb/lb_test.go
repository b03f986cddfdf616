package lb

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func weights(ws ...int) []Server {
	var ss []Server
	for _, w := range ws {
		ss = append(ss, Server{Weight: w, Usable: true})
	}
	return ss
}

func mustNew(t testing.TB, c Config) Picker {
	t.Helper()
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// picks returns n picks as a string of 1-based server numbers.
func picks(p Picker, n int) string {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "%d", p.Pick(Key{}, -1)+1)
	}
	return b.String()
}

// cycle picks a server and opens and closes a connection to it, as a
// request does.
func cycle(p Picker, ld *load, k Key) int {
	i := p.Pick(k, -1)
	if i >= 0 {
		ld.add(i, 1)
		p.Take(i)
		ld.add(i, -1)
		p.Drop(i)
	}
	return i
}

// counts returns how often each server is picked in n picks.
func counts(p Picker, k Key, n int) map[int]int {
	m := map[int]int{}
	for range n {
		m[p.Pick(k, -1)]++
	}
	return m
}

// The sequences below were observed on HAProxy 2.6.12 (see
// TestRoundRobinMatchesHAProxy, which checks them live when haproxy is
// installed).
func TestRoundRobinSequence(t *testing.T) {
	for _, tc := range []struct {
		w    []int
		want string
	}{
		{[]int{1, 2, 3}, "323132323132"},
		{[]int{5, 1, 1}, "111211311121131112113"},
		{[]int{10, 7, 3, 1}, "121312121421312121312121312121421312121312"},
	} {
		p := mustNew(t, Config{Servers: weights(tc.w...)})
		if got := picks(p, len(tc.want)); got != tc.want {
			t.Errorf("weights %v: got %s want %s", tc.w, got, tc.want)
		}
	}
}

func TestStaticRROrder(t *testing.T) {
	for _, tc := range []struct {
		w    []int
		want string
	}{
		{[]int{1, 2, 3}, "132323132323"},
		{[]int{5, 1, 1}, "11121131112113"},
		// The GCD is taken out: 2,4,6 is 1,2,3.
		{[]int{2, 4, 6}, "132323"},
	} {
		p := mustNew(t, Config{Balance: Balance{Algo: StaticRR}, Servers: weights(tc.w...)})
		if got := picks(p, len(tc.want)); got != tc.want {
			t.Errorf("weights %v: got %s want %s", tc.w, got, tc.want)
		}
	}
}

func TestLeastConnChoice(t *testing.T) {
	ld := newLoad()
	ss := weights(1, 2, 1)
	p := mustNew(t, Config{Balance: Balance{Algo: LeastConn}, Servers: ss, Served: ld.served})
	take := func(i int) { ld.add(i, 1); p.Take(i) }
	drop := func(i int) { ld.add(i, -1); p.Drop(i) }
	take(0)
	take(0)
	take(1)
	take(1)
	take(1)
	// s3 is idle: idle servers come first.
	if got := p.Pick(Key{}, -1); got != 2 {
		t.Fatalf("got %d want idle server 2", got)
	}
	take(2)
	// Loads relative to weight: s1 (2+1)/1, s2 (3+1)/2, s3 (1+1)/1.
	if got := p.Pick(Key{}, -1); got != 1 && got != 2 {
		t.Fatalf("got %d want 1 or 2", got)
	}
	take(2)
	if got := p.Pick(Key{}, -1); got != 1 {
		t.Fatalf("got %d want 1", got)
	}
	// avoid gives the next least loaded.
	if got := p.Pick(Key{}, 1); got == 1 {
		t.Fatalf("avoid ignored")
	}
	// Equal loads rotate as connections come and go.
	for i := range 3 {
		for ld.served(i) > 0 {
			drop(i)
		}
	}
	var seq []int
	for range 6 {
		i := p.Pick(Key{}, -1)
		seq = append(seq, i)
		take(i)
		drop(i)
	}
	if fmt.Sprint(seq) != "[0 1 2 0 1 2]" {
		t.Fatalf("idle servers do not rotate: %v", seq)
	}
}

func TestMaxConnSkipsFullServers(t *testing.T) {
	for _, a := range []Algo{RoundRobin, StaticRR, LeastConn, First, VNSWRR, SWRR} {
		ld := newLoad()
		ss := weights(1, 1, 1)
		ss[1].MaxConn = 1
		p := mustNew(t, Config{Balance: Balance{Algo: a}, Servers: ss, Served: ld.served})
		ld.add(1, 1)
		p.Take(1)
		for range 10 {
			if i := p.Pick(Key{}, -1); i == 1 {
				t.Fatalf("%v picked a full server", a)
			}
		}
	}
}

func TestFirstFillsInIDOrder(t *testing.T) {
	ld := newLoad()
	ss := []Server{
		{ID: 3, Weight: 1, Usable: true, MaxConn: 2},
		{ID: 1, Weight: 1, Usable: true, MaxConn: 2},
		{ID: 2, Weight: 1, Usable: true, MaxConn: 2},
	}
	p := mustNew(t, Config{Balance: Balance{Algo: First}, Servers: ss, Served: ld.served})
	var seq []int
	for range 6 {
		i := p.Pick(Key{}, -1)
		seq = append(seq, i)
		ld.add(i, 1)
		p.Take(i)
	}
	if fmt.Sprint(seq) != "[1 1 2 2 0 0]" {
		t.Fatalf("got %v", seq)
	}
	if i := p.Pick(Key{}, -1); i != -1 {
		t.Fatalf("all full: got %d", i)
	}
	ld.add(2, -1)
	p.Drop(2)
	if i := p.Pick(Key{}, -1); i != 2 {
		t.Fatalf("got %d want the server with room", i)
	}
}

var allAlgos = []Balance{
	{Algo: RoundRobin}, {Algo: StaticRR}, {Algo: LeastConn}, {Algo: First},
	{Algo: Source}, {Algo: URI}, {Algo: Random, Draws: 2}, {Algo: VNSWRR}, {Algo: SWRR},
}

func TestBackups(t *testing.T) {
	for _, hashCons := range []bool{false, true} {
		for _, b := range allAlgos {
			for _, all := range []bool{false, true} {
				name := fmt.Sprintf("%v/consistent=%v/allbackups=%v", b.Algo, hashCons, all)
				ss := []Server{
					{Weight: 2, Usable: true},
					{Weight: 1, Usable: true, Backup: true},
					{Weight: 1, Usable: true, Backup: true},
				}
				ld := newLoad()
				p := mustNew(t, Config{Balance: b, Hash: HashType{Consistent: hashCons}, AllBackups: all, Servers: ss, Served: ld.served})
				key := Key{HasHash: true}
				for k := range 20 {
					key.Hash = uint32(k) * 2654435761
					if i := p.Pick(key, -1); i != 0 {
						t.Fatalf("%s: backup %d used while the active server is up", name, i)
					}
				}
				ss[0].Usable = false
				if err := p.Update(0, ss[0]); err != nil {
					t.Fatal(err)
				}
				seen := map[int]bool{}
				for k := range 200 {
					key.Hash = uint32(k) * 2654435761
					key.HasHash = k%2 == 0
					seen[cycle(p, ld, key)] = true
				}
				if seen[0] || seen[-1] {
					t.Fatalf("%s: picks %v with the active server down", name, seen)
				}
				if !all && seen[2] {
					t.Fatalf("%s: second backup used without allbackups", name)
				}
				if all && b.Algo == First && (!seen[1] || seen[2]) {
					t.Fatalf("%s: first must fill the lowest ID first, uses %v", name, seen)
				}
				if all && b.Algo != First && (!seen[1] || !seen[2]) {
					t.Fatalf("%s: allbackups uses %v", name, seen)
				}
				ss[1].Usable, ss[2].Usable = false, false
				p.Update(1, ss[1])
				p.Update(2, ss[2])
				if i := p.Pick(key, -1); i != -1 {
					t.Fatalf("%s: got %d with every server down", name, i)
				}
			}
		}
	}
}

func TestDownServersSkipped(t *testing.T) {
	for _, b := range allAlgos {
		ss := weights(3, 1, 2, 5)
		p := mustNew(t, Config{Balance: b, Hash: HashType{Consistent: true}, Servers: ss})
		for _, down := range []int{3, 0} {
			ss[down].Usable = false
			if err := p.Update(down, ss[down]); err != nil {
				t.Fatal(err)
			}
		}
		for k := range 200 {
			i := p.Pick(Key{Hash: uint32(k) * 2654435761, HasHash: k%3 != 0}, -1)
			if i == 0 || i == 3 || i < 0 {
				t.Fatalf("%v: picked %d", b.Algo, i)
			}
		}
		// Weight 0 takes a server out just the same.
		ss[2].Weight = 0
		if err := p.Update(2, ss[2]); err != nil {
			t.Fatal(err)
		}
		for k := range 50 {
			if i := p.Pick(Key{Hash: uint32(k) * 2654435761, HasHash: true}, -1); i != 1 {
				t.Fatalf("%v: picked %d, only server 1 is left", b.Algo, i)
			}
		}
	}
}

func TestAvoid(t *testing.T) {
	for _, b := range allAlgos {
		if b.Algo == Source || b.Algo == URI {
			b.Algo = URI
		}
		p := mustNew(t, Config{Balance: b, Hash: HashType{Consistent: true}, Servers: weights(1, 1)})
		for k := range 20 {
			if i := p.Pick(Key{Hash: uint32(k) * 2654435761, HasHash: true}, 0); i != 1 {
				t.Fatalf("%v: avoid 0 gave %d", b.Algo, i)
			}
		}
		one := mustNew(t, Config{Balance: b, Hash: HashType{Consistent: true}, Servers: weights(1)})
		if i := one.Pick(Key{}, 0); i != 0 {
			t.Fatalf("%v: the avoided server is the only one, got %d", b.Algo, i)
		}
	}
}

func TestWeightChangeTakesEffect(t *testing.T) {
	for _, a := range []Algo{RoundRobin, LeastConn, VNSWRR, SWRR, Random} {
		ss := weights(1, 1)
		p := mustNew(t, Config{Balance: Balance{Algo: a}, Servers: ss})
		ss[1].Weight = 3
		if err := p.Update(1, ss[1]); err != nil {
			t.Fatal(err)
		}
		if a == LeastConn {
			continue // weights only matter under load, see TestLeastConnChoice
		}
		n := 4000
		c := counts(p, Key{}, n)
		// random draws keys on a consistent-hash ring, whose points give
		// each server its weight's share only roughly: what matters is
		// that the share moved from 1:1 towards 1:3.
		lo, hi := 2.5, 3.5
		if a == Random {
			lo, hi = 2.0, 4.0
		}
		if r := float64(c[1]) / float64(c[0]); r < lo || r > hi {
			t.Fatalf("%v: ratio %.2f after weight 1:3 (%v)", a, r, c)
		}
	}
}

func TestStaticWeights(t *testing.T) {
	for _, b := range []Balance{{Algo: StaticRR}, {Algo: URI}, {Algo: Source}} {
		ss := weights(2, 4)
		p := mustNew(t, Config{Balance: b, Servers: ss})
		if p.Dynamic() {
			t.Fatalf("%v map-based claims to be dynamic", b.Algo)
		}
		if err := p.Update(0, Server{Weight: 3, Usable: true}); !errors.Is(err, ErrStaticWeight) {
			t.Fatalf("%v: weight 3 gave %v", b.Algo, err)
		}
		if err := p.Update(0, Server{Weight: 0, Usable: true}); err != nil {
			t.Fatal(err)
		}
		if got := picks(p, 4); got != "2222" {
			t.Fatalf("%v: weight 0 still picked: %s", b.Algo, got)
		}
		if err := p.Update(0, Server{Weight: 2, Usable: true}); err != nil {
			t.Fatalf("back to the initial weight: %v", err)
		}
		if err := p.Add(2, Server{Weight: 1, Usable: true}); !errors.Is(err, ErrNotDynamic) {
			t.Fatalf("%v: add gave %v", b.Algo, err)
		}
	}
}

func TestDynamicServers(t *testing.T) {
	for _, b := range allAlgos {
		if !b.Dynamic(HashType{Consistent: true}) {
			continue
		}
		ld := newLoad()
		p := mustNew(t, Config{Balance: b, Hash: HashType{Consistent: true}, Servers: weights(1, 1), Served: ld.served})
		if !p.Dynamic() {
			t.Fatalf("%v is not dynamic", b.Algo)
		}
		if err := p.Add(0, Server{Weight: 1, Usable: true}); !errors.Is(err, ErrIndex) {
			t.Fatalf("%v: add over a used index gave %v", b.Algo, err)
		}
		if err := p.Add(2, Server{Weight: 1}); err != nil {
			t.Fatal(err)
		}
		ks := func(k int) Key { return Key{Hash: uint32(k) * 2654435761, HasHash: true} }
		for k := range 100 {
			if p.Pick(ks(k), -1) == 2 {
				t.Fatalf("%v: a server added in maintenance is picked", b.Algo)
			}
		}
		if err := p.Update(2, Server{Weight: 1, Usable: true}); err != nil {
			t.Fatal(err)
		}
		if err := p.Remove(0); err != nil {
			t.Fatal(err)
		}
		seen := map[int]int{}
		for k := range 300 {
			seen[cycle(p, ld, ks(k))]++
		}
		if b.Algo == First {
			seen[2]++ // first serves the lowest ID while it has room
		}
		if seen[0] > 0 || seen[2] == 0 || seen[1] == 0 {
			t.Fatalf("%v: after add 2 and remove 0: %v", b.Algo, seen)
		}
		if err := p.Update(0, Server{Weight: 1, Usable: true}); !errors.Is(err, ErrIndex) {
			t.Fatalf("%v: update of a removed server gave %v", b.Algo, err)
		}
	}
}

func TestRandomPrefersLessLoaded(t *testing.T) {
	ld := newLoad()
	p := mustNew(t, Config{Balance: Balance{Algo: Random, Draws: 40}, Servers: weights(1, 1, 1), Served: ld.served})
	ld.add(0, 5)
	ld.add(2, 3)
	for range 50 {
		if i := p.Pick(Key{}, -1); i != 1 {
			t.Fatalf("got %d, want the idle server", i)
		}
	}
	one := mustNew(t, Config{Balance: Balance{Algo: Random, Draws: 1}, Servers: weights(1, 3)})
	c := counts(one, Key{}, 8000)
	if r := float64(c[1]) / float64(c[0]); r < 2.4 || r > 3.7 {
		t.Fatalf("random(1) ratio %.2f for weights 1:3", r)
	}
}

// A consistent-hash weight change moves only the keys of the server
// changed.
func TestConsistentHashMovesFewKeys(t *testing.T) {
	ss := weights(2, 2, 2, 2)
	p := mustNew(t, Config{Balance: Balance{Algo: URI}, Hash: HashType{Consistent: true, Avalanche: true}, Servers: ss})
	before := map[uint32]int{}
	for k := range 5000 {
		h := FullHash(uint32(k))
		before[h] = p.Pick(Key{Hash: h, HasHash: true}, -1)
	}
	ss[2].Usable = false
	p.Update(2, ss[2])
	moved := 0
	for h, was := range before {
		now := p.Pick(Key{Hash: h, HasHash: true}, -1)
		if was != 2 && now != was {
			t.Fatalf("key %x moved from %d to %d", h, was, now)
		}
		if now != was {
			moved++
		}
	}
	if moved < 900 || moved > 1600 {
		t.Fatalf("%d of 5000 keys moved for a quarter of the weight", moved)
	}
}

func TestNames(t *testing.T) {
	want := map[Algo]string{
		RoundRobin: "roundrobin", StaticRR: "static-rr", LeastConn: "leastconn", First: "first",
		Source: "source", URI: "uri", URLParam: "url_param", Hdr: "hdr", Random: "random", VNSWRR: "vnswrr",
	}
	for a, n := range want {
		b := Balance{Algo: a, Draws: 2}
		p := mustNew(t, Config{Balance: b, Servers: weights(1)})
		if p.Name() != n {
			t.Errorf("%v: name %q want %q", a, p.Name(), n)
		}
		if p2 := mustNew(t, Config{Balance: b, Hash: HashType{Consistent: true}, Servers: weights(1)}); p2.Name() != n {
			t.Errorf("%v consistent: name %q want %q", a, p2.Name(), n)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := New(Config{Servers: []Server{{Weight: 257}}}); !errors.Is(err, ErrWeight) {
		t.Fatalf("weight 257: %v", err)
	}
	for _, b := range allAlgos {
		p := mustNew(t, Config{Balance: b, Servers: weights(1)})
		if err := p.Update(5, Server{Weight: 1}); err == nil {
			t.Fatalf("%v: update of unknown server accepted", b.Algo)
		}
		if err := p.Update(0, Server{Weight: -1}); !errors.Is(err, ErrWeight) {
			t.Fatalf("%v: weight -1: %v", b.Algo, err)
		}
		if p.Dynamic() {
			if err := p.Remove(7); !errors.Is(err, ErrIndex) {
				t.Fatalf("%v: remove 7: %v", b.Algo, err)
			}
			if err := p.Add(-1, Server{}); err == nil {
				t.Fatalf("%v: add -1 accepted", b.Algo)
			}
		}
		p.Take(3)
		p.Drop(3)
		empty := mustNew(t, Config{Balance: b})
		if i := empty.Pick(Key{HasHash: true}, -1); i != -1 {
			t.Fatalf("%v: empty backend gave %d", b.Algo, i)
		}
	}
}

func TestHashBalanceFactor(t *testing.T) {
	ld := newLoad()
	for _, factor := range []int{0, 125} {
		p := mustNew(t, Config{Balance: Balance{Algo: URI}, Hash: HashType{Consistent: true}, HashBalanceFactor: factor,
			Servers: weights(1, 1), Served: ld.served})
		if ld.served(0) == 0 {
			ld.add(0, 10)
		}
		for range 10 {
			p.Take(0)
		}
		// 11 connections with the next one, x1.25 -> 14 slots, 7 per
		// server: server 0 with 10 is over its share.
		c := map[int]int{}
		for k := range 400 {
			c[p.Pick(Key{Hash: FullHash(uint32(k)), HasHash: true}, -1)]++
		}
		if factor == 0 && (c[0] == 0 || c[1] == 0) {
			t.Fatalf("no factor: %v", c)
		}
		if factor > 0 && c[0] != 0 {
			t.Fatalf("factor %d: the loaded server still gets %v", factor, c)
		}
	}
}

func TestStatName(t *testing.T) {
	if Random.StatName() != "unknown" || RoundRobin.StatName() != "roundrobin" || Hdr.StatName() != "hdr" {
		t.Fatal("show stat names differ from HAProxy 2.6")
	}
}

func TestSlowStartRamp(t *testing.T) {
	for _, tc := range []struct {
		e, p time.Duration
		want int
	}{
		{0, 10 * time.Second, 1}, {5 * time.Second, 10 * time.Second, 9}, {9 * time.Second, 10 * time.Second, 15},
		{10 * time.Second, 10 * time.Second, 0}, {time.Second, 0, 0}, {-time.Second, 10 * time.Second, 0},
	} {
		if got := SlowStartRamp(tc.e, tc.p); got != tc.want {
			t.Errorf("%v of %v: %d want %d", tc.e, tc.p, got, tc.want)
		}
	}
	// A ramping server gets its share of the ramped weight.
	ss := weights(1, 1)
	ss[1].Ramp = 4
	p := mustNew(t, Config{Servers: ss})
	if c := counts(p, Key{}, 200); c[0] != 160 || c[1] != 40 {
		t.Fatalf("ramp 4/16: %v", c)
	}
}
