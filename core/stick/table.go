package stick

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a stick-table line, read.
type Config struct {
	Name    string
	Key     KeyType
	KeyLen  int // key size in bytes (string: with HAProxy's terminating NUL)
	Size    int
	Expire  int64 // milliseconds; 0: entries do not expire
	NoPurge bool
	Peers   string
	SrvKey  string // "name" or "addr"
	Store   []Stored
}

// Table is a stick table.
type Table struct {
	Config
	// slot is where each stored type's values start in an entry's data,
	// -1 where the type is not stored; n is its value count (array
	// size), period its rate's period.
	slot   [NumTypes]int16
	n      [NumTypes]uint8
	period [NumTypes]int64
	width  int

	mu      sync.Mutex // guards entries, each entry's ref, and used
	entries map[string]*Entry

	sync *syncLog // local updates for peers; nil when not shared
}

// Entry is one key's data.
type Entry struct {
	key string
	// ref counts the streams tracking the entry and the callers holding
	// it (Get, Track): a referenced entry is never expired or purged.
	// Guarded by Table.mu.
	ref  int32
	gone bool // removed from the table; guarded by Table.mu

	// lseq is the table's update number of the entry's last local
	// update (0: none), set by logUpdate.
	lseq atomic.Uint64

	mu     sync.Mutex // guards exp, data and srvKey
	exp    int64      // expiry date (ms, Now's clock); 0: none
	data   []uint64   // values by slot; a rate takes three (tick, curr, prev)
	srvKey string
}

// Key returns the entry's key bytes.
func (e *Entry) Key() string { return e.key }

// New makes a table from its configuration.
func New(c Config) *Table {
	t := &Table{Config: c, entries: map[string]*Entry{}}
	for i := range t.slot {
		t.slot[i] = -1
	}
	for _, s := range c.Store {
		n := max(s.N, 1)
		t.slot[s.Type] = int16(t.width)
		t.n[s.Type] = uint8(n)
		t.period[s.Type] = s.Period
		w := 1
		if Types[s.Type].Std == StdFreq {
			w = 3
		}
		t.width += w * n
	}
	return t
}

// Stores says whether the table stores data type dt.
func (t *Table) Stores(dt DataType) bool { return t.slot[dt] >= 0 }

// ArraySize is the number of values of dt the table stores (0: none).
func (t *Table) ArraySize(dt DataType) int {
	if t.slot[dt] < 0 {
		return 0
	}
	return int(t.n[dt])
}

// Period is the period of a rate type, in milliseconds.
func (t *Table) Period(dt DataType) int64 { return t.period[dt] }

// Used returns the number of entries.
func (t *Table) Used() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

var clockBase = time.Now()

// clockOrigin is Now's value at start-up: far from 0, so that 0 can mean
// "never" and a rate's first period never seems to have begun at 0.
const clockOrigin = 1 << 40

// Now is the current date on the tables' clock, in milliseconds.
func Now() int64 { return time.Since(clockBase).Milliseconds() + clockOrigin }

// expired says whether e has expired at now (t.mu held).
func (t *Table) expired(e *Entry, now int64) bool {
	if e.ref > 0 || t.Expire == 0 {
		return false
	}
	e.mu.Lock()
	exp := e.exp
	e.mu.Unlock()
	return exp != 0 && exp <= now
}

// Lookup returns the entry of key with a reference the caller gives back
// with Release, or nil when there is none (or it has expired).
func (t *Table) Lookup(key []byte, now int64) *Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[string(key)]
	if e == nil {
		return nil
	}
	if t.expired(e, now) {
		t.removeLocked(e)
		return nil
	}
	e.ref++
	return e
}

// Get returns the entry of key, created when missing, with a reference
// the caller gives back with Release. It returns nil when the table is
// full and nothing can be purged to make room.
func (t *Table) Get(key []byte, now int64) *Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[string(key)]
	if e != nil && t.expired(e, now) {
		t.removeLocked(e)
		e = nil
	}
	if e == nil {
		if t.Size > 0 && len(t.entries) >= t.Size {
			if t.NoPurge || t.purgeLocked(now, len(t.entries)-t.Size+1) == 0 {
				return nil
			}
		}
		e = &Entry{key: string(key), data: make([]uint64, t.width)}
		if t.Expire > 0 {
			e.exp = now + t.Expire
		}
		t.entries[e.key] = e
	}
	e.ref++
	return e
}

// Release gives back a reference taken by Lookup or Get and, with touch,
// pushes the entry's expiry to now plus the table's expire, as HAProxy's
// tables do when an entry is updated.
func (t *Table) Release(e *Entry, now int64, touch bool) {
	if touch {
		t.Touch(e, now)
	}
	t.mu.Lock()
	if e.ref > 0 {
		e.ref--
	}
	t.mu.Unlock()
}

