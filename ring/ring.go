package ring

import (
	"encoding/binary"
	"goha/core/diag"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// DefaultSize is a ring's area size when `size` is not given
	// (HAProxy's BUFSIZE).
	DefaultSize = 16384
	// MaxReaders is the number of readers a ring accepts at once
	// (HAProxy: 254, the reader count must fit in one byte below 255).
	MaxReaders = 254
)

// Ring is a byte-bounded buffer of events with one writer position and one
// position per attached reader. See the package documentation for the
// invariants and the full-ring rules.
//
// The exported fields are set while the configuration is read, before
// Start, and only read afterwards. The methods are safe for concurrent use.
type Ring struct {
	Name string
	// Desc is shown by the `show events` list; empty means the name.
	Desc string
	// Format is applied to every event; FormatUnspec keeps the format of
	// the `log` line that wrote it (implicit rings).
	Format Format
	// MaxLen caps a stored event, header included; 0 means no cap.
	MaxLen int
	// Servers receive a full copy of the ring each (one reader per server).
	Servers []*Server
	// TimeoutConnect bounds each connection attempt; 0 means no bound.
	TimeoutConnect time.Duration
	// TimeoutServer aborts a connection that made no write progress for
	// that long; 0 means never.
	TimeoutServer time.Duration
	// Implicit marks a ring created by a `log tcp@...` line.
	Implicit bool

	fwd     sync.WaitGroup // forwarders launched by Start
	started atomic.Bool    // Start ran once

	mu      sync.Mutex // guards following fields
	area    []byte
	size    uint64
	head    uint64 // position of the oldest event
	tail    uint64 // position of the next event
	readers []*Reader
	pending uint64 // drops not announced yet (what `show events` lists)
	total   uint64 // drops since start
	scratch []byte // formatting space for writers
	store   *backing
	// storePath is the backing file's path, kept for messages.
	storePath string
}

// New returns an empty in-memory ring of size bytes (DefaultSize if size <= 0).
func New(name string, size int) *Ring {
	if size <= 0 {
		size = DefaultSize
	}
	return &Ring{
		Name:    name,
		Format:  FormatRaw,
		area:    make([]byte, size),
		size:    uint64(size),
		scratch: make([]byte, 0, 1024),
	}
}

// Size returns the area size in bytes.
func (r *Ring) Size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int(r.size)
}

// Used returns the bytes taken by stored events, length prefixes included.
func (r *Ring) Used() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int(r.tail - r.head)
}

// Dropped returns the number of dropped events not yet announced in the
// ring, the figure `show events` lists.
func (r *Ring) Dropped() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

// TotalDropped returns every event dropped since the ring was made.
func (r *Ring) TotalDropped() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Description returns Desc, or the name when Desc is empty.
func (r *Ring) Description() string {
	if r.Desc == "" {
		return r.Name
	}
	return r.Desc
}

// Log formats msg with m in the ring's format (or f when the ring's format
// is FormatUnspec), truncated to limit bytes header included (0: no limit,
// and the ring's MaxLen applies on top), and stores it. It reports whether
// the event was stored. It never blocks on a reader.
func (r *Ring) Log(m *Meta, f Format, limit int, msg []byte) bool {
	if r.Format != FormatUnspec {
		f = r.Format
	}
	if r.MaxLen > 0 && (limit <= 0 || r.MaxLen < limit) {
		limit = r.MaxLen
	}
	if m.Time.IsZero() && len(m.RawTime) == 0 && needsTime(Resolve(f, m)) {
		// Read the clock before taking the lock: it is the slowest part.
		c := *m
		c.Time = time.Now()
		m = &c
	}
	r.mu.Lock()
	ok := r.announceLocked(m, f, limit)
	if ok {
		r.scratch = AppendLine(r.scratch[:0], f, m, msg, limit)
		ok = r.storeLocked(r.scratch)
	}
	if !ok {
		r.pending++
		r.total++
	}
	r.mu.Unlock()
	return ok
}

// Write stores line as it is (it is already formatted), cut to the ring's
// MaxLen. Drops are announced in raw form. It reports whether the line was
// stored.
func (r *Ring) Write(line []byte) bool {
	if r.MaxLen > 0 && len(line) > r.MaxLen {
		line = line[:r.MaxLen]
	}
	r.mu.Lock()
	ok := r.announceLocked(&Meta{Facility: 1, Level: LevelNotice}, FormatRaw, r.MaxLen)
	if ok {
		ok = r.storeLocked(line)
	}
	if !ok {
		r.pending++
		r.total++
	}
	r.mu.Unlock()
	return ok
}

