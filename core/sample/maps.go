package sample

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"goha/core/diag"
)

// Maps and pattern files. A Map is HAProxy's pattern reference: the
// entries (key, optional value) of one map file, of one ACL pattern file,
// or of one ACL's own patterns, each in a generation (the versions that
// prepare/commit map manage). Its users -- map converters, ACL terms --
// each hold a matcher (pattern.go: one per match method, case flag and
// value type, shared by users that agree on all three) that indexes every
// entry and looks up only those of the current generation.
//
// The MapSet is the running process's: a file is read once per name, and
// the runtime commands that change a map change what every user of it
// sees.

// Reference flags, as `show map` and `show acl` select them.
const (
	RefMap = 1 << iota // used by a map converter or by an ACL with -M
	RefACL             // used by an ACL
	refSmp             // the entries have values (read as two columns)
)

// MapSet holds a process's maps. mu guards all, byName, byID and
// finalized; a Map's own contents are guarded by its mu.
type MapSet struct {
	mu        sync.Mutex
	all       []*Map // in creation order, then in id order once finalized
	byName    map[string]*Map
	finalized bool
	fileRank  map[string]int // configuration files in order of first use, for ids
}

// Map is one pattern reference.
type Map struct {
	Name string // the file as named; "" for an ACL's own patterns
	set  *MapSet

	// Fixed once the configuration is compiled (written by the compiling
	// goroutine before any runtime command, read under set.mu after).
	display string
	flags   int
	id      int // unique id; -1 until the set is finalized
	pos     diag.Pos
	rank    int // creation order

	// mu guards what follows. Lookups hold it for reading; the runtime
	// commands that change entries or generations hold it for writing.
	mu       sync.RWMutex
	curr     uint32 // the generation lookups see
	next     uint32 // the last generation prepare handed out
	entries  []*MapEntry
	entryCnt uint64 // HAProxy's entry_cnt: indexed patterns, see index
	matchers []*matcher
	seq      uint64 // orders entries: a later entry has a larger seq
}

// MapEntry is one entry of a map. Its fields never change once the entry
// is published, except Value, under the map's lock.
type MapEntry struct {
	ID    uint64 // what show map prints and #0x... names
	Key   string
	Value string
	HasV  bool // a two-column entry (maps), even with an empty value
	gen   uint32
	seq   uint64
	line  int // in its file; 0 for entries added at run time
	vals  []smpVal
}

// smpVal is the entry's value parsed for one matcher's output type.
type smpVal struct {
	ok bool
	s  Sample
}

// entryIDs numbers entries process-wide. The ids look like the addresses
// HAProxy prints (%p) and are never reused.
var entryIDs atomic.Uint64

func newEntryID() uint64 { return 0x55d1c0000000 + entryIDs.Add(1)*0x40 }

// loadRef returns the reference for file name, reading the file the first
// time: two columns (key, value) when smp is set, one pattern per line
// otherwise. flag is RefMap or RefACL, who uses it; env.Pos says where.
func (ms *MapSet) loadRef(env *Env, name string, flag int, smp bool) (*Map, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	kind := "acl"
	if flag&RefMap != 0 {
		kind = "map"
	}
	where := env.where()
	if m := ms.byName[name]; m != nil {
		if smp && m.flags&refSmp == 0 {
			return nil, fmt.Errorf("The file \"%s\" is already used as one column file and cannot be used by as two column file.", name)
		}
		if !smp && m.flags&refSmp != 0 {
			return nil, fmt.Errorf("The file \"%s\" is already used as two column file and cannot be used by as one column file.", name)
		}
		m.display += fmt.Sprintf(", by %s at file '%s' line %d", kind, where.File, where.Line)
		m.flags |= flag
		return m, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("failed to open pattern file <%s>", name)
	}
	defer f.Close()
	m := ms.newRefLocked(env, name, fmt.Sprintf("pattern loaded from file '%s' used by %s at file '%s' line %d", name, kind, where.File, where.Line), flag)
	if smp {
		m.flags |= refSmp
	}
	err = readMapFile(f, smp, func(line int, key, value string) {
		m.appendLocked(key, value, smp, m.curr, line)
	})
	if err != nil {
		return nil, fmt.Errorf("error encountered while reading  <%s> : %v", name, err)
	}
	if ms.byName == nil {
		ms.byName = map[string]*Map{}
	}
	ms.byName[name] = m
	return m, nil
}

