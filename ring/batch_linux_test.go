package ring

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Lines sent to a UDP target from many goroutines arrive whole, each
// once, and in the order each goroutine sent them, whether they leave
// alone or in batches.
func TestUDPBatchesKeepOrder(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	pc.(*net.UDPConn).SetReadBuffer(8 << 20)
	l, err := ParseLogArgs([]string{pc.LocalAddr().String(), "format", "raw", "local0"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Open(NewRegistry()); err != nil {
		t.Fatal(err)
	}
	if l.batch == nil {
		t.Skip("no sendmmsg on this architecture")
	}
	const senders, each = 4, 500
	m := &Meta{Facility: -1, Level: LevelInfo}
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.Send(m, fmt.Appendf(nil, "g%d n%d", g, i))
				if i%50 == 0 {
					time.Sleep(time.Millisecond) // some batches start alone
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
	next := make([]int, senders)
	buf := make([]byte, 2048)
	got := 0
	for got+int(l.Dropped()) < senders*each {
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %d datagrams (%d dropped): %v", got, l.Dropped(), err)
		}
		var g, i int
		if _, err := fmt.Sscanf(string(buf[:n]), "g%d n%d\n", &g, &i); err != nil || g < 0 || g >= senders {
			t.Fatalf("datagram %q", buf[:n])
		}
		if i < next[g] {
			t.Fatalf("g%d: n%d after n%d", g, i, next[g]-1)
		}
		next[g] = i + 1
		got++
	}
	if l.Dropped() != 0 {
		t.Errorf("%d lines dropped with room to spare", l.Dropped())
	}
}

// A line that finds the batch full sends the batch itself first: nothing
// is dropped while the socket has room, and the order holds.
func TestUDPBatchFullIsSent(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	pc.(*net.UDPConn).SetReadBuffer(1 << 20)
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var dropped atomic.Uint64
	b := newUDPBatcher(c, &dropped)
	if b == nil {
		t.Skip("no sendmmsg on this architecture")
	}
	// Holding fmu keeps the sender goroutine from flushing: the batch
	// fills, and the line after it must wait for fmu (the send), not drop.
	b.fmu.Lock()
	for i := range batchMax {
		b.add(fmt.Appendf(nil, "line %d\n", i))
	}
	late := make(chan struct{})
	go func() {
		b.add([]byte(fmt.Sprintf("line %d\n", batchMax)))
		close(late)
	}()
	select {
	case <-late:
		t.Fatal("a line went past a full batch")
	case <-time.After(50 * time.Millisecond):
	}
	b.fmu.Unlock()
	<-late
	b.close()
	if dropped.Load() != 0 {
		t.Errorf("dropped %d", dropped.Load())
	}
	buf := make([]byte, 128)
	for i := range batchMax + 1 {
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil || string(buf[:n]) != fmt.Sprintf("line %d\n", i) {
			t.Fatalf("datagram %d: %q %v", i, buf[:n], err)
		}
	}
}
