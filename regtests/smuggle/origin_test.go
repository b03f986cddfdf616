//go:build regtest

package smuggle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"goha/regtests/internal/harness"
)

// stray is a complete response no request asked for. A client that
// receives it got bytes meant for nobody, or for someone else.
const stray = "HTTP/1.1 299 Stray\r\nX-Tag: <<stray>>\r\nContent-Length: 0\r\n\r\n"

// origin is a raw TCP server that records every byte it receives, per
// connection, and answers each request it parses. Its parser is the
// lenient kind found behind proxies (bare LF ends lines, HTTP/1.0 ignores
// Transfer-Encoding, a line that is not a request gets a 400 and parsing
// goes on), so that bytes a proxy lets through unframed show up as extra
// requests instead of being lost in an error.
type origin struct {
	addr string

	mu     sync.Mutex // guards following fields
	conns  []*oconn
	events []event   // requests and framing errors, in the order they came
	last   time.Time // last byte received or sent, on any connection
}

type oconn struct {
	id  int
	raw bytes.Buffer
}

// event is a parsed request, or a connection's framing error.
type event struct {
	req *oreq
	err string
}

// oreq is one request as the origin parsed it; a line that was not a
// request has bad set and only line filled.
type oreq struct {
	line    string
	method  string
	target  string
	version string
	hdrs    [][2]string
	body    []byte
	bad     bool
	// bareLF: a line of the head or of the chunk framing ended in a
	// bare LF, which this origin accepts and stricter servers do not
	// read the same way.
	bareLF bool
}

func (r *oreq) get(name string) []string {
	var v []string
	for _, h := range r.hdrs {
		if strings.EqualFold(h[0], name) {
			v = append(v, h[1])
		}
	}
	return v
}

func newOrigin(t *testing.T) *origin {
	o := &origin{}
	o.addr = harness.TCPServer(t, o.serve)
	return o
}

func (o *origin) touch() {
	o.mu.Lock()
	o.last = time.Now()
	o.mu.Unlock()
}

func (o *origin) lastActivity() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last
}

// recorder copies what the origin reads into the connection's record.
type recorder struct {
	o *origin
	c net.Conn
	k *oconn
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.c.Read(p)
	if n > 0 {
		r.o.mu.Lock()
		r.k.raw.Write(p[:n])
		r.o.last = time.Now()
		r.o.mu.Unlock()
	}
	return n, err
}

func (o *origin) serve(c net.Conn) {
	defer c.Close()
	o.mu.Lock()
	k := &oconn{id: len(o.conns) + 1}
	o.conns = append(o.conns, k)
	o.last = time.Now()
	o.mu.Unlock()
	br := bufio.NewReader(&recorder{o: o, c: c, k: k})
	for n := 1; ; n++ {
		r, err := readRequest(br)
		if r != nil {
			o.mu.Lock()
			o.events = append(o.events, event{req: r})
			o.mu.Unlock()
		}
		if err != nil {
			// A reset or close between requests is how proxies end
			// server connections, in their own ways; only a message cut
			// or framed badly is part of what the proxy sent.
			if errors.Is(err, errFraming) {
				o.mu.Lock()
				o.events = append(o.events, event{err: err.Error()})
				o.mu.Unlock()
			}
			return
		}
		keep := o.answer(c, k.id, n, r)
		o.touch()
		if !keep {
			return
		}
	}
}

