package cache

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

// hdr makes a Header of "name: value" lines.
func hdr(lines ...string) Header {
	return func(name string, fn func([]byte)) {
		for _, l := range lines {
			n, v, _ := strings.Cut(l, ":")
			if strings.EqualFold(n, name) {
				fn([]byte(strings.TrimSpace(v)))
			}
		}
	}
}

func newTestCache(blocks int) (*Cache, *time.Time) {
	now := time.Unix(1_700_000_000, 0)
	c := New(Config{Name: "c", MaxBlocks: blocks, MaxObjSize: blocks * BlockSize / 2, MaxAge: 60})
	c.SetClock(func() time.Time { return now })
	return c, &now
}

func entry(c *Cache, key string, size int) *Entry {
	k, _ := Key([]byte("/"+key), []byte("h"), true, false)
	return &Entry{Hash: k, Head: make([]byte, size), Expire: c.Now() + 10}
}

func TestEvictionOldestFirst(t *testing.T) {
	c, _ := newTestCache(4)
	a, b, d := entry(c, "a", 1500), entry(c, "b", 1500), entry(c, "d", 1500)
	if !c.Store(a) || !c.Store(b) {
		t.Fatal("store refused")
	}
	if !c.Store(d) {
		t.Fatal("third store refused")
	}
	if c.Lookup(a.Hash, nil) != nil {
		t.Error("the oldest entry survived")
	}
	if c.Lookup(b.Hash, nil) != b || c.Lookup(d.Hash, nil) != d {
		t.Error("recent entries evicted")
	}
	if got := c.AvailableBlocks(); got != 4-b.Blocks()-d.Blocks() {
		t.Errorf("available blocks %d", got)
	}
}

// A hit makes an entry the most recent: the one evicted is the least
// recently stored or served, as in HAProxy.
func TestEvictionLeastRecentlyUsed(t *testing.T) {
	c, _ := newTestCache(4)
	a, b, d := entry(c, "a", 1500), entry(c, "b", 1500), entry(c, "d", 1500)
	if !c.Store(a) || !c.Store(b) || c.Lookup(a.Hash, nil) != a || !c.Store(d) {
		t.Fatal("store or lookup failed")
	}
	if c.Lookup(b.Hash, nil) != nil {
		t.Error("the least recently used entry survived")
	}
	if c.Lookup(a.Hash, nil) != a || c.Lookup(d.Hash, nil) != d {
		t.Error("a recently used entry was evicted")
	}
}

func TestExpiry(t *testing.T) {
	c, now := newTestCache(8)
	e := entry(c, "a", 10)
	c.Store(e)
	if c.Lookup(e.Hash, nil) != e {
		t.Fatal("not found")
	}
	*now = now.Add(11 * time.Second)
	if c.Lookup(e.Hash, nil) != nil {
		t.Error("expired entry served")
	}
	if len(c.Snapshot()) != 0 || c.AvailableBlocks() != 8 {
		t.Error("show cache kept an expired entry")
	}
}

func TestTooBig(t *testing.T) {
	c, _ := newTestCache(4)
	if c.Store(entry(c, "a", 3*BlockSize)) {
		t.Error("object over max-object-size stored")
	}
}

func TestVaryKeys(t *testing.T) {
	c, _ := newTestCache(16)
	c.MaxSecondary = 2
	gz := hdr("Accept-Encoding: gzip, deflate")
	sig, ok := VarySignature(hdr("Vary: accept-encoding"))
	if !ok || sig != VaryAcceptEncoding {
		t.Fatalf("signature %d %v", sig, ok)
	}
	if _, ok := VarySignature(hdr("Vary: cookie")); ok {
		t.Error("vary on cookie accepted")
	}
	mk := func(enc string) *Entry {
		e := entry(c, "v", 10)
		e.Signature = sig
		e.SecKey, _ = SecondaryKey(gz, ^uint32(0))
		if !ResponseEncoding(hdr("Content-Encoding: "+enc), &e.SecKey) && enc != "" {
			t.Fatalf("encoding %q refused", enc)
		}
		return e
	}
	g := mk("gzip")
	if !c.Store(g) {
		t.Fatal("store refused")
	}
	seckey := func(h Header) func(uint32) ([SecKeyLen]byte, bool) {
		return func(s uint32) ([SecKeyLen]byte, bool) { return SecondaryKey(h, s) }
	}
	if c.Lookup(g.Hash, seckey(gz)) != g {
		t.Error("gzip client missed the gzip entry")
	}
	if c.Lookup(g.Hash, seckey(hdr("Accept-Encoding: br"))) != nil {
		t.Error("br client got the gzip entry")
	}
	if c.Lookup(g.Hash, seckey(hdr("Accept-Encoding: gzip;q=0, br"))) != nil {
		t.Error("a client refusing gzip got it")
	}
	if !c.Store(mk("deflate")) || c.Store(mk("br")) {
		t.Error("max-secondary-entries not applied")
	}
	if ResponseEncoding(hdr("Content-Encoding: foo"), &g.SecKey) {
		t.Error("unknown encoding accepted")
	}
	// HAProxy 2.6 reads content-encoding as written: GZIP is unknown.
	if ResponseEncoding(hdr("Content-Encoding: GZIP"), &g.SecKey) {
		t.Error("GZIP content-encoding accepted")
	}
}

