package ring

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	// Its pauses (60 ms, 48 of them) are far below the timeout, so that a
	// busy machine's scheduling delays stay below it too, while the whole
	// write takes about twice as long as the timeout.
	slow := make([]byte, 48<<20)
	go func() {
		chunk := make([]byte, 1<<20)
		for n := 0; n < len(slow); {
			time.Sleep(60 * time.Millisecond)
			m, err := io.ReadFull(peer, chunk[:min(len(chunk), len(slow)-n)])
			n += m
			if err != nil {
				break
			}
		}
		got <- nil
	}()
	if err := w.write(slow, c, 1500*time.Millisecond); err != nil {
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

// A UNIX datagram receiver that does not read never blocks the data path:
// the lines it has no room for are dropped and counted, the others arrive
// whole and in order, and the socket stays in use once the receiver reads
// again.
func TestUnixgramTargetDropsWhenFull(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "full.sock")
	ux, err := net.ListenPacket("unixgram", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	l, _ := ParseLogArgs([]string{sock, "format", "raw", "local0"}, true)
	if err := l.Open(NewRegistry()); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 2000
	done := make(chan struct{})
	go func() {
		for i := range n {
			l.Send(&Meta{Level: LevelInfo}, []byte("line "+itoa(i)))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Send blocked on a receiver that does not read")
	}
	if l.Dropped() == 0 {
		t.Fatalf("no line dropped out of %d to a receiver that does not read", n)
	}
	buf := make([]byte, 64)
	received, last := 0, -1
	for {
		ux.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		m, _, err := ux.ReadFrom(buf)
		if err != nil {
			break
		}
		i, ok := strings.CutPrefix(string(buf[:m]), "line ")
		v := atoi(strings.TrimSuffix(i, "\n"))
		if !ok || !strings.HasSuffix(i, "\n") || v <= last {
			t.Fatalf("got %q after line %d", buf[:m], last)
		}
		last = v
		received++
	}
	if uint64(received)+l.Dropped() != n {
		t.Errorf("received %d + dropped %d != sent %d", received, l.Dropped(), n)
	}
	l.Send(&Meta{Level: LevelInfo}, []byte("after"))
	ux.SetReadDeadline(time.Now().Add(5 * time.Second))
	if m, _, err := ux.ReadFrom(buf); err != nil || string(buf[:m]) != "after\n" {
		t.Fatalf("after draining: %q, %v", buf[:m], err)
	}
}