// Touch pushes e's expiry to now plus the table's expire, and marks it
// updated for the peers of a shared table.
func (t *Table) Touch(e *Entry, now int64) {
	if t.sync != nil {
		t.logUpdate(e)
	}
	if t.Expire == 0 {
		return
	}
	e.mu.Lock()
	e.exp = now + t.Expire
	e.mu.Unlock()
}

// removeLocked drops e from the index (t.mu held).
func (t *Table) removeLocked(e *Entry) {
	if t.entries[e.key] == e {
		delete(t.entries, e.key)
	}
	e.gone = true
}

// purgeLocked removes up to n unreferenced entries, those that expire
// first, and returns how many it removed (t.mu held). HAProxy's tables
// drop their oldest entries to make room so; referenced ones stay.
func (t *Table) purgeLocked(now int64, n int) int {
	removed := 0
	for removed < n {
		var victim *Entry
		var vexp int64
		for _, e := range t.entries {
			if e.ref > 0 {
				continue
			}
			e.mu.Lock()
			exp := e.exp
			e.mu.Unlock()
			if victim == nil || exp < vexp {
				victim, vexp = e, exp
			}
		}
		if victim == nil {
			break
		}
		t.removeLocked(victim)
		removed++
	}
	return removed
}

// ExpireAt removes the entries that have expired at now and returns how
// many remain.
func (t *Table) ExpireAt(now int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.entries {
		if t.expired(e, now) {
			t.removeLocked(e)
		}
	}
	return len(t.entries)
}

// Delete removes the entry of key unless a stream tracks it; it says
// whether there was one to remove.
func (t *Table) Delete(key []byte) (found, removed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[string(key)]
	if e == nil {
		return false, false
	}
	if e.ref > 0 {
		return true, false
	}
	t.removeLocked(e)
	return true, true
}

// Snapshot returns the live entries in key order, each with a reference
// the caller gives back with Unref.
func (t *Table) Snapshot(now int64) []*Entry {
	t.mu.Lock()
	list := make([]*Entry, 0, len(t.entries))
	for _, e := range t.entries {
		if t.expired(e, now) {
			t.removeLocked(e)
			continue
		}
		e.ref++
		list = append(list, e)
	}
	t.mu.Unlock()
	slices.SortFunc(list, func(a, b *Entry) int { return strings.Compare(a.key, b.key) })
	return list
}

// Unref gives back the references of a Snapshot; with kill, it also
// removes the entries of kill that nobody else references.
func (t *Table) Unref(list []*Entry, kill func(e *Entry) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range list {
		e.ref--
		if kill != nil && e.ref == 0 && !e.gone && kill(e) {
			t.removeLocked(e)
		}
	}
}

// at returns where value idx of dt starts in an entry's data.
func (t *Table) at(dt DataType, idx int) (int, bool) {
	s := int(t.slot[dt])
	if s < 0 || idx < 0 || idx >= int(t.n[dt]) {
		return 0, false
	}
	if Types[dt].Std == StdFreq {
		return s + 3*idx, true
	}
	return s + idx, true
}

// Refs is the number of references to e: the streams tracking it and
// the callers holding it.
func (t *Table) Refs(e *Entry) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int(e.ref)
}

