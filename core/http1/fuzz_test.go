package http1

import (
	"bytes"
	"testing"
)

func addSeeds(f *testing.F, resp bool) {
	if resp {
		f.Add([]byte(backendResponse), uint8(5))
		f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"), uint8(9))
		f.Add([]byte("HTTP/1.1 101 Switching\r\nConnection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: x\r\n\r\n"), uint8(1))
		f.Add([]byte("HTTP/1.0 304 x\nA: b\n c\n\n"), uint8(3))
		return
	}
	for _, v := range requestVectors {
		if len(v.raw) < 2000 {
			f.Add([]byte(v.raw), uint8(len(v.raw)/2))
		}
	}
	f.Add([]byte(browserRequest), uint8(40))
}

// checkHead verifies the invariants every accepted head must satisfy; most
// importantly, that the head goha would send (rebuilt or verbatim) parses
// again to the same framing, so no rewrite can open a smuggling gap.
func checkHead(t *testing.T, h *Head, buf []byte, n int, resp bool) {
	if n <= 0 || n > len(buf) || h.Len() != n || h.Start() > n {
		t.Fatalf("bad length %d (start %d) for %d bytes", n, h.Start(), len(buf))
	}
	for i := 0; i < h.NumFields(); i++ {
		name, _ := h.Field(i)
		if len(name) == 0 {
			t.Fatal("empty header name accepted")
		}
	}
	if h.Flags&FlagContentLength != 0 && h.Flags&FlagTransferEncoding != 0 {
		t.Fatal("content-length kept beside transfer-encoding")
	}
	var rw Rewriter
	out := append([]byte(nil), rw.Head(h)...)
	// Normalising (CRLF, ": ") may make the head longer than received.
	h2 := Head{MaxSize: len(out) + 1}
	var n2 int
	var err error
	if resp {
		n2, err = h2.ParseResponse(out, h.Method)
	} else {
		n2, err = h2.ParseRequest(out)
	}
	if err != nil || n2 != len(out) {
		t.Fatalf("sent head %q does not parse back: %d %v", out, n2, err)
	}
	if h2.Body != h.Body || h2.ContentLength != h.ContentLength || h2.Status != h.Status ||
		!bytes.Equal(h2.URI(), h.URI()) || h2.Method != h.Method {
		t.Fatalf("framing changed: %v/%d -> %v/%d for %q", h.Body, h.ContentLength, h2.Body, h2.ContentLength, out)
	}
	if h2.Flags&FlagRewrite != 0 {
		t.Fatalf("rebuilt head %q still needs a rewrite", out)
	}
	// Connection rewriting compacts values in place; the result must
	// still parse, to the same framing, with only the token we added.
	rw.Reset()
	rw.SetConnection(h, ConnClose)
	out = append(out[:0], rw.Head(h)...)
	// The added field may exceed the limits the original just met.
	h3 := Head{MaxFields: h.maxFields() + 1, MaxSize: len(out) + 1, MaxHTX: 1 << 30}
	if resp {
		_, err = h3.ParseResponse(out, h.Method)
	} else {
		_, err = h3.ParseRequest(out)
	}
	if err != nil || h3.Body != h.Body || h3.Flags&FlagConnClose == 0 || h3.Flags&FlagConnKeepAlive != 0 {
		t.Fatalf("after SetConnection %q: %v body %v flags %b", out, err, h3.Body, h3.Flags)
	}
}

func fuzzHead(t *testing.T, data []byte, split uint8, resp bool) {
	parse := func(h *Head, b []byte) (int, error) {
		if resp {
			return h.ParseResponse(b, MethodGET)
		}
		return h.ParseRequest(b)
	}
	one := append([]byte(nil), data...)
	var h Head
	n, err := parse(&h, one)
	if err != nil {
		e, ok := err.(*Error)
		if !ok || e.Offset < 0 || e.Offset > len(data) {
			t.Fatalf("bad error %v for %d bytes", err, len(data))
		}
	} else if n > 0 {
		checkHead(t, &h, one, n, resp)
	}
	// The same bytes in two reads must give the same outcome.
	two := append([]byte(nil), data...)
	k := int(split)
	if k > len(two) {
		k = len(two)
	}
	var g Head
	n2, err2 := parse(&g, two[:k])
	if err2 == nil && n2 == 0 {
		n2, err2 = parse(&g, two)
	}
	if (err == nil) != (err2 == nil) || (err == nil && n != n2) {
		t.Fatalf("split at %d: %d/%v, one read: %d/%v", k, n2, err2, n, err)
	}
}

func FuzzParseRequest(f *testing.F) {
	addSeeds(f, false)
	f.Fuzz(func(t *testing.T, data []byte, split uint8) { fuzzHead(t, data, split, false) })
}

func FuzzParseResponse(f *testing.F) {
	addSeeds(f, true)
	f.Fuzz(func(t *testing.T, data []byte, split uint8) { fuzzHead(t, data, split, true) })
}

// scanAll scans p as far as it goes, writing the CRs a bare LF asks for
// (see Body.NeedCR) as a forwarding caller does.
func scanAll(b *Body, p []byte) (int, bool, error) {
	total := 0
	for {
		n, done, err := b.Scan(p[total:])
		total += n
		if b.NeedCR() {
			b.WroteCR()
			continue
		}
		return total, done, err
	}
}

func FuzzChunked(f *testing.F) {
	f.Add([]byte("3\r\nabc\r\n0\r\n\r\n"), uint8(4))
	f.Add([]byte("a;x=y\r\n0123456789\r\n0\r\nT: 1\r\n\r\nGET"), uint8(9))
	f.Add([]byte("3\nabc\n0\n\n"), uint8(1))
	f.Add([]byte("3;x\nabc\n0\nT: 1\n\n"), uint8(5))
	f.Add([]byte("FFFFFFFFFFFFF\r\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		var a Body
		a.MaxLine = 64
		a.Start(BodyChunked, 0)
		n, done, err := scanAll(&a, data)
		if n < 0 || n > len(data) || (done && err != nil) {
			t.Fatalf("n %d done %v err %v", n, done, err)
		}
		var b Body
		b.MaxLine = 64
		b.Start(BodyChunked, 0)
		k := int(split)
		if k > len(data) {
			k = len(data)
		}
		m1, d1, e1 := scanAll(&b, data[:k])
		m := m1
		d, e := d1, e1
		if !d1 && e1 == nil {
			var m2 int
			m2, d, e = scanAll(&b, data[m1:])
			m += m2
		}
		if d != done || (e == nil) != (err == nil) || (err == nil && m != n) {
			t.Fatalf("split at %d: %d/%v/%v, one call: %d/%v/%v", k, m, d, e, n, done, err)
		}
		if done {
			// The body scanned alone must end at the same place.
			var c Body
			c.MaxLine = 64
			c.Start(BodyChunked, 0)
			if m, d, e := scanAll(&c, data[:n]); m != n || !d || e != nil {
				t.Fatalf("prefix rescan: %d/%v/%v want %d", m, d, e, n)
			}
		}
	})
}
