package ring

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func events(r *Ring) []string {
	var out []string
	for _, e := range r.Events() {
		out = append(out, string(e))
	}
	return out
}

// A ring nobody reads keeps the newest events and counts nothing.
func TestRingWrapsWithoutReaders(t *testing.T) {
	r := New("t", 64)
	for i := 0; i < 20; i++ {
		if !r.Write([]byte(fmt.Sprintf("event-%02d", i))) {
			t.Fatalf("write %d refused", i)
		}
	}
	got := events(r)
	// Each record takes 1 length byte + 8 bytes: 7 fit in 64.
	if len(got) != 7 || got[0] != "event-13" || got[6] != "event-19" {
		t.Fatalf("kept %v", got)
	}
	if r.Dropped() != 0 {
		t.Fatalf("dropped = %d", r.Dropped())
	}
}

// A reader standing on the oldest event makes new events drop; the drops
// are announced once there is room, before the next event.
func TestRingDropsAndAnnounces(t *testing.T) {
	r := New("t", 64)
	rd, err := r.Attach(false)
	if err != nil {
		t.Fatal(err)
	}
	var stored int
	for i := 0; i < 20; i++ {
		if r.Write([]byte(fmt.Sprintf("event-%02d", i))) {
			stored++
		}
	}
	if stored != 7 || r.Dropped() != 13 {
		t.Fatalf("stored %d, dropped %d", stored, r.Dropped())
	}
	out, n, err := rd.Fill(nil, 0, FrameLF)
	if err != nil || n != 7 {
		t.Fatalf("fill: n=%d err=%v", n, err)
	}
	if !strings.HasPrefix(string(out), "event-00\nevent-01\n") {
		t.Fatalf("oldest not kept: %q", out)
	}
	r.Write([]byte("after"))
	out, _, _ = rd.Fill(nil, 0, FrameLF)
	if string(out) != "13 events dropped\nafter\n" {
		t.Fatalf("after catch-up: %q", out)
	}
	if r.Dropped() != 0 || r.TotalDropped() != 13 {
		t.Fatalf("dropped %d total %d", r.Dropped(), r.TotalDropped())
	}
	// One drop is announced in the singular.
	for r.Write([]byte("filler-x")) {
	}
	rd.Fill(nil, 0, FrameLF)
	r.Write([]byte("next"))
	out, _, _ = rd.Fill(nil, 0, FrameLF)
	if string(out) != "1 event dropped\nnext\n" {
		t.Fatalf("singular: %q", out)
	}
}

// The announcement is short, so it may fit where the event did not; when
// it does not fit either, the event is dropped too and counted.
func TestRingAnnouncementOrder(t *testing.T) {
	r := New("t", 40)
	rd, _ := r.Attach(false)
	r.Write([]byte(strings.Repeat("a", 20))) // 21 bytes
	if r.Write([]byte(strings.Repeat("b", 20))) {
		t.Fatal("second event should not fit")
	}
	// 19 bytes free: "1 event dropped" (16 bytes) fits, the event does not.
	if r.Write([]byte(strings.Repeat("c", 20))) {
		t.Fatal("third event should not fit")
	}
	if got := events(r); len(got) != 2 || got[1] != "1 event dropped" {
		t.Fatalf("ring holds %q", got)
	}
	if r.Dropped() != 1 || r.TotalDropped() != 2 {
		t.Fatalf("dropped %d total %d", r.Dropped(), r.TotalDropped())
	}
	rd.Fill(nil, 0, FrameLF)
	r.Write([]byte("d"))
	if got := events(r); got[len(got)-2] != "1 event dropped" || got[len(got)-1] != "d" {
		t.Fatalf("ring holds %q", got)
	}
}

func TestRingOversizeDropped(t *testing.T) {
	r := New("t", 32)
	if r.Write(make([]byte, 40)) {
		t.Fatal("stored an event larger than the ring")
	}
	if r.Dropped() != 1 {
		t.Fatalf("dropped %d", r.Dropped())
	}
}

