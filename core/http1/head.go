package http1

import "bytes"

// Defaults matching HAProxy 2.6: tune.bufsize 16384, tune.maxrewrite 1024,
// and tune.http.maxhdr 101, which holds 100 header fields plus the
// end-of-headers marker.
//
// HAProxy limits a head twice: the raw bytes must fit in the input buffer
// (DefaultMaxHead), and the head converted to its internal HTX form must
// fit in the buffer less the HTX header and the maxrewrite reserve
// (DefaultMaxHTX). The HTX size is estimated as HAProxy does: 28 bytes plus
// the three start-line parts, 8 bytes plus name and value per field, and 9
// for the end of headers.
const (
	DefaultBufSize    = 16384
	DefaultMaxRewrite = 1024
	DefaultMaxHead    = DefaultBufSize
	DefaultMaxHTX     = DefaultBufSize - htxHeaderSize - DefaultMaxRewrite
	DefaultMaxFields  = 100

	htxHeaderSize = 48 // sizeof(struct htx) on 64-bit builds
)

// MaxHTXFor returns the HTX limit for a tune.bufsize and tune.maxrewrite.
func MaxHTXFor(bufsize, maxrewrite int) int { return bufsize - htxHeaderSize - maxrewrite }

// Method is a request method known to the proxy; anything else is
// MethodOther and its bytes are in Head.MethodBytes.
type Method uint8

const (
	MethodOther Method = iota
	MethodGET
	MethodHEAD
	MethodPOST
	MethodPUT
	MethodDELETE
	MethodCONNECT
	MethodOPTIONS
	MethodTRACE
)

var methodNames = [...]string{"", "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE"}

func (m Method) String() string { return methodNames[m] }

// Method names are case-sensitive (RFC 7231 §4.1), as in HAProxy's
// find_http_meth.
func lookupMethod(b []byte) Method {
	switch len(b) {
	case 3:
		if string(b) == "GET" {
			return MethodGET
		}
		if string(b) == "PUT" {
			return MethodPUT
		}
	case 4:
		if string(b) == "HEAD" {
			return MethodHEAD
		}
		if string(b) == "POST" {
			return MethodPOST
		}
	case 5:
		if string(b) == "TRACE" {
			return MethodTRACE
		}
	case 6:
		if string(b) == "DELETE" {
			return MethodDELETE
		}
	case 7:
		if string(b) == "CONNECT" {
			return MethodCONNECT
		}
		if string(b) == "OPTIONS" {
			return MethodOPTIONS
		}
	}
	return MethodOther
}

// Flags describe what the parser learnt from the framing and routing
// headers.
type Flags uint32

const (
	FlagVer11            Flags = 1 << iota // HTTP/1.1 or later
	FlagContentLength                      // a valid Content-Length is in force
	FlagChunked                            // chunked is the final transfer-coding
	FlagTransferEncoding                   // a Transfer-Encoding header was present
	FlagConnClose                          // Connection: close
	FlagConnKeepAlive                      // Connection: keep-alive
	FlagConnUpgrade                        // Connection: upgrade
	FlagUpgradeWebSocket                   // Upgrade: websocket
	FlagExpect100                          // Expect: 100-continue (requests)
	FlagForceClose                         // framing requires closing after this exchange (CL+TE, TE on HTTP/1.0)
	FlagHost                               // a Host header is present (requests)
	FlagAbsoluteURI                        // request target in absolute-form (with a scheme)
	FlagRewrite                            // the head must not be forwarded verbatim (see Head.Raw)
	FlagCloseServer                        // the server connection must close after this exchange (TE on HTTP/1.0, CONNECT with TE); the client's may go on
)

// BodyKind says how a message's body is delimited.
type BodyKind uint8

const (
	BodyNone       BodyKind = iota // no body follows the head
	BodyLength                     // Content-Length bytes follow
	BodyChunked                    // chunked transfer-coding, ends with the last chunk and trailers
	BodyUntilClose                 // response body delimited by the server closing
	BodyTunnel                     // after 101 or a 2xx answer to CONNECT: bytes flow both ways until close
)

func (k BodyKind) String() string {
	return [...]string{"none", "length", "chunked", "until-close", "tunnel"}[k]
}

