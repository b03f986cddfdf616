package http1

import (
	"encoding/binary"
	"errors"
)

// ParseRequest parses a request head at the start of buf, in place.
//
// It returns the head's length (the body starts at buf[n:]) once the head
// is complete, and 0 with a nil error when more bytes are needed: call it
// again with the same message start and more data (the bytes may have moved
// in between, e.g. by Buffer.Free); parsing resumes at the first header line
// not yet recorded, and invalid bytes are reported as soon as they arrive.
// On a malformed head it returns an *Error (owned by h: valid until the next
// parse); a head that does not end within MaxSize bytes, or whose HTX
// estimate exceeds MaxHTX, is ErrTooLarge.
//
// Only framing and routing headers are interpreted. The rules are HAProxy
// 2.6's strict ones (no option accept-invalid-http-request): see
// docs/http.md. Obs-folds are replaced by spaces in buf itself.
func (h *Head) ParseRequest(buf []byte) (int, error) {
	return h.parse(buf, false, MethodOther)
}

// ParseResponse parses a response head like ParseRequest. reqMethod is the
// method of the request being answered: HEAD responses have no body and a
// 2xx answer to CONNECT opens a tunnel.
func (h *Head) ParseResponse(buf []byte, reqMethod Method) (int, error) {
	return h.parse(buf, true, reqMethod)
}

func (h *Head) parse(buf []byte, resp bool, reqMethod Method) (int, error) {
	max := h.maxSize()
	lim := len(buf)
	if lim > max {
		lim = max
	}
	var end int
	var err error
	if h.resume > 0 && h.resp == resp {
		// A previous call ran out of bytes: carry on from the first
		// line not yet parsed, keeping the fields already parsed.
		h.buf = buf
		end, err = h.parseFields(buf[:lim], h.resume)
	} else {
		h.begin(buf, resp, reqMethod)
		end, err = h.parseHead(buf[:lim], resp)
	}
	if err == errMore {
		if len(buf) >= max {
			return 0, h.fail(ErrTooLarge, max)
		}
		return 0, nil
	}
	h.resume = 0
	if err != nil {
		return 0, err
	}
	h.size = end
	if err := h.finish(); err != nil {
		return 0, err
	}
	return end, nil
}

// errMore reports internally that the bytes ran out before the head ended.
var errMore = errors.New("http1: need more data")

func (h *Head) begin(buf []byte, resp bool, reqMethod Method) {
	h.Reset()
	h.buf = buf
	h.resp = resp
	if resp {
		h.Method = reqMethod
	}
}

func (h *Head) fail(k ErrorKind, off int) error {
	h.err = Error{Kind: k, Offset: off, Response: h.resp}
	h.resume = 0
	return &h.err
}

// parseHead parses the head at the start of b in one pass and returns its
// length, or errMore when b ends first.
func (h *Head) parseHead(b []byte, resp bool) (int, error) {
	end := len(b)
	p := 0
	for p < end && isCRLF(b[p]) {
		if b[p] == '\r' {
			if p+1 >= end {
				return 0, errMore
			}
			if b[p+1] != '\n' {
				return 0, h.fail(ErrLineEnd, p+1)
			}
		}
		p++
	}
	h.start = p
	var err error
	if resp {
		p, err = h.statusLine(b, p)
	} else {
		p, err = h.requestLine(b, p)
	}
	if err != nil {
		return 0, err
	}
	h.resume = p
	return h.parseFields(b, p)
}

