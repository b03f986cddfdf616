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
	if err := w.write(big); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, big) {
		t.Fatalf("peer read %d bytes, not the %d written", len(b), len(big))
	}

	// More than the largest socket buffers loopback autotuning gives.
	huge := make([]byte, 64<<20)
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	if err := w.write(huge); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a peer that does not read: %v, want a deadline error", err)
	}
	c.SetWriteDeadline(time.Time{})

	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	var werr error
	for i := 0; i < 100 && werr == nil; i++ {
		werr = w.write([]byte("after close\n"))
		time.Sleep(time.Millisecond)
	}
	if werr == nil {
		t.Fatal("writes to a reset connection kept succeeding")
	}
}
