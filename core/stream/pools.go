package stream

import (
	"cmp"
	"goha/core/http1"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// The data path's object pools are sync.Pools, which keep no figures. For
// the runtime API's show pools (and show info's pool totals) each is
// wrapped in a counter that costs one atomic add per Get and per Put and
// no lock, since a request takes and returns several objects.

// countedPool is a sync.Pool of *E that counts its objects: allocated are
// those it made that are still alive (an object sync.Pool drops at a
// garbage collection stops counting when the collector frees it), used
// those taken and not yet returned.
type countedPool[E any] struct {
	name  string
	size  int // bytes per object, as show pools prints it
	p     sync.Pool
	alloc atomic.Int64
	used  atomic.Int64
}

// pools lists every pool's figures for Pools; each pool adds itself when
// its variable is initialised, before main runs, and the list never
// changes after that.
var pools []func() PoolStat

func newCountedPool[E any](name string, size int, mk func() *E) *countedPool[E] {
	cp := &countedPool[E]{name: name, size: size}
	pools = append(pools, cp.stat)
	cp.p.New = func() any {
		o := mk()
		cp.alloc.Add(1)
		runtime.AddCleanup(o, func(cp *countedPool[E]) { cp.alloc.Add(-1) }, cp)
		return o
	}
	return cp
}

func (cp *countedPool[E]) Get() *E {
	cp.used.Add(1)
	return cp.p.Get().(*E)
}

func (cp *countedPool[E]) Put(o *E) {
	cp.used.Add(-1)
	cp.p.Put(o)
}

func (cp *countedPool[E]) stat() PoolStat {
	return PoolStat{Name: cp.name, Size: cp.size, Allocated: max(cp.alloc.Load(), 0), Used: max(cp.used.Load(), 0)}
}

// PoolStat is one pool as show pools prints it.
type PoolStat struct {
	Name      string
	Size      int   // bytes per object
	Allocated int64 // objects made and not yet freed by the garbage collector
	Used      int64 // objects taken and not yet returned
}

// Pools reports the data path's pools, smallest objects first as HAProxy
// lists them. The pools are the program's, shared by every process it
// runs.
func (proc *Process) Pools() []PoolStat {
	out := make([]PoolStat, 0, len(pools))
	for _, stat := range pools {
		out = append(out, stat())
	}
	slices.SortStableFunc(out, func(a, b PoolStat) int { return cmp.Compare(a.Size, b.Size) })
	return out
}

// countedBuffers lists an HTTP/1 buffer pool (it counts its own buffers)
// among the pools.
func countedBuffers(name string, p *http1.BufferPool) *http1.BufferPool {
	pools = append(pools, func() PoolStat {
		a, u := p.Counts()
		return PoolStat{Name: name, Size: p.Size(), Allocated: max(a, 0), Used: max(u, 0)}
	})
	return p
}

var bufPool = countedBuffers("buffer", http1.NewBufferPool(16384))
