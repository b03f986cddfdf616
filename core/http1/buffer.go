package http1

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// Buffer is a connection's read buffer: bytes are read into its free space
// and consumed from its front. Unlike bufio.Reader it does not own the
// reading, so an event loop can read a socket into Free and Commit, while a
// goroutine per connection calls Fill.
//
// Heads parsed from Bytes are slices of the buffer: they stay valid until
// the next Free or Fill, which may move the unread bytes to the front.
// Not safe for concurrent use.
type Buffer struct {
	b    []byte
	r, w int
}

// NewBuffer returns a buffer of size bytes.
func NewBuffer(size int) *Buffer { return &Buffer{b: make([]byte, size)} }

// Bytes returns the unread bytes.
func (b *Buffer) Bytes() []byte { return b.b[b.r:b.w:b.w] }

// Len is the number of unread bytes.
func (b *Buffer) Len() int { return b.w - b.r }

// Cap is the buffer's size.
func (b *Buffer) Cap() int { return len(b.b) }

// Full reports whether the unread bytes fill the whole buffer.
func (b *Buffer) Full() bool { return b.w-b.r == len(b.b) }

// Discard consumes n unread bytes.
func (b *Buffer) Discard(n int) {
	if n < 0 || n > b.w-b.r {
		panic("http1: Buffer.Discard beyond unread bytes")
	}
	b.r += n
	if b.r == b.w {
		b.r, b.w = 0, 0
	}
}

// Reset drops all unread bytes.
func (b *Buffer) Reset() { b.r, b.w = 0, 0 }

// Free returns the space after the unread bytes, first moving them to the
// front when the end of the buffer is reached (or the tail left is smaller
// than the bytes already consumed), so a head can grow to the full size.
func (b *Buffer) Free() []byte {
	if b.r > 0 && (b.w == len(b.b) || len(b.b)-b.w < b.r) {
		n := copy(b.b, b.b[b.r:b.w])
		b.r, b.w = 0, n
	}
	return b.b[b.w:]
}

// Commit records that n bytes were written into the slice Free returned.
func (b *Buffer) Commit(n int) {
	if n < 0 || b.w+n > len(b.b) {
		panic("http1: Buffer.Commit beyond free space")
	}
	b.w += n
}

// Fill makes one Read from r into the free space. It returns io.EOF (or
// the reader's error) only when no byte was read; a full buffer returns
// (0, nil).
func (b *Buffer) Fill(r io.Reader) (int, error) {
	f := b.Free()
	if len(f) == 0 {
		return 0, nil
	}
	for tries := 0; tries < 100; tries++ {
		n, err := r.Read(f)
		if n < 0 || n > len(f) {
			panic("http1: reader returned an invalid count")
		}
		b.w += n
		if n > 0 {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, io.ErrNoProgress
}

// BufferPool recycles Buffers of one size between connections, so that an
// idle connection need not hold its buffer.
//
// It counts its buffers for the runtime API's show pools: one atomic add
// per Get and per Put, no lock, since every request takes and returns one.
// A buffer the pool made counts as allocated until the garbage collector
// frees it (sync.Pool drops idle buffers at collections without telling).
type BufferPool struct {
	size  int
	p     sync.Pool
	alloc atomic.Int64 // made and not yet freed
	used  atomic.Int64 // taken and not yet returned
}

// NewBufferPool returns a pool of buffers of size bytes.
func NewBufferPool(size int) *BufferPool {
	bp := &BufferPool{size: size}
	bp.p.New = func() any {
		b := NewBuffer(size)
		bp.alloc.Add(1)
		runtime.AddCleanup(b, func(bp *BufferPool) { bp.alloc.Add(-1) }, bp)
		return b
	}
	return bp
}

// Get returns an empty buffer.
func (bp *BufferPool) Get() *Buffer {
	bp.used.Add(1)
	return bp.p.Get().(*Buffer)
}

// Put returns b to the pool; the caller must not use it afterwards.
func (bp *BufferPool) Put(b *Buffer) {
	if len(b.b) != bp.size {
		return
	}
	bp.used.Add(-1)
	b.Reset()
	bp.p.Put(b)
}

// Size is the size of the pool's buffers.
func (bp *BufferPool) Size() int { return bp.size }

// Counts reports the buffers the pool made that are still alive
// (allocated) and those taken and not yet returned (used).
func (bp *BufferPool) Counts() (allocated, used int64) {
	return bp.alloc.Load(), bp.used.Load()
}
