package http1

import (
	"bytes"
	"io"
	"net"
	"net/netip"
)

// Rewriter builds a modified head into a scratch buffer it keeps between
// messages, so rewriting costs no allocation once the buffer has grown.
// Deletions are marked on the Head (Head.Del, Rewriter.Set,
// Rewriter.SetConnection); additions are queued on the Rewriter and
// appended after the kept fields, in order, like http-request add-header.
//
// A Rewriter belongs to one connection and one direction; it is not safe
// for concurrent use. Call Reset before working on the next message.
type Rewriter struct {
	out    []byte
	extra  []byte // queued "name: value\r\n" lines
	uri    []byte // replacement request target, if any
	setURI bool
	// Replacement method (set-method), status code and reason
	// (set-status), when set.
	method, status, reason []byte
	conn                   ConnValue // Connection value, written after every other field
	// Fields whose value is replaced where they stand (Replace): the
	// field index, and the value's place in replBuf.
	repl    []replaced
	replBuf []byte
	vec     [2][]byte
	bufs    net.Buffers

	// SmallBody is the largest body copied behind the head so that head
	// and body leave in one write(2); larger ones go out with writev.
	// Zero means 4096.
	SmallBody int
}

// Reset forgets queued additions and any replacement target.
func (rw *Rewriter) Reset() {
	rw.extra = rw.extra[:0]
	rw.out = rw.out[:0]
	rw.setURI = false
	rw.method, rw.status, rw.reason = rw.method[:0], rw.status[:0], rw.reason[:0]
	rw.conn = ConnNone
	rw.repl = rw.repl[:0]
	rw.replBuf = rw.replBuf[:0]
}

type replaced struct{ field, off, n int }

// Replace gives field i of h a new value, written where the field stands
// (a longer value than the parsed one, which SetValue cannot do in place).
func (rw *Rewriter) Replace(h *Head, i int, value []byte) {
	rw.repl = append(rw.repl, replaced{field: i, off: len(rw.replBuf), n: len(value)})
	rw.replBuf = append(rw.replBuf, value...)
}

// replacement returns the value Replace gave field i, if any.
func (rw *Rewriter) replacement(i int) ([]byte, bool) {
	for j := len(rw.repl) - 1; j >= 0; j-- {
		if r := rw.repl[j]; r.field == i {
			return rw.replBuf[r.off : r.off+r.n], true
		}
	}
	return nil, false
}

// Add queues a header field to append.
func (rw *Rewriter) Add(name string, value []byte) {
	rw.extra = append(rw.extra, name...)
	rw.extra = append(rw.extra, ": "...)
	rw.extra = append(rw.extra, value...)
	rw.extra = append(rw.extra, "\r\n"...)
}

// AddString is Add for a string value.
func (rw *Rewriter) AddString(name, value string) {
	rw.extra = append(rw.extra, name...)
	rw.extra = append(rw.extra, ": "...)
	rw.extra = append(rw.extra, value...)
	rw.extra = append(rw.extra, "\r\n"...)
}

// Set replaces every field named name by one field with value
// (http-request set-header).
func (rw *Rewriter) Set(h *Head, name string, value []byte) {
	h.Del(name)
	rw.Add(name, value)
}

// Has reports whether the message as it will be written has a field named
// name: a live field of h, or one queued here.
func (rw *Rewriter) Has(h *Head, name string) bool {
	if h.Index(name, 0) >= 0 {
		return true
	}
	for rest := rw.extra; len(rest) > 0; {
		line := rest
		if i := bytes.Index(rest, []byte("\r\n")); i >= 0 {
			line, rest = rest[:i], rest[i+2:]
		} else {
			rest = nil
		}
		if len(line) > len(name) && line[len(name)] == ':' && eqFold(line[:len(name)], name) {
			return true
		}
	}
	return false
}

// AddForwardedFor appends "<name>: <ip>" (option forwardfor; name defaults
// to X-Forwarded-For). IPv4-mapped IPv6 addresses are written as IPv4, as
// HAProxy does for a v4 client on a v6 socket.
func (rw *Rewriter) AddForwardedFor(name string, ip netip.Addr) {
	if name == "" {
		name = "X-Forwarded-For"
	}
	rw.extra = append(rw.extra, name...)
	rw.extra = append(rw.extra, ": "...)
	rw.extra = ip.Unmap().AppendTo(rw.extra)
	rw.extra = append(rw.extra, "\r\n"...)
}

// SetURI replaces the request target (http-request set-uri, set-path).
func (rw *Rewriter) SetURI(uri []byte) {
	rw.uri = append(rw.uri[:0], uri...)
	rw.setURI = true
}

