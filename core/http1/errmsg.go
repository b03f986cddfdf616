package http1

import (
	"fmt"
	"os"
	"sort"
	"strconv"
)

// HAProxy 2.6's built-in error messages (src/http.c). They reach the wire in
// two shapes:
//
//   - Sent by the H1 layer itself when it rejects a request before any
//     stream exists (parse errors, request timeout, 413, 422, 501): the
//     template goes out byte for byte, header names capitalised as written.
//     RawError returns these bytes.
//   - Sent by the stream (no server, deny, 502/504 from a server, errorfile):
//     the message is re-serialised, so header names are lower-cased, the
//     template's Connection header is dropped, and "connection: close" or
//     "connection: keep-alive" is appended when the connection mode asks for
//     it. ErrorReply returns these forms.
var errTemplates = map[int]string{
	200: "HTTP/1.1 200 OK\r\nContent-length: 58\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>200 OK</h1>\nService ready.\n</body></html>\n",
	400: "HTTP/1.1 400 Bad request\r\nContent-length: 90\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>400 Bad request</h1>\nYour browser sent an invalid request.\n</body></html>\n",
	401: "HTTP/1.1 401 Unauthorized\r\nContent-length: 112\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>401 Unauthorized</h1>\nYou need a valid user and password to access this content.\n</body></html>\n",
	403: "HTTP/1.1 403 Forbidden\r\nContent-length: 93\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>403 Forbidden</h1>\nRequest forbidden by administrative rules.\n</body></html>\n",
	404: "HTTP/1.1 404 Not Found\r\nContent-length: 83\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>404 Not Found</h1>\nThe resource could not be found.\n</body></html>\n",
	405: "HTTP/1.1 405 Method Not Allowed\r\nContent-length: 146\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>405 Method Not Allowed</h1>\nA request was made of a resource using a request method not supported by that resource\n</body></html>\n",
	407: "HTTP/1.1 407 Unauthorized\r\nContent-length: 112\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>407 Unauthorized</h1>\nYou need a valid user and password to access this content.\n</body></html>\n",
	408: "HTTP/1.1 408 Request Time-out\r\nContent-length: 110\r\nCache-Control: no-cache\r\nConnection: close\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>408 Request Time-out</h1>\nYour browser didn't send a complete request in time.\n</body></html>\n",
	410: "HTTP/1.1 410 Gone\r\nContent-length: 114\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>410 Gone</h1>\nThe resource is no longer available and will not be available again.\n</body></html>\n",
	413: "HTTP/1.1 413 Payload Too Large\r\nContent-length: 106\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>413 Payload Too Large</h1>\nThe request entity exceeds the maximum allowed.\n</body></html>\n",
	421: "HTTP/1.1 421 Misdirected Request\r\nContent-length: 104\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>421 Misdirected Request</h1>\nRequest sent to a non-authoritative server.\n</body></html>\n",
	422: "HTTP/1.1 422 Unprocessable Content\r\nContent-length: 116\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>422 Unprocessable Content</h1>\nThe server cannot process the contained instructions.\n</body></html>\n",
	425: "HTTP/1.1 425 Too Early\r\nContent-length: 80\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>425 Too Early</h1>\nYour browser sent early data.\n</body></html>\n",
	429: "HTTP/1.1 429 Too Many Requests\r\nContent-length: 117\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>429 Too Many Requests</h1>\nYou have sent too many requests in a given amount of time.\n</body></html>\n",
	500: "HTTP/1.1 500 Internal Server Error\r\nContent-length: 97\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>500 Internal Server Error</h1>\nAn internal server error occurred.\n</body></html>\n",
	501: "HTTP/1.1 501 Not Implemented\r\nContent-length: 136\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>501 Not Implemented</h1>\n.The server does not support the functionality required to fulfill the request.\n</body></html>\n",
	502: "HTTP/1.1 502 Bad Gateway\r\nContent-length: 107\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>502 Bad Gateway</h1>\nThe server returned an invalid or incomplete response.\n</body></html>\n",
	503: "HTTP/1.1 503 Service Unavailable\r\nContent-length: 107\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n",
	504: "HTTP/1.1 504 Gateway Time-out\r\nContent-length: 92\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n\r\n" +
		"<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>\n",
}

