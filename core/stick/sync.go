package stick

import (
	"encoding/binary"
	"errors"
	"sync"

	"goha/core/varint"
)

// What the peers protocol needs of a table: a log of the entries changed
// locally, so that each peer session pushes what it has not pushed yet,
// and the encoding of an entry's values as HAProxy's peers send them.

// syncLog records local updates of a shared table. Its mu guards every
// field; Table.mu is never held while taking it the other way round.
type syncLog struct {
	mu   sync.Mutex
	seq  uint64   // the last update's number
	ring []*Entry // entries by update number modulo len(ring)
	subs []chan struct{}
}

// syncRing is how many updates a table remembers: a peer further behind
// gets the whole table again.
const syncRing = 1 << 14

// EnableSync makes t record its local updates for peers.
func (t *Table) EnableSync() {
	if t.sync == nil {
		t.sync = &syncLog{ring: make([]*Entry, syncRing)}
	}
}

// Shared says whether the table's updates go to peers.
func (t *Table) Shared() bool { return t.sync != nil }

// logUpdate records a local update of e.
func (t *Table) logUpdate(e *Entry) {
	l := t.sync
	l.mu.Lock()
	l.seq++
	l.ring[l.seq%syncRing] = e
	e.lseq.Store(l.seq)
	for _, c := range l.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	l.mu.Unlock()
}

// Subscribe has c (buffered) get a value after local updates.
func (t *Table) Subscribe(c chan struct{}) {
	t.sync.mu.Lock()
	t.sync.subs = append(t.sync.subs, c)
	t.sync.mu.Unlock()
}

