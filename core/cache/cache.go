// Package cache is the store behind HAProxy 2.6's HTTP cache: named
// caches of whole responses, keyed by the SHA-1 of the request's host and
// URI, with an optional secondary key for responses that vary on
// accept-encoding or referer, bounded in total size with the least
// recently used entries evicted first. It knows nothing of connections:
// the stream gives it a response's head and body once the body is
// complete.
package cache

import (
	"container/list"
	"encoding/binary"
	"sort"
	"sync"
	"time"
)

// BlockSize is HAProxy's CACHE_BLOCKSIZE: sizes are counted in blocks of
// this many bytes, which show cache reports.
const BlockSize = 1024

// MaxEntryAge is HAProxy's CACHE_ENTRY_MAX_AGE, the largest Age kept.
const MaxEntryAge = 2147483648

// SecKeyLen is the length of a secondary key: a 32-bit accept-encoding
// bitmap then a 32-bit hash of the referer, as HAProxy 2.6 lays it out.
const SecKeyLen = 8

// Config is one cache section.
type Config struct {
	Name         string
	MaxBlocks    int // total-max-size, in BlockSize blocks
	MaxObjSize   int // max-object-size in bytes; 0: a 256th of the total
	MaxAge       int // max-age in seconds (60 by default)
	ProcessVary  bool
	MaxSecondary int // max-secondary-entries (10 by default)
}

// Entry is one stored response. Its fields do not change once it is in
// the cache, so a reader holding it needs no lock.
type Entry struct {
	Hash      [20]byte
	SecKey    [SecKeyLen]byte
	Signature uint32 // the Vary headers the secondary key covers; 0: none
	// Head is the response head as the cache-store rule saw it; Body its
	// body as it went to the client, framing included.
	Head, Body []byte
	// UntilClose: the body was delimited by the server's close, and is
	// served so, closing the client's connection after it.
	UntilClose bool
	// ObjSize is the object's size as HAProxy's shared blocks hold it
	// (see ObjectSize); 0: that of Head and Body after the entry.
	ObjSize int
	// DataLen is the body as HAProxy's logs count it: its payload, and
	// the end of a chunked body's trailers.
	DataLen      int64
	Expire       int64 // Unix seconds
	Validated    int64 // Unix seconds of the response's storage
	Age          int64 // the server's Age header
	ETag         []byte
	LastModified int64
	blocks       int
	elem         *list.Element
}

// Key32 is the entry's key in show cache: the first four bytes of its
// hash, as HAProxy reads them on a little-endian machine.
func (e *Entry) Key32() uint32 { return binary.LittleEndian.Uint32(e.Hash[:4]) }

// Size is the entry's size as show cache counts it.
func (e *Entry) Size() int {
	if e.ObjSize > 0 {
		return e.ObjSize
	}
	return entryOverhead + len(e.Head) + len(e.Body)
}

// Blocks is how many blocks the entry takes.
func (e *Entry) Blocks() int { return e.blocks }

// Cache is one named cache.
type Cache struct {
	Config
	// mu guards entries, lru and used: requests look up and store from
	// every stream's goroutine, show cache reads them. lru is in order of
	// last use, the least recently stored or served first.
	mu      sync.Mutex
	entries map[[20]byte][]*Entry // by primary key; several with Vary
	lru     list.List             // of *Entry, least recently used first
	used    int                   // blocks held by entries
	now     func() time.Time
}

// New makes an empty cache for c, with HAProxy's defaults for what c
// leaves unset.
func New(c Config) *Cache {
	if c.MaxObjSize == 0 {
		c.MaxObjSize = c.MaxBlocks * BlockSize >> 8
	}
	if c.MaxSecondary == 0 {
		c.MaxSecondary = 10
	}
	return &Cache{Config: c, entries: map[[20]byte][]*Entry{}, now: time.Now}
}

// SetClock replaces the cache's clock, for tests.
func (c *Cache) SetClock(now func() time.Time) { c.now = now }

// Now is the cache's clock in Unix seconds.
func (c *Cache) Now() int64 { return c.now().Unix() }

