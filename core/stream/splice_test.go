package stream

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"net"
	"testing"
	"time"
)

// loopPair returns both ends of a loopback TCP connection: the dialled
// one and the accepted one.
func loopPair(t testing.TB) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a.(*net.TCPConn), b.(*net.TCPConn)
}

// spliceRig is a copy from src to dst: what is written on in arrives on
// src; what the copy sends on dst arrives on out.
type spliceRig struct {
	in, out  *net.TCPConn
	src, dst *rawConn
}

func newSpliceRig(t testing.TB) *spliceRig {
	in, s := loopPair(t)
	d, out := loopPair(t)
	r := &spliceRig{in: in, out: out, src: asRaw(s).(*rawConn), dst: asRaw(d).(*rawConn)}
	for _, c := range []*net.TCPConn{in, out, s, d} {
		c.SetDeadline(time.Now().Add(unitWait))
	}
	return r
}

func noArm() bool { return true }

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(b)
	return b
}

// pipeCap is a pipe's default capacity, the size one splice moves at most.
const pipeCap = spliceChunk

// A stream spliced to its end arrives whole, for sizes on either side
// of the pipe's capacity, and every byte is counted once on each side,
// spliced.
func TestSpliceCopyToEnd(t *testing.T) {
	for _, n := range []int{1, 4095, pipeCap - 1, pipeCap, pipeCap + 1, 2*pipeCap + 7, 1 << 20} {
		r := newSpliceRig(t)
		data := randBytes(n)
		go func() {
			r.in.Write(data)
			r.in.CloseWrite()
		}()
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(r.out)
			got <- b
		}()
		in, out, err, ok := spliceCopy(r.dst, r.src, -1, noArm, nil)
		if !ok || err != io.EOF {
			t.Fatalf("%d bytes: ok %v, err %v; want the end of the source", n, ok, err)
		}
		r.dst.CloseWrite()
		if b := <-got; !bytes.Equal(b, data) {
			t.Fatalf("%d bytes: %d arrived, equal %v", n, len(b), bytes.Equal(b, data))
		}
		if in != int64(n) || out != int64(n) {
			t.Errorf("%d bytes: in %d, out %d", n, in, out)
		}
		if r.src.nIn != int64(n) || r.src.sIn != int64(n) || r.dst.nOut != int64(n) || r.dst.sOut != int64(n) {
			t.Errorf("%d bytes: counted in %d (spliced %d), out %d (spliced %d)", n, r.src.nIn, r.src.sIn, r.dst.nOut, r.dst.sOut)
		}
	}
}

// A copy with a limit takes no byte past it: what follows on the source
// is still there for an ordinary read (the next request on a keep-alive
// connection).
func TestSpliceCopyLimit(t *testing.T) {
	for _, n := range []int{1, pipeCap - 1, pipeCap, pipeCap + 1, 3 * pipeCap} {
		r := newSpliceRig(t)
		data := randBytes(n)
		next := []byte("GET /next HTTP/1.1\r\n\r\n")
		go r.in.Write(append(append([]byte(nil), data...), next...))
		got := make(chan []byte, 1)
		go func() {
			b := make([]byte, n)
			_, err := io.ReadFull(r.out, b)
			if err != nil {
				b = nil
			}
			got <- b
		}()
		in, out, err, ok := spliceCopy(r.dst, r.src, int64(n), noArm, nil)
		if !ok || err != nil || in != int64(n) || out != int64(n) {
			t.Fatalf("%d bytes: in %d, out %d, ok %v, err %v", n, in, out, ok, err)
		}
		if b := <-got; !bytes.Equal(b, data) {
			t.Fatalf("%d bytes: the destination got %d bytes, not the data", n, len(b))
		}
		rest := make([]byte, len(next))
		if _, err := io.ReadFull(r.src, rest); err != nil || !bytes.Equal(rest, next) {
			t.Fatalf("%d bytes: after the copy the source holds %q, %v; want %q", n, rest, err, next)
		}
	}
}

