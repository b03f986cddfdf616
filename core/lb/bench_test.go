package lb

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

var (
	benchMu      sync.Mutex
	benchPickers = map[string]Picker{}
)

// benchPicker builds (once per process) a picker over n servers of weights
// 1..4, warmed up so that vnswrr's table is complete.
func benchPicker(b *testing.B, a Algo, n int) Picker {
	benchMu.Lock()
	defer benchMu.Unlock()
	k := fmt.Sprintf("%v/%d", a, n)
	if p, ok := benchPickers[k]; ok {
		return p
	}
	ss := make([]Server, n)
	for i := range ss {
		ss[i] = Server{Weight: 1 + i%4, Usable: true}
	}
	p, err := New(Config{Balance: Balance{Algo: a}, Servers: ss, Shards: 4})
	if err != nil {
		b.Fatal(err)
	}
	for range 3 * n {
		p.Pick(Key{}, -1)
	}
	benchPickers[k] = p
	return p
}

// BenchmarkPick measures one pick on an idle backend of 10 to 10,000
// servers.
func BenchmarkPick(b *testing.B) {
	for _, a := range []Algo{RoundRobin, StaticRR, SWRR, VNSWRR} {
		for _, n := range []int{10, 100, 2000, 10000} {
			b.Run(fmt.Sprintf("%v/%d", a, n), func(b *testing.B) {
				p := benchPicker(b, a, n)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					p.Pick(Key{}, -1)
				}
			})
		}
	}
}

// BenchmarkPickParallel picks from all CPUs at once, one shard per
// goroutine: the mutex-based algorithms contend, vnswrr does not.
func BenchmarkPickParallel(b *testing.B) {
	for _, a := range []Algo{RoundRobin, StaticRR, SWRR, VNSWRR} {
		b.Run(fmt.Sprintf("%v/2000", a), func(b *testing.B) {
			p := benchPicker(b, a, 2000)
			var shard atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				k := Key{Shard: int(shard.Add(1))}
				for pb.Next() {
					p.Pick(k, -1)
				}
			})
		})
	}
}

// BenchmarkHashPick measures hashing a URI and picking with map-based and
// consistent hashing over 100 servers.
func BenchmarkHashPick(b *testing.B) {
	uri := []byte("/static/img/logo-large.png?v=12")
	for _, cons := range []bool{false, true} {
		b.Run(fmt.Sprintf("consistent=%v", cons), func(b *testing.B) {
			ss := make([]Server, 100)
			for i := range ss {
				ss[i] = Server{Weight: 1 + i%4, Usable: true}
			}
			c := Config{Balance: Balance{Algo: URI}, Hash: HashType{Consistent: cons, Avalanche: cons}, Servers: ss}
			p := mustNew(b, c)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p.Pick(Key{Hash: c.Hash.Sum(URIKey(uri, &c.Balance)), HasHash: true}, -1)
			}
		})
	}
}
