package lb

import (
	"bytes"
	"strings"
	"testing"
)

func TestHashFunctions(t *testing.T) {
	// The CRC-32 check value.
	if got := CRC32([]byte("123456789")); got != 0xcbf43926 {
		t.Fatalf("crc32 check value %x", got)
	}
	// Empty input gives each function's seed.
	for name, want := range map[string]uint32{"sdbm": 0, "djb2": 5381, "wt6": 0xa53c965a ^ 0x5ca6953a, "crc32": 0} {
		f, _ := HashFuncByName(name)
		if got := f(nil); got != want {
			t.Errorf("%s(\"\") = %x want %x", name, got, want)
		}
	}
	// One byte, worked by hand from the definitions.
	if got := SDBM([]byte("a")); got != 97 {
		t.Errorf("sdbm(a) = %d", got)
	}
	if got := DJB2([]byte("a")); got != 5381*33+97 {
		t.Errorf("djb2(a) = %d", got)
	}
	// FullHash must be a bijection for the ring's points to be unique.
	seen := map[uint32]bool{}
	for a := uint32(0); a < 1<<16; a++ {
		h := FullHash(a * 4096)
		if seen[h] {
			t.Fatalf("FullHash collision at %d", a)
		}
		seen[h] = true
	}
	h := HashType{Func: DJB2, Avalanche: true}
	if h.Sum([]byte("x")) != FullHash(DJB2([]byte("x"))) {
		t.Fatal("avalanche not applied after the function")
	}
	x := XXH64(func(b []byte) uint64 { return 0x1234567890abcdef })
	if x(nil) != 0x90abcdef {
		t.Fatal("xxh64 adapter keeps the low 32 bits")
	}
}

func TestSourceHash(t *testing.T) {
	if got := SourceHash([]byte{10, 0, 0, 1}, HashType{}); got != 0x0a000001 {
		t.Fatalf("ipv4: %x", got)
	}
	v6 := []byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	if got := SourceHash(v6, HashType{}); got != 0x20010db8^1 {
		t.Fatalf("ipv6: %x", got)
	}
	if got := SourceHash([]byte{10, 0, 0, 1}, HashType{Avalanche: true}); got != FullHash(0x0a000001) {
		t.Fatalf("avalanche: %x", got)
	}
}

func TestURIKey(t *testing.T) {
	for _, tc := range []struct {
		b        Balance
		uri, key string
	}{
		{Balance{}, "/a/b/c?x=1", "/a/b/c"},
		{Balance{Whole: true}, "/a/b/c?x=1", "/a/b/c?x=1"},
		{Balance{Depth: 1}, "/a/b/c", "/a"},
		{Balance{Depth: 2}, "/a/b/c", "/a/b"},
		{Balance{Depth: 5}, "/a/b", "/a/b"},
		{Balance{Len: 4}, "/abcdef", "/abc"},
		{Balance{Len: 4, Whole: true}, "/a?bcdef", "/a?b"},
		{Balance{PathOnly: true}, "http://h.example/p/q?r", "/p/q"},
		{Balance{PathOnly: true, Whole: true}, "https://h.example:8443/p?r", "/p?r"},
		{Balance{PathOnly: true}, "http://h.example", ""},
		{Balance{PathOnly: true}, "*", ""},
		{Balance{PathOnly: true}, "/only/path", "/only/path"},
		{Balance{}, "http://h/x?y", "http://h/x"},
	} {
		if got := string(URIKey([]byte(tc.uri), &tc.b)); got != tc.key {
			t.Errorf("%+v %q: got %q want %q", tc.b, tc.uri, got, tc.key)
		}
	}
}

func TestFindParams(t *testing.T) {
	for _, tc := range []struct {
		uri, name, val string
		ok             bool
	}{
		{"/p?user=joe&x=1", "user", "joe", true},
		{"/p?x=1&user=joe", "user", "joe", true},
		{"/p?x=1&user=", "user", "", true},
		{"/p?x=1&user=a", "user", "a", true},
		{"/p?auser=joe", "user", "", false},
		{"/p?user", "user", "", false},
		{"/p", "user", "", false},
		{"/p?user=a=b&c", "user", "a=b", true},
	} {
		v, ok := FindURLParam([]byte(tc.uri), tc.name)
		if ok != tc.ok || string(v) != tc.val {
			t.Errorf("%q: got %q,%v want %q,%v", tc.uri, v, ok, tc.val, tc.ok)
		}
	}
	if v, ok := FindPostParam([]byte("a=1&id=42&b=2"), "id"); !ok || string(v) != "42" {
		t.Errorf("post: %q %v", v, ok)
	}
	if _, ok := FindPostParam([]byte("id=\x01\x02"), "id"); ok {
		t.Error("binary body taken for a form")
	}
	if v, ok := FindPostParam([]byte("id= x"), "id"); !ok || len(v) != 0 {
		t.Errorf("leading space: %q %v", v, ok)
	}
}

