package stream

import (
	"net"

	"goha/core"
	"goha/core/http1"
	"goha/core/sample"
)

// option http-restrict-req-hdr-names: after a proxy's http-request rules
// (an allow among them included), HAProxy 2.6 deletes the request header
// fields whose name has a character other than a letter, a digit or '-',
// or denies the request with a 403, as an http-request deny would.

// restrictDeny is the deny a rejected name makes.
var restrictDeny = []*httpRule{{act: actDeny, status: 403, errMsg: true}}

// restrictHdrNames applies px's option to the request; done and keep are
// applyReqRules' when the request was denied.
func (proc *Process) restrictHdrNames(px *proxy, view *sample.Request, hc *hconn, c net.Conn, cbuf *http1.Buffer, hlen int, si *streamInfo) (done, keep bool) {
	if px.RestrictHdrNames == 0 {
		return false, false
	}
	h := &hc.req
	for i := 0; i < h.NumFields(); i++ {
		if h.Deleted(i) {
			continue
		}
		if name, _ := h.Field(i); validHdrName(name) {
			continue
		}
		if px.RestrictHdrNames == core.RestrictReject {
			return proc.applyReqRules(px, restrictDeny, view, hc, c, cbuf, hlen, si)
		}
		h.DelField(i)
	}
	return false, false
}

func validHdrName(n []byte) bool {
	for _, c := range n {
		if !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}
