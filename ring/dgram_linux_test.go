package ring

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// Datagrams already queued come back from one read, whole, in order, each
// with its sender's address; a later read waits for the next one.
func TestBatchReader(t *testing.T) {
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	u, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	want := []string{"a", "", "ccc", string(make([]byte, 65000)), "e", "f"}
	for _, m := range want {
		if _, err := u.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	br := newBatchReader(pc)
	if br == nil {
		t.Fatal("no batch reader for a UDP socket")
	}
	var got []string
	for len(got) < len(want) {
		n, err := br.read()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 && n < 2 {
			t.Errorf("first read returned %d datagrams, want several", n)
		}
		for i := range n {
			msg, src := br.msg(i)
			if src != netip.MustParseAddr("127.0.0.1") {
				t.Errorf("source %v", src)
			}
			got = append(got, string(msg))
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("datagram %d: got %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}
	done := make(chan int)
	go func() {
		n, _ := br.read()
		done <- n
	}()
	select {
	case n := <-done:
		t.Fatalf("read returned %d datagrams with none sent", n)
	case <-time.After(50 * time.Millisecond):
	}
	u.Write([]byte("late"))
	if n := <-done; n != 1 {
		t.Fatalf("read returned %d, want 1", n)
	}
	if msg, _ := br.msg(0); string(msg) != "late" {
		t.Errorf("got %q", msg)
	}
}

// The relay reads without allocating, whatever the load.
func TestBatchReaderAllocs(t *testing.T) {
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	u, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	br := newBatchReader(pc)
	msg := []byte("<14>1 - - app - - - m")
	allocs := testing.AllocsPerRun(200, func() {
		u.Write(msg)
		if n, err := br.read(); err != nil || n != 1 {
			t.Fatalf("read: %d, %v", n, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per read", allocs)
	}
}
