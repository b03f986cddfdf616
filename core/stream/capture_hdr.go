package stream

import (
	"bytes"

	"goha/core"
	"goha/core/http1"
	"goha/core/sample"
)

// capSlot is a capture slot's value in one stream; ok false: nothing was
// captured (HAProxy's NULL slot, which %hrl shows as "-").
type capSlot struct {
	v  []byte
	ok bool
}

// captures are a stream's capture slots: its frontend's request and
// response slots, by id. They are kept with the connection and reused, so
// that capturing costs no allocation once warm. Only the stream's goroutine
// touches them.
type captures struct {
	req, rsp []capSlot
}

// reset empties the slots for a stream of fe.
func (c *captures) reset(fe *proxy) {
	c.req = resetSlots(c.req, len(fe.ReqCaps))
	c.rsp = resetSlots(c.rsp, len(fe.RspCaps))
}

func resetSlots(s []capSlot, n int) []capSlot {
	if cap(s) < n {
		s = append(s[:cap(s)], make([]capSlot, n-cap(s))...)
	}
	s = s[:n]
	for i := range s {
		s[i] = capSlot{v: s[i].v[:0]}
	}
	return s
}

// set stores v, cut to max bytes, in slot id.
func (c *captures) set(res bool, id int, v []byte, max int) {
	slots := c.req
	if res {
		slots = c.rsp
	}
	if id < 0 || id >= len(slots) {
		return
	}
	if len(v) > max {
		v = v[:max]
	}
	slots[id] = capSlot{v: append(slots[id].v[:0], v...), ok: true}
}

// get is slot id's value.
func (c *captures) get(res bool, id int) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	slots := c.req
	if res {
		slots = c.rsp
	}
	if id < 0 || id >= len(slots) || !slots[id].ok {
		return nil, false
	}
	return slots[id].v, true
}

// headers captures the headers the slots name from h, as the message
// arrives: the last occurrence of a header wins, as in HAProxy.
func (c *captures) headers(slots []core.CaptureSlot, h *http1.Head, res bool) {
	for id, s := range slots {
		if s.Header == "" {
			continue
		}
		for i := 0; i < h.NumFields(); i++ {
			name, value := h.Field(i)
			if h.Deleted(i) || !bytes.EqualFold(name, []byte(s.Header)) {
				continue
			}
			c.set(res, id, value, s.Len)
		}
	}
}

// hdrEncode marks the bytes a captured value shows as #XX in a log line:
// '"', '#', '{', '|', '}' and the non-printable ones, as HAProxy's
// hdr_encode_map; hdrClass adds, under +E, the backslash escapes.
var hdrClass [256]uint8

func init() {
	for i := 0; i < 256; i++ {
		switch {
		case i < 32 || i >= 127 || i == '"' || i == '#' || i == '{' || i == '|' || i == '}':
			hdrClass[i] = 1
		case escMap[i]:
			hdrClass[i] = 2
		}
	}
}

// appendHdrEncoded writes a captured value with hdrClass.
func appendHdrEncoded(b, v []byte, o lfOpt) []byte {
	limit := uint8(1)
	if o&lfEsc != 0 {
		limit = 2
	}
	run := 0
	for i, c := range v {
		k := hdrClass[c]
		if k == 0 || k > limit {
			continue
		}
		b = append(b, v[run:i]...)
		run = i + 1
		if k == 1 {
			b = append(b, '#', hexDigits[c>>4], hexDigits[c&15])
		} else {
			b = append(b, '\\', c)
		}
	}
	return append(b, v[run:]...)
}

// appendCapBlock writes %hr or %hs: "{a|b}", nothing without slots.
func appendCapBlock(b []byte, slots []capSlot, o lfOpt) []byte {
	if len(slots) == 0 {
		return b
	}
	if o&lfQuote != 0 {
		b = append(b, '"')
	}
	b = append(b, '{')
	for i, s := range slots {
		if i > 0 {
			b = append(b, '|')
		}
		if s.ok {
			b = appendHdrEncoded(b, s.v, o)
		}
	}
	b = append(b, '}')
	if o&lfQuote != 0 {
		b = append(b, '"')
	}
	return b
}

// appendCapList writes %hrl or %hsl: the values separated by spaces, "-"
// for an empty slot unless quoted.
func appendCapList(b []byte, slots []capSlot, o lfOpt) []byte {
	for i, s := range slots {
		if i > 0 {
			b = append(b, ' ')
		}
		if o&lfQuote != 0 {
			b = append(b, '"')
		}
		if s.ok {
			b = appendHdrEncoded(b, s.v, o)
		} else if o&lfQuote == 0 {
			b = append(b, '-')
		}
		if o&lfQuote != 0 {
			b = append(b, '"')
		}
	}
	return b
}

// capture runs http-request or http-response capture: the expression's
// text, cut to the slot's length, into the frontend's slot; nothing when
// it gives no sample or the slot does not exist.
func (hc *hconn) capture(r *httpRule, v *sample.Request, res bool) {
	slots := hc.si.fe.ReqCaps
	if res {
		slots = hc.si.fe.RspCaps
	}
	if r.capID < 0 || r.capID >= len(slots) {
		return
	}
	smp := &hc.rs.smp
	if !r.capX.Eval(v, smp) {
		return
	}
	hc.rs.buf = sample.AppendText(hc.rs.buf[:0], v, smp)
	hc.caps.set(res, r.capID, hc.rs.buf, slots[r.capID].Len)
}
