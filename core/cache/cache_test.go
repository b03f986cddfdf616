package cache

import (
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
