package stream

import (
	"errors"
	"net"

	"goha/core/http1"
)

// HAProxy 2.6 keeps a message in a buffer of tune.bufsize bytes (in its
// HTX form), receives into it up to tune.maxrewrite short of full, and a
// header rewrite that does not fit in what is left fails: in strict mode
// (the default, strict-mode on) the stream ends with a 500, with
// strict-mode off the rewrite is skipped. htxRoom counts that space for
// the header additions of http-request and http-response rules; goha's
// other rewrites are not bounded.

// Sizes of HAProxy's HTX structures on 64-bit builds.
const (
	htxStructSize = 48 // struct htx
	htxBlockSize  = 8  // struct htx_blk
)

type htxRoom struct {
	used, size, limit int
	data              int64 // body data seen
	kept              int64 // what of it HAProxy would have received
	soft              bool  // strict-mode off
	failed            bool  // a rewrite did not fit in strict mode
}

// start counts the head h and data bytes of body in the buffer.
func (r *htxRoom) start(h *http1.Head, data int64, bufsize, maxrewrite int) {
	live := 0
	for i := 0; i < h.NumFields(); i++ {
		if name, _ := h.Field(i); !h.Deleted(i) && !eqFoldASCII(name, "connection") {
			live++
		}
	}
	*r = htxRoom{size: bufsize - htxStructSize, limit: bufsize - htxStructSize - maxrewrite}
	// The start line, the fields and the end of headers are a block each.
	r.used = h.HTXSize() + htxBlockSize*(2+live)
	r.addData(data)
}

// addData counts the body data in the buffer, data bytes in all, up to
// where HAProxy would have stopped receiving; the first data comes with
// a block.
func (r *htxRoom) addData(data int64) {
	if data <= r.data {
		return
	}
	n, blk := int(data-r.data), 0
	if r.data == 0 {
		blk = htxBlockSize
	}
	r.data = data
	grow := max(min(r.used+blk+n, r.limit)-r.used, 0)
	r.used += grow
	r.kept += int64(max(grow-blk, 0))
}

// take reports whether a block of n bytes fits; one that does not fails
// the message unless strict mode is off.
func (r *htxRoom) take(n int) bool {
	if r.size > 0 && r.used+htxBlockSize+n > r.size {
		r.failed = r.failed || !r.soft
		return false
	}
	r.used += htxBlockSize + n
	return true
}

// free gives back a block of n bytes.
func (r *htxRoom) free(n int) { r.used -= htxBlockSize + n }

func eqFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != s[i]|0x20 {
			return false
		}
	}
	return true
}

// bodyData is how many bytes of body data follow the head of hlen bytes
// at the start of buf.
func bodyData(buf []byte, h *http1.Head, hlen int) int64 {
	if h.Body == http1.BodyNone || h.Body == http1.BodyTunnel {
		return 0
	}
	var b http1.Body
	b.Init(h)
	http1.Complete(buf, hlen, &b)
	return b.Data
}

// rewriteFailed ends a request whose rewrite did not fit in strict mode:
// a 500 that closes the connection, logged PR--, counted as a failed
// rewrite and an internal error, as in HAProxy.
func (proc *Process) rewriteFailed(px *proxy, c net.Conn, si *streamInfo) {
	proc.countRewriteFailure(si)
	si.status, si.term = 500, [2]byte{'P', 'R'}
	proc.replyError(px, c, 500, http1.ConnClose, si)
}

func (proc *Process) countRewriteFailure(si *streamInfo) {
	si.fe.FE.Wrew.Add(1)
	si.fe.FE.Eint.Add(1)
	if si.be != nil && si.be != si.fe {
		si.be.BE.Wrew.Add(1)
		si.be.BE.Eint.Add(1)
	}
}

// freeFields gives back the room of the fields named name, which a
// set-header is about to delete.
func (hc *hconn) freeFields(h *http1.Head, name string) {
	if hc.room == nil {
		return
	}
	for i := h.Index(lowerName(name), 0); i >= 0; i = h.Index(lowerName(name), i+1) {
		n, v := h.Field(i)
		hc.room.free(len(n) + len(v))
	}
}

// respRewriteFailed ends an exchange whose response rewrite did not fit
// in strict mode: the client has a 500 and the server connection is
// closed.
func (proc *Process) respRewriteFailed(fe *proxy, c net.Conn, cbuf *http1.Buffer, hc *hconn, si *streamInfo) (keep bool) {
	proc.countRewriteFailure(si)
	si.status, si.term = 500, [2]byte{'P', 'H'}
	// As HAProxy's, the log has no Tr, and the bytes out count what was
	// received of the response.
	si.gotResp = false
	si.bytesOut += hc.bw.size + hc.roomResp.kept
	return proc.errorReply(fe, c, cbuf, hc, si, 500, hc.reqPending, hc.reqBody.Done())
}

// errRewriteFailed is a response rewrite that did not fit.
var errRewriteFailed = errors.New("core: a response rewrite did not fit in the buffer")
