package stream

import (
	"testing"

	"goha/core/http1"
)

// decodeBody gives the data of what was buffered of a body, without its
// chunked framing, and stops where the bytes stop; bad framing gives what
// came before it, never a panic.
func TestDecodeBody(t *testing.T) {
	for _, tc := range []struct {
		head, raw, want string
	}{
		{"Content-Length: 5", "hello", "hello"},
		{"Content-Length: 3", "hello", "hel"},
		{"Content-Length: 9", "hel", "hel"},
		{"Transfer-Encoding: chunked", "5\r\nuser=\r\n5;x=y\r\nalice\r\n0\r\n\r\n", "user=alice"},
		{"Transfer-Encoding: chunked", "5\r\nus", "us"},
		{"Transfer-Encoding: chunked", "A\r\n0123456789\r\n", "0123456789"},
		{"Transfer-Encoding: chunked", "zz\r\nabc", ""},
		{"Transfer-Encoding: chunked", "fffffffffffffffffff\r\nabc", "abc"},
	} {
		var h http1.Head
		buf := []byte("POST / HTTP/1.1\r\nHost: x\r\n" + tc.head + "\r\n\r\n")
		if _, err := h.ParseRequest(buf); err != nil {
			t.Fatal(err)
		}
		if got := string(decodeBody(nil, []byte(tc.raw), &h)); got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.head, tc.raw, got, tc.want)
		}
	}
}