func TestAcceptEncodingKey(t *testing.T) {
	bitmap := func(v ...string) (uint32, bool) {
		var lines []string
		for _, x := range v {
			lines = append(lines, "Accept-Encoding: "+x)
		}
		k, ok := SecondaryKey(hdr(lines...), VaryAcceptEncoding)
		return binary.LittleEndian.Uint32(k[0:4]), ok
	}
	for _, c := range []struct {
		v    []string
		want uint32
	}{
		{[]string{"GZIP"}, encIdentity | encGzip},
		{[]string{"gzip ; Q=0"}, encIdentity},
		{[]string{"gzip;q=0.0"}, encIdentity | encGzip}, // only "q=0" refuses
		{[]string{"identity;q=0, br"}, encBr},
		{[]string{"*, br;q=0"}, ^uint32(0) &^ encBr},
		{[]string{"gzipx"}, encIdentity | encOther},
		{[]string{""}, encIdentity},
	} {
		if got, ok := bitmap(c.v...); !ok || got != c.want {
			t.Errorf("%q: %#x %v, want %#x", c.v, got, ok, c.want)
		}
	}
	// Sixteen elements, in one field or several, and the key is not built.
	many := strings.Repeat("gzip, ", 15) + "br"
	if _, ok := bitmap(many); ok {
		t.Error("16 elements in one field accepted")
	}
	if _, ok := bitmap(strings.Repeat("gzip, ", 14)+"br", ""); ok {
		t.Error("16 elements over two fields, an empty one included, accepted")
	}
	if _, ok := bitmap(strings.Repeat("gzip, ", 14) + "br"); !ok {
		t.Error("15 elements refused")
	}
}

func TestCacheability(t *testing.T) {
	cases := []struct {
		resp []string
		req  RequestFlags
		want bool
	}{
		{[]string{"Cache-Control: max-age=5"}, RequestFlags{}, true},
		{[]string{"ETag: \"x\""}, RequestFlags{}, true},
		{[]string{"Content-Type: text/plain"}, RequestFlags{}, false},
		{[]string{"Cache-Control: no-store, max-age=5"}, RequestFlags{}, false},
		{[]string{"Cache-Control: private", "Expires: x"}, RequestFlags{}, false},
		{[]string{"Cache-Control: max-age=5"}, RequestFlags{NoStore: true}, false},
		{[]string{"Cache-Control: public, max-age=5"}, RequestFlags{NoStore: true}, true},
		{[]string{"Cache-Control: max-age=5"}, RequestFlags{Ignore: true}, true},
		{[]string{"Cache-Control: max-age=5"}, RequestFlags{Ignore: true, NoStore: true}, false},
		{[]string{"Cache-Control: max-age=5", "Set-Cookie: a=b"}, RequestFlags{}, true},
		{[]string{"Cache-Control: max-age=5, no-cache=\"set-cookie\"", "Set-Cookie: a=b"}, RequestFlags{}, false},
		{[]string{"Cache-Control: public"}, RequestFlags{}, false},
	}
	for i, c := range cases {
		if got := Cacheable(hdr(c.resp...), c.req); got != c.want {
			t.Errorf("case %d: %v", i, got)
		}
	}
	if f := CheckRequest(hdr("Authorization: x")); !f.Ignore || !f.NoStore {
		t.Error("authorization ignored")
	}
	if f := CheckRequest(hdr("Pragma: no-cache")); !f.Ignore {
		t.Error("pragma ignored")
	}
}

func TestMaxAge(t *testing.T) {
	c, _ := newTestCache(8)
	now := c.Now()
	for _, x := range []struct {
		h         []string
		eff, true int64
	}{
		{[]string{"Cache-Control: max-age=5"}, 5, 5},
		{[]string{"Cache-Control: s-maxage=500, max-age=5"}, 60, 500},
		{[]string{"Expires: " + HTTPDate(time.Unix(now+30, 0))}, 30, 30},
		{[]string{"Expires: garbage"}, 0, 0},
		{nil, 60, -1},
	} {
		eff, tr, ok := c.MaxAge(hdr(x.h...), now)
		if !ok || eff != x.eff || tr != x.true {
			t.Errorf("%v: %d %d %v", x.h, eff, tr, ok)
		}
	}
	if _, _, ok := c.MaxAge(hdr("Cache-Control: max-age=abc"), now); ok {
		t.Error("bad max-age accepted")
	}
}

