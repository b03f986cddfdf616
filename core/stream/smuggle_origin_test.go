package stream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The smuggling invariants, checked by FuzzSmuggle against goha and by
// TestSmuggleSeedsHAProxy against HAProxy with the same origin:
//
//   - every request the origin parses went through the frontend's rules:
//     it carries X-Ruled and X-Client exactly once, and its path does not
//     begin with /admin (denied);
//   - a client receives response markers only for requests of its own
//     connection;
//   - nobody gets a 504 (the origin answers every request it can frame as
//     soon as it has it, so a 504 means the proxy and the origin framed a
//     request differently);
//   - everything ends within a deadline far above the proxy's timeouts.
//
// The proxies' rules, in HAProxy's words; %s is the bind, the server.
const smuggleRules = `
defaults
    mode http
    timeout connect 2s
    timeout client 2s
    timeout server 2s
    timeout http-request 1s
    timeout http-keep-alive 1s
    http-reuse always
frontend fe
    bind %s
    http-request deny if { path_beg /admin }
    http-request set-header X-Ruled 1
    http-request set-header X-Client %%[src]
    default_backend be
backend be
    server s1 %s
`

// smuggleClients are the two clients' source addresses.
var smuggleClients = [2]string{"127.0.0.2", "127.0.0.3"}

// smuggleSep splits an input into what the two clients send.
var smuggleSep = []byte("\n~~\n")

// smuggleDeadline bounds a whole exchange, far above the proxies'
// timeouts: reaching it means something hung.
const smuggleDeadline = 15 * time.Second

// smuggleSplit returns the two clients' bytes; an input without the
// separator is the first client's, and the second sends two plain
// requests, so that its responses can be mixed up with the first's.
func smuggleSplit(data []byte) (a, b []byte) {
	if a, b, ok := bytes.Cut(data, smuggleSep); ok {
		return a, b
	}
	return data, []byte("GET /b1 HTTP/1.1\r\nHost: b\r\n\r\nGET /b2 HTTP/1.1\r\nHost: b\r\n\r\n")
}

// smuggleOrigin is a recording origin that frames requests as a lenient,
// naive backend does: bare LF ends a line, chunked wins over
// Content-Length, the first Content-Length counts, HTTP/1.0 knows no
// chunked encoding and closes unless asked to keep alive. It answers every
// request it frames with a marker naming the request (a sequence number
// and the X-Client the proxy set, the client's address) in a header and
// in the body.
type smuggleOrigin struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	seq  int
	reqs []smuggleReq
	bad  []string // bytes the origin could not frame as a request
	cs   map[net.Conn]bool
	// closing: the check has begun, and the origin closes what the
	// proxy left open (reads failing then are no framing error).
	closing bool
}

type smuggleReq struct {
	line   string
	path   string
	ruled  []string
	client []string
}

func newSmuggleOrigin(t testing.TB) *smuggleOrigin {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &smuggleOrigin{ln: ln, cs: map[net.Conn]bool{}}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			o.mu.Lock()
			o.cs[c] = true
			o.mu.Unlock()
			o.wg.Add(1)
			go func() {
				defer o.wg.Done()
				o.serve(c)
			}()
		}
	}()
	return o
}

func (o *smuggleOrigin) addr() string { return o.ln.Addr().String() }

// close stops the origin and waits for its connections to end.
func (o *smuggleOrigin) close() {
	o.ln.Close()
	o.mu.Lock()
	o.closing = true
	for c := range o.cs {
		c.Close()
	}
	o.mu.Unlock()
	o.wg.Wait()
}

var (
	errSmuggleFrame = errors.New("cannot frame")
	errSmuggleCut   = errors.New("cut short")
)

func (o *smuggleOrigin) serve(c net.Conn) {
	defer func() {
		c.Close()
		o.mu.Lock()
		delete(o.cs, c)
		o.mu.Unlock()
	}()
	br := bufio.NewReaderSize(c, 4096)
	for {
		keep, err := o.exchange(c, br)
		if err != nil {
			// A proxy may close mid-body: its client left.
			if errors.Is(err, errSmuggleFrame) && !errors.Is(err, errSmuggleCut) {
				o.mu.Lock()
				if !o.closing {
					o.bad = append(o.bad, err.Error())
				}
				o.mu.Unlock()
			}
			return
		}
		if !keep {
			return
		}
	}
}

