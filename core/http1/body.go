package http1

// Body follows a message body's framing over the bytes that arrive after the
// head, without copying or buffering them: Scan says how many of the bytes
// offered belong to the body, and whether the message ends there. It
// validates chunked framing (chunk sizes, CRLFs after chunk data, trailer
// fields) as the bytes pass, so a chunked body is forwarded as received,
// except that a bare LF ending a framing line becomes CRLF (see NeedCR).
//
// Body is a plain state machine over byte slices; it does not read or
// write, so a goroutine-per-connection transport (see Forward) and an event
// loop can both drive it. It is owned by one connection and is not safe for
// concurrent use.
type Body struct {
	Kind   BodyKind
	Remain int64 // BodyLength: bytes still to come; BodyChunked: bytes left in the current chunk's data
	N      int64 // bytes of body (framing included) scanned so far, for byte counters
	Data   int64 // bytes of payload scanned so far (chunk framing and trailers aside)

	// MaxLine bounds a chunk-size line and the whole trailer block; zero
	// means DefaultMaxHTX. HAProxy bounds them by its buffer.
	MaxLine int

	st     chunkState
	digits int
	line   int // bytes in the current chunk-size line or trailer block
	done   bool
	resp   bool
	err    Error

	// A bare LF ending a framing line (chunk size, chunk data, trailer)
	// goes out as CRLF, as HAProxy's re-encoding does: a server that
	// reads only CRLF as a line end would otherwise frame the body
	// differently. Scan stops before such an LF (pendCR) and the caller
	// writes the CR; crDone lets the LF through on the next Scan.
	pendCR, crDone bool
}

type chunkState uint8

const (
	csSize    chunkState = iota // hex digits of a chunk size
	csSizeWS                    // blanks after the size
	csExt                       // chunk extension up to the line end
	csSizeLF                    // LF after CR of the size line
	csData                      // chunk data
	csDataCR                    // CRLF after chunk data
	csDataLF                    // LF after CR after chunk data
	csTrStart                   // start of a trailer line (or the final empty line)
	csTrName                    // trailer field name
	csTrValue                   // trailer field value
	csTrLF                      // LF after CR in a trailer line
	csEndLF                     // LF after CR of the final empty line
)

// Init prepares b for the body announced by h. Response is taken from h.
func (b *Body) Init(h *Head) {
	b.Start(h.Body, h.ContentLength)
	b.resp = h.resp
}

// Start prepares b for a body of the given kind; length is used by
// BodyLength.
func (b *Body) Start(kind BodyKind, length int64) {
	*b = Body{Kind: kind, MaxLine: b.MaxLine}
	switch kind {
	case BodyNone:
		b.done = true
	case BodyLength:
		b.Remain = length
		b.done = length <= 0
	}
}

// Done reports whether the whole body has been scanned.
func (b *Body) Done() bool { return b.done }

// NeedCR reports that the last Scan stopped before a bare LF that ends a
// line of chunked framing: the caller writes a CR after the bytes Scan
// returned and calls WroteCR, so that the line goes out with CRLF. A
// caller that does not is not stuck: the next Scan lets the LF through.
func (b *Body) NeedCR() bool { return b.pendCR }

// WroteCR records that the CR NeedCR asked for was written.
func (b *Body) WroteCR() { b.pendCR, b.crDone = false, true }

// bareLF says whether the bare LF at p[i] may be consumed now; when not,
// the scan stops before it and the caller owes a CR.
func (b *Body) bareLF() bool {
	if b.pendCR || b.crDone {
		b.pendCR, b.crDone = false, false
		return true
	}
	b.pendCR = true
	return false
}

// HTXData is the body as HAProxy's byte counters count it: the payload,
// and for a whole chunked body the one-byte block that ends its
// trailers.
func (b *Body) HTXData() int64 {
	if b.Kind == BodyChunked && b.done {
		return b.Data + 1
	}
	return b.Data
}

// Scan examines p, the bytes that follow what was already scanned, and
// returns how many of them belong to the body (they may be forwarded at
// once) and whether the body ends with them. Bytes after n belong to the
// next message. A framing error is an *Error whose Offset counts from the
// first body byte.
func (b *Body) Scan(p []byte) (n int, done bool, err error) {
	if b.done {
		return 0, true, nil
	}
	switch b.Kind {
	case BodyLength:
		n = len(p)
		if int64(n) > b.Remain {
			n = int(b.Remain)
		}
		b.Remain -= int64(n)
		b.N += int64(n)
		b.Data += int64(n)
		b.done = b.Remain == 0
		return n, b.done, nil
	case BodyChunked:
		return b.scanChunked(p)
	case BodyUntilClose, BodyTunnel:
		b.N += int64(len(p))
		b.Data += int64(len(p))
		return len(p), false, nil
	}
	b.done = true
	return 0, true, nil
}

// Raw reports whether the rest of the body is payload without framing,
// which may then be moved without passing through Scan (kernel-side, by
// splicing). limit is how much of it is still to come, -1 for a body that
// ends with the connection. A chunked body is never raw: its framing is
// checked, and re-encoded where it has bare LFs.
func (b *Body) Raw() (limit int64, ok bool) {
	if b.done || b.pendCR {
		return 0, false
	}
	switch b.Kind {
	case BodyLength:
		return b.Remain, true
	case BodyUntilClose:
		return -1, true
	}
	return 0, false
}

