package stream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"goha/core"
	"goha/core/config"
	"goha/core/diag"
	"io"
	"math/rand"
	"net"
	"net/http"
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

// spliceOrigin answers POST and GET: /cl with a Content-Length body of
// size bytes, /close with a body ended by its close; it checks that each
// request body arrived whole (got).
func spliceOrigin(t *testing.T, size int, got chan<- []byte) string {
	body := randBytes(size)
	return rawHTTPOrigin(t, 4096, func(req *http.Request, c net.Conn) bool {
		c.SetDeadline(time.Now().Add(unitWait))
		b, _ := io.ReadAll(req.Body)
		got <- b
		if req.URL.Path == "/close" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
			c.Write(body)
			return false
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body))
		c.Write(body)
		return true
	})
}

// splicedCounters are a proxy side's counters after spliceExchange.
type splicedCounters struct {
	bin, bout, h1in, h1out, splIn, splOut int64
}

func countersOf(c *core.Counters) splicedCounters {
	return splicedCounters{c.Bin.Load(), c.Bout.Load(), c.H1BytesIn.Load(), c.H1BytesOut.Load(),
		c.H1SplicedBytesIn.Load(), c.H1SplicedBytesOut.Load()}
}

// spliceExchange sends, on one connection, a POST of size bytes to /cl
// and a GET of /close through a proxy with the given options, checks
// what each side received, and returns the frontend's and the backend's
// counters.
func spliceExchange(t *testing.T, opts string, size int) (fe, be splicedCounters) {
	got := make(chan []byte, 4)
	origin := spliceOrigin(t, size, got)
	proc := unitProc(t, unitHTTPConf+"frontend fe\n    bind @BIND@\n"+opts+"    default_backend be\nbackend be\n    server s1 "+origin+"\n")
	c, err := net.Dial("tcp", unitFE(t, proc, "fe"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(unitWait))
	reqBody := randBytes(size + 1)
	head := fmt.Sprintf("POST /cl HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(reqBody))
	next := "GET /close HTTP/1.1\r\nHost: x\r\n\r\n"
	sent := int64(len(head) + len(reqBody) + len(next))
	go func() {
		c.Write([]byte(head))
		c.Write(reqBody)
		// Pipelined: the spliced body must stop where it ends.
		c.Write([]byte(next))
	}()
	br := bufio.NewReader(c)
	want := randBytes(size)
	for _, path := range []string{"/cl", "/close"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(b, want) {
			t.Fatalf("%s: %d body bytes, %v; want the %d sent", path, len(b), err, size)
		}
	}
	if b := <-got; !bytes.Equal(b, reqBody) {
		t.Fatalf("the server got %d request body bytes, want the %d sent", len(b), len(reqBody))
	}
	if b := <-got; len(b) != 0 {
		t.Fatalf("the second request came with %d body bytes", len(b))
	}
	io.Copy(io.Discard, br)
	fc := proc.Conf.FindProxy("fe", core.CapFE)
	bc := proc.Conf.FindProxy("be", core.CapBE)
	waitFor(t, "the streams to end", func() bool {
		return fc.FE.Scur.Load() == 0 && bc.BE.Scur.Load() == 0 && fc.FE.H1BytesIn.Load() == sent
	})
	return countersOf(&fc.FE), countersOf(&bc.BE)
}

// The same exchanges, spliced or not, count the same bytes (the log's and
// show stat's bytes, and h1_bytes_in/out on the wire); spliced, the h1
// spliced counters hold the part of them that went through a pipe: the
// request body from the client and to the server, the response bodies
// from the server and to the client, never more than the bodies.
func TestSpliceHTTPCounts(t *testing.T) {
	const size = 1 << 20
	fe0, be0 := spliceExchange(t, "", size)
	if fe0.splIn|fe0.splOut|be0.splIn|be0.splOut != 0 {
		t.Fatalf("without splicing: spliced counts %+v %+v", fe0, be0)
	}
	for _, opts := range []string{"    option splice-request\n    option splice-response\n", "    option splice-auto\n"} {
		fe, be := spliceExchange(t, opts, size)
		if fe.bin != fe0.bin || fe.bout != fe0.bout || fe.h1in != fe0.h1in || fe.h1out != fe0.h1out {
			t.Errorf("%q: frontend counts %+v, without splicing %+v", opts, fe, fe0)
		}
		if be.bin != be0.bin || be.bout != be0.bout || be.h1in != be0.h1in || be.h1out != be0.h1out {
			t.Errorf("%q: backend counts %+v, without splicing %+v", opts, be, be0)
		}
		for _, v := range []struct {
			name string
			n    int64
			max  int64
		}{
			{"frontend spliced in", fe.splIn, size + 1}, {"frontend spliced out", fe.splOut, 2 * size},
			{"backend spliced in", be.splIn, 2 * size}, {"backend spliced out", be.splOut, size + 1},
		} {
			if v.n <= 0 || v.n > v.max {
				t.Errorf("%q: %s = %d, want some and at most %d", opts, v.name, v.n, v.max)
			}
		}
	}
}

// A tcp stream spliced both ways keeps its half-closes and its byte
// counts, and its bytes count as spliced out of the process.
func TestSpliceTCPHalfClose(t *testing.T) {
	const size = 300000
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	up := randBytes(size)
	down := randBytes(size + 3)
	srvGot := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			srvGot <- nil
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(unitWait))
		b, _ := io.ReadAll(c)
		srvGot <- b
		// Answered after the client's half-close went through.
		c.Write(down)
	}()
	proc := unitProc(t, unitTCPConf+`
frontend fe
    bind @BIND@
    option splice-request
    default_backend be
backend be
    option splice-response
    server s1 `+ln.Addr().String()+`
`)
	c, err := net.Dial("tcp", unitFE(t, proc, "fe"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(unitWait))
	c.Write(up)
	c.(*net.TCPConn).CloseWrite()
	if b := <-srvGot; !bytes.Equal(b, up) {
		t.Fatalf("the server read %d bytes before the end of stream, want %d", len(b), size)
	}
	b, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(b, down) {
		t.Fatalf("the client read %d bytes, %v; want %d then the end of stream", len(b), err, len(down))
	}
	be := proc.Conf.FindProxy("be", core.CapBE)
	waitFor(t, "the stream to end", func() bool { return be.BE.Scur.Load() == 0 })
	if in, out := be.BE.Bin.Load(), be.BE.Bout.Load(); in != size || out != size+3 {
		t.Errorf("backend bytes in/out = %d/%d, want %d/%d", in, out, size, size+3)
	}
	if n := proc.SplicedBytesOut(); n != 2*size+3 {
		t.Errorf("spliced out: %d, want %d", n, 2*size+3)
	}
}

// BenchmarkProxyLargeBody moves an 8 MiB response body through the
// proxy on a keep-alive connection, copied through the process or
// spliced, and a 8 MiB request body the same way.
func BenchmarkProxyLargeBody(b *testing.B) {
	const size = 8 << 20
	body := randBytes(size)
	origin := rawHTTPOrigin(b, 64<<10, func(req *http.Request, c net.Conn) bool {
		io.Copy(io.Discard, req.Body)
		if req.Method == "POST" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
			return true
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", size)
		c.Write(body)
		return true
	})
	for _, dir := range []string{"response", "request"} {
		for _, mode := range []struct{ name, opts string }{
			{"copy", ""},
			{"splice", "    option splice-request\n    option splice-response\n"},
		} {
			b.Run(dir+"/"+mode.name, func(b *testing.B) {
				addr := benchLargeProxy(b, origin, mode.opts)
				c, err := net.Dial("tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				br := bufio.NewReaderSize(c, 64<<10)
				post := []byte(fmt.Sprintf("POST / HTTP/1.1\r\nHost: b\r\nContent-Length: %d\r\n\r\n", size))
				b.SetBytes(size)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if dir == "response" {
						io.WriteString(c, "GET / HTTP/1.1\r\nHost: b\r\n\r\n")
					} else {
						c.Write(post)
						c.Write(body)
					}
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, resp.Body); err != nil || (dir == "response" && n != size) {
						b.Fatalf("%d bytes, %v", n, err)
					}
				}
			})
		}
	}
}

// benchLargeProxy runs a one-thread process in front of origin with the
// given frontend options and returns the frontend's address.
func benchLargeProxy(b *testing.B, origin, opts string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	f, _ := ln.(*net.TCPListener).File()
	ln.Close()
	b.Cleanup(func() { f.Close() })
	cfgText := unitHTTPConf + "frontend fe\n    bind fd@" + fmt.Sprint(f.Fd()) + "\n" + opts +
		"    default_backend be\nbackend be\n    server s1 " + origin + "\n"
	d := &diag.Collector{}
	cfg := core.Build(config.Parse("bench.cfg", []byte(cfgText), config.Options{}, d), d)
	if d.HasAlert() {
		b.Fatalf("%v", d.All())
	}
	proc := New(cfg)
	if err := proc.Run(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(proc.Stop)
	return proc.Listeners(cfg.FindProxy("fe", core.CapFE))[0].String()
}
