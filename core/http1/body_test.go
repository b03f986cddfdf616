package http1

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// chunkVectors are chunked bodies with the length goha's framing gives
// them (-1 invalid, -2 incomplete); TestChunkedAgainstHAProxy checks them
// against the real HAProxy.
var chunkVectors = []struct {
	name string
	in   string
	n    int
	kind ErrorKind
}{
	{"simple", "3\r\nabc\r\n0\r\n\r\n", 13, 0},
	{"followed-by-next", "3\r\nabc\r\n0\r\n\r\nGET /", 13, 0},
	{"hex-upper-lower", "A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n", 35, 0},
	{"leading-zeros", "0003\r\nabc\r\n000\r\n\r\n", 18, 0},
	{"extension", "3;name=value;x\r\nabc\r\n0;last\r\n\r\n", 31, 0},
	{"blank-before-ext", "3 \t;x\r\nabc\r\n0\r\n\r\n", 17, 0},
	{"blank-before-crlf", "3  \r\nabc\r\n0\r\n\r\n", 15, 0},
	{"bare-lf", "3\nabc\n0\n\n", 9, 0},
	{"trailers", "3\r\nabc\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n", 29, 0},
	{"trailer-bare-lf", "0\nX: 1\n\n", 8, 0},
	{"empty-trailer-value", "0\r\nX:\r\n\r\n", 9, 0},
	{"incomplete-size", "3", -2, 0},
	{"incomplete-data", "3\r\nab", -2, 0},
	{"incomplete-trailers", "0\r\nX: 1\r\n", -2, 0},
	{"no-digits", "\r\nabc\r\n", -1, ErrChunkSize},
	{"negative", "-3\r\nabc\r\n", -1, ErrChunkSize},
	{"hex-prefix", "0x3\r\nabc\r\n", -1, ErrChunkSize},
	{"junk-after-size", "3x\r\nabc\r\n", -1, ErrChunkSize},
	{"cr-without-lf", "3\rabc\r\n", -1, ErrChunkSize},
	{"too-big", "10000000000000\r\n", -1, ErrChunkSize},
	{"largest", "FFFFFFFFFFFFF\r\n", -2, 0},
	{"data-too-long", "3\r\nabcd\r\n", -1, ErrChunkEnd},
	{"data-cr-junk", "3\r\nabc\rX", -1, ErrChunkEnd},
	{"trailer-bad-name", "0\r\nX Y: 1\r\n\r\n", -1, ErrTrailer},
	{"trailer-ctl-in-name", "0\r\nX\x01Y: 1\r\n\r\n", -1, ErrTrailer},
	{"trailer-ctl-in-value", "0\r\nX: a\x01b\r\n\r\n", 13, 0},
	{"trailer-no-colon", "0\r\nX\r\n\r\n", -1, ErrTrailer},
	{"leading-blank", " 3\r\nabc\r\n0\r\n\r\n", -1, ErrChunkSize},
	{"ext-stray-cr", "3;a\rb\r\nabc\r\n0\r\n\r\n", -1, ErrChunkSize},
	{"trailer-no-name", "0\r\n: 1\r\n\r\n", -1, ErrTrailer},
	{"trailer-cr-junk", "0\r\nX: 1\rZ\r\n\r\n", -1, ErrTrailer},
	{"end-cr-junk", "0\r\n\rZ", -1, ErrTrailer},
}

func TestChunked(t *testing.T) {
	for _, tt := range chunkVectors {
		t.Run(tt.name, func(t *testing.T) {
			// Whole input at once, then one byte at a time: both must agree.
			for _, step := range []int{len(tt.in), 1} {
				var b Body
				b.Start(BodyChunked, 0)
				total := 0
				var err error
				done := false
				for total < len(tt.in) && !done && err == nil {
					end := min(total+step, len(tt.in))
					var n int
					n, done, err = b.Scan([]byte(tt.in[total:end]))
					total += n
					if b.NeedCR() {
						// Stopped before a bare LF: the CR goes out first.
						b.WroteCR()
						continue
					}
					if total < end && !done && err == nil {
						t.Fatalf("step %d: partial consumption without end", step)
					}
				}
				switch {
				case tt.n == -1:
					var e *Error
					if !errors.As(err, &e) || e.Kind != tt.kind {
						t.Fatalf("step %d: err %v, want %v", step, err, tt.kind)
					}
				case tt.n == -2:
					if err != nil || done {
						t.Fatalf("step %d: err %v done %v, want incomplete", step, err, done)
					}
					if e := b.EOF(); e == nil || e.(*Error).Kind != ErrTruncated {
						t.Fatalf("EOF on incomplete body: %v", e)
					}
				default:
					if err != nil || !done || total != tt.n || b.N != int64(tt.n) {
						t.Fatalf("step %d: n %d N %d done %v err %v, want %d", step, total, b.N, done, err, tt.n)
					}
				}
			}
		})
	}
}