func TestHostDomain(t *testing.T) {
	for in, want := range map[string]string{
		"www.example.com": "example", "example.com": "example", "localhost": "localhost",
		"a.b.": "b", "": "", "x.y.z.example.org": "example",
	} {
		if got := string(HostDomain([]byte(in))); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

func TestParseBalance(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Balance
		wantErr string
	}{
		{"", Balance{Algo: RoundRobin}, ""},
		{"roundrobin", Balance{Algo: RoundRobin}, ""},
		{"static-rr", Balance{Algo: StaticRR}, ""},
		{"leastconn", Balance{Algo: LeastConn}, ""},
		{"first", Balance{Algo: First}, ""},
		{"source", Balance{Algo: Source}, ""},
		{"random", Balance{Algo: Random, Draws: 2}, ""},
		{"random(5)", Balance{Algo: Random, Draws: 5}, ""},
		{"random()", Balance{Algo: Random, Draws: 2}, ""},
		{"random(0)", Balance{}, "number of draws must be at least 1"},
		{"random(3", Balance{}, "random : missing closing parenthesis."},
		{"random(3x)", Balance{}, "unexpected character 'x'"},
		{"uri", Balance{Algo: URI}, ""},
		{"uri whole len 10 depth 3 path-only", Balance{Algo: URI, Whole: true, Len: 10, Depth: 3, PathOnly: true}, ""},
		{"uri len", Balance{}, "uri : 'len' expects a positive integer (got '')."},
		{"uri depth -1", Balance{}, "'depth' expects a positive integer (got '-1')"},
		{"uri foo", Balance{}, "uri only accepts parameters 'len', 'depth', 'path-only', and 'whole' (got 'foo')."},
		{"url_param userid", Balance{Algo: URLParam, Param: "userid"}, ""},
		{"url_param userid check_post", Balance{Algo: URLParam, Param: "userid", CheckPost: true}, ""},
		{"url_param", Balance{}, "url_param requires an URL parameter name."},
		{"url_param id foo", Balance{}, "only accepts 'check_post' modifier"},
		{"hdr(Host)", Balance{Algo: Hdr, Header: "Host"}, ""},
		{"hdr(host) use_domain_only", Balance{Algo: Hdr, Header: "host", DomainOnly: true}, ""},
		{"hdr()", Balance{}, "hdr requires an http header field name."},
		{"hdr(x", Balance{}, "hdr requires an http header field name."},
		{"hdr(x) foo", Balance{}, "only accepts 'use_domain_only' modifier"},
		{"vnswrr", Balance{Algo: VNSWRR}, ""},
		{"vnswrr max_init=3", Balance{Algo: VNSWRR, MaxInit: 3}, ""},
		{"vnswrr max_init=x", Balance{}, "'max_init' expects a non-negative integer"},
		{"vnswrr foo", Balance{}, "vnswrr only accepts"},
		{"swrr", Balance{}, "only supports 'roundrobin'"},
		{"rdp-cookie(x)", Balance{}, "'rdp-cookie(x)' is not supported by goha."},
		{"hash req.cookie(id)", Balance{}, "'hash' is not supported by goha."},
		{"bogus", Balance{}, "only supports 'roundrobin', 'static-rr', 'leastconn', 'source', 'uri', 'url_param', 'hdr(name)' and 'rdp-cookie(name)' options."},
	} {
		got, err := ParseBalance(strings.Fields(tc.in))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %+v, %v want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseHashType(t *testing.T) {
	xx := XXH64(func(b []byte) uint64 { return uint64(len(b)) })
	for _, tc := range []struct {
		in         string
		cons, aval bool
		fn         string
		wantErr    string
	}{
		{"map-based", false, false, "sdbm", ""},
		{"consistent", true, true, "sdbm", ""},
		{"consistent sdbm", true, false, "sdbm", ""},
		{"consistent djb2 avalanche", true, true, "djb2", ""},
		{"map-based wt6", false, false, "wt6", ""},
		{"map-based crc32 avalanche", false, true, "crc32", ""},
		{"map-based xxh64", false, false, "xxh64", ""},
		{"avalanche", false, false, "", "is not supported anymore"},
		{"", false, false, "", "'hash-type' only supports 'consistent' and 'map-based'."},
		{"consistent md5", false, false, "", "'hash-type' only supports 'sdbm', 'djb2', 'crc32', or 'wt6' hash functions."},
		{"consistent sdbm foo", false, false, "", "'hash-type' only supports 'avalanche' as a modifier for hash functions."},
	} {
		h, err := ParseHashType(strings.Fields(tc.in), map[string]HashFunc{"xxh64": xx})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || h.Consistent != tc.cons || h.Avalanche != tc.aval || h.FuncName != tc.fn {
			t.Errorf("%q: got %+v %v", tc.in, h, err)
		}
	}
}

// The extraction helpers return sub-slices of their input and never
// allocate.
func TestKeyHelpersDoNotAllocate(t *testing.T) {
	uri := []byte("http://h.example/a/b/c?x=1&user=joe&z=2")
	b := &Balance{Depth: 2, PathOnly: true}
	h := HashType{Func: WT6, Avalanche: true}
	n := testing.AllocsPerRun(100, func() {
		_ = h.Sum(URIKey(uri, b))
		v, _ := FindURLParam(uri, "user")
		_ = h.Sum(v)
		_ = HostDomain(uri[7:16])
	})
	if n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func FuzzParseBalance(f *testing.F) {
	for _, s := range []string{"roundrobin", "random(3)", "random(", "uri len 3 depth 2 whole", "hdr(x) use_domain_only", "url_param a check_post", "vnswrr max_init=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBalance(strings.Fields(s))
		if err == nil && b.Algo == Random && b.Draws < 1 {
			t.Fatalf("%q: %d draws", s, b.Draws)
		}
		_, _ = ParseHashType(strings.Fields(s), nil)
	})
}

func FuzzKeyHelpers(f *testing.F) {
	for _, s := range []string{"/a/b?c=d", "http://x/y?z", "*", "?=&", "a.b.c", "/p?user=&user=1"} {
		f.Add([]byte(s), "user", 2, 3)
	}
	f.Fuzz(func(t *testing.T, in []byte, name string, depth, ln int) {
		within := func(sub []byte) {
			if len(sub) > 0 && !bytes.Contains(in, sub) {
				t.Fatalf("%q is not part of %q", sub, in)
			}
		}
		b := &Balance{Depth: depth % 8, Len: ln % 64, Whole: depth%2 == 0, PathOnly: ln%2 == 0}
		if b.Depth < 0 || b.Len < 0 {
			b.Depth, b.Len = 0, 0
		}
		within(URIKey(in, b))
		v, _ := FindURLParam(in, name)
		within(v)
		v, _ = FindPostParam(in, name)
		within(v)
		within(HostDomain(in))
		within(HeaderValue(in))
		_ = SourceHash(in, HashType{Avalanche: true})
	})
}

func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"a":             "a",
		"  a , b":       "a",
		`"x,y", z`:      `"x,y"`,
		`"x\",y", z`:    `"x\",y"`,
		", b":           "",
		"\t k \t":       "k",
		"":              "",
		`"unterminated`: `"unterminated`,
	} {
		if got := string(HeaderValue([]byte(in))); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

func TestConfigKey(t *testing.T) {
	h := HashType{Func: DJB2}
	hdr := func(name string) []byte {
		if name == "X-User" {
			return []byte(" bob , carol")
		}
		return nil
	}
	for _, tc := range []struct {
		b    Balance
		r    Request
		want []byte // hashed input; nil: no hash
	}{
		{Balance{Algo: URI}, Request{URI: []byte("/a?b")}, []byte("/a")},
		{Balance{Algo: URLParam, Param: "id"}, Request{URI: []byte("/a?id=7")}, []byte("7")},
		{Balance{Algo: URLParam, Param: "id"}, Request{URI: []byte("/a"), Post: true, Body: []byte("id=9")}, []byte("9")},
		{Balance{Algo: URLParam, Param: "id"}, Request{URI: []byte("/a"), Body: []byte("id=9")}, nil},
		{Balance{Algo: Hdr, Header: "X-User"}, Request{Header: hdr}, []byte("bob")},
		{Balance{Algo: Hdr, Header: "X-Other"}, Request{Header: hdr}, nil},
		{Balance{Algo: Hdr, Header: "X-User"}, Request{}, nil},
		{Balance{Algo: RoundRobin}, Request{URI: []byte("/")}, nil},
	} {
		c := Config{Balance: tc.b, Hash: h}
		k := c.Key(&tc.r)
		if tc.want == nil {
			if k.HasHash {
				t.Errorf("%+v: hash where none was expected", tc.b)
			}
			continue
		}
		if !k.HasHash || k.Hash != DJB2(tc.want) {
			t.Errorf("%+v: key %+v, want the hash of %q", tc.b, k, tc.want)
		}
	}
	c := Config{Balance: Balance{Algo: Source}}
	if k := c.Key(&Request{Src: []byte{1, 2, 3, 4}}); !k.HasHash || k.Hash != 0x01020304 {
		t.Errorf("source: %+v", k)
	}
	if k := c.Key(&Request{Src: []byte{1, 2}}); k.HasHash {
		t.Error("source with a bad address hashed")
	}
}
