package lb

import (
	"sync"
	"testing"
)

// swrrPeriod returns one period of nginx's SWRR sequence for ws, computed
// independently of both implementations under test.
func swrrPeriod(ws []int) []int {
	g, tot := 0, 0
	for _, w := range ws {
		g = gcd(g, w)
		tot += w
	}
	cw := make([]int, len(ws))
	var out []int
	for range tot / g {
		best := 0
		for j, w := range ws {
			cw[j] += w
			if cw[j] > cw[best] {
				best = j
			}
		}
		cw[best] -= tot
		out = append(out, best)
	}
	return out
}

func seqOf(p Picker, shard, n int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = p.Pick(Key{Shard: shard}, -1)
	}
	return out
}

// rotationOf returns the offset at which seq follows period, or -1.
func rotationOf(seq, period []int) int {
	for off := range period {
		ok := true
		for k, s := range seq {
			if period[(off+k)%len(period)] != s {
				ok = false
				break
			}
		}
		if ok {
			return off
		}
	}
	return -1
}

var vnWeightSets = [][]int{
	{1, 2, 3}, {5, 1, 1}, {2, 4, 6}, {2, 4, 8}, {101, 102, 103, 104, 105}, {1, 1, 1, 1}, {7}, {3, 0, 9, 1},
}

// Per shard, vnswrr yields exactly SWRR's sequence, rotated, for every
// max_init, with the GCD taken out.
func TestVNSWRRIsSWRR(t *testing.T) {
	for _, ws := range vnWeightSets {
		period := swrrPeriod(ws)
		for _, mi := range []int{0, 1, 2, 3, 10, 1 << 20} {
			p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR, MaxInit: mi}, Servers: weights(ws...), Shards: 4})
			for shard := range 4 {
				seq := seqOf(p, shard, 3*len(period))
				if rotationOf(seq, period) < 0 {
					t.Fatalf("weights %v max_init %d shard %d: %v is not a rotation of %v", ws, mi, shard, seq, period)
				}
			}
		}
	}
	// The baseline gives the period itself from the start.
	for _, ws := range vnWeightSets {
		period := swrrPeriod(ws)
		p := mustNew(t, Config{Balance: Balance{Algo: SWRR}, Servers: weights(ws...)})
		if got := seqOf(p, 0, len(period)); rotationOf(got, period) != 0 {
			t.Fatalf("swrr %v: %v want %v", ws, got, period)
		}
	}
}

// Smoothness: over any window of W picks a server of weight w gets W*w/T
// picks give or take under 2, and
// any window of a whole period gives the exact shares.
func TestVNSWRRSmooth(t *testing.T) {
	for _, ws := range vnWeightSets {
		tot, g := 0, 0
		for _, w := range ws {
			tot += w
			g = gcd(g, w)
		}
		T := tot / g
		p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR}, Servers: weights(ws...)})
		seq := seqOf(p, 0, 3*T)
		for start := 0; start < T; start++ {
			c := make([]int, len(ws))
			for W := 1; W <= 2*T; W++ {
				c[seq[start+W-1]]++
				for j, w := range ws {
					dev := float64(c[j]) - float64(W*w)/float64(tot)
					if dev <= -2 || dev >= 2 {
						t.Fatalf("weights %v: window [%d,+%d) gives server %d %d picks", ws, start, W, j, c[j])
					}
					if W%T == 0 && c[j]*tot != W*w {
						t.Fatalf("weights %v: a full period from %d gives server %d %d picks", ws, start, j, c[j])
					}
				}
			}
		}
	}
}

func TestVNSWRRShardsStartApart(t *testing.T) {
	ws := make([]int, 50)
	for i := range ws {
		ws[i] = 1 + i%3
	}
	p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR}, Servers: weights(ws...), Shards: 16})
	first := map[int]bool{}
	for s := range 16 {
		first[p.Pick(Key{Shard: s}, -1)] = true
	}
	if len(first) < 4 {
		t.Fatalf("16 shards started on only %d servers", len(first))
	}
}

// With C down in A1 B2 C3, the table C B A C B C is probed past C and the
// others keep their 1:2 ratio.
func TestVNSWRRDownKeepsRatio(t *testing.T) {
	ss := weights(1, 2, 3)
	p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR}, Servers: ss})
	ss[2].Usable = false
	if err := p.Update(2, ss[2]); err != nil {
		t.Fatal(err)
	}
	c := counts(p, Key{}, 600)
	if c[2] != 0 || c[0] != 200 || c[1] != 400 {
		t.Fatalf("got %v", c)
	}
	ss[0].Usable, ss[1].Usable = false, false
	p.Update(0, ss[0])
	p.Update(1, ss[1])
	if i := p.Pick(Key{}, -1); i != -1 {
		t.Fatalf("everything down, got %d", i)
	}
}

func TestVNSWRRBackups(t *testing.T) {
	for _, all := range []bool{false, true} {
		ss := []Server{
			{Weight: 1, Usable: true},
			{Weight: 1, Usable: true, Backup: true},
			{Weight: 3, Usable: true, Backup: true},
		}
		p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR}, AllBackups: all, Servers: ss})
		if c := counts(p, Key{}, 10); c[0] != 10 {
			t.Fatalf("backups used while the active server is up: %v", c)
		}
		ss[0].Usable = false
		p.Update(0, ss[0])
		c := counts(p, Key{}, 400)
		if !all && c[1] != 400 {
			t.Fatalf("without allbackups: %v", c)
		}
		if all && (c[1] != 100 || c[2] != 300) {
			t.Fatalf("allbackups, weights 1:3: %v", c)
		}
		ss[0].Usable = true
		p.Update(0, ss[0])
		if c := counts(p, Key{}, 10); c[0] != 10 {
			t.Fatalf("active server back: %v", c)
		}
	}
}