// Current is a rate's count in its current period, which HAProxy's
// sc_inc_gpc* return when only the rate is stored.
func (t *Table) Current(e *Entry, dt DataType, idx int) int64 {
	s, ok := t.at(dt, idx)
	if !ok || Types[dt].Std != StdFreq {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return int64(e.data[s+1])
}

// Value reads data type dt (value idx of an array) at now: a counter's
// count, a rate's events over its period, a server_id. ok is false when
// the table does not store it.
func (t *Table) Value(e *Entry, dt DataType, idx int, now int64) (v int64, ok bool) {
	s, ok := t.at(dt, idx)
	if !ok {
		return 0, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch Types[dt].Std {
	case StdFreq:
		i := s // a rate: tick, curr, prev
		return int64(readRate(e.data[i:i+3], t.period[dt], now)), true
	case StdSint:
		return int64(int32(e.data[s])), true
	case StdDict:
		return 0, true
	}
	return int64(e.data[s]), true
}

// Add adds n to a counter or counts n events in a rate, and returns the
// new value. A 32-bit counter wraps as HAProxy's does.
func (t *Table) Add(e *Entry, dt DataType, idx int, n int64, now int64) (int64, bool) {
	s, ok := t.at(dt, idx)
	if !ok {
		return 0, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch Types[dt].Std {
	case StdFreq:
		i := s // a rate: tick, curr, prev
		r := e.data[i : i+3]
		addRate(r, t.period[dt], uint64(n), now)
		return int64(readRate(r, t.period[dt], now)), true
	case StdUint:
		v := uint32(e.data[s]) + uint32(n)
		e.data[s] = uint64(v)
		return int64(v), true
	case StdSint:
		v := int32(e.data[s]) + int32(n)
		e.data[s] = uint64(uint32(v))
		return int64(v), true
	case StdUll:
		e.data[s] += uint64(n)
		return int64(e.data[s]), true
	}
	return 0, false
}

// Dec takes one from a counter that is above zero (conn_cur).
func (t *Table) Dec(e *Entry, dt DataType) {
	s := t.slot[dt]
	if s < 0 {
		return
	}
	e.mu.Lock()
	if e.data[s] > 0 {
		e.data[s]--
	}
	e.mu.Unlock()
}

// Set stores v in a counter, a tag or server_id; a rate is reset to v
// events in its current period.
func (t *Table) Set(e *Entry, dt DataType, idx int, v int64, now int64) bool {
	s, ok := t.at(dt, idx)
	if !ok {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch Types[dt].Std {
	case StdFreq:
		i := s // a rate: tick, curr, prev
		e.data[i], e.data[i+1], e.data[i+2] = uint64(now), uint64(v), 0
	case StdUint, StdSint:
		e.data[s] = uint64(uint32(v))
	case StdUll:
		e.data[s] = uint64(v)
	case StdDict:
		return false
	}
	return true
}

// SetServer records the server an entry sticks to: its id and its key
// (name or address, as the table's srvkey says).
func (t *Table) SetServer(e *Entry, id int, key string) {
	e.mu.Lock()
	if s := t.slot[ServerID]; s >= 0 {
		e.data[s] = uint64(uint32(int32(id)))
	}
	if t.slot[ServerKey] >= 0 {
		e.srvKey = key
	}
	e.mu.Unlock()
}

// Server returns the server an entry sticks to.
func (t *Table) Server(e *Entry) (id int, key string, ok bool) {
	s := t.slot[ServerID]
	if s < 0 {
		return 0, "", false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return int(int32(e.data[s])), e.srvKey, true
}

// AppendEntry writes e as show table lists it: its address, key, users,
// time to expiry and every stored value in HAProxy's order.
func (t *Table) AppendEntry(b []byte, e *Entry, now int64) []byte {
	b = fmt.Appendf(b, "%p:", e)
	b = append(b, " key="...)
	b = appendKey(b, t.Key, e.key)
	t.mu.Lock()
	use := e.ref - 1
	t.mu.Unlock()
	e.mu.Lock()
	exp := e.exp
	e.mu.Unlock()
	b = append(b, " use="...)
	b = strconv.AppendInt(b, int64(use), 10)
	b = append(b, " exp="...)
	if exp == 0 {
		b = append(b, '0')
	} else {
		b = strconv.AppendInt(b, max(exp-now, 0), 10)
	}
	for dt := DataType(0); dt < NumTypes; dt++ {
		if t.slot[dt] < 0 {
			continue
		}
		ti := &Types[dt]
		for i := 0; i < int(t.n[dt]); i++ {
			b = append(b, ' ')
			b = appendDataName(b, dt, i)
			if ti.Period {
				b = append(b, '(')
				b = strconv.AppendInt(b, t.period[dt], 10)
				b = append(b, ')')
			}
			b = append(b, '=')
			if ti.Std == StdDict {
				e.mu.Lock()
				k := e.srvKey
				e.mu.Unlock()
				if k == "" {
					k = "-"
				}
				b = append(b, k...)
				continue
			}
			v, _ := t.Value(e, dt, i, now)
			if ti.Std == StdSint {
				b = strconv.AppendInt(b, v, 10)
			} else {
				b = strconv.AppendUint(b, uint64(v), 10)
			}
		}
	}
	return append(b, '\n')
}

// appendDataName writes a data type's name as show table does, an array
// element with its index before the first underscore: gpc3_rate.
func appendDataName(b []byte, dt DataType, idx int) []byte {
	name := Types[dt].Name
	if !Types[dt].Array {
		return append(b, name...)
	}
	pfx, sfx := name, ""
	for i := 0; i < len(name); i++ {
		if name[i] == '_' {
			pfx, sfx = name[:i], name[i:]
			break
		}
	}
	b = append(b, pfx...)
	b = strconv.AppendInt(b, int64(idx), 10)
	return append(b, sfx...)
}

// AppendHead writes show table's line for the table.
func (t *Table) AppendHead(b []byte) []byte {
	return fmt.Appendf(b, "# table: %s, type: %s, size:%d, used:%d\n", t.Name, t.Key, t.Size, t.Used())
}
