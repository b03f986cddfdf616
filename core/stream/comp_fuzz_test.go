package stream

import (
	"bytes"
	"strconv"
	"testing"

	"goha/core/comp"
	"goha/core/http1"
)

// feedAll runs compFeed over p offered in pieces of step bytes, as reads
// would bring it, and returns the payload and trailers it took, how much
// of p the body used, and the framing error if any.
func feedAll(kind http1.BodyKind, length int64, p []byte, step int) (payload, trailers []byte, used int, err error) {
	var b http1.Body
	b.Start(kind, length)
	enc := comp.Get(comp.Identity, 1)
	defer comp.Put(enc)
	end := 0
	for !b.Done() && end < len(p) {
		end = min(len(p), end+step)
		n, ferr := compFeed(&b, p[used:end], enc, &trailers)
		used += n
		if ferr != nil {
			return enc.Close(nil), trailers, used, ferr
		}
		if n == 0 && end == len(p) && !b.NeedCR() {
			break
		}
	}
	return enc.Close(nil), trailers, used, nil
}

// FuzzCompFeed encodes a payload in chunks of the sizes given, with
// trailers, offers it in pieces, and checks that the compressor gets the
// payload and the trailers come out as sent; any bytes as a chunked body
// must neither panic nor stall.
func FuzzCompFeed(f *testing.F) {
	f.Add([]byte("hello world"), []byte{3, 1, 7}, uint8(4), "X-T: 1\r\n", []byte("5\r\nhello\r\n0\r\n\r\n"))
	f.Add([]byte(""), []byte{}, uint8(1), "", []byte("0\n\n"))
	f.Add(bytes.Repeat([]byte("ab"), 500), []byte{255, 17}, uint8(200), "", []byte("zz\r\n"))
	f.Add([]byte("x"), []byte{1}, uint8(0), "A: b\r\nC: d\r\n", []byte("1;ext=1\r\nx\r\n0\r\nT: v\n\r\n"))
	f.Fuzz(func(t *testing.T, payload, sizes []byte, step uint8, trailer string, raw []byte) {
		st := int(step) + 1
		// Any bytes: no panic, and the loop ends.
		feedAll(http1.BodyChunked, 0, raw, st)
		feedAll(http1.BodyLength, int64(len(raw)/2), raw, st)

		if !validTrailer(trailer) {
			trailer = ""
		}
		var enc []byte
		rest := payload
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(sizes) > 0 {
				n = min(n, int(sizes[i%len(sizes)])+1)
			}
			enc = strconv.AppendInt(enc, int64(n), 16)
			enc = append(enc, "\r\n"...)
			enc = append(enc, rest[:n]...)
			enc = append(enc, "\r\n"...)
			rest = rest[n:]
		}
		enc = append(enc, "0\r\n"+trailer+"\r\n"...)
		enc = append(enc, "NEXT"...)
		got, tr, used, err := feedAll(http1.BodyChunked, 0, enc, st)
		if err != nil {
			t.Fatalf("valid body refused: %v", err)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("payload %q, want %q", got, payload)
		}
		if string(tr) != trailer+"\r\n" {
			t.Fatalf("trailers %q, want %q", tr, trailer+"\r\n")
		}
		if used != len(enc)-4 {
			t.Fatalf("used %d of %d", used, len(enc)-4)
		}
	})
}

// validTrailer says whether s is trailer lines a chunked body may carry.
func validTrailer(s string) bool {
	for _, line := range bytes.SplitAfter([]byte(s), []byte("\r\n")) {
		if len(line) == 0 {
			continue
		}
		if !bytes.HasSuffix(line, []byte("\r\n")) {
			return false
		}
		name, value, ok := bytes.Cut(line[:len(line)-2], []byte(":"))
		if !ok || len(name) == 0 || bytes.ContainsAny(value, "\r\n") {
			return false
		}
		for _, c := range name {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
