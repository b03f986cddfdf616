package ring

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// A write larger than the socket buffers waits for the peer to read and
// delivers every byte in order; the write deadline bounds a write the
// peer never reads; a write to a closed peer fails instead of raising
// SIGPIPE.
func TestRawWriter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	w := newRawWriter(c)
	if w == nil {
		t.Fatal("no raw writer for a TCP connection")
	}

	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(big))))
		got <- b
	}()
	if err := w.write(big, c, 0); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, big) {
		t.Fatalf("peer read %d bytes, not the %d written", len(b), len(big))
	}

	// A peer that reads slowly but steadily is never cut, however long
	// the whole write takes: the timeout counts time without progress.
	slow := make([]byte, 48<<20)
	go func() {
		chunk := make([]byte, 4<<20)
		for n := 0; n < len(slow); {
			time.Sleep(100 * time.Millisecond)
			m, err := io.ReadFull(peer, chunk[:min(len(chunk), len(slow)-n)])
			n += m
			if err != nil {
				break
			}
		}
		got <- nil
	}()
	if err := w.write(slow, c, 400*time.Millisecond); err != nil {
		t.Fatalf("write to a slow but steady peer: %v", err)
	}
	<-got

	// More than the largest socket buffers loopback autotuning gives.
	huge := make([]byte, 64<<20)
	start := time.Now()
	if err := w.write(huge, c, 100*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a peer that does not read: %v, want a deadline error", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("write gave up after %v, before the timeout", d)
	}
	c.SetWriteDeadline(time.Time{})

	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		werr = w.write([]byte("after close\n"), c, time.Second)
		time.Sleep(time.Millisecond)
	}
	if werr == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
}