// ConnValue is the Connection token a proxy adds for its connection mode.
type ConnValue uint8

const (
	ConnNone      ConnValue = iota // add nothing (HTTP/1.1 keep-alive default)
	ConnClose                      // "Connection: close" (httpclose, http-server-close towards the server, closing)
	ConnKeepAlive                  // "Connection: keep-alive" (keeping an HTTP/1.0 peer alive)
)

// SetConnection removes the close and keep-alive tokens from every
// Connection field (other tokens, such as upgrade, stay; a field left empty
// is deleted), then sets the Connection value for the mode, which Head
// writes after every other field whatever the call order. This is what
// HAProxy's H1 layer does to every outgoing head.
func (rw *Rewriter) SetConnection(h *Head, v ConnValue) {
	for i := h.Index("connection", 0); i >= 0; i = h.Index("connection", i+1) {
		f := &h.fields[i]
		val := h.fvalue(f)
		changed := false
		for e, rest, ok := NextValue(val); ok; e, rest, ok = NextValue(rest) {
			if eqFold(e, "close") || eqFold(e, "keep-alive") {
				changed = true
			}
		}
		if !changed {
			continue
		}
		// Compact the kept tokens in place, joined by a bare comma: the
		// result is never longer than what was read, so the write
		// position never passes the read position.
		w := 0
		for e, rest, ok := NextValue(val); ok; e, rest, ok = NextValue(rest) {
			if eqFold(e, "close") || eqFold(e, "keep-alive") {
				continue
			}
			if w > 0 {
				val[w] = ','
				w++
			}
			w += copy(val[w:], e)
		}
		if w == 0 {
			h.DelField(i)
		} else {
			f.value.n = int32(w)
			h.Flags |= FlagRewrite
		}
	}
	rw.conn = v
}

// Modified reports whether Head would return anything but h.Raw().
func (rw *Rewriter) Modified(h *Head) bool {
	return h.Flags&FlagRewrite != 0 || len(rw.extra) > 0 || rw.setURI || rw.conn != ConnNone || len(rw.repl) > 0 ||
		len(rw.method) > 0 || len(rw.status) > 0
}

// SetMethod replaces the request's method (http-request set-method).
func (rw *Rewriter) SetMethod(m []byte) { rw.method = append(rw.method[:0], m...) }

// SetStatus replaces the response's status code and reason (set-status).
func (rw *Rewriter) SetStatus(code []byte, reason []byte) {
	rw.status = append(rw.status[:0], code...)
	rw.reason = append(rw.reason[:0], reason...)
}

// Method and URI are the request's method and target as they will be
// sent: the replacements when set.
func (rw *Rewriter) Method(h *Head) []byte {
	if len(rw.method) > 0 {
		return rw.method
	}
	return h.MethodBytes()
}

func (rw *Rewriter) URI(h *Head) []byte {
	if rw.setURI {
		return rw.uri
	}
	return h.URI()
}

// Head returns the head to send: h.Raw() itself when nothing changed,
// otherwise a head rebuilt in the scratch buffer with CRLF line ends,
// single spaces in the start line, deleted fields left out and queued
// fields appended. The result is valid until the next call on rw.
func (rw *Rewriter) Head(h *Head) []byte {
	if !rw.Modified(h) {
		return h.Raw()
	}
	o := rw.out[:0]
	if h.resp {
		o = append(o, h.Version()...)
		o = append(o, ' ')
		if len(rw.status) > 0 {
			o = append(o, rw.status...)
			o = append(o, ' ')
			o = append(o, rw.reason...)
		} else {
			o = append(o, h.StatusBytes()...)
			o = append(o, ' ')
			o = append(o, h.Reason()...)
		}
	} else {
		o = append(o, rw.Method(h)...)
		o = append(o, ' ')
		if rw.setURI {
			o = append(o, rw.uri...)
		} else {
			o = append(o, h.URI()...)
		}
		o = append(o, ' ')
		if h.Flags&FlagVer11 != 0 {
			o = append(o, "HTTP/1.1"...)
		} else {
			o = append(o, h.Version()...)
		}
	}
	o = append(o, "\r\n"...)
	for i := range h.fields {
		f := &h.fields[i]
		if f.drop {
			continue
		}
		o = append(o, h.fname(f)...)
		o = append(o, ": "...)
		if v, ok := rw.replacement(i); len(rw.repl) > 0 && ok {
			o = append(o, v...)
		} else {
			o = append(o, h.fvalue(f)...)
		}
		o = append(o, "\r\n"...)
	}
	o = append(o, rw.extra...)
	switch rw.conn {
	case ConnClose:
		o = append(o, "Connection: close\r\n"...)
	case ConnKeepAlive:
		o = append(o, "Connection: keep-alive\r\n"...)
	}
	o = append(o, "\r\n"...)
	rw.out = o
	return o
}

