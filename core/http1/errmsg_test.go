package http1

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestBuiltinMessagesConsistent(t *testing.T) {
	for _, st := range ErrorStatuses() {
		raw := RawError(st)
		var h Head
		n, err := h.ParseResponse(append([]byte(nil), raw...), MethodGET)
		if err != nil || n == 0 {
			t.Fatalf("%d: %v", st, err)
		}
		if h.Status != st || h.ContentLength != int64(len(raw)-n) {
			t.Errorf("%d: status %d, content-length %d for a %d-byte body", st, h.Status, h.ContentLength, len(raw)-n)
		}
		r := ErrorReply(st)
		for _, c := range []ConnValue{ConnNone, ConnClose, ConnKeepAlive} {
			b := r.Bytes(c)
			if !bytes.HasSuffix(b, raw[n:]) || bytes.Contains(b[:len(b)-(len(raw)-n)], []byte("\r\nC")) {
				t.Errorf("%d/%d: %q", st, c, b)
			}
		}
	}
	if RawError(302) != nil || ErrorReply(302) != nil {
		t.Fatal("unknown status has a message")
	}
}

func TestErrorReplyShape(t *testing.T) {
	// What HAProxy 2.6.12 sends for "no server" on a keep-alive HTTP/1.1
	// connection and on one that closes.
	body := "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n"
	head := "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 107\r\ncache-control: no-cache\r\ncontent-type: text/html\r\n"
	r := ErrorReply(503)
	if got := string(r.Bytes(ConnNone)); got != head+"\r\n"+body {
		t.Errorf("keep-alive: %q", got)
	}
	if got := string(r.Bytes(ConnClose)); got != head+"connection: close\r\n\r\n"+body {
		t.Errorf("close: %q", got)
	}
	if got := string(r.Bytes(ConnKeepAlive)); got != head+"connection: keep-alive\r\n\r\n"+body {
		t.Errorf("keep-alive 1.0: %q", got)
	}
	// 400 and 408 carry Connection: close in their template: always close.
	if r := ErrorReply(400); !r.ForceClose || !bytes.Contains(r.Bytes(ConnNone), []byte("\r\nconnection: close\r\n\r\n")) {
		t.Errorf("400: %q", r.Bytes(ConnNone))
	}
	if !bytes.HasPrefix(RawError(400), []byte("HTTP/1.1 400 Bad request\r\nContent-length: 90\r\n")) {
		t.Errorf("raw 400: %q", RawError(400))
	}
}

func TestLoadErrorFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.http", "HTTP/1.0 503 Service Unavailable\r\nCache-Control: no-cache\r\nConnection: close\r\n"+
		"Content-Type: text/html\r\nX-Custom: Yes\r\n\r\n<html>down</html>\n")
	r, warn, err := LoadErrorFile(503, good, 0)
	if err != nil || warn != "" {
		t.Fatal(err, warn)
	}
	// As HAProxy 2.6.12 sends it: names lower-cased, Connection dropped,
	// no content-length so the connection closes.
	want := "HTTP/1.0 503 Service Unavailable\r\ncache-control: no-cache\r\ncontent-type: text/html\r\nx-custom: Yes\r\nconnection: close\r\n\r\n<html>down</html>\n"
	if got := string(r.Bytes(ConnNone)); got != want || !r.ForceClose {
		t.Fatalf("got %q", got)
	}

	// Error texts as HAProxy 2.6.12 prints them after "errorfile : ".
	tests := []struct {
		status  int
		content string
		want    string
	}{
		{503, "HTTP/1.1 503 x\r\nContent-Length: 3\r\n\r\nabcd", "'%s': payload size does not match the announced content-length (4 != 3)"},
		{503, "HTTP/1.1 503 x\r\nContent Length: 3\r\n\r\nabc", "'%s': unable to parse headers (error offset: 23)"},
		{503, "HTTP/1.1 503 x\r\nContent-Length: 3\r\n", "'%s': unable to parse headers (error offset: -2)"},
		{503, "HTTP/1.1 100 x\r\n\r\n", "'%s': invalid http status code for an error message (100)"},
		{503, "HTX/1 503 x\r\n\r\n", "'%s': invalid http version (HTX/1)"},
		{503, "HTTP/1.1 204 x\r\n\r\nab", "'%s': message payload not expected"},
		{503, "HTTP/1.1 503 x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "'%s': chunk-encoded payload not supported"},
		{599, "HTTP/1.1 503 x\r\n\r\n", "status code '599' not handled."},
	}
	for i, tt := range tests {
		p := write("f"+strconv.Itoa(i), tt.content)
		_, _, err := LoadErrorFile(tt.status, p, 0)
		want := tt.want
		if strings.Contains(want, "%s") {
			want = strings.Replace(want, "%s", p, 1)
		}
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", tt.content, err, want)
		}
	}
	missing := filepath.Join(dir, "nope")
	if _, _, err := LoadErrorFile(503, missing, 0); err == nil || err.Error() != "error opening file '"+missing+"'." {
		t.Errorf("missing file: %v", err)
	}
	big := write("big", "HTTP/1.1 503 x\r\nContent-Length: 100\r\n\r\n"+strings.Repeat("a", 100))
	if _, warn, err := LoadErrorFile(503, big, 64); err == nil || !strings.Contains(warn, "larger than 64 bytes. Truncating.") {
		t.Errorf("truncation: %v %q", err, warn)
	}
}

// An empty errorfile (errorfile 408 /dev/null) sends nothing and closes
// the connection, whatever the connection mode.
func TestEmptyErrorFile(t *testing.T) {
	r, err := NewReply(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []ConnValue{ConnNone, ConnKeepAlive, ConnClose} {
		if b := r.Bytes(c); len(b) != 0 {
			t.Errorf("mode %d: %q, want nothing", c, b)
		}
	}
	if !r.ForceClose || r.LogSize != 0 {
		t.Errorf("ForceClose %v LogSize %d, want a close and nothing logged", r.ForceClose, r.LogSize)
	}
}