// answer writes the response to r: a fixed 200 whose X-Tag names the
// request, unless the path asks for one of the misbehaviours the
// response-side vectors need. It reports whether the connection stays open.
func (o *origin) answer(c net.Conn, conn, n int, r *oreq) bool {
	tag := fmt.Sprintf("<<%d.%d %s %s>>", conn, n, r.method, r.target)
	if r.bad {
		tag = fmt.Sprintf("<<%d.%d BAD %q>>", conn, n, r.line)
		fmt.Fprintf(c, "HTTP/1.1 400 Bad Request\r\nX-Tag: %s\r\nContent-Length: 0\r\n\r\n", tag)
		return true
	}
	keep := keepAlive(r)
	conhdr := ""
	switch {
	case !keep:
		conhdr = "Connection: close\r\n"
	case r.version == "HTTP/1.0":
		conhdr = "Connection: keep-alive\r\n"
	}
	ok := func(status string, body string) string {
		if r.method == "HEAD" {
			return fmt.Sprintf("HTTP/1.1 %s\r\nX-Tag: %s\r\nContent-Length: %d\r\n%s\r\n", status, tag, len(body), conhdr)
		}
		return fmt.Sprintf("HTTP/1.1 %s\r\nX-Tag: %s\r\nContent-Length: %d\r\n%s\r\n%s", status, tag, len(body), conhdr, body)
	}
	if r.method == "CONNECT" {
		// Port 200 accepts the tunnel; the bytes that follow are parsed
		// as requests again, as by a server behind the tunnel.
		if strings.HasSuffix(r.target, ":200") {
			fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\nX-Tag: %s\r\n\r\n", tag)
			return true
		}
		io.WriteString(c, ok("405 Method Not Allowed", "no\n"))
		return keep
	}
	switch r.target {
	case "/s204":
		fmt.Fprintf(c, "HTTP/1.1 204 No Content\r\nX-Tag: %s\r\n%s\r\n", tag, conhdr)
	case "/s304":
		fmt.Fprintf(c, "HTTP/1.1 304 Not Modified\r\nX-Tag: %s\r\n%s\r\n", tag, conhdr)
	case "/r-double":
		io.WriteString(c, ok("200 OK", "ok\n")+stray)
	case "/r-longbody":
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Tag: %s\r\nContent-Length: 3\r\n%s\r\nok\n%s", tag, conhdr, stray)
	case "/r-1xx":
		io.WriteString(c, strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 40)+ok("200 OK", "ok\n"))
	case "/r-headbody":
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Tag: %s\r\nContent-Length: %d\r\n%s\r\n%s", tag, len(stray), conhdr, stray)
	case "/r-204body":
		fmt.Fprintf(c, "HTTP/1.1 204 No Content\r\nX-Tag: %s\r\nContent-Length: %d\r\n%s\r\n%s", tag, len(stray), conhdr, stray)
	case "/r-304body":
		fmt.Fprintf(c, "HTTP/1.1 304 Not Modified\r\nX-Tag: %s\r\nContent-Length: %d\r\n%s\r\n%s", tag, len(stray), conhdr, stray)
	case "/r-stray-idle":
		io.WriteString(c, ok("200 OK", "ok\n"))
		// Sent once the proxy has had time to put the connection back in
		// its pool: the write is what matters, not when it lands.
		time.AfterFunc(150*time.Millisecond, func() { io.WriteString(c, stray) })
	case "/r-cl-te":
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Tag: %s\r\nContent-Length: 62\r\nTransfer-Encoding: chunked\r\n%s\r\n3\r\nok\n\r\n0\r\n\r\n%s", tag, conhdr, stray)
	case "/r-cl-differ":
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Tag: %s\r\nContent-Length: 3\r\nContent-Length: 62\r\n%s\r\nok\n%s", tag, conhdr, stray)
	case "/r-chunked-bare-lf":
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Tag: %s\r\nTransfer-Encoding: chunked\r\n%s\r\n3\nok\n\n0\n\n", tag, conhdr)
	case "/r-101":
		// Switches protocols whether or not the request asked to; the
		// bytes that follow are parsed as requests again.
		accept := ""
		if len(r.get("Sec-WebSocket-Key")) > 0 {
			accept = "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
		}
		fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nX-Tag: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n%s\r\n", tag, accept)
		return true
	case "/r-close-delimited":
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Tag: %s\r\n\r\nok\n", tag)
		return false
	default:
		io.WriteString(c, ok("200 OK", "ok\n"))
	}
	return keep
}

func keepAlive(r *oreq) bool {
	conn := strings.ToLower(strings.Join(r.get("Connection"), ","))
	if r.version == "HTTP/1.0" {
		return strings.Contains(conn, "keep-alive")
	}
	return !strings.Contains(conn, "close")
}

var errFraming = errors.New("framing")

// readLine returns a line without its LF and a CR before it, and notes
// in r a line that ended in a bare LF.
func readLine(br *bufio.Reader, r *oreq) (string, error) {
	l, err := br.ReadString('\n')
	if err != nil {
		if err == io.EOF && l != "" {
			return "", fmt.Errorf("%w: unterminated line %q", errFraming, l)
		}
		return "", err
	}
	l = strings.TrimSuffix(l, "\n")
	if !strings.HasSuffix(l, "\r") && r != nil {
		r.bareLF = true
	}
	return strings.TrimSuffix(l, "\r"), nil
}

