package stream

import (
	"cmp"
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

func newCountedPool[E any](name string, size int, mk func() *E) *countedPool[E] {
	cp := &countedPool[E]{name: name, size: size}
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
	a, u := bufPool.Counts()
	out := []PoolStat{
		{Name: "buffer", Size: bufPool.Size(), Allocated: max(a, 0), Used: max(u, 0)},
		hconnPool.stat(), copyBufs.stat(), logBufs.stat(),
	}
	slices.SortStableFunc(out, func(a, b PoolStat) int { return cmp.Compare(a.Size, b.Size) })
	return out
}
