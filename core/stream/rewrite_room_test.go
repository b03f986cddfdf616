package stream

import (
	"testing"

	"goha/core/http1"
)

// The room a message leaves, counted as HAProxy's HTX does (hand-computed:
// 48 bytes of struct htx, 8 per block): "GET /req1 HTTP/1.1" with host and
// content-length fields is 21+16 bytes of start line and 31 of fields in
// 4 blocks, 100 in all; 2000 bytes of body fill the buffer up to
// tune.maxrewrite (128) short of 2048-48, so that one 74-byte field fits
// and a second does not.
func TestHTXRoom(t *testing.T) {
	var h http1.Head
	if _, err := h.ParseRequest([]byte("GET /req1 HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2000\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	var r htxRoom
	r.start(&h, 0, 2048, 128)
	if r.used != 100 {
		t.Fatalf("head alone: %d bytes, want 100", r.used)
	}
	r.addData(2000)
	if r.used != 1872 || r.kept != 1872-100-8 {
		t.Fatalf("with the body: %d bytes (%d of data), want 1872 (%d)", r.used, r.kept, 1872-100-8)
	}
	field := len("x-hdr1") + 60
	if !r.take(field) || r.failed {
		t.Fatal("the first field does not fit")
	}
	if r.take(field) || !r.failed {
		t.Fatal("the second field fits, or its failure is not an error")
	}
	r = htxRoom{}
	r.start(&h, 2000, 2048, 128)
	r.soft = true
	if !r.take(field) || r.take(field) || r.failed {
		t.Fatal("strict-mode off: the second field is not skipped quietly")
	}
	r.free(field)
	if !r.take(field) {
		t.Fatal("a freed field's room is not given back")
	}
}