// smuggleLine reads a line ended by LF, without its CR LF or LF.
func smuggleLine(br *bufio.Reader) (string, error) {
	var sb strings.Builder
	for {
		frag, err := br.ReadSlice('\n')
		sb.Write(frag)
		if err == bufio.ErrBufferFull {
			if sb.Len() > 1<<16 {
				return "", fmt.Errorf("%w: line longer than 64 kB", errSmuggleFrame)
			}
			continue
		}
		if err != nil {
			if sb.Len() > 0 {
				return "", fmt.Errorf("%w: truncated line %q", errSmuggleFrame, sb.String())
			}
			return "", err
		}
		return strings.TrimSuffix(strings.TrimSuffix(sb.String(), "\n"), "\r"), nil
	}
}

// exchange frames one request and answers it.
func (o *smuggleOrigin) exchange(c net.Conn, br *bufio.Reader) (keep bool, err error) {
	line, err := smuggleLine(br)
	if err != nil {
		return false, err
	}
	sp1, sp2 := strings.IndexByte(line, ' '), strings.LastIndexByte(line, ' ')
	if sp1 <= 0 || sp2 <= sp1 {
		return false, fmt.Errorf("%w: request line %q", errSmuggleFrame, line)
	}
	method, target, version := line[:sp1], line[sp1+1:sp2], line[sp2+1:]
	req := smuggleReq{line: line, path: smugglePath(target)}
	var te, cl, conn []string
	for {
		h, err := smuggleLine(br)
		if err != nil {
			if err == io.EOF {
				err = fmt.Errorf("%w: head of %q cut short", errSmuggleFrame, line)
			}
			return false, err
		}
		if h == "" {
			break
		}
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return false, fmt.Errorf("%w: header line %q", errSmuggleFrame, h)
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "x-ruled":
			req.ruled = append(req.ruled, value)
		case "x-client":
			req.client = append(req.client, value)
		case "transfer-encoding":
			te = smuggleList(te, value)
		case "content-length":
			cl = append(cl, value)
		case "connection":
			conn = smuggleList(conn, value)
		}
	}
	v11 := version != "HTTP/1.0" && version != "HTTP/0.9"
	keep = v11
	for _, tok := range conn {
		switch tok {
		case "close":
			keep = false
		case "keep-alive":
			keep = keep || !v11
		}
	}
	o.mu.Lock()
	o.seq++
	seq := o.seq
	o.reqs = append(o.reqs, req)
	o.mu.Unlock()

	// The body, as this naive backend frames it.
	switch {
	case v11 && len(te) > 0 && te[len(te)-1] == "chunked":
		if err := smuggleChunked(br); err != nil {
			return false, err
		}
	case len(cl) > 0:
		first, _, _ := strings.Cut(cl[0], ",")
		n, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
		if err != nil || n < 0 {
			return false, fmt.Errorf("%w: content-length %q", errSmuggleFrame, cl[0])
		}
		if _, err := io.CopyN(io.Discard, br, n); err != nil {
			return false, fmt.Errorf("%w: body of %q %w", errSmuggleFrame, line, errSmuggleCut)
		}
	}

	marker := smuggleMarker(seq, strings.Join(req.client, ","))
	status := "200 OK"
	if method == "CONNECT" {
		// Not a forward proxy: no tunnel.
		status = "405 Method Not Allowed"
	}
	var resp strings.Builder
	fmt.Fprintf(&resp, "HTTP/1.1 %s\r\nX-Marker: %s\r\nContent-Length: %d\r\n", status, marker, len(marker))
	if !keep {
		resp.WriteString("Connection: close\r\n")
	}
	resp.WriteString("\r\n")
	if method != "HEAD" {
		resp.WriteString(marker)
	}
	if _, err := io.WriteString(c, resp.String()); err != nil {
		return false, io.EOF
	}
	return keep, nil
}

// smuggleList appends the members of a comma-separated header value to
// l, lower-cased; empty members do not count (RFC 9110, 5.6.1).
func smuggleList(l []string, value string) []string {
	for _, m := range strings.Split(strings.ToLower(value), ",") {
		if m = strings.TrimSpace(m); m != "" {
			l = append(l, m)
		}
	}
	return l
}