type span struct{ off, n int32 }

func (s span) of(b []byte) []byte { return b[s.off : s.off+s.n : s.off+s.n] }

type field struct {
	name, value span
	drop        bool
	// ext: name and value are in the Head's ext space (a field a rule
	// added or gave a longer value), not in the parsed buffer.
	ext bool
}

// Head is a parsed request or response head. It holds no copy of the
// message: the start line and every header field are slices of the buffer
// given to ParseRequest or ParseResponse, so the Head is valid only while
// those bytes stay in place. Offsets, not pointers, are kept inside, so a
// Head costs no allocation once its field table has grown, and a parse that
// needed more data may be resumed after the caller moved the unread bytes to
// the front of its buffer.
//
// A Head is owned by one connection (or one event-loop slot) and is not safe
// for concurrent use.
type Head struct {
	// Limits; zero means the default. MaxSize is the largest raw head in
	// bytes (HAProxy: tune.bufsize). MaxHTX bounds HAProxy's estimate of
	// the head's internal size (see DefaultMaxHTX). MaxFields is the
	// largest number of header fields (HAProxy: tune.http.maxhdr - 1).
	MaxSize   int
	MaxHTX    int
	MaxFields int

	Flags         Flags
	Method        Method   // request method; for responses, the method of the request answered
	Status        int      // response status code
	ContentLength int64    // valid with FlagContentLength
	Body          BodyKind // how the body that follows is delimited

	buf    []byte // buf[:size] is the whole head, leading empty lines included
	size   int
	start  int // first byte of the start line
	resp   bool
	method span
	uri    span
	// Replacements set by rules (set-method, set-uri, set-path...):
	// what MethodBytes and URI, and so Path and Query, return from then
	// on, as later rules and fetches see them in HAProxy.
	methodSet, uriSet bool
	methodNew, uriNew []byte
	// ext holds the names and values of fields rules added or rewrote
	// with longer values; see field.ext.
	ext     []byte
	version span
	reason  span
	code    span
	host    int32 // index of the Host field, -1 if none
	fields  []field
	resume  int // start of the first unparsed header line of an incomplete head, or 0
	err     Error
}

func (h *Head) maxSize() int {
	if h.MaxSize > 0 {
		return h.MaxSize
	}
	return DefaultMaxHead
}

func (h *Head) maxHTX() int {
	if h.MaxHTX > 0 {
		return h.MaxHTX
	}
	return DefaultMaxHTX
}

// htxSize is HAProxy's h1_eval_htx_size for the parsed head.
func (h *Head) htxSize() int {
	sz := 8 + 20 + 9
	if h.resp {
		sz += int(h.version.n + h.code.n + h.reason.n)
	} else {
		sz += int(h.method.n + h.uri.n + h.version.n)
	}
	for i := range h.fields {
		if f := &h.fields[i]; !f.drop {
			sz += 8 + int(f.name.n+f.value.n)
		}
	}
	return sz
}

func (h *Head) maxFields() int {
	if h.MaxFields > 0 {
		return h.MaxFields
	}
	return DefaultMaxFields
}

// Reset forgets the parsed message and any partial search state; limits are
// kept. Parse* reset the Head themselves when they start on a new message,
// so Reset is only needed to abandon a partially received head.
func (h *Head) Reset() {
	h.Flags, h.Method, h.Status, h.ContentLength, h.Body = 0, 0, 0, 0, BodyNone
	h.buf, h.size, h.start, h.resume = nil, 0, 0, 0
	h.method, h.uri, h.version, h.reason, h.code = span{}, span{}, span{}, span{}, span{}
	h.methodSet, h.uriSet = false, false
	h.ext = h.ext[:0]
	h.host = -1
	h.fields = h.fields[:0]
}

// Rebase points the head at buf, which holds at its start the bytes the
// head was parsed from: its buffer moved them (Buffer.Free) while more of
// the body was read, and the head's fields, rules' changes included, stay
// as they are.
func (h *Head) Rebase(buf []byte) { h.buf = buf }

// Len is the length of the head in bytes, leading empty lines included: the
// body (if any) starts at this offset of the parsed buffer.
func (h *Head) Len() int { return h.size }