// parseFields parses header lines from p to the empty line. h.resume is
// kept at the start of the first line whose field is not yet recorded.
func (h *Head) parseFields(b []byte, p int) (int, error) {
	end := len(b)
	maxFields := h.maxFields()
	for {
		if p >= end {
			return 0, errMore
		}
		// Like HAProxy, count the stored fields (merged duplicates are
		// not stored) when the next line or the end of the head comes.
		if len(h.fields) > maxFields {
			return 0, h.fail(ErrTooManyHeaders, p)
		}
		c := b[p]
		if c == '\r' {
			if p+1 >= end {
				return 0, errMore
			}
			if b[p+1] != '\n' {
				return 0, h.fail(ErrLineEnd, p+1)
			}
			return p + 2, nil
		}
		if c == '\n' {
			h.Flags |= FlagRewrite
			return p + 1, nil
		}
		lineStart := p
		for p < end && isToken(b[p]) {
			p++
		}
		if p >= end {
			return 0, errMore
		}
		if b[p] != ':' || p == lineStart {
			return 0, h.fail(ErrHeaderName, p)
		}
		nameEnd := p
		p++
		for p < end && isSPHT(b[p]) {
			p++
		}
		v0 := p
		var eol int
		for {
			// Skip 8 bytes at a time while none is below 0x0e (CR, LF
			// and a few rare controls), as HAProxy's parser does.
			for p+8 <= end {
				x := binary.LittleEndian.Uint64(b[p:])
				if (x-0x0e0e0e0e0e0e0e0e)&^x&0x8080808080808080 != 0 {
					break
				}
				p += 8
			}
			for p < end && !isCRLF(b[p]) {
				p++
			}
			if p >= end {
				return 0, errMore
			}
			eol = p
			if b[p] == '\r' {
				if p+1 >= end {
					return 0, errMore
				}
				if b[p+1] != '\n' {
					return 0, h.fail(ErrLineEnd, p+1)
				}
				p++
			} else {
				h.Flags |= FlagRewrite
			}
			p++
			if p >= end {
				return 0, errMore
			}
			if isSPHT(b[p]) {
				// obs-fold: HAProxy turns the line break into blanks.
				for q := eol; q < p; q++ {
					b[q] = ' '
				}
				h.Flags |= FlagRewrite
				continue
			}
			break
		}
		ve := eol
		for ve > v0 && isLWS(b[ve-1]) {
			ve--
		}
		h.fields = append(h.fields, field{
			name:  span{int32(lineStart), int32(nameEnd - lineStart)},
			value: span{int32(v0), int32(ve - v0)},
		})
		if err := h.interpret(len(h.fields) - 1); err != nil {
			return 0, err
		}
		h.resume = p
	}
}

func (h *Head) requestLine(b []byte, p int) (int, error) {
	end := len(b)
	m0 := p
	for p < end && isToken(b[p]) {
		p++
	}
	if p >= end {
		return 0, errMore
	}
	if p == m0 {
		return 0, h.fail(ErrRequestLine, p)
	}
	h.method = span{int32(m0), int32(p - m0)}
	h.Method = lookupMethod(b[m0:p])
	if eqFold(b[m0:p], "PRI") {
		// The HTTP/2 connection preface's method: HTTP/1 cannot carry
		// it, and a server that speaks HTTP/2 would take what follows
		// for frames. HAProxy refuses the method in any spelling.
		return 0, h.fail(ErrRequestLine, m0)
	}
	if isCRLF(b[p]) {
		// HTTP/0.9 request: refused without accept-invalid-http-request.
		return 0, h.fail(ErrVersion, p)
	}
	if !isSPHT(b[p]) {
		return 0, h.fail(ErrRequestLine, p)
	}
	p, ok := h.skipBlanks(b, p)
	if !ok {
		return 0, errMore
	}
	u0 := p
	for p < end {
		c := b[p]
		if c < 0x21 || c > 0x7e || c == '#' {
			break
		}
		p++
	}
	if p >= end {
		return 0, errMore
	}
	if isCRLF(b[p]) {
		return 0, h.fail(ErrVersion, p)
	}
	if !isSPHT(b[p]) {
		return 0, h.fail(ErrRequestLine, p)
	}
	h.uri = span{int32(u0), int32(p - u0)}
	if scheme, _, _, ok := splitTarget(b[u0:p]); ok && scheme != nil {
		h.Flags |= FlagAbsoluteURI
	}
	p, ok = h.skipBlanks(b, p)
	if !ok {
		return 0, errMore
	}
	v0 := p
	for p < end && isVer(b[p]) {
		p++
	}
	if p >= end {
		return 0, errMore
	}
	if !isCRLF(b[p]) {
		return 0, h.fail(ErrRequestLine, p)
	}
	h.version = span{int32(v0), int32(p - v0)}
	v := b[v0:p]
	if len(v) != 8 || string(v[:5]) != "HTTP/" || !isDigit(v[5]) || v[6] != '.' || !isDigit(v[7]) {
		return 0, h.fail(ErrVersion, v0)
	}
	if v[5] > '1' || (v[5] == '1' && v[7] >= '1') {
		h.Flags |= FlagVer11
		if v[5] != '1' || v[7] != '1' {
			// HAProxy sends a version above 1.1 on as HTTP/1.1: a server
			// must not see an HTTP/2 or HTTP/1.9 request line it might
			// read under other rules.
			h.Flags |= FlagRewrite
		}
	}
	return h.lineEnd(b, p)
}