// Lookup finds the live entry for hash. When the stored responses vary,
// seckey builds the request's secondary key for a signature; ok false
// from it means the request cannot use them. nil when nothing matches.
func (c *Cache) Lookup(hash [20]byte, seckey func(sig uint32) ([SecKeyLen]byte, bool)) *Entry {
	now := c.Now()
	c.mu.Lock()
	list := c.entries[hash]
	var sig uint32
	for _, e := range list {
		if e.Expire > now {
			sig = e.Signature
			break
		}
	}
	c.mu.Unlock()
	if len(list) == 0 {
		return nil
	}
	var key [SecKeyLen]byte
	if sig != 0 {
		var ok bool
		if key, ok = seckey(sig); !ok {
			return nil
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries[hash] {
		if e.Expire <= now {
			continue
		}
		if e.Signature == 0 || SecKeyMatch(e.SecKey, key) {
			// A hit makes the entry the last to be evicted, as HAProxy's
			// shared blocks go back to the end of the free list once
			// read.
			if e.elem != nil {
				c.lru.MoveToBack(e.elem)
			}
			return e
		}
	}
	return nil
}

// Exists says whether a live entry with this primary key (and secondary
// key when sig is not zero) is stored.
func (c *Cache) Exists(hash [20]byte, sig uint32, key [SecKeyLen]byte) bool {
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries[hash] {
		if e.Expire > now && (sig == 0 || e.Signature != 0 && SecKeyMatch(e.SecKey, key)) {
			return true
		}
	}
	return false
}

// Delete drops every entry of hash, as a successful unsafe request on it
// does.
func (c *Cache) Delete(hash [20]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries[hash] {
		c.unlink(e)
	}
	delete(c.entries, hash)
}

// unlink forgets e's place in the LRU list and its blocks. mu is held.
func (c *Cache) unlink(e *Entry) {
	if e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
		c.used -= e.blocks
	}
}

// blocksFor is how many blocks an object of n bytes takes.
func blocksFor(n int) int { return (n + BlockSize - 1) / BlockSize }

// entryOverhead is the size of HAProxy 2.6's struct cache_entry (on a
// 64-bit machine) in front of the stored data.
const entryOverhead = 112

// htxInfo is the size of the info word each stored HTX block has.
const htxInfo = 4

// HeadSize is the size of a response head once stored as HAProxy 2.6
// stores it: the entry, then the head's HTX blocks (start line, fields,
// end of headers), each with its info word. htxHead is the head's HTX
// size (http1's HTXSize), fields its fields.
func HeadSize(htxHead, fields int) int {
	return entryOverhead + htxHead + htxInfo*(fields+2)
}

// ObjectSize is the size of an object whose head takes head bytes (see
// HeadSize): the payload goes in one data block, and a chunked body's
// end of trailers in a block of one byte.
func ObjectSize(head int, payload int64, chunked bool) int {
	n := head
	if payload > 0 {
		n += htxInfo + int(payload)
	}
	if chunked {
		n += htxInfo + 1
	}
	return n
}

// Fits says whether an object of n bytes (see ObjectSize) may be stored:
// HAProxy's max-object-size bounds it, the entry included.
func (c *Cache) Fits(n int) bool {
	return (c.MaxObjSize <= 0 || n <= c.MaxObjSize) && blocksFor(n) <= c.MaxBlocks
}

// Store keeps e, replacing the entry with the same keys, evicting the
// least recently used entries until it fits. It returns false when e
// cannot be kept.
func (c *Cache) Store(e *Entry) bool { return c.StoreFor(e, e.SecKey) }

// StoreFor is Store for a response to a request whose secondary key is
// req: of the entries varying as e does, it replaces the first that
// request would have been served, as HAProxy 2.6 does, and keeps the
// others, which then answer before e when they match.
func (c *Cache) StoreFor(e *Entry, req [SecKeyLen]byte) bool {
	n := e.Size()
	if !c.Fits(n) {
		return false
	}
	e.blocks = blocksFor(n)
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.entries[e.Hash]
	kept := old[:0]
	replaced := false
	for _, o := range old {
		same := o.Signature == 0 && e.Signature == 0 ||
			!replaced && o.Signature != 0 && e.Signature != 0 && SecKeyMatch(o.SecKey, req)
		if same || o.Expire <= now || o.Signature != e.Signature && (o.Signature == 0 || e.Signature == 0) {
			replaced = replaced || same
			c.unlink(o)
			continue
		}
		kept = append(kept, o)
	}
	if len(kept) == 0 {
		delete(c.entries, e.Hash)
	} else {
		c.entries[e.Hash] = kept
	}
	if e.Signature != 0 && len(kept) >= c.MaxSecondary {
		// Too many variants already: as HAProxy, the new one is not kept.
		return false
	}
	for c.used+e.blocks > c.MaxBlocks {
		front := c.lru.Front()
		if front == nil {
			break
		}
		c.evict(front.Value.(*Entry))
	}
	c.entries[e.Hash] = append(c.entries[e.Hash], e)
	e.elem = c.lru.PushBack(e)
	c.used += e.blocks
	return true
}

// evict drops e. mu is held.
func (c *Cache) evict(e *Entry) {
	c.unlink(e)
	list := c.entries[e.Hash]
	for i, o := range list {
		if o == e {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.entries, e.Hash)
	} else {
		c.entries[e.Hash] = list
	}
}

// AvailableBlocks is how many blocks are free.
func (c *Cache) AvailableBlocks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.MaxBlocks - c.used
}

// Snapshot returns the live entries in show cache's order (by their
// 32-bit key) and drops the expired ones, as show cache does.
func (c *Cache) Snapshot() []*Entry {
	now := c.Now()
	c.mu.Lock()
	var out []*Entry
	for _, list := range c.entries {
		for _, e := range list {
			if e.Expire > now {
				out = append(out, e)
			} else {
				c.evict(e)
			}
		}
	}
	c.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := out[i].Key32(), out[j].Key32(); a != b {
			return a < b
		}
		return string(out[i].Hash[:]) < string(out[j].Hash[:])
	})
	return out
}