// Raw is the head as received, from the start line to the empty line. When
// FlagRewrite is set it must not be sent verbatim: the parser found
// something HAProxy would normalise (duplicate Content-Length or Host, a
// Content-Length next to Transfer-Encoding, bare LF line ends, obs-fold,
// extra blanks in the request line), or a field was deleted; use a
// Rewriter to build the head to send.
func (h *Head) Raw() []byte { return h.buf[h.start:h.size:h.size] }

// Start is the offset of the start line in the parsed buffer: leading empty
// lines before a message are skipped, as HAProxy does.
func (h *Head) Start() int { return h.start }

// IsResponse reports whether the head is a response.
func (h *Head) IsResponse() bool { return h.resp }

// MethodBytes, URI and Version return the request line's parts.
func (h *Head) MethodBytes() []byte {
	if h.methodSet {
		return h.methodNew
	}
	return h.method.of(h.buf)
}

func (h *Head) URI() []byte {
	if h.uriSet {
		return h.uriNew
	}
	return h.uri.of(h.buf)
}

// ReceivedMethod is the method as received, whatever SetMethod did: what
// HAProxy's method fetch keeps returning after set-method.
func (h *Head) ReceivedMethod() []byte { return h.method.of(h.buf) }

// SetURI replaces the request target; the head is rebuilt when sent.
func (h *Head) SetURI(u []byte) {
	h.uriNew = append(h.uriNew[:0], u...)
	h.uriSet = true
	h.Flags |= FlagRewrite
}

// SetMethod replaces the request's method; the head is rebuilt when sent.
func (h *Head) SetMethod(m []byte) {
	h.methodNew = append(h.methodNew[:0], m...)
	h.methodSet = true
	h.Flags |= FlagRewrite
}
func (h *Head) Version() []byte { return h.version.of(h.buf) }

// StatusBytes is the response's status code as received.
func (h *Head) StatusBytes() []byte { return h.code.of(h.buf) }

// Reason is the response's reason phrase (may be empty).
func (h *Head) Reason() []byte { return h.reason.of(h.buf) }

// NumFields is the number of header fields, deleted ones included; use
// Field and Deleted to walk them.
func (h *Head) NumFields() int { return len(h.fields) }

// Field returns the name and value (blanks trimmed) of field i.
func (h *Head) Field(i int) (name, value []byte) {
	f := &h.fields[i]
	return h.fname(f), h.fvalue(f)
}

// Deleted reports whether field i was dropped by the parser (merged
// duplicates, Content-Length beside Transfer-Encoding) or by Del.
func (h *Head) Deleted(i int) bool { return h.fields[i].drop }

// HTXSize is the size HAProxy 2.6 counts for this message's head in its
// byte counters and logs (see HTXSize): the start line's three words and
// each live field's name and value, Connection fields aside (HAProxy's H1
// layer turns them into flags). Call it before rules change the head:
// HAProxy counts a message as it enters.
func (h *Head) HTXSize() int {
	words := len(h.Version())
	if h.resp {
		words += len(h.StatusBytes()) + len(h.Reason())
	} else {
		words += len(h.MethodBytes()) + len(h.URI())
	}
	fields := 0
	for i := range h.fields {
		f := &h.fields[i]
		if f.drop {
			continue
		}
		name := h.fname(f)
		if eqFold(name, "connection") {
			continue
		}
		fields += len(name) + len(h.fvalue(f))
	}
	return HTXSize(words, fields, 0)
}

// Index returns the index of the first live field named name (any case) at
// or after from, or -1. Loop with `for i := h.Index(n, 0); i >= 0; i =
// h.Index(n, i+1)` to see every occurrence, as hdr() and hdr_beg() need.
func (h *Head) Index(name string, from int) int {
	for i := from; i < len(h.fields); i++ {
		f := &h.fields[i]
		if !f.drop && int(f.name.n) == len(name) && eqFold(h.fname(f), name) {
			return i
		}
	}
	return -1
}

// Get returns the value of the first live field named name.
func (h *Head) Get(name string) ([]byte, bool) {
	i := h.Index(name, 0)
	if i < 0 {
		return nil, false
	}
	return h.fvalue(&h.fields[i]), true
}