// smuggleChunked reads a chunked body leniently: extensions ignored, LF
// or CR LF after sizes and data, trailers up to an empty line.
func smuggleChunked(br *bufio.Reader) error {
	for {
		line, err := smuggleLine(br)
		if err != nil {
			return fmt.Errorf("%w: chunked body %w", errSmuggleFrame, errSmuggleCut)
		}
		size := strings.TrimSpace(line)
		if i := strings.IndexAny(size, "; \t"); i >= 0 {
			size = size[:i]
		}
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errSmuggleFrame, line)
		}
		if n == 0 {
			for {
				tr, err := smuggleLine(br)
				if err != nil {
					return fmt.Errorf("%w: trailers %w", errSmuggleFrame, errSmuggleCut)
				}
				if tr == "" {
					return nil
				}
			}
		}
		if _, err := io.CopyN(io.Discard, br, n); err != nil {
			return fmt.Errorf("%w: chunk data %w", errSmuggleFrame, errSmuggleCut)
		}
		if _, err := smuggleLine(br); err != nil {
			return fmt.Errorf("%w: chunk end %w", errSmuggleFrame, errSmuggleCut)
		}
	}
}

// smugglePath is the path a target names, as path_beg sees it.
func smugglePath(target string) string {
	if !strings.HasPrefix(target, "/") {
		i := strings.Index(target, "://")
		if i < 0 {
			return ""
		}
		rest := target[i+3:]
		j := strings.IndexAny(rest, "/?#")
		if j < 0 || rest[j] != '/' {
			return ""
		}
		target = rest[j:]
	}
	if i := strings.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	return target
}

func smuggleMarker(seq int, client string) string {
	client = strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || r < ' ' || r > '~' {
			return '_'
		}
		return r
	}, client)
	if client == "" {
		client = "none"
	}
	return fmt.Sprintf("<<%d|%s>>", seq, client)
}

var smuggleMarkerRE = regexp.MustCompile(`<<(\d+)\|([^<>]*)>>`)

// smuggleResult is what a client received, and its address as X-Client
// names it.
type smuggleResult struct {
	self string
	got  []byte
	err  error
}

// smuggleSend sends data from src, shuts down its side, and reads until
// the proxy closes.
func smuggleSend(proxy, src string, data []byte, sent chan<- struct{}) smuggleResult {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", proxy)
	if err != nil {
		close(sent)
		return smuggleResult{self: src, err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(smuggleDeadline))
	// The proxy may close before it has read everything (an error
	// reply): what it wrote is still read below.
	c.Write(data)
	c.(*net.TCPConn).CloseWrite()
	close(sent)
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return smuggleResult{self: src, got: got, err: err}
	}
	// A reset (the proxy closed with bytes unread) ends the stream too.
	return smuggleResult{self: src, got: got}
}

// runSmuggle sends a to the proxy from the first client, then b from the
// second while the first still reads, and checks the invariants. settle,
// when set, returns once the proxy has nothing left in flight, so that
// what the origin records is this exchange's alone.
func runSmuggle(t testing.TB, proxy string, o *smuggleOrigin, a, b []byte, settle func()) {
	t.Helper()
	var res [2]smuggleResult
	var wg sync.WaitGroup
	for i, data := range [][]byte{a, b} {
		sent := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = smuggleSend(proxy, smuggleClients[i], data, sent)
		}()
		<-sent
	}
	wg.Wait()
	if settle != nil {
		settle()
	}
	checkSmuggle(t, o, res)
}

// checkSmuggle checks the invariants once the clients are done; the
// origin is closed first, so that it has framed all it will.
func checkSmuggle(t testing.TB, o *smuggleOrigin, res [2]smuggleResult) {
	t.Helper()
	o.close()
	for i, r := range res {
		if r.err != nil {
			t.Errorf("client %d: %v after %q", i, r.err, r.got)
			continue
		}
		for _, m := range smuggleMarkerRE.FindAllSubmatch(r.got, -1) {
			if string(m[2]) != r.self {
				t.Errorf("client %d (%s) received the response to request %s of %s", i, r.self, m[1], m[2])
			}
		}
		if bytes.Contains(r.got, []byte(" 504 ")) && bytes.Contains(r.got, []byte("HTTP/1.1 504 ")) {
			t.Errorf("client %d received a 504: %q", i, r.got)
		}
	}
	for _, q := range o.reqs {
		if len(q.ruled) != 1 || q.ruled[0] != "1" || len(q.client) != 1 {
			t.Errorf("the origin got %q with X-Ruled %q and X-Client %q: not through the rules", q.line, q.ruled, q.client)
		}
		if strings.HasPrefix(q.path, "/admin") {
			t.Errorf("the origin got %q, which the rules deny", q.line)
		}
	}
	for _, b := range o.bad {
		t.Errorf("the origin could not frame what it got: %s", b)
	}
}