// newACLRef makes the reference of one ACL's own patterns; id is the
// ACL's -u id, or -1.
func (ms *MapSet) newACLRef(env *Env, kw string, id int) *Map {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	where := env.where()
	m := ms.newRefLocked(env, "", fmt.Sprintf("acl '%s' file '%s' line %d", kw, where.File, where.Line), RefACL)
	m.id = id
	return m
}

// idTaken says whether an ACL's -u id is already used.
func (ms *MapSet) idTaken(id int) bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for _, m := range ms.all {
		if m.id == id {
			return true
		}
	}
	return false
}

func (ms *MapSet) newRefLocked(env *Env, name, display string, flag int) *Map {
	m := &Map{Name: name, set: ms, display: display, flags: flag, id: -1, pos: env.where(), rank: len(ms.all)}
	if ms.fileRank == nil {
		ms.fileRank = map[string]int{}
	}
	if _, ok := ms.fileRank[m.pos.File]; !ok {
		ms.fileRank[m.pos.File] = len(ms.fileRank)
	}
	ms.all = append(ms.all, m)
	if ms.finalized {
		ms.assignIDsLocked()
	}
	return m
}

// finalize gives every reference without an id the lowest free one, in
// the order of the configuration (the file, then the line), as HAProxy
// numbers them once its configuration is read; references are then listed
// by id.
func (ms *MapSet) finalize() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if !ms.finalized {
		ms.finalized = true
		ms.assignIDsLocked()
	}
}

func (ms *MapSet) assignIDsLocked() {
	unassigned := make([]*Map, 0, len(ms.all))
	used := map[int]bool{}
	for _, m := range ms.all {
		if m.id >= 0 {
			used[m.id] = true
		} else {
			unassigned = append(unassigned, m)
		}
	}
	slices.SortStableFunc(unassigned, func(a, b *Map) int {
		if c := ms.fileRank[a.pos.File] - ms.fileRank[b.pos.File]; c != 0 {
			return c
		}
		if c := a.pos.Line - b.pos.Line; c != 0 {
			return c
		}
		return a.rank - b.rank
	})
	next := 0
	for _, m := range unassigned {
		for used[next] {
			next++
		}
		m.id = next
		used[next] = true
	}
	slices.SortStableFunc(ms.all, func(a, b *Map) int { return a.id - b.id })
}

// Lookup finds a reference by file name or by "#<id>", as the runtime
// commands name them; nil if none.
func (ms *MapSet) Lookup(ref string) *Map {
	ms.finalize()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if id, ok := strings.CutPrefix(ref, "#"); ok {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			// strtol takes leading blanks and a sign, and clamps.
			return nil
		}
		for _, m := range ms.all {
			if int64(m.id) == n {
				return m
			}
		}
		return nil
	}
	return ms.byName[ref]
}

// List returns the references used as flag (RefMap, RefACL), by id.
func (ms *MapSet) List(flag int) []*Map {
	ms.finalize()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var out []*Map
	for _, m := range ms.all {
		if m.flags&flag != 0 {
			out = append(out, m)
		}
	}
	return out
}

// readMapFile reads a map (smp) or pattern file as HAProxy does: lines
// starting with '#' and blank lines are skipped, leading blanks too; a
// pattern is the rest of the line; a map line is a key (up to a blank),
// blanks, and a value up to the end of the line, trailing blanks removed.
// A line ends at LF or CR. Lines are read in pieces of at most 16 kB, as
// HAProxy's fgets into a buffer.
func readMapFile(r io.Reader, smp bool, add func(line int, key, value string)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	line := 0
	for {
		b, err := readPiece(br)
		if len(b) == 0 && err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		line++
		if b[0] == '#' {
			continue
		}
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		b = b[i:]
		if e := strings.IndexAny(string(b), "\r\n"); e >= 0 {
			b = b[:e]
		}
		if len(b) == 0 {
			continue
		}
		if !smp {
			add(line, string(b), "")
			continue
		}
		k := 0
		for k < len(b) && b[k] != ' ' && b[k] != '\t' {
			k++
		}
		v := k
		for v < len(b) && (b[v] == ' ' || b[v] == '\t') {
			v++
		}
		e := len(b)
		for e > v && (b[e-1] == ' ' || b[e-1] == '\t') {
			e--
		}
		add(line, string(b[:k]), string(b[v:e]))
	}
}