// Value returns field i's value.
func (h *Head) Value(i int) []byte { return h.fvalue(&h.fields[i]) }

// Del marks every field named name as deleted and returns how many were
// live. Deleting sets FlagRewrite.
func (h *Head) Del(name string) int {
	n := 0
	for i := h.Index(name, 0); i >= 0; i = h.Index(name, i+1) {
		h.fields[i].drop = true
		n++
	}
	if n > 0 {
		h.Flags |= FlagRewrite
	}
	return n
}

// DropBodilessFraming removes the Content-Length and Transfer-Encoding
// fields of a 1xx (101 included) or 204 response, to be called once the
// response rules have run. No body can follow such a response, so the
// fields describe none, and a client or cache that trusted them would
// take the next response for this one's body. HAProxy drops them as it
// writes the head, so they are still counted and seen by rules; a 304's
// and a HEAD response's describe the representation and stay.
func (h *Head) DropBodilessFraming() {
	if st := h.Status; h.resp && (st < 200 || st == 204) {
		h.Del("content-length")
		h.Del("transfer-encoding")
	}
}

// fname and fvalue are a field's name and value, wherever they are kept.
func (h *Head) fname(f *field) []byte {
	if f.ext {
		return f.name.of(h.ext)
	}
	return f.name.of(h.buf)
}

func (h *Head) fvalue(f *field) []byte {
	if f.ext {
		return f.value.of(h.ext)
	}
	return f.value.of(h.buf)
}

// ReplaceValue gives field i the value v, in place when it fits, else in
// the Head's own space: later reads (Value, Get) see it, and the head is
// rebuilt when sent. Rules rewrite fields so, as HAProxy's later rules
// and fetches see what earlier ones did.
func (h *Head) ReplaceValue(i int, v []byte) {
	f := &h.fields[i]
	if !f.ext && h.SetValue(i, v) {
		return
	}
	name := h.fname(f)
	off := len(h.ext)
	h.ext = append(h.ext, name...)
	h.ext = append(h.ext, v...)
	f.name = span{off: int32(off), n: int32(len(name))}
	f.value = span{off: int32(off + len(name)), n: int32(len(v))}
	f.ext = true
	h.Flags |= FlagRewrite
}

// AddField appends a field (set-header, add-header); it is sent after the
// parsed ones and seen by later reads.
func (h *Head) AddField(name string, v []byte) {
	off := len(h.ext)
	h.ext = append(h.ext, name...)
	h.ext = append(h.ext, v...)
	h.fields = append(h.fields, field{
		name:  span{off: int32(off), n: int32(len(name))},
		value: span{off: int32(off + len(name)), n: int32(len(v))},
		ext:   true,
	})
	h.Flags |= FlagRewrite
}

// SetValue replaces field i's value in place with v, which must be no
// longer than the value it replaces (cookie edits only remove bytes); it
// reports false, changing nothing, when v is longer.
func (h *Head) SetValue(i int, v []byte) bool {
	f := &h.fields[i]
	if len(v) > int(f.value.n) {
		return false
	}
	copy(h.buf[f.value.off:], v)
	f.value.n = int32(len(v))
	h.Flags |= FlagRewrite
	return true
}

// DelField marks field i deleted.
func (h *Head) DelField(i int) {
	if !h.fields[i].drop {
		h.fields[i].drop = true
		h.Flags |= FlagRewrite
	}
}

// Host is the Host header's value (requests), or nil.
func (h *Head) Host() []byte {
	if h.host < 0 || int(h.host) >= len(h.fields) || h.fields[h.host].drop {
		return nil
	}
	return h.fvalue(&h.fields[h.host])
}

// Authority returns the authority of the request target without user
// information ("http://u@a:8080/x" gives "a:8080"), or nil: what follows the
// scheme of an absolute-form target up to the first '/', or the whole
// target in authority-form (CONNECT). Origin-form and "*" have none.
func (h *Head) Authority() []byte {
	_, a, _, ok := splitTarget(h.URI())
	if !ok {
		return nil
	}
	return a
}

