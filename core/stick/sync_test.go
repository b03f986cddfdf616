package stick

import (
	"bytes"
	"strings"
	"testing"
)

// The peers protocol's integers: one byte below 240, then 4 bits in the
// first byte and 7 per byte after, as HAProxy's intencode writes them.
func TestUvarint(t *testing.T) {
	for _, c := range []struct {
		v   uint64
		enc []byte
	}{
		{0, []byte{0}}, {239, []byte{0xef}}, {240, []byte{0xf0, 0x00}}, {241, []byte{0xf1, 0x00}},
		{2287, []byte{0xff, 0x7f}}, {2288, []byte{0xf0, 0x80, 0x00}},
	} {
		got := AppendUvarint(nil, c.v)
		if !bytes.Equal(got, c.enc) {
			t.Errorf("%d: %x, want %x", c.v, got, c.enc)
		}
		if v, n := Uvarint(got); v != c.v || n != len(got) {
			t.Errorf("%x: %d (%d bytes)", got, v, n)
		}
	}
	if _, n := Uvarint([]byte{0xf0, 0x80}); n != 0 {
		t.Error("truncated integer read")
	}
}

func FuzzUvarint(f *testing.F) {
	f.Add(uint64(0), []byte{0xf0})
	f.Add(uint64(1<<63), []byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v uint64, b []byte) {
		if got, n := Uvarint(AppendUvarint(nil, v)); got != v || n == 0 {
			t.Fatalf("%d round trip: %d", v, got)
		}
		Uvarint(b)
	})
}

// An entry's values go out and come back in as HAProxy encodes them: a
// table that receives its own encoding holds the same values.
func TestPeerValuesRoundTrip(t *testing.T) {
	cfg := Config{Name: "t", Key: KeyString, KeyLen: 33, Size: 10, Expire: 60000, Store: []Stored{
		{Type: ServerID, N: 1}, {Type: ConnRate, N: 1, Period: 10000}, {Type: HTTPReqCnt, N: 1},
		{Type: ServerKey, N: 1}, {Type: GPC, N: 2}, {Type: BytesInCnt, N: 1}}}
	a, b := New(cfg), New(cfg)
	now := Now()
	e := a.Get([]byte("k"), now)
	a.Add(e, ConnRate, 0, 3, now)
	a.Add(e, HTTPReqCnt, 0, 7, now)
	a.Add(e, GPC, 1, 2, now)
	a.Add(e, BytesInCnt, 0, 1<<40, now)
	a.SetServer(e, 4, "s4")
	var buf []byte
	buf = a.AppendPeerKey(buf, e)
	buf = a.AppendPeerValues(buf, e, now)
	key, n, err := b.PeerKey(buf)
	if err != nil || string(key) != "k" {
		t.Fatal(key, err)
	}
	f := b.Get(key, now)
	def := &RemoteDef{Types: a.StoredMask()}
	def.N[GPC] = 2
	if err := b.ApplyPeerValues(f, def, buf[n:], map[uint64]string{}, now, 60000); err != nil {
		t.Fatal(err)
	}
	// The lines less the entries' addresses.
	_, x, _ := strings.Cut(string(a.AppendEntry(nil, e, now)), ": ")
	_, y, _ := strings.Cut(string(b.AppendEntry(nil, f, now)), ": ")
	if x != y || !strings.Contains(y, "server_key=s4") || !strings.Contains(y, "bytes_in_cnt=1099511627776") {
		t.Fatalf("sent %s\ngot  %s", x, y)
	}
	if err := b.ApplyPeerValues(f, def, buf[n:len(buf)-1], map[uint64]string{}, now, 0); err == nil {
		t.Fatal("a truncated update applied")
	}
}
