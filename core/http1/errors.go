package http1

import "strconv"

// ErrorKind classifies why a message was rejected. Core maps a kind to the
// status it answers with through (*Error).Status.
type ErrorKind uint8

const (
	ErrNone             ErrorKind = iota
	ErrRequestLine                // invalid method, URI or request-line layout
	ErrStatusLine                 // invalid status line
	ErrVersion                    // version is not HTTP/<digit>.<digit> (HTTP/0.9 included)
	ErrHeaderName                 // empty name or a non-token byte in a header name
	ErrLineEnd                    // CR not followed by LF
	ErrContentLength              // invalid or differing Content-Length values
	ErrTransferEncoding           // chunked twice, or a request not ending in chunked
	ErrTransferCoding             // a coding other than chunked (422 on requests)
	ErrHost                       // Host differs from another Host or from the URI's authority
	ErrTooLarge                   // head bigger than the buffer allows
	ErrTooManyHeaders             // more header fields than tune.http.maxhdr allows
	ErrPayloadForbidden           // HTTP/1.0 GET, HEAD or DELETE with a body (413)
	ErrWebSocket                  // WebSocket upgrade without a valid key or accept header
	ErrChunkSize                  // invalid chunk-size line
	ErrChunkEnd                   // chunk data not followed by CRLF
	ErrTrailer                    // invalid trailer field
	ErrTruncated                  // connection closed before the body ended
)

var kindText = [...]string{
	ErrNone:             "no error",
	ErrRequestLine:      "invalid request line",
	ErrStatusLine:       "invalid status line",
	ErrVersion:          "invalid HTTP version",
	ErrHeaderName:       "invalid character in header name",
	ErrLineEnd:          "CR not followed by LF",
	ErrContentLength:    "invalid content-length",
	ErrTransferEncoding: "invalid transfer-encoding",
	ErrTransferCoding:   "unsupported transfer-coding",
	ErrHost:             "conflicting host",
	ErrTooLarge:         "message head too large",
	ErrTooManyHeaders:   "too many header fields",
	ErrPayloadForbidden: "payload not allowed with this method in HTTP/1.0",
	ErrWebSocket:        "missing or invalid websocket key",
	ErrChunkSize:        "invalid chunk size",
	ErrChunkEnd:         "missing CRLF after chunk data",
	ErrTrailer:          "invalid trailer",
	ErrTruncated:        "truncated body",
}

func (k ErrorKind) String() string {
	if int(k) < len(kindText) {
		return kindText[k]
	}
	return "unknown error"
}

// Error describes a rejected message. Offset is the byte position, counted
// from the first byte of the message (leading empty lines included), where
// the parser stopped; it is what `show errors` reports as the error position.
type Error struct {
	Kind     ErrorKind
	Offset   int
	Response bool // the message was a response (from a server)
}

func (e *Error) Error() string {
	side := "request"
	if e.Response {
		side = "response"
	}
	return "http1: " + side + ": " + e.Kind.String() + " at offset " + strconv.Itoa(e.Offset)
}

// Status is the status HAProxy 2.6 answers with when it rejects such a
// message: 400 for requests except 413 (HTTP/1.0 payload with GET, HEAD or
// DELETE) and 422 (unsupported transfer-coding); 502 for every response
// error. A body truncated by the client has no reply of its own (HAProxy
// aborts); Status returns 400 for it so that callers always get a status.
func (e *Error) Status() int {
	if e.Response {
		return 502
	}
	switch e.Kind {
	case ErrPayloadForbidden:
		return 413
	case ErrTransferCoding:
		return 422
	}
	return 400
}
