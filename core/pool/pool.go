package pool

import (
	"sync"
	"sync/atomic"
	"time"
)

// Conn is what the pool keeps: anything that can be closed. The pool
// never reads or writes it; Close is called outside every pool lock.
type Conn interface{ Close() error }

// Quieter is implemented by a connection that can tell, without blocking
// and without consuming anything, whether it has bytes waiting to be read
// or has been closed by its peer. Between two requests a server has
// nothing to say: bytes that arrived while the connection sat idle belong
// to no request, and handing the connection out would deliver them as the
// next client's response. Get closes such a connection instead.
type Quieter interface {
	// Quiet reports whether nothing is waiting to be read and the peer
	// has not closed. It must not block.
	Quiet() bool
}

// cacheLine is the size the per-shard slots are padded to, so that one
// shard's lock traffic does not invalidate its neighbours' lines.
const cacheLine = 64

// Where an Entry is. A connection is on at most one list.
const (
	inUse uint8 = iota
	onIdle
	onSafe
	gone
)

// Entry is the pool's record of one server connection, kept for the
// connection's whole life. The caller owns it between Track or Get and
// Release, Done or Detach; the pool owns it while it sits on a list.
type Entry[C Conn] struct {
	// Conn is the connection itself.
	Conn C

	srv *Server[C]
	gen uint32 // server generation the connection was dialled under
	key uint64 // what else it fits (GetKey); set before its first Release

	// Owned by whoever holds the entry (see above); read by the pool
	// only while it holds the entry.
	uses int32 // requests carried, including the current one

	// Guarded by the listing shard's mu while the entry is on a list.
	where      uint8
	idleSince  int64 // monotonic nanoseconds, only with an idle timeout
	prev, next *Entry[C]
}

// SetKey gives the connection the key a request must ask for to get it
// from the pool (GetKey). Only the entry's holder calls it, before the
// connection first goes back to the pool.
func (e *Entry[C]) SetKey(key uint64) { e.key = key }

// Uses reports how many requests the connection has carried, counting
// the one it was just handed out for.
func (e *Entry[C]) Uses() int { return int(e.uses) }

// Reused reports whether the connection came from the pool rather than a
// fresh dial; a caller may retry a request that failed on a reused
// connection before any response byte arrived.
func (e *Entry[C]) Reused() bool { return e.uses > 1 }

// list is an intrusive doubly linked list: tail is the most recently
// released entry. The owning shard's mu must be held.
type list[C Conn] struct {
	head, tail *Entry[C]
}

// warmest returns the most recently released entry with key, or nil.
// Entries of a server without keyed connections all have key 0: the
// tail matches at once.
func (l *list[C]) warmest(key uint64) *Entry[C] {
	e := l.tail
	for e != nil && e.key != key {
		e = e.prev
	}
	return e
}

func (l *list[C]) pushTail(e *Entry[C]) {
	e.next = nil
	e.prev = l.tail
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
}

func (l *list[C]) remove(e *Entry[C]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// shard is one thread's slot of a server: its two lists and the lock a
// takeover or a purge takes. It is exactly one cache line (checked by a
// test); the backing array of a []shard of n elements falls into a Go
// size class that is a multiple of 64 bytes for the thread counts that
// matter, which keeps the slots on separate lines.
type shard[C Conn] struct {
	mu   sync.Mutex // guards idle and safe, and the listed entries' link fields
	idle list[C]    // not proven reusable yet
	safe list[C]    // carried at least one successful request

	// Written under mu, read without it (HAProxy's curr_idle_thr is
	// their sum).
	nIdle atomic.Int32
	nSafe atomic.Int32

	_ [cacheLine - 48]byte
}

func (sh *shard[C]) count() int32 { return sh.nIdle.Load() + sh.nSafe.Load() }

// paddedCounter is a per-shard counter on its own cache line.
type paddedCounter struct {
	v atomic.Uint32
	_ [cacheLine - 4]byte
}

// monoBase anchors the monotonic clock used for idle timestamps.
var monoBase = time.Now()

func monoNow() int64 { return int64(time.Since(monoBase)) }