// A weight change builds a new table: from the change on, every period of
// the new weights gives the new shares exactly.
func TestVNSWRRWeightChangeConverges(t *testing.T) {
	ss := weights(1, 2, 3)
	p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR}, Servers: ss})
	counts(p, Key{}, 4) // mid-period
	ss[0].Weight = 5
	if err := p.Update(0, ss[0]); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		c := counts(p, Key{}, 10)
		if c[0] != 5 || c[1] != 2 || c[2] != 3 {
			t.Fatalf("period %d after the change: %v", round, c)
		}
	}
	if err := p.Add(3, Server{Weight: 2, Usable: true}); err != nil {
		t.Fatal(err)
	}
	if c := counts(p, Key{}, 12); c[0] != 5 || c[1] != 2 || c[2] != 3 || c[3] != 2 {
		t.Fatalf("after add: %v", c)
	}
	if err := p.Remove(2); err != nil {
		t.Fatal(err)
	}
	if c := counts(p, Key{}, 9); c[0] != 5 || c[1] != 2 || c[3] != 2 {
		t.Fatalf("after remove: %v", c)
	}
}

func TestVNSWRRAvoidAndFull(t *testing.T) {
	ld := newLoad()
	ss := weights(1, 2, 3)
	ss[2].MaxConn = 1
	p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR}, Servers: ss, Served: ld.served})
	ld.add(2, 1)
	for range 30 {
		if i := p.Pick(Key{}, 1); i != 0 {
			t.Fatalf("got %d: 1 is avoided and 2 full", i)
		}
	}
	ld.add(2, -1)
	if c := counts(p, Key{}, 6); c[2] != 3 {
		t.Fatalf("server 2 has room again: %v", c)
	}
}

// Concurrent picks on a completely filled table: each shard's picks cover
// consecutive slots, so whole periods per shard give exact totals.
func TestVNSWRRConcurrentPicks(t *testing.T) {
	ws := []int{1, 2, 3, 4, 5, 6, 7}
	T := 28
	p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR, MaxInit: 1 << 20}, Servers: weights(ws...), Shards: 4})
	var mu sync.Mutex
	total := make([]int, len(ws))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]int, len(ws))
			for range 50 * T {
				c[p.Pick(Key{Shard: g % 4}, -1)]++
			}
			mu.Lock()
			for j := range c {
				total[j] += c[j]
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for j, w := range ws {
		if total[j] != 8*50*w {
			t.Fatalf("server %d: %d picks, want %d", j, total[j], 8*50*w)
		}
	}
}

// Picks, updates, adds and removes all at once, for the race detector; the
// picker must keep answering with usable servers.
func TestConcurrentUpdates(t *testing.T) {
	for _, b := range allAlgos {
		if !b.Dynamic(HashType{Consistent: true}) {
			b.Algo = StaticRR
		}
		ld := newLoad()
		p := mustNew(t, Config{Balance: b, Hash: HashType{Consistent: true}, Servers: weights(1, 2, 3, 4), Served: ld.served, Shards: 2})
		p.Update(0, Server{Weight: 1})
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					select {
					case <-stop:
						return
					default:
					}
					i := p.Pick(Key{Hash: uint32(k) * 2654435761, HasHash: k%2 == 0, Shard: g}, -1)
					if i == 0 {
						t.Errorf("%v: picked server 0, which is never usable", b.Algo)
						return
					}
					if i > 0 {
						ld.add(i, 1)
						p.Take(i)
						ld.add(i, -1)
						p.Drop(i)
					}
				}
			}()
		}
		for k := range 200 {
			w := 1 + k%5
			if !p.Dynamic() {
				w = 2
			}
			p.Update(1, Server{Weight: w, Usable: k%3 != 0})
			if p.Dynamic() {
				p.Add(4, Server{Weight: 2, Usable: true})
				p.Remove(4)
			}
		}
		close(stop)
		wg.Wait()
	}
}

// Picks racing to fill a table one slot at a time leave it equal to one
// SWRR period, and never read a slot being written (-race).
func TestVNSWRRConcurrentFill(t *testing.T) {
	ws := make([]int, 60)
	for i := range ws {
		ws[i] = 1 + (i*7)%5
	}
	p := mustNew(t, Config{Balance: Balance{Algo: VNSWRR, MaxInit: 1}, Servers: weights(ws...), Shards: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 400 {
				if i := p.Pick(Key{Shard: g}, -1); i < 0 || i >= len(ws) {
					t.Errorf("picked %d", i)
					return
				}
			}
		}()
	}
	wg.Wait()
	tab := p.(*vnswrr).gen.Load().act
	for tab.filled.Load() < int64(len(tab.slots)) {
		p.Pick(Key{}, -1)
	}
	period := swrrPeriod(ws)
	for k, s := range tab.slots {
		if int(s) != period[k] {
			t.Fatalf("slot %d holds %d, SWRR says %d", k, s, period[k])
		}
	}
}