// Unsubscribe stops the notifications of c.
func (t *Table) Unsubscribe(c chan struct{}) {
	l := t.sync
	l.mu.Lock()
	for i, x := range l.subs {
		if x == c {
			l.subs = append(l.subs[:i], l.subs[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
}

// UpdateSeq is the number of the last local update.
func (t *Table) UpdateSeq() uint64 {
	t.sync.mu.Lock()
	defer t.sync.mu.Unlock()
	return t.sync.seq
}

// UpdatesSince returns the entries updated locally after update number
// since (each once, in update order) and the last number; all is true
// when since is too old for the log: the caller then sends every entry.
func (t *Table) UpdatesSince(since uint64) (list []*Entry, last uint64, all bool) {
	l := t.sync
	l.mu.Lock()
	defer l.mu.Unlock()
	last = l.seq
	if last-since > syncRing-1 {
		return nil, last, true
	}
	seen := map[*Entry]bool{}
	for n := since + 1; n <= last; n++ {
		e := l.ring[n%syncRing]
		if e != nil && !seen[e] {
			seen[e] = true
			list = append(list, e)
		}
	}
	return list, last, false
}

// Live says whether e is still in its table.
func (t *Table) Live(e *Entry) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !e.gone
}

// LocallyNewer says whether e was updated here after update number
// since, or is held by a stream now: a full resync's copy of it, taken
// before, is older than what this process has.
func (t *Table) LocallyNewer(e *Entry, since uint64) bool {
	if e.lseq.Load() > since {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return e.ref > 1
}

// ErrMalformed is a peers message that does not decode.
var ErrMalformed = errors.New("malformed peers message")

// AppendUvarint writes v in the peers protocol's variable-length integer
// encoding (varint's).
func AppendUvarint(b []byte, v uint64) []byte { return varint.Append(b, v) }

// Uvarint reads one; n is 0 when b ends first.
func Uvarint(b []byte) (v uint64, n int) { return varint.Read(b) }

// PeerKeyType is the key type number the peers protocol sends.
func (t *Table) PeerKeyType() uint64 {
	return [...]uint64{KeyIP: 4, KeyIPv6: 5, KeyInteger: 2, KeyString: 6, KeyBinary: 7}[t.Key]
}

// StoredMask is the bit field of the stored data types.
func (t *Table) StoredMask() uint64 {
	var m uint64
	for dt := DataType(0); dt < NumTypes; dt++ {
		if t.slot[dt] >= 0 {
			m |= 1 << dt
		}
	}
	return m
}

// AppendDefinition writes a table definition's parameters: each array's
// size and each rate's period, prefixed by the type, as HAProxy 2.6 does.
func (t *Table) AppendDefinitionParams(b []byte) []byte {
	for dt := DataType(0); dt < NumTypes; dt++ {
		if t.slot[dt] < 0 {
			continue
		}
		ti := &Types[dt]
		if ti.Array {
			b = AppendUvarint(b, uint64(dt))
			b = AppendUvarint(b, uint64(t.n[dt]))
			if ti.Std == StdFreq {
				b = AppendUvarint(b, uint64(t.period[dt]))
			}
		} else if ti.Std == StdFreq {
			b = AppendUvarint(b, uint64(dt))
			b = AppendUvarint(b, uint64(t.period[dt]))
		}
	}
	return b
}

// AppendPeerKey writes e's key as an update message carries it.
func (t *Table) AppendPeerKey(b []byte, e *Entry) []byte {
	if t.Key == KeyString {
		b = AppendUvarint(b, uint64(len(e.key)))
		return append(b, e.key...)
	}
	return append(b, e.key...)
}

// PeerKey reads a key from an update message.
func (t *Table) PeerKey(b []byte) (key []byte, n int, err error) {
	switch t.Key {
	case KeyString:
		l, m := Uvarint(b)
		if m == 0 || uint64(len(b)-m) < l {
			return nil, 0, ErrMalformed
		}
		k := b[m : m+int(l)]
		if len(k) > t.KeyLen-1 {
			k = k[:t.KeyLen-1]
		}
		return k, m + int(l), nil
	case KeyInteger:
		if len(b) < 4 {
			return nil, 0, ErrMalformed
		}
		return b[:4], 4, nil
	}
	if len(b) < t.KeyLen {
		return nil, 0, ErrMalformed
	}
	return b[:t.KeyLen], t.KeyLen, nil
}

// AppendPeerValues writes e's values in type order: counters as
// integers, a rate as the time since its period began, its current and
// its previous count, server_key as a dictionary entry (always sent
// whole, under id 1).
func (t *Table) AppendPeerValues(b []byte, e *Entry, now int64) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	for dt := DataType(0); dt < NumTypes; dt++ {
		s := int(t.slot[dt])
		if s < 0 {
			continue
		}
		switch Types[dt].Std {
		case StdFreq:
			for i := 0; i < int(t.n[dt]); i++ {
				r := e.data[s+3*i : s+3*i+3]
				b = AppendUvarint(b, uint64(uint32(now-int64(r[0]))))
				b = AppendUvarint(b, uint64(uint32(r[1])))
				b = AppendUvarint(b, uint64(uint32(r[2])))
			}
		case StdDict:
			if e.srvKey == "" {
				b = AppendUvarint(b, 0)
				continue
			}
			var v []byte
			v = AppendUvarint(v, 1)
			v = AppendUvarint(v, uint64(len(e.srvKey)))
			v = append(v, e.srvKey...)
			b = AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case StdSint:
			b = AppendUvarint(b, uint64(int64(int32(e.data[s]))))
		default:
			for i := 0; i < int(t.n[dt]); i++ {
				b = AppendUvarint(b, e.data[s+i])
			}
		}
	}
	return b
}

// RemoteDef is what a peer's table definition says of its data.
type RemoteDef struct {
	Types uint64
	N     [NumTypes]int
}

// ApplyPeerValues decodes the values of an update in the sender's
// layout (def) into e, keeping the types t stores and is not local to
// (conn_cur); dict holds the server keys by id. It then sets e's expiry
// to now plus expire.
func (t *Table) ApplyPeerValues(e *Entry, def *RemoteDef, b []byte, dict map[uint64]string, now, expire int64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for dt := DataType(0); dt < NumTypes; dt++ {
		if def.Types&(1<<dt) == 0 {
			continue
		}
		ti := &Types[dt]
		keep := t.slot[dt] >= 0 && !ti.Local
		n := 1
		if ti.Array {
			n = def.N[dt]
		}
		for i := 0; i < n; i++ {
			v, m := Uvarint(b)
			if m == 0 {
				return ErrMalformed
			}
			b = b[m:]
			s, ok := t.at(dt, i)
			ok = ok && keep
			switch ti.Std {
			case StdFreq:
				curr, m1 := Uvarint(b)
				if m1 == 0 {
					return ErrMalformed
				}
				prev, m2 := Uvarint(b[m1:])
				if m2 == 0 {
					return ErrMalformed
				}
				b = b[m1+m2:]
				if ok {
					e.data[s], e.data[s+1], e.data[s+2] = uint64(now-int64(uint32(v))), uint64(uint32(curr)), uint64(uint32(prev))
				}
			case StdDict:
				if v == 0 {
					continue
				}
				if uint64(len(b)) < v {
					return ErrMalformed
				}
				val := b[:v]
				b = b[v:]
				id, m := Uvarint(val)
				if m == 0 || id == 0 {
					return ErrMalformed
				}
				val = val[m:]
				if len(val) > 0 {
					l, m := Uvarint(val)
					if m == 0 || uint64(len(val)-m) < l {
						return ErrMalformed
					}
					dict[id] = string(val[m : m+int(l)])
				}
				if ok {
					e.srvKey = dict[id]
				}
			case StdSint, StdUint:
				if ok {
					e.data[s] = uint64(uint32(v))
				}
			default:
				if ok {
					e.data[s] = v
				}
			}
		}
	}
	if t.Expire > 0 || expire > 0 {
		e.exp = now + expire
	}
	return nil
}

// PutUint32 appends v big-endian.
func PutUint32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