// Buffers returns head and body as a net.Buffers kept inside rw, ready for
// one writev (net.Buffers.WriteTo on a net.Conn); the array behind it is
// rw's, so this costs no allocation. An event loop can hand the two slices
// to writev(2) itself.
func (rw *Rewriter) Buffers(head, body []byte) *net.Buffers {
	rw.vec[0], rw.vec[1] = head, body
	rw.bufs = rw.vec[:2]
	if len(body) == 0 {
		rw.bufs = rw.vec[:1]
	}
	return &rw.bufs
}

// WriteTo sends the (possibly rewritten) head of h followed by body with a
// single system call: one Write of the buffer when the head is unchanged
// and body directly follows it in the same buffer, or when body is small
// enough to be copied behind a rebuilt head; one writev otherwise.
func (rw *Rewriter) WriteTo(w io.Writer, h *Head, body []byte) (int64, error) {
	head := rw.Head(h)
	if len(body) == 0 {
		n, err := w.Write(head)
		return int64(n), err
	}
	if !rw.Modified(h) {
		if msg, ok := h.follows(body); ok {
			n, err := w.Write(msg)
			return int64(n), err
		}
	}
	small := rw.SmallBody
	if small == 0 {
		small = 4096
	}
	if len(body) <= small && rw.Modified(h) {
		rw.out = append(rw.out, body...)
		n, err := w.Write(rw.out)
		rw.out = rw.out[:len(head)]
		return int64(n), err
	}
	return rw.Buffers(head, body).WriteTo(w)
}

// follows returns the raw head and body as one slice of the parsed buffer
// when body starts right after the head in it.
func (h *Head) follows(body []byte) ([]byte, bool) {
	b := h.buf
	if cap(b) < h.size+len(body) || len(body) == 0 {
		return nil, false
	}
	full := b[:h.size+len(body)]
	if &full[h.size] != &body[0] {
		return nil, false
	}
	return full[h.start:], true
}

// ConnForRequest is the Connection value HAProxy's H1 layer adds to a
// request it sends to a server: keep-alive to an HTTP/1.0 request when the
// server connection is kept, close to an HTTP/1.1 request when it is not,
// nothing otherwise, and nothing on an upgrade (the upgrade token stays).
func ConnForRequest(req *Head, keepAlive bool) ConnValue {
	if req.Flags&FlagConnUpgrade != 0 {
		return ConnNone
	}
	if keepAlive {
		if req.Flags&FlagVer11 == 0 {
			return ConnKeepAlive
		}
		return ConnNone
	}
	if req.Flags&FlagVer11 != 0 {
		return ConnClose
	}
	return ConnNone
}

// ConnForResponse is the value added to a response sent to the client:
// keep-alive when the client connection is kept and either message is
// HTTP/1.0, close on an HTTP/1.1 response when it is not kept, nothing on
// an upgrade.
func ConnForResponse(resp, req *Head, keepAlive bool) ConnValue {
	if resp.Flags&FlagConnUpgrade != 0 || resp.Body == BodyTunnel {
		return ConnNone
	}
	if keepAlive {
		if resp.Flags&req.Flags&FlagVer11 == 0 {
			return ConnKeepAlive
		}
		return ConnNone
	}
	if resp.Flags&FlagVer11 != 0 {
		return ConnClose
	}
	return ConnNone
}

// KeepClient reports whether the client connection stays open after resp
// answers req, as HAProxy 2.6 decides it: the request allows it (HTTP/1.1
// without "close", HTTP/1.0 with "keep-alive", no framing-forced close) and
// the response does not end with the server's close. A server's own
// "Connection: close" closes only the server connection: HAProxy keeps the
// client. An HTTP/1.0 response with a chunked body closes it too, with
// nothing added: HTTP/1.0 has no chunked, so a client that reads the
// response by its version finds the end only at the close.
func KeepClient(req, resp *Head) bool {
	if resp.Body == BodyUntilClose || resp.Body == BodyTunnel {
		return false
	}
	if resp.Body == BodyChunked && resp.Flags&FlagVer11 == 0 {
		return false
	}
	return req.KeepAlive()
}

// KeepServer reports whether the server connection may be reused after
// resp: the response is fully framed and the server did not ask to close.
func KeepServer(resp *Head) bool { return resp.KeepAlive() }