// Path is the request target's path, without the query string, like
// HAProxy's path fetch: the target itself in origin-form, what follows the
// authority in absolute-form, nil for "*", authority-form, or an
// absolute-form target with nothing after the authority.
func (h *Head) Path() []byte {
	u := h.URI()
	if len(u) == 0 || u[0] == '*' {
		return nil
	}
	if u[0] != '/' {
		scheme, _, rest, _ := splitTarget(u)
		if scheme == nil || len(rest) == 0 {
			return nil
		}
		u = rest
	}
	if i := bytes.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	return u
}

// Query is the part of the target after the first '?', or nil.
func (h *Head) Query() []byte {
	u := h.URI()
	if i := bytes.IndexByte(u, '?'); i >= 0 {
		return u[i+1:]
	}
	return nil
}

// KeepAlive reports whether the connection may carry another message after
// this one as far as this message is concerned: HTTP/1.1 unless
// "Connection: close", HTTP/1.0 only with "Connection: keep-alive", never
// when framing forces a close or the body runs until close.
func (h *Head) KeepAlive() bool {
	if h.Flags&FlagForceClose != 0 || h.Body == BodyUntilClose || h.Body == BodyTunnel {
		return false
	}
	if h.Flags&FlagConnClose != 0 {
		return false
	}
	if h.Flags&FlagVer11 != 0 {
		return true
	}
	return h.Flags&FlagConnKeepAlive != 0
}

// IsInterim reports a 1xx response other than 101: it is followed by the
// final response to the same request.
func (h *Head) IsInterim() bool {
	return h.resp && h.Status >= 100 && h.Status < 200 && h.Status != 101
}

// IsUpgrade reports a request asking to switch to WebSocket (Connection:
// upgrade with Upgrade: websocket), which becomes a tunnel after a 101.
func (h *Head) IsUpgrade() bool {
	return h.Flags&(FlagConnUpgrade|FlagUpgradeWebSocket) == FlagConnUpgrade|FlagUpgradeWebSocket
}

// splitTarget splits a request target that is neither origin-form nor
// "*" the way HAProxy's URI parser does: an optional scheme
// (ALPHA *(ALNUM / "+" / "-" / ".") "://"), then the authority up to the
// first '/', whose user information (up to the last '@') is dropped, then
// the rest. ok is false for origin-form, "*" and empty targets.
func splitTarget(u []byte) (scheme, authority, rest []byte, ok bool) {
	if len(u) == 0 || u[0] == '/' || u[0] == '*' {
		return nil, nil, nil, false
	}
	a := u
	if c := u[0]; (c|0x20) >= 'a' && (c|0x20) <= 'z' {
		i := 1
		for i < len(u) && (isAlnum(u[i]) || u[i] == '+' || u[i] == '-' || u[i] == '.') {
			i++
		}
		if i+3 <= len(u) && u[i] == ':' && u[i+1] == '/' && u[i+2] == '/' {
			scheme, a = u[:i+3], u[i+3:]
		}
	}
	end := bytes.IndexByte(a, '/')
	if end < 0 {
		end = len(a)
	}
	authority, rest = a[:end], a[end:]
	if at := bytes.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	return scheme, authority, rest, true
}

func isAlnum(c byte) bool {
	return (c|0x20) >= 'a' && (c|0x20) <= 'z' || c >= '0' && c <= '9'
}

// hostPort splits "host:port" as HAProxy's http_get_host_port does: the
// port is the trailing digits after a ':' (possibly empty); hasPort is
// false when there is no such ':'.
func hostPort(v []byte) (host, port []byte, hasPort bool) {
	i := len(v)
	for i > 0 && isDigit(v[i-1]) {
		i--
	}
	if i == 0 || v[i-1] != ':' {
		return v, nil, false
	}
	return v[:i-1], v[i:], true
}

// isDefaultPort is HAProxy's http_is_default_port: 80 for http://, 443 for
// https://, either when no scheme is known; an empty port is a default.
func isDefaultPort(scheme, port []byte) bool {
	if len(port) == 0 {
		return true
	}
	p := string(port)
	if scheme == nil {
		return p == "80" || p == "443"
	}
	return p == "443" && eqFold(scheme, "https://") || p == "80" && eqFold(scheme, "http://")
}