func FuzzDirective(f *testing.F) {
	for _, s := range []string{"max-age=5", "public, s-maxage=\"10\"", "max-age=", "max-age=-1", "xmax-age=3", "max-age=99999999999999999999", ",,max-age=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, found, ok := Directive([]byte(s), "max-age")
		if ok && found && n < 0 {
			t.Fatalf("negative %d", n)
		}
		h := hdr("Cache-Control: "+s, "Accept-Encoding: "+s, "Vary: "+s, "If-None-Match: "+s)
		Cacheable(h, RequestFlags{})
		CheckRequest(h)
		VarySignature(h)
		SecondaryKey(h, ^uint32(0))
		NotModified(h, &Entry{ETag: []byte(s)})
	})
}

// fuzzHeader makes a Header of the "name: value" lines of s, as a
// message's fields would give them.
func fuzzHeader(s string) Header {
	return hdr(strings.Split(s, "\n")...)
}

// FuzzHeaderReaders gives every reader of request and response fields
// the same arbitrary fields: none may panic, and what they return keeps
// the bounds the store relies on.
func FuzzHeaderReaders(f *testing.F) {
	for _, s := range []string{
		"Cache-Control: max-age=5\nAge: 3\nETag: \"a\"",
		"Cache-Control: s-maxage=\"7\", max-age=1\nExpires: Thu, 01 Jan 2099 00:00:00 GMT",
		"Expires: 0\nLast-Modified: Tue, 01 Dec 2026 00:00:00 GMT\nDate: x",
		"Age: 99999999999999999999\nCache-Control: max-age=99999999999999999999",
		"Age: -1\nCache-Control: max-age=-1",
		"Vary: accept-encoding, referer\nAccept-Encoding: gzip;q=0, br;q=0.5, *\nReferer: /a",
		"Accept-Encoding: x-gzip, identity;q=0\nContent-Encoding: gzip, br",
		"Accept-Encoding: ;q=0, ,,\nContent-Encoding: \nVary: ,",
		"If-None-Match: W/\"a\", \"b\"\nIf-Modified-Since: Wed, 02 Dec 2026 00:00:00 GMT",
		"Cache-Control: no-cache=\"set-cookie, x\", \"quoted\\\"comma,\"\nPragma: no-cache",
		"Authorization: x\nCache-Control: public",
	} {
		f.Add(s)
	}
	c, _ := newTestCache(64)
	now := c.Now()
	f.Fuzz(func(t *testing.T, s string) {
		h := fuzzHeader(s)
		req := CheckRequest(h)
		Cacheable(h, req)
		if eff, trueAge, ok := c.MaxAge(h, now); ok {
			if eff < 0 || eff > int64(c.Config.MaxAge) || trueAge < -1 {
				t.Fatalf("max age %d (true %d) out of bounds", eff, trueAge)
			}
		}
		if age, present, ok := ServerAge(h); ok && present && (age <= 0 || age > MaxEntryAge) {
			t.Fatalf("age %d kept", age)
		}
		LastModified(h, now)
		sig, _ := VarySignature(h)
		if sig&^varyAll != 0 {
			t.Fatalf("signature %#x", sig)
		}
		k1, ok1 := SecondaryKey(h, ^uint32(0))
		k2, ok2 := SecondaryKey(h, ^uint32(0))
		if k1 != k2 || ok1 != ok2 {
			t.Fatal("secondary key not deterministic")
		}
		stored := k1
		if ResponseEncoding(h, &stored) {
			if binary.LittleEndian.Uint32(stored[0:4]) == 0 {
				t.Fatal("a stored encoding bitmap is never empty")
			}
		}
		// A request accepting everything takes any stored encoding
		// that is known.
		var all [SecKeyLen]byte
		binary.LittleEndian.PutUint32(all[0:4], ^uint32(0))
		copy(all[4:], stored[4:])
		if binary.LittleEndian.Uint32(stored[0:4])&encOther == 0 && !SecKeyMatch(stored, all) {
			t.Fatal("an accept-all request refused a known encoding")
		}
		NotModified(h, &Entry{ETag: []byte(s), LastModified: now})
		h.elements("cache-control", func(e []byte) {
			if len(e) > 0 && (e[0] == ' ' || e[0] == '\t' || e[len(e)-1] == ' ' || e[len(e)-1] == '\t') {
				t.Fatalf("element %q not trimmed", e)
			}
		})
	})
}
