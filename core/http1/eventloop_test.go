package http1

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestEventLoopStyle drives the package the way an epoll transport would:
// bytes arrive in arbitrary pieces through Free/Commit, nothing blocks, and
// a small state machine moves between "want head" and "in body". The
// pipelined messages must come out exactly as they went in, one message
// boundary at a time.
func TestEventLoopStyle(t *testing.T) {
	msgs := []string{
		"GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world",
		"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;e\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n",
		"\r\nGET /d HTTP/1.1\r\nHost: x\r\n\r\n",
		"PUT /e HTTP/1.1\r\nHost: x\r\nContent-Length: 3000\r\n\r\n" + string(bytes.Repeat([]byte("z"), 3000)),
	}
	var stream []byte
	for i := 0; i < 20; i++ {
		stream = append(stream, msgs[i%len(msgs)]...)
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 50; round++ {
		buf := NewBuffer(1024)
		var h Head
		var b Body
		var out bytes.Buffer
		inBody := false
		heads := 0
		for off := 0; off < len(stream) || buf.Len() > 0; {
			// "Readable": copy a random piece into the free space.
			if off < len(stream) {
				free := buf.Free()
				n := 1 + rng.Intn(700)
				if n > len(free) {
					n = len(free)
				}
				if n > len(stream)-off {
					n = len(stream) - off
				}
				copy(free, stream[off:off+n])
				buf.Commit(n)
				off += n
			}
			for progress := true; progress; {
				progress = false
				if !inBody {
					n, err := h.ParseRequest(buf.Bytes())
					if err != nil {
						t.Fatal(err)
					}
					if n == 0 {
						break
					}
					out.Write(buf.Bytes()[:n])
					buf.Discard(n)
					b.Init(&h)
					inBody, progress = true, true
					heads++
				}
				if inBody {
					n, done, err := b.Scan(buf.Bytes())
					if err != nil {
						t.Fatal(err)
					}
					out.Write(buf.Bytes()[:n])
					buf.Discard(n)
					if done {
						inBody, progress = false, true
					}
				}
			}
		}
		if heads != 20 || !bytes.Equal(out.Bytes(), stream) {
			t.Fatalf("round %d: %d heads, %d of %d bytes", round, heads, out.Len(), len(stream))
		}
	}
}