// readRequest parses one request. A returned request with an error is
// one whose body was cut short or badly framed.
func readRequest(br *bufio.Reader) (*oreq, error) {
	var line string
	var first oreq
	for {
		first.bareLF = false
		l, err := readLine(br, &first)
		if err != nil {
			return nil, err
		}
		if l != "" {
			line = l
			break
		}
	}
	r := &oreq{line: line, bareLF: first.bareLF}
	f := strings.Fields(line)
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") {
		r.bad = true
		return r, nil
	}
	r.method, r.target, r.version = f[0], f[1], f[2]
	for {
		l, err := readLine(br, r)
		if err != nil {
			return nil, err
		}
		if l == "" {
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && len(r.hdrs) > 0 {
			r.hdrs[len(r.hdrs)-1][1] += " " + strings.TrimSpace(l)
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return r, fmt.Errorf("%w: header line without colon %q", errFraming, l)
		}
		r.hdrs = append(r.hdrs, [2]string{name, strings.TrimSpace(value)})
	}
	chunked := false
	if r.version != "HTTP/1.0" {
		// The last coding decides; empty list elements do not count
		// (RFC 9110, 5.6.1).
		var last string
		for _, te := range r.get("Transfer-Encoding") {
			for _, c := range strings.Split(te, ",") {
				if c = strings.TrimSpace(c); c != "" {
					last = c
				}
			}
		}
		chunked = strings.EqualFold(last, "chunked")
	}
	if chunked {
		return r, readChunked(br, r)
	}
	if cl := r.get("Content-Length"); len(cl) > 0 {
		n, err := strconv.ParseInt(strings.TrimSpace(cl[0]), 10, 64)
		if err != nil || n < 0 {
			return r, fmt.Errorf("%w: content-length %q", errFraming, cl[0])
		}
		r.body = make([]byte, n)
		got, err := io.ReadFull(br, r.body)
		if err != nil {
			r.body = r.body[:got]
			return r, fmt.Errorf("%w: body cut at %d of %d bytes", errFraming, got, n)
		}
	}
	return r, nil
}

func readChunked(br *bufio.Reader, r *oreq) error {
	for {
		l, err := readLine(br, r)
		if err != nil {
			return fmt.Errorf("%w: chunk size: %v", errFraming, err)
		}
		size, _, _ := strings.Cut(l, ";")
		n, err := strconv.ParseUint(strings.TrimSpace(size), 16, 32)
		if err != nil {
			return fmt.Errorf("%w: chunk size %q", errFraming, l)
		}
		if n == 0 {
			for {
				t, err := readLine(br, r)
				if err != nil {
					return fmt.Errorf("%w: trailers: %v", errFraming, err)
				}
				if t == "" {
					return nil
				}
				name, value, _ := strings.Cut(t, ":")
				r.hdrs = append(r.hdrs, [2]string{"trailer " + name, strings.TrimSpace(value)})
			}
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return fmt.Errorf("%w: chunk data cut short", errFraming)
		}
		r.body = append(r.body, b...)
		if l, err := readLine(br, r); err != nil || l != "" {
			return fmt.Errorf("%w: chunk data not followed by a line end (%q)", errFraming, l)
		}
	}
}

// view is what the origin received, normalised for what the two proxies
// may legitimately do differently: header names lower-cased (HAProxy
// lower-cases them, goha keeps their case), chunked bodies decoded
// (HAProxy re-chunks, goha forwards chunks as received), and requests
// taken in the order they arrived, whatever connection carried them (how
// many server connections there are is a pooling choice).
func (o *origin) view() (lines []string, nreq int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.events {
		r := e.req
		switch {
		case r == nil:
			lines = append(lines, "origin error: "+e.err)
			continue
		case r.bad:
			lines = append(lines, fmt.Sprintf("not a request: %q", r.line))
			nreq++
			continue
		}
		nreq++
		lines = append(lines, "request: "+r.method+" "+r.target+" "+r.version)
		for _, h := range r.hdrs {
			lines = append(lines, fmt.Sprintf("  %s: %q", strings.ToLower(h[0]), h[1]))
		}
		if len(r.body) > 0 {
			lines = append(lines, fmt.Sprintf("  body %q", r.body))
		}
		if r.bareLF {
			lines = append(lines, "  a line ended in a bare LF")
		}
	}
	return lines, nreq
}

// requests returns every request the origin parsed.
func (o *origin) requests() []*oreq {
	o.mu.Lock()
	defer o.mu.Unlock()
	var rs []*oreq
	for _, e := range o.events {
		if e.req != nil {
			rs = append(rs, e.req)
		}
	}
	return rs
}

// received returns the bytes each connection received, in accept order.
func (o *origin) received() [][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b [][]byte
	for _, k := range o.conns {
		if k.raw.Len() > 0 {
			b = append(b, bytes.Clone(k.raw.Bytes()))
		}
	}
	return b
}

// reset forgets what the origin recorded, for a replay. Connections the
// proxy pooled during the first run stay in the list, emptied, since their
// next requests belong to the replay.
func (o *origin) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = nil
	for _, k := range o.conns {
		k.raw.Reset()
	}
}
