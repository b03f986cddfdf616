package stick

import (
	"net/netip"
	"regexp"
	"testing"
)

const t0 = clockOrigin

// HAProxy's rates: events of the current period plus the share of the
// previous period that the window still covers; an idle period or two
// brings it to nothing; one event read alone stays one.
func TestRate(t *testing.T) {
	r := make([]uint64, 3)
	const p = 1000
	addRate(r, p, 1, t0)
	if v := readRate(r, p, t0+500); v != 1 {
		t.Fatalf("one event: %d", v)
	}
	for i := 0; i < 9; i++ {
		addRate(r, p, 1, t0+900)
	}
	if v := readRate(r, p, t0+999); v != 10 {
		t.Fatalf("ten events in the period: %d", v)
	}
	// A quarter into the next period, three quarters of the previous
	// ten count, plus the new events.
	addRate(r, p, 2, t0+1250)
	if v := readRate(r, p, t0+1250); v != 2+10*750/1000 {
		t.Fatalf("next period: %d, want %d", v, 2+10*750/1000)
	}
	if v := readRate(r, p, t0+2500); v != 2*500/1000 {
		t.Fatalf("a period later: %d", v)
	}
	if v := readRate(r, p, t0+4000); v != 0 {
		t.Fatalf("two periods later: %d", v)
	}
	addRate(r, p, 1, t0+10000)
	if v := readRate(r, p, t0+10001); v != 1 {
		t.Fatalf("after idling: %d", v)
	}
}

func testTable(size int, expire int64) *Table {
	return New(Config{Name: "t", Key: KeyIP, KeyLen: 4, Size: size, Expire: expire, Store: []Stored{
		{Type: GPT0, N: 1}, {Type: GPC0, N: 1}, {Type: GPC0Rate, N: 1, Period: 10000},
		{Type: ConnRate, N: 1, Period: 10000}, {Type: HTTPReqCnt, N: 1}, {Type: GPC, N: 2}, {Type: GPCRate, N: 2, Period: 1000},
	}})
}

func key(s string) []byte {
	k, _ := KeyFromAddr(nil, KeyIP, netip.MustParseAddr(s))
	return k
}

// show table's entry line: key, users, expiry, then the data in HAProxy's
// order, rates with their period and arrays with their index.
func TestAppendEntry(t *testing.T) {
	tb := testTable(10, 60000)
	e := tb.Get(key("127.0.0.1"), t0)
	tb.Add(e, ConnRate, 0, 1, t0)
	tb.Add(e, HTTPReqCnt, 0, 1, t0)
	tb.Add(e, GPC, 1, 5, t0)
	got := string(tb.AppendEntry(nil, e, t0+5))
	want := `^0x[0-9a-f]+: key=127\.0\.0\.1 use=0 exp=59995 gpt0=0 gpc0=0 gpc0_rate\(10000\)=0 conn_rate\(10000\)=1 http_req_cnt=1 gpc0=0 gpc1=5 gpc0_rate\(1000\)=0 gpc1_rate\(1000\)=0\n$`
	if !regexp.MustCompile(want).MatchString(got) {
		t.Fatalf("got %q", got)
	}
	if h := string(tb.AppendHead(nil)); h != "# table: t, type: ip, size:10, used:1\n" {
		t.Fatalf("head %q", h)
	}
}

// An entry nobody tracks expires; a tracked one does not; a full table
// makes room by dropping the entry that expires first, and a nopurge
// table refuses new keys instead.
func TestExpireAndPurge(t *testing.T) {
	tb := testTable(2, 1000)
	a := tb.Get(key("10.0.0.1"), t0)
	tb.Release(a, t0, true)
	b := tb.Get(key("10.0.0.2"), t0+100)
	if tb.Lookup(key("10.0.0.1"), t0+1001) != nil {
		t.Fatal("expired entry found")
	}
	if e := tb.Lookup(key("10.0.0.2"), t0+5000); e == nil {
		t.Fatal("tracked entry expired")
	} else {
		tb.Release(e, t0+5000, false)
	}
	tb.Release(b, t0+5000, true)
	c := tb.Get(key("10.0.0.3"), t0+5000)
	d := tb.Get(key("10.0.0.4"), t0+5100)
	if c == nil || d == nil || tb.Used() != 2 {
		t.Fatalf("purge: used %d", tb.Used())
	}
	if e := tb.Get(key("10.0.0.5"), t0+5200); e != nil {
		t.Fatal("a full table of tracked entries took another")
	}
	np := New(Config{Name: "np", Key: KeyIP, KeyLen: 4, Size: 1, NoPurge: true})
	x := np.Get(key("10.0.0.1"), t0)
	np.Release(x, t0, false)
	if np.Get(key("10.0.0.2"), t0) != nil {
		t.Fatal("nopurge table purged")
	}
}

func TestKeys(t *testing.T) {
	if k := KeyFromBytes(nil, KeyString, 4, []byte("abcdef")); string(k) != "abc" {
		t.Fatalf("string key %q", k)
	}
	if k := KeyFromBytes(nil, KeyBinary, 4, []byte("ab")); string(k) != "ab\x00\x00" {
		t.Fatalf("binary key %q", k)
	}
	if _, ok := KeyFromAddr(nil, KeyIP, netip.MustParseAddr("::1")); ok {
		t.Fatal("IPv6 address in an ip table")
	}
	if k, ok := KeyFromAddr(nil, KeyIP, netip.MustParseAddr("::ffff:1.2.3.4")); !ok || string(appendKey(nil, KeyIP, string(k))) != "1.2.3.4" {
		t.Fatal("mapped address")
	}
	if s := string(appendKey(nil, KeyString, "a b=c\\\x01")); s != `a\ b\=c\\\x01` {
		t.Fatalf("text key %q", s)
	}
	if s := string(appendKey(nil, KeyInteger, string(KeyFromInt(nil, 42)))); s != "42" {
		t.Fatalf("integer key %q", s)
	}
}