func TestChunkLineLimit(t *testing.T) {
	var b Body
	b.MaxLine = 32
	b.Start(BodyChunked, 0)
	_, _, err := b.Scan([]byte("3;" + strings.Repeat("x", 40) + "\r\n"))
	if e, ok := err.(*Error); !ok || e.Kind != ErrChunkSize {
		t.Fatalf("long extension: %v", err)
	}
	b.Start(BodyChunked, 0)
	_, _, err = b.Scan([]byte("0\r\nX: " + strings.Repeat("x", 40) + "\r\n"))
	if e, ok := err.(*Error); !ok || e.Kind != ErrTrailer {
		t.Fatalf("long trailers: %v", err)
	}
}

func TestLengthBody(t *testing.T) {
	var b Body
	b.Start(BodyLength, 5)
	n, done, err := b.Scan([]byte("abc"))
	if n != 3 || done || err != nil {
		t.Fatal(n, done, err)
	}
	n, done, err = b.Scan([]byte("deGET"))
	if n != 2 || !done || err != nil || b.N != 5 {
		t.Fatal(n, done, err)
	}
	b.Start(BodyLength, 5)
	b.Scan([]byte("ab"))
	if err := b.EOF(); err == nil {
		t.Fatal("truncated body accepted")
	}
	b.Start(BodyUntilClose, 0)
	if n, done, _ := b.Scan([]byte("xyz")); n != 3 || done {
		t.Fatal(n, done)
	}
	if err := b.EOF(); err != nil || !b.Done() {
		t.Fatal(err)
	}
}

// patternReader yields a deterministic byte stream of n bytes.
type patternReader struct{ n, off int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n-r.off {
		p = p[:r.n-r.off]
	}
	for i := range p {
		p[i] = byte((r.off + int64(i)) * 7)
	}
	r.off += int64(len(p))
	return len(p), nil
}

type countWriter struct {
	n      int64
	sum    uint64
	writes int
}

func (w *countWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		w.sum = w.sum*31 + uint64(c)
	}
	w.n += int64(len(p))
	w.writes++
	return len(p), nil
}

// chunkedReader wraps a stream in chunked framing of size-byte chunks.
type chunkedReader struct {
	src   io.Reader
	size  int
	pend  []byte
	pos   int
	chunk []byte
	eof   bool
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.pos == len(c.pend) {
		if c.eof {
			return 0, io.EOF
		}
		n, err := io.ReadFull(c.src, c.chunk[:c.size])
		c.pend, c.pos = c.pend[:0], 0
		if n > 0 {
			c.pend = strconv.AppendInt(c.pend, int64(n), 16)
			c.pend = append(c.pend, ";e=1\r\n"...)
			c.pend = append(c.pend, c.chunk[:n]...)
			c.pend = append(c.pend, "\r\n"...)
		}
		if err != nil {
			c.pend = append(c.pend, "0\r\nX-T: 1\r\n\r\n"...)
			c.eof = true
		}
	}
	n := copy(p, c.pend[c.pos:])
	c.pos += n
	return n, nil
}

// TestForward200MB streams 200 MB through Forward, content-length and
// chunked, and checks that the heap does not grow with the body.
func TestForward200MB(t *testing.T) {
	if testing.Short() {
		t.Skip("200 MB stream")
	}
	const size = 200 << 20
	for _, chunked := range []bool{false, true} {
		var r io.Reader = &patternReader{n: size}
		var b Body
		if chunked {
			r = &chunkedReader{src: r, size: 10000, chunk: make([]byte, 10000), pend: make([]byte, 0, 10100)}
			b.Start(BodyChunked, 0)
		} else {
			b.Start(BodyLength, size)
		}
		src := NewBuffer(DefaultBufSize)
		w := &countWriter{}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n, err := Forward(w, src, r, &b)
		runtime.ReadMemStats(&after)
		if err != nil || !b.Done() {
			t.Fatalf("chunked=%v: %v", chunked, err)
		}
		if n != w.n || (!chunked && n != size) || (chunked && n <= size) {
			t.Fatalf("chunked=%v: forwarded %d (writer saw %d)", chunked, n, w.n)
		}
		if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 1<<20 {
			t.Fatalf("chunked=%v: heap grew by %d bytes", chunked, grown)
		}
		if total := after.TotalAlloc - before.TotalAlloc; total > 1<<20 {
			t.Fatalf("chunked=%v: %d bytes allocated while forwarding", chunked, total)
		}
	}
}