func TestReaderFromEndAndLimit(t *testing.T) {
	r := New("t", 1024)
	r.Write([]byte("old"))
	rd, _ := r.Attach(true)
	r.Write([]byte("new1"))
	r.Write([]byte(strings.Repeat("x", 100)))
	r.Write([]byte("new2"))
	out, n, _ := rd.Fill(nil, 20, FrameOctet)
	if string(out) != "4 new1" || n != 1 {
		t.Fatalf("first batch %q", out)
	}
	// The 100-byte event can never fit in 20 bytes: it is skipped.
	out, n, _ = rd.Fill(nil, 20, FrameOctet)
	if string(out) != "4 new2" || n != 1 {
		t.Fatalf("second batch %q n=%d", out, n)
	}
	select {
	case <-rd.Wake():
	default:
		t.Fatal("no wake-up after writes")
	}
	rd.Close()
	if _, _, err := rd.Fill(nil, 0, FrameLF); err != ErrReaderClosed {
		t.Fatalf("fill after close: %v", err)
	}
}

func TestTooManyReaders(t *testing.T) {
	r := New("t", 64)
	for i := 0; i < MaxReaders; i++ {
		if _, err := r.Attach(false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Attach(false); err != ErrTooManyReaders {
		t.Fatalf("err = %v", err)
	}
}

func TestResizeKeepsEvents(t *testing.T) {
	r := New("t", 32)
	r.Write([]byte("abcdefghijklmnopqrst"))
	r.Write([]byte("0123456789ab")) // evicts the first, wraps
	if err := r.Resize(100); err != nil {
		t.Fatal(err)
	}
	if got := events(r); len(got) != 1 || got[0] != "0123456789ab" {
		t.Fatalf("after resize %q", got)
	}
	if err := r.Resize(5); err == nil || !strings.Contains(err.Error(), "smaller than contents") {
		t.Fatalf("shrink below contents: %v", err)
	}
}

func TestBackingFileSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.bin")
	r := New("t", 128)
	if err := r.SetBackingFile(path); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		r.Write([]byte(fmt.Sprintf("ev%02d", i)))
	}
	want := events(r)
	if err := r.Unmap(); err != nil {
		t.Fatal(err)
	}
	r2 := New("t", 128)
	if err := r2.SetBackingFile(path); err != nil {
		t.Fatal(err)
	}
	if got := events(r2); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after restart %v, want %v", got, want)
	}
	r2.Write([]byte("ev30"))
	r2.Unmap()

	// A different size does not reuse the file: it is moved aside.
	r3 := New("t", 256)
	if err := r3.SetBackingFile(path); err != nil {
		t.Fatal(err)
	}
	if got := events(r3); len(got) != 0 {
		t.Fatalf("resized ring kept %v", got)
	}
	if _, err := os.Stat(path + ".bak"); err != nil {
		t.Fatalf("no .bak: %v", err)
	}
	r3.Unmap()

	// A corrupted file is moved aside too.
	data, _ := os.ReadFile(path)
	data[backingHeader] = 0xff
	data[backingHeader+1] = 0xff
	data[24] = 50 // tail
	os.WriteFile(path, data, 0o600)
	r4 := New("t", 256)
	r4.Write([]byte("mine"))
	if err := r4.SetBackingFile(path); err != nil {
		t.Fatal(err)
	}
	if got := events(r4); len(got) != 1 || got[0] != "mine" {
		t.Fatalf("corrupted file gave %v", got)
	}
	r4.Unmap()
}

func TestLogUsesRingFormatAndMaxlen(t *testing.T) {
	r := New("t", 1024)
	r.Format = FormatShort
	r.MaxLen = 10
	m := &Meta{Facility: 16, Level: LevelInfo}
	r.Log(m, FormatRFC5424, 100, []byte("0123456789abcdef"))
	r.Format = FormatUnspec
	r.MaxLen = 0
	r.Log(m, FormatPriority, 8, []byte("0123456789abcdef"))
	if got := events(r); got[0] != "<6>0123456" || got[1] != "<134>012" {
		t.Fatalf("got %q", got)
	}
}

func BenchmarkRingWrite(b *testing.B) {
	r := New("t", 1<<20)
	r.Format = FormatRFC5424
	m := &Meta{Facility: 16, Level: LevelInfo, Tag: []byte("haproxy"), PID: []byte("1")}
	msg := []byte(`127.0.0.1:41234 [29/Nov/2026:20:48:56.256] fe be/s1 0/0/0/1/1 200 120 - - ---- 1/1/0/0/0 0/0 "GET / HTTP/1.1"`)
	b.ReportAllocs()
	for b.Loop() {
		r.Log(m, FormatRFC5424, 1023, msg)
	}
}