// maxLine is HAProxy's buffer size, which its fgets reads a line into.
const maxLine = 16384

// readPiece returns the next line with its LF, or its first maxLine-1
// bytes; a NUL ends what HAProxy sees of it.
func readPiece(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for len(out) < maxLine-1 {
		c, err := br.ReadByte()
		if err != nil {
			return out, err
		}
		out = append(out, c)
		if c == '\n' {
			break
		}
	}
	if i := strings.IndexByte(string(out), 0); i >= 0 {
		// fgets keeps going but the C string stops at the NUL.
		out = out[:i]
		if len(out) == 0 {
			out = append(out, '\n')
		}
	}
	return out, nil
}

// appendLocked adds an entry at the end, in generation gen, and indexes it
// in every matcher; the caller holds mu (or owns the map, while loading).
// It does not check the value: see add.
func (m *Map) appendLocked(key, value string, hasV bool, gen uint32, line int) *MapEntry {
	m.seq++
	e := &MapEntry{ID: newEntryID(), Key: key, Value: value, HasV: hasV, gen: gen, seq: m.seq, line: line}
	m.entries = append(m.entries, e)
	return e
}

// attach returns the map's matcher for kind, nocase and the value type
// out (TAny: no value, an ACL), making and filling it on first use.
func (m *Map) attach(kind matchKind, nocase bool, out Type) (*matcher, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.matchers {
		if x.kind == kind && x.nocase == nocase && x.out == out {
			return x, nil
		}
	}
	x := newMatcher(m, kind, nocase, out, len(m.matchers))
	ps := make([]parsedPat, len(m.entries))
	for i, e := range m.entries {
		p, err := x.parse(e)
		if err != nil {
			if e.line > 0 {
				return nil, fmt.Errorf("%v at line %d of file '%s'", err, e.line, m.Name)
			}
			return nil, err
		}
		ps[i] = p
	}
	for i, e := range m.entries {
		x.insert(e, ps[i])
		m.entryCnt++
	}
	m.matchers = append(m.matchers, x)
	return x, nil
}

// ID is the reference's unique id.
func (m *Map) ID() int { m.set.finalize(); return m.id }

// Display is the reference's description in show map/acl.
func (m *Map) Display() string { return m.display }

// Has says whether the reference is used as flag (RefMap, RefACL).
func (m *Map) Has(flag int) bool { return m.flags&flag != 0 }

// HasValues says whether the reference's entries have values.
func (m *Map) HasValues() bool { return m.flags&refSmp != 0 }

// Versions returns the current generation, the last one prepared, and
// HAProxy's entry count.
func (m *Map) Versions() (curr, next uint32, cnt uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.curr, m.next, m.entryCnt
}

// Entries returns the entries of generation gen, in order (copies).
func (m *Map) Entries(gen uint32) []MapEntry {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []MapEntry
	for _, e := range m.entries {
		if e.gen == gen {
			out = append(out, MapEntry{ID: e.ID, Key: e.Key, Value: e.Value, HasV: e.HasV, gen: e.gen})
		}
	}
	return out
}

// Current is the generation lookups see.
func (m *Map) Current() uint32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.curr
}

// Next is the last generation handed out.
func (m *Map) Next() uint32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.next
}

// Add appends key (and value, for a map) in generation gen, checked by
// every matcher; on error nothing is added.
func (m *Map) Add(gen uint32, key, value string, hasV bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &MapEntry{ID: newEntryID(), Key: key, Value: value, HasV: hasV, gen: gen, seq: m.seq + 1}
	ps := make([]parsedPat, len(m.matchers))
	for i, x := range m.matchers {
		p, err := x.parse(e)
		if err != nil {
			// HAProxy indexes the entry matcher by matcher and, on
			// failure, removes it counting one entry less: its count
			// moves by the matchers done, minus one.
			m.entryCnt += uint64(i) - 1
			return err
		}
		ps[i] = p
	}
	m.seq++
	m.entries = append(m.entries, e)
	for i, x := range m.matchers {
		x.insert(e, ps[i])
		m.entryCnt++
	}
	return nil
}

