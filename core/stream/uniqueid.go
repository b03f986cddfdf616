package stream

import (
	"fmt"

	"goha/core/diag"
	"goha/core/sample"
)

// uniqueIDMax is the longest id HAProxy keeps (its UNIQUEID_LEN less the
// terminating byte); what a format prints beyond it is cut.
const uniqueIDMax = 127

// The states of a stream's unique id: a format whose expressions read the
// id itself (%[unique-id]) finds it being built, and reads no sample
// rather than recursing.
const (
	uidUnset uint8 = iota
	uidBusy
	uidSet
)

// uidGone is what a unique-id format cannot read: it is built for the
// request, before any response.
func uidGone(n sample.Need) bool {
	switch n {
	case sample.NeedResHdr, sample.NeedRes, sample.NeedResBuf:
		return true
	}
	return false
}

// compileUniqueIDs compiles every proxy's unique-id-format, with
// HAProxy's message for a bad one. Only a frontend's is evaluated.
func (proc *Process) compileUniqueIDs(dc *diag.Collector) {
	for _, p := range proc.proxies {
		p.uidFmt = nil
		d := p.UniqueID.Fmt
		if d == nil {
			continue
		}
		f, err := compileLF(proc.env, d.Src, true, false, uidGone)
		if err != nil {
			dc.Add(diag.Diag{Sev: diag.Alert, Msg: fmt.Sprintf("Parsing [%s:%d]: failed to parse unique-id : %s.", d.Pos.File, d.Pos.Line, err)})
			continue
		}
		p.uidFmt = f
	}
}

// uniqueID is the stream's unique id, built the first time it is asked
// for from its frontend's unique-id-format; ok false when the frontend
// has none. live is the request the asking expression reads (the
// format's expressions then read the same messages, with scratch space
// of their own); nil builds it as a log line would.
func (si *streamInfo) uniqueID(proc *Process, live *sample.Request) (id []byte, ok bool) {
	if si.fe == nil || si.fe.uidFmt == nil {
		return nil, false
	}
	switch si.uidState {
	case uidSet:
		return si.uid, true
	case uidBusy:
		return nil, false
	}
	si.uidState = uidBusy
	var buf []byte
	var r *sample.Request
	if live != nil {
		r = &sample.Request{}
	}
	if hc := si.hc; hc != nil {
		buf = hc.uidBuf[:0]
		if live != nil {
			r = &hc.uidReq
			r.Clear()
		}
	}
	if r != nil {
		r.Head, r.Req, r.Client, r.Local = live.Head, live.Req, live.Client, live.Local
		r.Status, r.Stream, r.Vars = live.Status, live.Stream, live.Vars
	}
	buf = si.fe.uidFmt.build(buf, proc, si, r)
	if len(buf) > uniqueIDMax {
		buf = buf[:uniqueIDMax]
	}
	if si.hc != nil {
		si.hc.uidBuf = buf
	}
	si.uid, si.uidState = buf, uidSet
	return buf, true
}

// UniqueID is the unique-id fetch's view of the stream.
func (ss *sampleStream) UniqueID(r *sample.Request) ([]byte, bool) {
	return ss.si.uniqueID(ss.proc, r)
}

// addUniqueID builds the request's unique id once the backend and its
// rules have run, and sends it under unique-id-header, as HAProxy does.
func (hc *hconn) addUniqueID(proc *Process, fe *proxy, view *sample.Request) {
	id, ok := hc.si.uniqueID(proc, view)
	if ok && fe.UniqueID.Header != "" {
		hc.rwReq.Add(fe.UniqueID.Header, id)
	}
}