func (h *Head) statusLine(b []byte, p int) (int, error) {
	end := len(b)
	v0 := p
	for p < end && isVer(b[p]) {
		p++
	}
	if p >= end {
		return 0, errMore
	}
	if !isSPHT(b[p]) || p == v0 {
		return 0, h.fail(ErrStatusLine, p)
	}
	h.version = span{int32(v0), int32(p - v0)}
	v := b[v0:p]
	// HAProxy checks the shape only ("XXXX/d.d"), not the protocol name.
	if len(v) != 8 || v[4] != '/' || !isDigit(v[5]) || v[6] != '.' || !isDigit(v[7]) {
		return 0, h.fail(ErrVersion, v0)
	}
	if v[5] > '1' || (v[5] == '1' && v[7] >= '1') {
		h.Flags |= FlagVer11
	}
	p, ok := h.skipBlanks(b, p)
	if !ok {
		return 0, errMore
	}
	c0 := p
	// Any number of digits, kept modulo 2^16 like HAProxy's uint16 status:
	// it relays "HTTP/1.1 2000 OK" as received.
	var st uint16
	for p < end && isDigit(b[p]) {
		st = st*10 + uint16(b[p]-'0')
		p++
	}
	if p >= end {
		return 0, errMore
	}
	if p == c0 || !isLWS(b[p]) {
		return 0, h.fail(ErrStatusLine, p)
	}
	h.Status = int(st)
	h.code = span{int32(c0), int32(p - c0)}
	if isSPHT(b[p]) {
		p, ok = h.skipBlanks(b, p)
		if !ok {
			return 0, errMore
		}
	}
	r0 := p
	for p < end && !isCRLF(b[p]) {
		p++
	}
	if p >= end {
		return 0, errMore
	}
	h.reason = span{int32(r0), int32(p - r0)}
	return h.lineEnd(b, p)
}

// skipBlanks skips the one or more blanks separating start-line parts; more
// than one space, or a tab, is normalised when the head is rebuilt.
func (h *Head) skipBlanks(b []byte, p int) (int, bool) {
	if b[p] != ' ' || (p+1 < len(b) && isSPHT(b[p+1])) {
		h.Flags |= FlagRewrite
	}
	for p < len(b) && isSPHT(b[p]) {
		p++
	}
	return p, p < len(b)
}