// announceLocked writes the pending drop count, if any, at level notice.
// It returns false when the announcement did not fit, in which case the
// caller must drop its event too so that readers see events in order.
// r.mu must be held.
func (r *Ring) announceLocked(m *Meta, f Format, limit int) bool {
	if r.pending == 0 {
		return true
	}
	var num [32]byte
	msg := appendDropped(num[:0], r.pending)
	mm := *m
	mm.Level = LevelNotice
	r.scratch = AppendLine(r.scratch[:0], f, &mm, msg, limit)
	if !r.storeLocked(r.scratch) {
		return false
	}
	r.pending = 0
	return true
}

func appendDropped(dst []byte, n uint64) []byte {
	if n == 1 {
		return append(dst, "1 event dropped"...)
	}
	dst = appendUint(dst, n)
	return append(dst, " events dropped"...)
}

// storeLocked appends one record, evicting the oldest events that no
// reader stands on. r.mu must be held.
func (r *Ring) storeLocked(line []byte) bool {
	n := uint64(len(line))
	var hdr [binary.MaxVarintLen64]byte
	k := uint64(binary.PutUvarint(hdr[:], n))
	need := k + n
	if need > r.size {
		return false
	}
	if r.tail+need-r.head > r.size {
		pin := r.tail
		for _, rd := range r.readers {
			if rd.pos < pin {
				pin = rd.pos
			}
		}
		for r.tail+need-r.head > r.size {
			if r.head >= pin {
				return false
			}
			l, ll := r.lenAtLocked(r.head)
			r.head += ll + l
		}
	}
	r.copyInLocked(r.tail, hdr[:k])
	r.copyInLocked(r.tail+k, line)
	r.tail += need
	if r.store != nil {
		r.store.sync(r.head, r.tail)
	}
	for _, rd := range r.readers {
		select {
		case rd.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// copyInLocked writes b at position pos, wrapping at the end of the area.
// r.mu must be held.
func (r *Ring) copyInLocked(pos uint64, b []byte) {
	i := pos % r.size
	c := copy(r.area[i:], b)
	if c < len(b) {
		copy(r.area, b[c:])
	}
}

// lenAtLocked decodes the record length stored at pos and returns it with
// the size of its prefix. r.mu must be held.
func (r *Ring) lenAtLocked(pos uint64) (l, prefix uint64) {
	var shift uint
	for {
		c := r.area[(pos+prefix)%r.size]
		prefix++
		l |= uint64(c&0x7f) << shift
		if c < 0x80 || prefix >= binary.MaxVarintLen64 {
			return l, prefix
		}
		shift += 7
	}
}

// partsLocked returns the n bytes at pos as one or two slices of the area.
// r.mu must be held.
func (r *Ring) partsLocked(pos, n uint64) (a, b []byte) {
	i := pos % r.size
	if i+n <= r.size {
		return r.area[i : i+n], nil
	}
	return r.area[i:], r.area[:n-(r.size-i)]
}

// Events returns a copy of every stored event, oldest first. It is meant
// for tests and small dumps.
func (r *Ring) Events() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for pos := r.head; pos < r.tail; {
		l, ll := r.lenAtLocked(pos)
		a, b := r.partsLocked(pos+ll, l)
		ev := make([]byte, 0, l)
		ev = append(append(ev, a...), b...)
		out = append(out, ev)
		pos += ll + l
	}
	return out
}

// Resize changes the area size while the ring is being configured. It
// keeps the stored events; a size smaller than what they take is refused
// with HAProxy's warning. Not thread safe with writers.
func (r *Ring) Resize(size int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store != nil {
		return &ConfigError{Msg: "cannot resize an already mapped file, please specify 'size' before 'backing-file'."}
	}
	if uint64(size) < r.tail-r.head {
		return &diag.Warn{Msg: "ignoring new size '" + itoa(size) + "' that is smaller than contents '" +
			itoa(int(r.tail-r.head)) + "' for ring '" + r.Name + "'."}
	}
	area := make([]byte, size)
	var used uint64
	for pos := r.head; pos < r.tail; {
		l, ll := r.lenAtLocked(pos)
		a, b := r.partsLocked(pos, ll+l)
		used += uint64(copy(area[used:], a))
		used += uint64(copy(area[used:], b))
		pos += ll + l
	}
	r.area, r.size, r.head, r.tail = area, uint64(size), 0, used
	return nil
}

// Reader is one reading position in a ring: a forwarding server or a
// `show events` client. Its position is kept until Close, whatever the
// reader's connection does.
type Reader struct {
	r    *Ring
	wake chan struct{} // one slot, filled by writers without blocking

	pos    uint64 // guarded by r.mu
	closed bool   // guarded by r.mu
}

// Attach adds a reader at the oldest event, or after the newest when
// fromEnd is set (`show events -n`).
func (r *Ring) Attach(fromEnd bool) (*Reader, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.readers) >= MaxReaders {
		return nil, ErrTooManyReaders
	}
	rd := &Reader{r: r, wake: make(chan struct{}, 1), pos: r.head}
	if fromEnd {
		rd.pos = r.tail
	}
	r.readers = append(r.readers, rd)
	return rd, nil
}

// Close detaches the reader, releasing the events it held back.
func (rd *Reader) Close() {
	r := rd.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if rd.closed {
		return
	}
	rd.closed = true
	for i, x := range r.readers {
		if x == rd {
			r.readers = append(r.readers[:i], r.readers[i+1:]...)
			break
		}
	}
}

// Wake returns the channel that receives a value after an event was
// stored. A reader that found nothing to read waits on it.
func (rd *Reader) Wake() <-chan struct{} { return rd.wake }

// Pending returns the number of bytes (records) between the reader and the
// newest event.
func (rd *Reader) Pending() int {
	rd.r.mu.Lock()
	defer rd.r.mu.Unlock()
	return int(rd.r.tail - rd.pos)
}

// FrameFunc appends one event, given as a and b (the event is a followed
// by b, split where the ring wraps), with its framing to dst.
type FrameFunc func(dst, a, b []byte) []byte

// Fill appends the events after the reader's position to dst, each through
// frame, as long as the result grows by at most limit bytes (0: no limit),
// and moves the position past them. An event whose frame alone exceeds
// limit can never be sent and is skipped, as HAProxy's forwarder does. n
// is the number of events appended.
func (rd *Reader) Fill(dst []byte, limit int, frame FrameFunc) (out []byte, n int, err error) {
	out, n, next, err := rd.Peek(dst, limit, frame)
	if err == nil {
		rd.Advance(next)
	}
	return out, n, err
}

// Peek is Fill without moving the position: it returns the position after
// the appended events, for Advance once they were sent. Until then the
// events stay pinned in the ring.
func (rd *Reader) Peek(dst []byte, limit int, frame FrameFunc) (out []byte, n int, next uint64, err error) {
	return rd.peek(dst, limit, frame, true)
}

// peek is Peek; with skipOversize false an event larger than limit is
// returned alone instead of being skipped.
func (rd *Reader) peek(dst []byte, limit int, frame FrameFunc, skipOversize bool) (out []byte, n int, next uint64, err error) {
	r := rd.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if rd.closed {
		return dst, 0, rd.pos, ErrReaderClosed
	}
	base := len(dst)
	pos := rd.pos
	for pos < r.tail {
		l, ll := r.lenAtLocked(pos)
		a, b := r.partsLocked(pos+ll, l)
		before := len(dst)
		dst = frame(dst, a, b)
		if limit > 0 && len(dst)-base > limit {
			if before > base {
				dst = dst[:before]
				break
			}
			pos += ll + l
			if skipOversize {
				dst = dst[:before]
				continue
			}
			n++
			break
		}
		pos += ll + l
		n++
	}
	return dst, n, pos, nil
}

// Advance moves the reader to next, a position returned by Peek.
func (rd *Reader) Advance(next uint64) {
	r := rd.r
	r.mu.Lock()
	if !rd.closed && next > rd.pos && next <= r.tail {
		rd.pos = next
	}
	r.mu.Unlock()
}

// FrameLF ends each event with a line feed (legacy framing, `show events`).
func FrameLF(dst, a, b []byte) []byte {
	dst = append(dst, a...)
	dst = append(dst, b...)
	return append(dst, '\n')
}

// FrameNUL ends each event with a NUL byte (`show events -0`).
func FrameNUL(dst, a, b []byte) []byte {
	dst = append(dst, a...)
	dst = append(dst, b...)
	return append(dst, 0)
}

// FrameOctet prefixes each event with its decimal length and a space
// (RFC 6587 octet counting), with no trailing byte.
func FrameOctet(dst, a, b []byte) []byte {
	dst = appendUint(dst, uint64(len(a)+len(b)))
	dst = append(dst, ' ')
	dst = append(dst, a...)
	return append(dst, b...)
}

func appendUint(dst []byte, v uint64) []byte {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}

func itoa(v int) string {
	if v < 0 {
		return "-" + string(appendUint(nil, uint64(-v)))
	}
	return string(appendUint(nil, uint64(v)))
}
