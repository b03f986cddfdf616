package stream

import (
	"net"

	"goha/core/http1"
)

// option http-buffer-request: the request's body, up to a buffer less its
// reserve, is read before the http-request rules run, so that the body
// fetches (req.body, req.body_param...) see it. A client that waits for
// a 100-continue gets it from the proxy, and the server gets the request
// without its Expect header, as HAProxy does.

// bufferBody reads the body of the request whose head is the hlen first
// bytes of cbuf, until it is whole or the buffer is full. ok false: the
// stream has ended, replied to and logged.
func (proc *Process) bufferBody(fe *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, hlen int, si *streamInfo) (ok bool) {
	req := &hc.req
	if bodyless(req) {
		hc.ss.body, hc.ss.bodyOK = nil, true
		return true
	}
	to := fe.Timeouts.HTTPRequest
	if to == 0 {
		to = fe.Timeouts.Client
	}
	if _, err := hc.readReqBody(c, cbuf, hlen, 0, to); err != nil {
		fe.FE.Ereq.Add(1)
		if isTimeout(err) {
			si.status, si.term = 408, [2]byte{'c', 'R'}
			proc.replyError(fe, c, 408, http1.ConnClose, si)
			return false
		}
		fe.FE.CliAbrt.Add(1)
		si.term = [2]byte{'C', 'R'}
		si.status = 400
		proc.replyError(fe, c, 400, http1.ConnClose, si)
		return false
	}
	hc.ss.body, hc.ss.bodyOK = decodeBody(hc.ss.body[:0], cbuf.Bytes()[hlen:], req), true
	return true
}

// decodeBody appends to dst the data of the raw body p as far as it goes,
// without its chunked framing.
func decodeBody(dst, p []byte, h *http1.Head) []byte {
	if h.Body != http1.BodyChunked {
		if h.Body == http1.BodyLength && int64(len(p)) > h.ContentLength {
			p = p[:h.ContentLength]
		}
		return append(dst, p...)
	}
	for len(p) > 0 {
		// chunk-size [; ext] CRLF data CRLF
		size, i := int64(0), 0
		for ; i < len(p); i++ {
			c := p[i]
			var d byte
			switch {
			case c >= '0' && c <= '9':
				d = c - '0'
			case c >= 'a' && c <= 'f':
				d = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				d = c - 'A' + 10
			default:
				d = 0xff
			}
			if d == 0xff || size > 1<<40 {
				break
			}
			size = size<<4 | int64(d)
		}
		for i < len(p) && p[i] != '\n' {
			i++
		}
		if i >= len(p) || size == 0 {
			return dst
		}
		p = p[i+1:]
		if int64(len(p)) < size {
			return append(dst, p...)
		}
		dst = append(dst, p[:size]...)
		p = p[size:]
		if len(p) > 0 && p[0] == '\r' {
			p = p[1:]
		}
		if len(p) > 0 && p[0] == '\n' {
			p = p[1:]
		}
	}
	return dst
}

// Body is the request's body as buffered by option http-buffer-request
// or wait-for-body, or the response's as wait-for-body read it.
func (ss *sampleStream) Body(res bool) ([]byte, bool) {
	if res {
		return ss.resBody, ss.resBodyOK
	}
	return ss.body, ss.bodyOK
}
