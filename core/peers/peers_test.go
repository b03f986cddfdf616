package peers

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"goha/core/stick"
)

func testTable() *stick.Table {
	return stick.New(stick.Config{Name: "t", Key: stick.KeyString, KeyLen: 33, Size: 100, Expire: 60000, Store: []stick.Stored{
		{Type: stick.GPC0, N: 1}, {Type: stick.ConnRate, N: 1, Period: 10000}, {Type: stick.GPC, N: 2}, {Type: stick.ServerKey, N: 1}}})
}

// Two goha peers on loopback: what one counts reaches the other.
func TestTwoPeers(t *testing.T) {
	la, _ := net.Listen("tcp", "127.0.0.1:0")
	lb, _ := net.Listen("tcp", "127.0.0.1:0")
	ta, tb := testTable(), testTable()
	a := Start(Config{Section: "s", LocalName: "A", Listener: la, Tables: []Shared{{Name: "t", Table: ta}},
		Remotes: []Remote{{Name: "B", Addr: lb.Addr().String()}}})
	defer a.Stop()
	b := Start(Config{Section: "s", LocalName: "B", Listener: lb, Tables: []Shared{{Name: "t", Table: tb}},
		Remotes: []Remote{{Name: "A", Addr: la.Addr().String()}}})
	defer b.Stop()
	now := stick.Now()
	e := ta.Get([]byte("alice"), now)
	ta.Add(e, stick.GPC0, 0, 5, now)
	ta.SetServer(e, 0, "srv1")
	ta.Release(e, now, true)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if f := tb.Lookup([]byte("alice"), stick.Now()); f != nil {
			v, _ := tb.Value(f, stick.GPC0, 0, stick.Now())
			line := string(tb.AppendEntry(nil, f, stick.Now()))
			tb.Release(f, stick.Now(), false)
			if v == 5 && strings.Contains(line, "server_key=srv1") {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the update did not reach the other peer")
}

// A stopping process teaches its tables to the one that took the local
// peer's socket over, connecting under the local peer's own name; with
// nobody listening there, HandOff gives up at once.
func TestHandOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	dup, err := net.FileListener(tf)
	tf.Close()
	if err != nil {
		t.Fatal(err)
	}
	told, tnew := testTable(), testTable()
	now := stick.Now()
	e := told.Get([]byte("alice"), now)
	told.Add(e, stick.GPC0, 0, 7, now)
	told.Release(e, now, true)
	old := Start(Config{Section: "s", LocalName: "lp", Listener: ln, LocalAddr: ln.Addr().String(),
		Tables: []Shared{{Name: "t", Table: told}}})
	defer old.Stop()
	nw := Start(Config{Section: "s", LocalName: "lp", Listener: dup, LocalAddr: ln.Addr().String(),
		Tables: []Shared{{Name: "t", Table: tnew}}})
	if !old.HandOff(5 * time.Second) {
		t.Fatal("HandOff failed")
	}
	f := tnew.Lookup([]byte("alice"), stick.Now())
	if f == nil {
		t.Fatal("the entry did not reach the new process")
	}
	v, _ := tnew.Value(f, stick.GPC0, 0, stick.Now())
	tnew.Release(f, stick.Now(), false)
	if v != 7 {
		t.Fatalf("gpc0 %d, want 7", v)
	}
	nw.Stop()
	if nw.HandOff(time.Second) {
		t.Fatal("HandOff succeeded with nobody listening")
	}
}

// A peer's messages never crash a session, whatever they hold.
func FuzzSession(f *testing.F) {
	def := []byte{10, 0x82}
	body := []byte{1, 1, 't', 6, 33}
	body = stick.AppendUvarint(body, 1<<stick.GPC0|1<<stick.ConnRate|1<<stick.GPC|1<<stick.ServerKey)
	body = append(body, 0x60)
	body = append(body, byte(stick.ConnRate), 0x10, byte(stick.GPC), 2)
	def = append(stick.AppendUvarint(def, uint64(len(body))), body...)
	upd := []byte{0, 0, 0, 1, 1, 'k', 3, 0, 1, 0, 1, 2, 5, 1, 1, 2, 's', '1'}
	f.Add(append(append(def, 10, 0x80, byte(len(upd))), upd...))
	f.Add([]byte{0, 0, 0, 4, 10, 0x83, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &Peers{cfg: Config{Tables: []Shared{{Name: "t", Table: testTable()}}}, stop: make(chan struct{}), sessions: map[string]*session{}}
		c1, c2 := net.Pipe()
		defer c1.Close()
		defer c2.Close()
		s := newSession(p, "x", c1, bufio.NewReader(bytes.NewReader(data)))
		s.readLoop()
	})
}

// A lesson (the full resync a starting peer asks for) never overwrites
// what the learner holds: an entry a stream of its own is using keeps the
// learner's values, while the entries it lacks come in.
func TestLessonKeepsLocalEntries(t *testing.T) {
	la, _ := net.Listen("tcp", "127.0.0.1:0")
	lb, _ := net.Listen("tcp", "127.0.0.1:0")
	ta, tb := testTable(), testTable()
	now := stick.Now()
	for _, kv := range []struct {
		t   *stick.Table
		key string
		v   int64
	}{{tb, "alice", 1}, {tb, "carol", 3}} {
		e := kv.t.Get([]byte(kv.key), now)
		kv.t.Add(e, stick.GPC0, 0, kv.v, now)
		kv.t.Release(e, now, true)
	}
	// A's stream holds alice while the lesson comes.
	held := ta.Get([]byte("alice"), now)
	ta.Add(held, stick.GPC0, 0, 5, now)
	b := Start(Config{Section: "s", LocalName: "B", Listener: lb, Tables: []Shared{{Name: "t", Table: tb}},
		Remotes: []Remote{{Name: "A", Addr: la.Addr().String()}}})
	defer b.Stop()
	a := Start(Config{Section: "s", LocalName: "A", Listener: la, Tables: []Shared{{Name: "t", Table: ta}},
		Remotes: []Remote{{Name: "B", Addr: lb.Addr().String()}}})
	defer a.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if e := ta.Lookup([]byte("carol"), stick.Now()); e != nil {
			ta.Release(e, stick.Now(), false)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lesson did not come")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v, _ := ta.Value(held, stick.GPC0, 0, stick.Now()); v != 5 {
		t.Fatalf("alice's gpc0 is %d after the lesson, want the learner's 5", v)
	}
	ta.Release(held, stick.Now(), true)
}
