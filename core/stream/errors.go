package stream

import (
	"goha/core/http1"
)

// errorBytes is the reply the proxy sends for status: the backend's error
// page when the stream has a backend, else px's, else the built-in one,
// as HAProxy's http_error_message chooses. n is what the log counts.
func (proc *Process) errorBytes(px *proxy, hc *hconn, status int, mode http1.ConnValue) (b []byte, n int64) {
	r := px.errReply[status]
	if be := hc.si.be; be != nil && be.errReply[status] != nil {
		r = be.errReply[status]
	}
	if r == nil {
		r = http1.ErrorReply(status)
	}
	if r == nil {
		return nil, 0
	}
	return r.Bytes(mode), int64(r.LogSize)
}