// Continue100 is the interim response HAProxy sends itself to a request
// with "Expect: 100-continue" when it has to read the body before
// forwarding it (option http-buffer-request).
var Continue100 = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// Reply is an HTTP response prepared once (at start-up or config load) in
// the three shapes a connection may need, so that sending it costs one
// Write and no allocation.
type Reply struct {
	Status int
	// ForceClose is set when the reply itself requires closing the
	// connection: its template carried "Connection: close", or it has a
	// body without Content-Length (delimited by the close).
	ForceClose bool

	// LogSize is what HAProxy logs as the bytes sent for this reply (%B)
	// when a stream sends it: the size of the message in HAProxy's
	// internal form (see HTXSize), not on the wire.
	LogSize int

	plain, close, keepAlive []byte
}

// HTXSize is the size HAProxy 2.6 counts for a message its streams build
// or re-serialise: 21 for the start line's fixed part, plus the bytes of
// its three words, of each header's name and value (no separators), and of
// the body. Measured on HAProxy 2.6's replies (errorfiles, return rules
// with 1 to 4 header fields, statuses 200, 204 and 403 to 504) against
// their log lines.
func HTXSize(startWords, fieldBytes, body int) int {
	return 21 + startWords + fieldBytes + body
}

// BodylessStatus says whether HAProxy's H1 layer drops Content-Length
// from a response with this status on the wire (1xx and 204).
func BodylessStatus(st int) bool { return st < 200 || st == 204 }

// Bytes returns the reply for the connection mode: c is what the proxy
// would announce (ConnNone on an HTTP/1.1 keep-alive connection). A reply
// with ForceClose always returns the close form.
func (r *Reply) Bytes(c ConnValue) []byte {
	if r.ForceClose || c == ConnClose {
		return r.close
	}
	if c == ConnKeepAlive {
		return r.keepAlive
	}
	return r.plain
}

var (
	rawErrors   = map[int][]byte{}
	errorReplys = map[int]*Reply{}
)

func init() {
	for st, t := range errTemplates {
		rawErrors[st] = []byte(t)
		r, err := NewReply([]byte(t))
		if err != nil {
			panic("http1: built-in error message " + strconv.Itoa(st) + ": " + err.Error())
		}
		errorReplys[st] = r
	}
}

// ErrorStatuses lists the statuses that have a built-in message, i.e. the
// codes errorfile and http-error accept.
func ErrorStatuses() []int {
	s := make([]int, 0, len(errTemplates))
	for st := range errTemplates {
		s = append(s, st)
	}
	sort.Ints(s)
	return s
}

// RawError returns HAProxy's built-in message for status exactly as its H1
// layer writes it when rejecting a request itself (parse error: 400, 413,
// 422; request timeout: 408; 500; 501), or nil for an unknown status. The
// slice is shared: do not modify it.
func RawError(status int) []byte { return rawErrors[status] }

// ErrorReply returns the built-in reply for status in its stream-level
// shape, or nil for an unknown status.
func ErrorReply(status int) *Reply { return errorReplys[status] }