// A source that closes early ends the copy with io.EOF and the count of
// what came; one that resets ends it with a read error.
func TestSpliceCopySourceCloses(t *testing.T) {
	r := newSpliceRig(t)
	data := randBytes(pipeCap + 100)
	go func() {
		r.in.Write(data)
		r.in.Close()
	}()
	go io.Copy(io.Discard, r.out)
	in, out, err, _ := spliceCopy(r.dst, r.src, 1<<30, noArm, nil)
	if err != io.EOF || in != int64(len(data)) || out != in {
		t.Fatalf("in %d, out %d, err %v; want %d each and io.EOF", in, out, err, len(data))
	}

	r2 := newSpliceRig(t)
	r2.in.SetLinger(0)
	go func() {
		r2.in.Write(data[:100])
		time.Sleep(10 * time.Millisecond)
		r2.in.Close() // a reset: linger 0
	}()
	go io.Copy(io.Discard, r2.out)
	_, _, err, _ = spliceCopy(r2.dst, r2.src, -1, noArm, nil)
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || err == io.EOF {
		t.Fatalf("after a reset of the source: %v; want a read error", err)
	}
}

// A destination that goes away ends the copy with a write error, while
// the source still sends.
func TestSpliceCopyDestinationCloses(t *testing.T) {
	r := newSpliceRig(t)
	stop := make(chan struct{})
	go func() {
		b := randBytes(32 << 10)
		for {
			select {
			case <-stop:
				r.in.Close()
				return
			default:
			}
			if _, err := r.in.Write(b); err != nil {
				return
			}
		}
	}()
	defer close(stop)
	go func() {
		io.CopyN(io.Discard, r.out, 100<<10)
		r.out.SetLinger(0)
		r.out.Close()
	}()
	in, out, err, _ := spliceCopy(r.dst, r.src, -1, noArm, nil)
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" {
		t.Fatalf("in %d, out %d, err %v; want a write error", in, out, err)
	}
	if r.dst.sOut != out || r.src.sIn != in || in < out {
		t.Errorf("counted in %d out %d; the copy says in %d out %d", r.src.sIn, r.dst.sOut, in, out)
	}
}

// The deadlines armed before each step bound the waits: a silent source
// is a read timeout, a destination that reads nothing a write timeout.
func TestSpliceCopyTimeouts(t *testing.T) {
	r := newSpliceRig(t)
	before := func() bool { r.src.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); return true }
	_, _, err, _ := spliceCopy(r.dst, r.src, -1, before, nil)
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || !oe.Timeout() {
		t.Fatalf("silent source: %v; want a read timeout", err)
	}

	w := newSpliceRig(t)
	go func() {
		b := randBytes(64 << 10)
		for {
			if _, err := w.in.Write(b); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { w.in.Close() })
	arm := func() { w.dst.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)) }
	in, out, err, _ := spliceCopy(w.dst, w.src, -1, noArm, arm)
	if !errors.As(err, &oe) || oe.Op != "write" || !oe.Timeout() {
		t.Fatalf("destination not reading: %v; want a write timeout", err)
	}
	if out == 0 || in < out || w.dst.sOut != out {
		t.Errorf("in %d, out %d, counted out %d", in, out, w.dst.sOut)
	}
}

// before's false stops the copy between reads, as a relay's stop does.
func TestSpliceCopyStops(t *testing.T) {
	r := newSpliceRig(t)
	go r.in.Write(randBytes(1000))
	go io.Copy(io.Discard, r.out)
	calls := 0
	before := func() bool { calls++; return calls == 1 }
	in, out, err, ok := spliceCopy(r.dst, r.src, -1, before, nil)
	if !ok || err != nil || in != out || in == 0 {
		t.Fatalf("in %d, out %d, ok %v, err %v", in, out, ok, err)
	}
}