// TestForwardOverTCP sends a chunked request body followed by a pipelined
// request over a real socket: Forward must stop exactly at the body's end.
func TestForwardOverTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	msg := "POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5\r\nhello\r\n7;x=y\r\n, world\r\n0\r\nDigest: z\r\n\r\n" +
		"GET /next HTTP/1.1\r\nHost: a\r\n\r\n"
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for i := 0; i < len(msg); i += 7 {
			end := i + 7
			if end > len(msg) {
				end = len(msg)
			}
			c.Write([]byte(msg[i:end]))
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := NewBuffer(64)
	var h Head
	var n int
	for n == 0 {
		if _, err := src.Fill(c); err != nil {
			t.Fatal(err)
		}
		if n, err = h.ParseRequest(src.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	var b Body
	b.Init(&h)
	var out bytes.Buffer
	out.Write(h.Raw())
	src.Discard(n)
	if _, err := Forward(&out, src, c, &b); err != nil {
		t.Fatal(err)
	}
	first := msg[:strings.Index(msg, "GET /next")]
	if out.String() != first {
		t.Fatalf("forwarded %q", out.String())
	}
	for n = 0; n == 0; {
		if n, err = h.ParseRequest(src.Bytes()); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			if _, err := src.Fill(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if string(h.Path()) != "/next" {
		t.Fatalf("next request %q", h.Path())
	}
}

func TestBufferCompaction(t *testing.T) {
	b := NewBuffer(16)
	copy(b.Free(), "0123456789abcdef")
	b.Commit(16)
	if !b.Full() || len(b.Free()) != 0 {
		t.Fatal("full buffer has free space")
	}
	b.Discard(10)
	f := b.Free()
	if len(f) != 10 || string(b.Bytes()) != "abcdef" {
		t.Fatalf("after compaction: free %d, bytes %q", len(f), b.Bytes())
	}
	b.Discard(6)
	if b.Len() != 0 || len(b.Free()) != 16 {
		t.Fatal("empty buffer not rewound")
	}
}

// sizedReader hands out n bytes without writing them, so that the
// benchmark measures the forwarder rather than a data generator.
type sizedReader struct{ n int64 }

func (r *sizedReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	r.n -= int64(len(p))
	return len(p), nil
}

func BenchmarkForwardLength(b *testing.B) {
	const size = 1 << 20
	src := NewBuffer(DefaultBufSize)
	r := &sizedReader{}
	var body Body
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.n = size
		src.Reset()
		body.Start(BodyLength, size)
		if _, err := Forward(io.Discard, src, r, &body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMessageVerbatim is the common request path: parse, find the end
// of a small body already buffered, send head and body with one Write.
func BenchmarkMessageVerbatim(b *testing.B) {
	buf := []byte("POST /api HTTP/1.1\r\nHost: a\r\nContent-Length: 13\r\n\r\nHello, World!")
	var h Head
	var body Body
	var rw Rewriter
	w := &countWriter{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		n, err := h.ParseRequest(buf)
		if err != nil {
			b.Fatal(err)
		}
		body.Init(&h)
		m, done, err := Complete(buf, n, &body)
		if !done || err != nil || m != len(buf) {
			b.Fatal(m, done, err)
		}
		rw.Reset()
		if _, err := rw.WriteTo(w, &h, buf[n:m]); err != nil {
			b.Fatal(err)
		}
	}
	if w.writes != b.N {
		b.Fatalf("%d writes for %d messages", w.writes, b.N)
	}
}

func BenchmarkScanChunked(b *testing.B) {
	var msg []byte
	for i := 0; i < 64; i++ {
		msg = append(msg, "100;ext=1\r\n"...)
		msg = append(msg, bytes.Repeat([]byte{'x'}, 256)...)
		msg = append(msg, "\r\n"...)
	}
	msg = append(msg, "0\r\nX: y\r\n\r\n"...)
	var body Body
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body.Start(BodyChunked, 0)
		if n, done, err := body.Scan(msg); !done || err != nil || n != len(msg) {
			b.Fatal(n, done, err)
		}
	}
}

// A bare LF ending a line of chunked framing goes out as CRLF, as HAProxy
// re-encodes it; chunk data and CRLF line ends are untouched.
func TestForwardBareLF(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"3\nabc\n0\n\n", "3\r\nabc\r\n0\r\n\r\n"},
		{"3;ext\na\nc\r\n0\r\nX: 1\nY: 2\r\n\n", "3;ext\r\na\nc\r\n0\r\nX: 1\r\nY: 2\r\n\r\n"},
		{"3 \nabc\r\n0\r\n\r\n", "3 \r\nabc\r\n0\r\n\r\n"},
		{"3\r\nabc\r\n0\r\n\r\n", "3\r\nabc\r\n0\r\n\r\n"},
	} {
		for _, step := range []int{len(tt.in), 1} {
			var b Body
			b.Start(BodyChunked, 0)
			src := NewBufferPool(64).Get()
			var out bytes.Buffer
			r := &stepReader{s: tt.in, step: step}
			if _, err := Forward(&out, src, r, &b); err != nil {
				t.Fatalf("%q step %d: %v", tt.in, step, err)
			}
			if out.String() != tt.want {
				t.Errorf("%q step %d: sent %q, want %q", tt.in, step, out.String(), tt.want)
			}
		}
	}
}

// stepReader hands out s at most step bytes per Read.
type stepReader struct {
	s    string
	step int
}

func (r *stepReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.s)
	r.s = r.s[n:]
	return n, nil
}