// lineEnd consumes the CRLF (or bare LF) at b[p].
func (h *Head) lineEnd(b []byte, p int) (int, error) {
	if b[p] == '\r' {
		if p+1 >= len(b) {
			return 0, errMore
		}
		if b[p+1] != '\n' {
			return 0, h.fail(ErrLineEnd, p+1)
		}
		return p + 2, nil
	}
	h.Flags |= FlagRewrite
	return p + 1, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// interpret applies the framing and routing headers as HAProxy's
// h1_headers_to_hdr_list does.
func (h *Head) interpret(i int) error {
	f := &h.fields[i]
	name := f.name.of(h.buf)
	switch len(name) {
	case 2:
		if !h.resp && eqFold(name, "te") {
			h.teField(i)
		}
	case 4:
		if !h.resp && eqFold(name, "host") {
			return h.hostField(i)
		}
	case 6:
		if !h.resp && eqFold(name, "expect") {
			if eqFold(f.value.of(h.buf), "100-continue") {
				h.Flags |= FlagExpect100
			}
		}
	case 7:
		if eqFold(name, "upgrade") {
			h.Flags &^= FlagUpgradeWebSocket
			for v, rest, ok := NextValue(f.value.of(h.buf)); ok; v, rest, ok = NextValue(rest) {
				if eqFold(v, "websocket") {
					h.Flags |= FlagUpgradeWebSocket
				}
			}
		}
	case 10:
		if eqFold(name, "connection") {
			for v, rest, ok := NextValue(f.value.of(h.buf)); ok; v, rest, ok = NextValue(rest) {
				switch {
				case eqFold(v, "close"):
					h.Flags |= FlagConnClose
				case eqFold(v, "keep-alive"):
					h.Flags |= FlagConnKeepAlive
				case eqFold(v, "upgrade"):
					h.Flags |= FlagConnUpgrade
				}
			}
		}
	case 14:
		if eqFold(name, "content-length") {
			return h.contentLength(i)
		}
	case 17:
		if eqFold(name, "transfer-encoding") {
			return h.transferEncoding(i)
		}
	}
	return nil
}

// teField keeps of a request's TE field only the "trailers" element,
// spelt in lower case and without parameters, and drops a field that has
// none, as HAProxy does: the codings a client accepts are its business
// with the proxy, which frames the response itself, while trailers are
// still its to ask for.
func (h *Head) teField(i int) {
	f := &h.fields[i]
	val := f.value.of(h.buf)
	for e, rest, ok := NextValue(val); ok; e, rest, ok = NextValue(rest) {
		if string(e) == "trailers" {
			// val's capacity ends where it does, so e's start is
			// what its capacity leaves of val.
			if len(e) != len(val) {
				f.value = span{f.value.off + int32(len(val)-cap(e)), int32(len(e))}
				h.Flags |= FlagRewrite
			}
			return
		}
	}
	f.drop = true
	h.Flags |= FlagRewrite
}

// teOther is set on the head while parsing when a coding other than
// chunked was seen; kept in a flag bit outside the exported set.
const flagTEOther Flags = 1 << 31

func (h *Head) transferEncoding(i int) error {
	f := &h.fields[i]
	h.Flags |= FlagTransferEncoding
	v := f.value.of(h.buf)
	// Unlike NextValue, an empty element (a leading or doubled comma) is
	// a coding of its own, neither chunked nor known: ",chunked" is then
	// refused as HAProxy refuses it, where skipping the comma would send
	// on a field a server may not read as chunked. Only a comma ending
	// the list opens no element.
	for p := 0; p < len(v); p++ {
		if isLWS(v[p]) {
			continue
		}
		n := p
		for n < len(v) && v[n] != ',' {
			n++
		}
		e := trimLWS(v[p:n])
		p = n
		h.Flags &^= FlagChunked
		if eqFold(e, "chunked") {
			if h.Flags&flagTEChunkedSeen != 0 {
				return h.fail(ErrTransferEncoding, int(f.value.off))
			}
			h.Flags |= FlagChunked | flagTEChunkedSeen
			continue
		}
		if !h.resp && h.Flags&flagTEChunkedSeen != 0 {
			return h.fail(ErrTransferEncoding, int(f.value.off))
		}
		h.Flags |= flagTEOther
	}
	return nil
}

const flagTEChunkedSeen Flags = 1 << 30

func (h *Head) contentLength(i int) error {
	f := &h.fields[i]
	v := f.value.of(h.buf)
	off := int(f.value.off)
	first := h.Flags&FlagContentLength == 0
	var first0, firstN int
	// A list of one or more lengths: an empty element (a value that is
	// empty or blank, a leading, trailing or doubled comma) is refused,
	// as HAProxy does.
	for p, k := 0, 0; ; k++ {
		for p < len(v) && isLWS(v[p]) {
			p++
		}
		d0 := p
		var n int64
		for p < len(v) && isDigit(v[p]) {
			if n > (1<<63-1-9)/10 {
				return h.fail(ErrContentLength, off)
			}
			n = n*10 + int64(v[p]-'0')
			p++
		}
		if p == d0 {
			return h.fail(ErrContentLength, off)
		}
		if k == 0 {
			first0, firstN = d0, p-d0
		}
		for p < len(v) && isLWS(v[p]) {
			p++
		}
		if p < len(v) && v[p] != ',' {
			return h.fail(ErrContentLength, off)
		}
		if (h.Flags&FlagContentLength != 0 || k > 0) && n != h.ContentLength {
			return h.fail(ErrContentLength, off)
		}
		h.Flags |= FlagContentLength
		h.ContentLength = n
		if p == len(v) {
			break
		}
		p++ // the comma
	}
	if !first {
		// Identical duplicate: HAProxy drops it (and does not count it
		// against tune.http.maxhdr).
		h.fields = h.fields[:i]
		h.Flags |= FlagRewrite
		return nil
	}
	if firstN != len(v) {
		// "3, 3" and friends are forwarded as "3".
		f.value = span{f.value.off + int32(first0), int32(firstN)}
		h.Flags |= FlagRewrite
	}
	return nil
}

func (h *Head) hostField(i int) error {
	f := &h.fields[i]
	if h.host < 0 {
		h.host = int32(i)
		h.Flags |= FlagHost
		return nil
	}
	if !eqFoldBytes(f.value.of(h.buf), h.fields[h.host].value.of(h.buf)) {
		return h.fail(ErrHost, int(f.value.off))
	}
	h.fields = h.fields[:i]
	h.Flags |= FlagRewrite
	return nil
}

// checkAuthority compares the request target's authority with the Host
// field once all fields are known, as HAProxy 2.6 does at the end of the
// head: a CONNECT target must be host:port (and match Host, default ports
// aside); another target's authority must match Host, where a default port
// on one side and none on the other still match.
func (h *Head) checkAuthority() error {
	u := h.URI()
	scheme, auth, _, ok := splitTarget(u)
	var host []byte
	if h.host >= 0 {
		host = h.fields[h.host].value.of(h.buf)
	}
	if h.Method == MethodCONNECT {
		if !ok {
			return h.fail(ErrRequestLine, int(h.uri.off))
		}
		uriHost, uriPort, _ := hostPort(auth)
		if len(uriPort) == 0 {
			return h.fail(ErrRequestLine, int(h.uri.off))
		}
		if h.host < 0 {
			return nil
		}
		hh, hp, hasPort := hostPort(host)
		hostOff := int(h.fields[h.host].value.off)
		if hasPort && len(hp) > 0 {
			if !eqFoldBytes(hh, uriHost) || string(hp) != string(uriPort) {
				return h.fail(ErrHost, hostOff)
			}
			if isDefaultPort(nil, uriPort) {
				// HAProxy normalises "Host: a:443" to "a" here.
				h.fields[h.host].value.n = int32(len(hh))
				h.Flags |= FlagRewrite
			}
			return nil
		}
		if !isDefaultPort(nil, uriPort) || !eqFoldBytes(hh, uriHost) {
			return h.fail(ErrHost, hostOff)
		}
		return nil
	}
	if !ok || h.host < 0 || len(auth) == 0 || eqFoldBytes(auth, host) {
		return nil
	}
	hostOff := int(h.fields[h.host].value.off)
	if scheme == nil {
		return h.fail(ErrHost, hostOff)
	}
	uh, up, uHas := hostPort(auth)
	hh, hp, hHas := hostPort(host)
	switch {
	case !uHas && !hHas:
		return h.fail(ErrHost, hostOff)
	case uHas && !isDefaultPort(scheme, up):
		return h.fail(ErrHost, hostOff)
	case hHas && !isDefaultPort(scheme, hp):
		return h.fail(ErrHost, hostOff)
	case !eqFoldBytes(uh, hh):
		return h.fail(ErrHost, hostOff)
	}
	return nil
}

// finish applies the message-level rules once all fields are known.
func (h *Head) finish() error {
	eoh := h.size
	if !h.resp {
		if err := h.checkAuthority(); err != nil {
			return err
		}
	}
	if h.Flags&FlagTransferEncoding != 0 {
		if h.Flags&FlagContentLength != 0 {
			// Request smuggling guard: chunked wins, Content-Length is
			// removed and the connection closes after the exchange.
			h.Flags |= FlagForceClose | FlagRewrite
			h.Flags &^= FlagContentLength
			h.ContentLength = 0
			for j := range h.fields {
				if eqFold(h.fields[j].name.of(h.buf), "content-length") {
					h.fields[j].drop = true
				}
			}
		}
		if h.Flags&FlagVer11 == 0 {
			// An HTTP/1.0 server knows no chunked: a body it does not
			// see as one must not be followed by another request on
			// the same connection.
			h.Flags |= FlagForceClose | FlagCloseServer
		}
		if !h.resp && h.Flags&FlagChunked == 0 {
			return h.fail(ErrTransferEncoding, eoh)
		}
	}
	if h.htxSize() > h.maxHTX() {
		return h.fail(ErrTooLarge, eoh)
	}
	other := h.Flags&flagTEOther != 0
	h.Flags &^= flagTEOther | flagTEChunkedSeen
	if h.resp {
		return h.finishResponse(other, eoh)
	}
	return h.finishRequest(other, eoh)
}

func (h *Head) finishRequest(teOther bool, eoh int) error {
	if h.Method == MethodCONNECT {
		// A CONNECT has no body: a Content-Length or Transfer-Encoding
		// sent on would let a server that honours it take the next
		// request's bytes for that body, out of reach of the rules.
		// HAProxy removes Content-Length, and closes the server side
		// after a CONNECT that had Transfer-Encoding.
		if h.Flags&FlagTransferEncoding != 0 {
			h.Flags |= FlagCloseServer
		}
		h.Flags &^= FlagContentLength | FlagChunked | FlagTransferEncoding
		h.ContentLength = 0
		h.Del("content-length")
		h.Del("transfer-encoding")
	}
	hasBody := h.Flags&FlagChunked != 0 || (h.Flags&FlagContentLength != 0 && h.ContentLength > 0)
	if h.Flags&FlagConnUpgrade != 0 && hasBody {
		// An upgrade cannot carry a body: HAProxy drops the Upgrade
		// fields (checked on 2.6.12: the server receives none).
		h.Flags &^= FlagConnUpgrade | FlagUpgradeWebSocket
		h.Del("upgrade")
	}
	if hasBody && h.Flags&FlagVer11 == 0 &&
		(h.Method == MethodGET || h.Method == MethodHEAD || h.Method == MethodDELETE) {
		return h.fail(ErrPayloadForbidden, eoh)
	}
	if teOther {
		return h.fail(ErrTransferCoding, eoh)
	}
	if h.IsUpgrade() {
		i := h.Index("sec-websocket-key", 0)
		if i < 0 || h.fields[i].value.n != 24 {
			return h.fail(ErrWebSocket, eoh)
		}
	}
	switch {
	case h.Flags&FlagChunked != 0:
		h.Body = BodyChunked
	case h.Flags&FlagContentLength != 0 && h.ContentLength > 0:
		h.Body = BodyLength
	default:
		h.Body = BodyNone
	}
	return nil
}

func (h *Head) finishResponse(teOther bool, eoh int) error {
	st := h.Status
	switch {
	case (h.Method == MethodCONNECT && st >= 200 && st < 300) || st == 101:
		h.Body = BodyTunnel
	case h.Method == MethodHEAD || (st >= 100 && st < 200) || st == 204 || st == 304:
		h.Body = BodyNone
	case h.Flags&FlagChunked != 0:
		h.Body = BodyChunked
	case h.Flags&FlagContentLength != 0:
		h.Body = BodyLength
		if h.ContentLength == 0 {
			h.Body = BodyNone
		}
	default:
		h.Body = BodyUntilClose
	}
	if teOther {
		return h.fail(ErrTransferCoding, eoh)
	}
	if h.IsUpgrade() && h.Index("sec-websocket-accept", 0) < 0 {
		return h.fail(ErrWebSocket, eoh)
	}
	return nil
}