// Set changes the value of every entry with key. As in HAProxy 2.6, a
// value that does not parse leaves the entry as it was without an error:
// only a missing key is one.
func (m *Map) Set(key, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	found := false
	for _, e := range m.entries {
		if e.Key == key {
			found = true
			m.setLocked(e, value)
		}
	}
	if !found {
		return fmt.Errorf("entry not found")
	}
	return nil
}

// SetByID changes the value of the entry with id.
func (m *Map) SetByID(id uint64, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.ID == id {
			return m.setLocked(e, value)
		}
	}
	return fmt.Errorf("key or pattern not found")
}

func (m *Map) setLocked(e *MapEntry, value string) error {
	vals := make([]smpVal, len(e.vals))
	for _, x := range m.matchers {
		if x.out == TAny {
			continue
		}
		v, ok := parseMapValue(x.out, value)
		if !ok {
			return fmt.Errorf("unable to parse '%s'", value)
		}
		if x.slot < len(vals) {
			vals[x.slot] = v
		}
	}
	// Readers copy the value under the read lock: replacing the fields
	// under the write lock is enough.
	e.Value, e.HasV, e.vals = value, true, vals
	return nil
}

// Delete removes every entry with key; false if there was none.
func (m *Map) Delete(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deleteLocked(func(e *MapEntry) bool { return e.Key == key })
}

// DeleteByID removes the entry with id; false if there was none.
func (m *Map) DeleteByID(id uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deleteLocked(func(e *MapEntry) bool { return e.ID == id })
}

// Clear removes the entries of generation gen.
func (m *Map) Clear(gen uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(func(e *MapEntry) bool { return e.gen == gen })
}

func (m *Map) deleteLocked(del func(*MapEntry) bool) bool {
	kept := m.entries[:0]
	found := false
	for _, e := range m.entries {
		if !del(e) {
			kept = append(kept, e)
			continue
		}
		found = true
		for _, x := range m.matchers {
			x.remove(e)
		}
		// HAProxy counts one entry less, whatever the number of its
		// indexes.
		m.entryCnt--
	}
	clear(m.entries[len(kept):])
	m.entries = kept
	return found
}

// Prepare hands out a new generation number.
func (m *Map) Prepare() uint32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	return m.next
}

// Commit makes generation gen the current one and removes the older
// ones, as `commit map @<ver>`; false if gen is out of range (not later
// than the current one, nor prepared).
func (m *Map) Commit(gen uint32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen-(m.curr+1) >= m.next-m.curr {
		return false
	}
	if int32(gen-m.curr) > 0 {
		m.curr = gen
	}
	// Everything from half the generation space behind up to gen-1.
	to := gen - 1
	from := to - (^uint32(0) >> 1)
	m.deleteLocked(func(e *MapEntry) bool { return e.gen-from <= to-from })
	return true
}

// MatchReport is one line of `get map`/`get acl`: what one of the
// reference's matchers finds for a value.
type MatchReport struct {
	Method    string // str, beg, ...
	NoCase    bool
	Found     bool
	Tree      bool   // found through an index (idx=tree), not a list
	Key       string // the entry found
	Value     string
	ValueType string // str, sint, ipv4, ipv6; "" for none
}

// Get looks a value up with each of the reference's matchers, as `get
// map` does: the value is a string, cast to what the matcher reads.
func (m *Map) Get(value string) []MatchReport {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []MatchReport
	r := &Request{}
	for _, x := range m.matchers {
		rep := MatchReport{Method: matchMethodName(x.kind), NoCase: x.nocase}
		s := Sample{T: TStr, B: []byte(value)}
		if cast(r, &s, matchInput(x.kind)) {
			if e, tree := x.lookup(r, &s, nil); e != nil {
				rep.Found, rep.Tree, rep.Key = true, tree, e.Key
				if x.out != TAny && e.HasV && x.slot < len(e.vals) && e.vals[x.slot].ok {
					rep.Value = e.Value
					rep.ValueType = e.vals[x.slot].s.T.String()
				}
			}
		}
		out = append(out, rep)
	}
	return out
}