// Moved records n bytes of a Raw body forwarded without Scan, as Scan
// would have counted them.
func (b *Body) Moved(n int64) {
	if n <= 0 || b.done {
		return
	}
	b.N += n
	b.Data += n
	if b.Kind == BodyLength {
		b.Remain -= n
		b.done = b.Remain <= 0
	}
}

// EOF tells b that the peer closed. It returns nil when that ends the body
// (BodyUntilClose, BodyTunnel, or a body already complete) and an
// ErrTruncated *Error otherwise.
func (b *Body) EOF() error {
	if b.done || b.Kind == BodyUntilClose || b.Kind == BodyTunnel {
		b.done = true
		return nil
	}
	return b.fail(ErrTruncated, 0)
}

func (b *Body) fail(k ErrorKind, i int) error {
	b.err = Error{Kind: k, Offset: int(b.N) + i, Response: b.resp}
	b.done = true
	return &b.err
}

func (b *Body) maxLine() int {
	if b.MaxLine > 0 {
		return b.MaxLine
	}
	return DefaultMaxHTX
}

func (b *Body) scanChunked(p []byte) (int, bool, error) {
	i := 0
	max := b.maxLine()
	for i < len(p) {
		if b.st == csData {
			k := len(p) - i
			if int64(k) > b.Remain {
				k = int(b.Remain)
			}
			i += k
			b.Remain -= int64(k)
			b.Data += int64(k)
			if b.Remain == 0 {
				b.st = csDataCR
			}
			continue
		}
		c := p[i]
		switch b.st {
		case csSize:
			d := unhex(c)
			if d >= 0 {
				// HAProxy refuses sizes of 2^52 and more.
				if b.Remain >= 1<<48 {
					return i, false, b.fail(ErrChunkSize, i)
				}
				b.Remain = b.Remain<<4 | int64(d)
				b.digits++
				break
			}
			if b.digits == 0 {
				return i, false, b.fail(ErrChunkSize, i)
			}
			b.st = csSizeWS
			continue
		case csSizeWS:
			switch {
			case isSPHT(c):
			case c == ';':
				b.st = csExt
			case c == '\r':
				b.st = csSizeLF
			case c == '\n':
				if !b.bareLF() {
					b.N += int64(i)
					return i, false, nil
				}
				b.sizeDone()
			default:
				return i, false, b.fail(ErrChunkSize, i)
			}
		case csExt:
			if c == '\r' {
				b.st = csSizeLF
			} else if c == '\n' {
				if !b.bareLF() {
					b.N += int64(i)
					return i, false, nil
				}
				b.sizeDone()
			}
		case csSizeLF:
			if c != '\n' {
				return i, false, b.fail(ErrChunkSize, i)
			}
			b.sizeDone()
		case csDataCR:
			if c == '\r' {
				b.st = csDataLF
			} else if c == '\n' {
				if !b.bareLF() {
					b.N += int64(i)
					return i, false, nil
				}
				b.st = csSize
			} else {
				return i, false, b.fail(ErrChunkEnd, i)
			}
		case csDataLF:
			if c != '\n' {
				return i, false, b.fail(ErrChunkEnd, i)
			}
			b.st = csSize
		case csTrStart:
			switch {
			case c == '\r':
				b.st = csEndLF
			case c == '\n':
				if !b.bareLF() {
					b.N += int64(i)
					return i, false, nil
				}
				return b.finished(i + 1)
			case isToken(c):
				b.st = csTrName
			default:
				return i, false, b.fail(ErrTrailer, i)
			}
		case csTrName:
			if c == ':' {
				b.st = csTrValue
			} else if !isToken(c) {
				return i, false, b.fail(ErrTrailer, i)
			}
		case csTrValue:
			if c == '\r' {
				b.st = csTrLF
			} else if c == '\n' {
				if !b.bareLF() {
					b.N += int64(i)
					return i, false, nil
				}
				b.st = csTrStart
			}
		case csTrLF:
			if c != '\n' {
				return i, false, b.fail(ErrTrailer, i)
			}
			b.st = csTrStart
		case csEndLF:
			if c != '\n' {
				return i, false, b.fail(ErrTrailer, i)
			}
			return b.finished(i + 1)
		}
		i++
		if b.st != csData {
			b.line++
			if b.line > max {
				if b.st >= csTrStart {
					return i, false, b.fail(ErrTrailer, i)
				}
				return i, false, b.fail(ErrChunkSize, i)
			}
		}
	}
	b.N += int64(i)
	return i, false, nil
}

func (b *Body) sizeDone() {
	b.digits = 0
	b.line = 0
	if b.Remain == 0 {
		b.st = csTrStart
		return
	}
	b.st = csData
}

func (b *Body) finished(n int) (int, bool, error) {
	b.N += int64(n)
	b.done = true
	return n, true, nil
}

// DataLeft is how many of the bytes the next Scan takes are payload for
// sure: the rest of a length-delimited body or of the current chunk's
// data, -1 for a body that ends with the connection, 0 when framing
// (a chunk size, a CRLF, trailers) comes next or the body is done. A
// decoder scans payload in one piece and framing a byte at a time.
func (b *Body) DataLeft() int64 {
	if b.done {
		return 0
	}
	switch b.Kind {
	case BodyLength:
		return b.Remain
	case BodyChunked:
		if b.st == csData {
			return b.Remain
		}
	case BodyUntilClose, BodyTunnel:
		return -1
	}
	return 0
}

// InTrailers reports whether a chunked body's scan is past its last
// chunk: what comes next is its trailer fields and final empty line.
func (b *Body) InTrailers() bool { return b.Kind == BodyChunked && !b.done && b.st >= csTrStart }