// NewReply prepares a reply from a complete raw response (an errorfile's
// contents), validating it as HAProxy does. Errors carry HAProxy's text
// (without the "'<file>': " prefix LoadErrorFile adds).
func NewReply(raw []byte) (*Reply, error) {
	if len(raw) == 0 {
		// An empty errorfile (/dev/null) answers nothing: the connection
		// is closed, as HAProxy does.
		return &Reply{ForceClose: true}, nil
	}
	var h Head
	h.MaxSize = len(raw) + 1
	h.MaxHTX = 1 << 30 // errorfiles are bounded by tune.bufsize alone
	buf := append([]byte(nil), raw...)
	n, err := h.ParseResponse(buf, MethodGET)
	if err != nil || n == 0 {
		off := -2
		if e, ok := err.(*Error); ok {
			off = e.Offset
			if e.Kind == ErrVersion {
				return nil, fmt.Errorf("invalid http version (%s)", h.Version())
			}
		}
		return nil, fmt.Errorf("unable to parse headers (error offset: %d)", off)
	}
	st := h.Status
	if st < 200 && (st == 100 || st >= 102) {
		return nil, fmt.Errorf("invalid http status code for an error message (%d)", st)
	}
	body := buf[n:]
	bodyless := st == 204 || st == 304
	if !bodyless && h.Flags&FlagChunked != 0 {
		return nil, fmt.Errorf("chunk-encoded payload not supported")
	}
	if !bodyless && h.Flags&FlagContentLength != 0 && h.ContentLength == 0 {
		bodyless = true
	}
	if bodyless && len(body) > 0 {
		return nil, fmt.Errorf("message payload not expected")
	}
	if !bodyless && h.Flags&FlagContentLength != 0 && h.ContentLength != int64(len(body)) {
		return nil, fmt.Errorf("payload size does not match the announced content-length (%d != %d)",
			len(body), h.ContentLength)
	}
	r := &Reply{Status: st}
	r.ForceClose = h.Flags&FlagConnClose != 0 ||
		(!bodyless && h.Flags&FlagContentLength == 0)
	var head []byte
	head = append(head, h.Version()...)
	head = append(head, ' ')
	head = append(head, h.StatusBytes()...)
	head = append(head, ' ')
	head = append(head, h.Reason()...)
	head = append(head, "\r\n"...)
	fieldBytes := 0
	for i := 0; i < h.NumFields(); i++ {
		if h.Deleted(i) {
			continue
		}
		name, value := h.Field(i)
		// A Connection field counts in HAProxy's size of the message,
		// not on the wire, where the connection's own one replaces it.
		fieldBytes += len(name) + len(value)
		if eqFold(name, "connection") {
			continue
		}
		if BodylessStatus(st) && eqFold(name, "content-length") {
			continue
		}
		for _, c := range name {
			head = append(head, lower(c))
		}
		head = append(head, ": "...)
		head = append(head, value...)
		head = append(head, "\r\n"...)
	}
	mk := func(conn string) []byte {
		m := make([]byte, 0, len(head)+len(conn)+2+len(body))
		m = append(m, head...)
		m = append(m, conn...)
		m = append(m, "\r\n"...)
		return append(m, body...)
	}
	r.LogSize = HTXSize(len(h.Version())+len(h.StatusBytes())+len(h.Reason()), fieldBytes, len(body))
	r.plain = mk("")
	r.close = mk("connection: close\r\n")
	r.keepAlive = mk("connection: keep-alive\r\n")
	return r, nil
}

// LoadErrorFile reads an errorfile for status, with HAProxy's checks and
// messages; bufsize is tune.bufsize (0 for the default). A file larger than
// bufsize is truncated with a warning, as in HAProxy. The config layer
// prefixes errors with "errorfile : ".
func LoadErrorFile(status int, path string, bufsize int) (r *Reply, warning string, err error) {
	if _, ok := errTemplates[status]; !ok {
		return nil, "", fmt.Errorf("status code '%d' not handled.", status)
	}
	if bufsize <= 0 {
		bufsize = DefaultBufSize
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("error opening file '%s'.", path)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("error opening file '%s'.", path)
	}
	size := st.Size()
	if size > int64(bufsize) {
		warning = fmt.Sprintf("custom error message file '%s' larger than %d bytes. Truncating.", path, bufsize)
		size = int64(bufsize)
	}
	raw := make([]byte, size)
	if n, err := readFull(f, raw); err != nil || n != len(raw) {
		return nil, warning, fmt.Errorf("error reading file '%s'.", path)
	}
	if len(raw) == 0 {
		// HAProxy accepts an empty file: the reply sends nothing and
		// closes.
		return &Reply{Status: status, ForceClose: true}, warning, nil
	}
	r, err = NewReply(raw)
	if err != nil {
		return nil, warning, fmt.Errorf("'%s': %v", path, err)
	}
	return r, warning, nil
}

func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
