package check

import (
	"encoding/binary"
	"encoding/hex"

	"goha/core/varint"
)

// SPOP (the protocol between HAProxy and SPOE agents, doc/SPOE.txt in
// HAProxy) as far as "option spop-check" needs it: the HAPROXY-HELLO frame
// sent with the "healthcheck" item, and the agent's AGENT-HELLO or
// AGENT-DISCONNECT answer.
const (
	spopHAProxyHello = 1
	spopAgentHello   = 101
	spopAgentDiscon  = 102

	spopFlagFin = 0x00000001

	spopTypeMask   = 0x0F
	spopTypeBool   = 1
	spopTypeInt32  = 2
	spopTypeUint32 = 3
	spopTypeInt64  = 4
	spopTypeUint64 = 5
	spopTypeIPv4   = 6
	spopTypeIPv6   = 7
	spopTypeStr    = 8
	spopTypeBin    = 9
	spopFlagTrue   = 0x10

	// The frame sizes HAProxy accepts: at most its buffer less the length
	// prefix, at least 256 bytes.
	spopMaxFrame = bufSize - 4
	spopMinFrame = 256

	// HAProxy 2.6 speaks SPOP 2.0 only (1.0 had a flags bug).
	spopVersion = 2000
)

// SPOP status codes, the index of their texts in spopErrText.
const (
	spopErrNone = iota
	spopErrIO
	spopErrTimeout
	spopErrTooBig
	spopErrInvalid
	spopErrNoVersion
	spopErrNoFrameSize
	spopErrNoCapabilities
	spopErrBadVersion
	spopErrBadFrameSize
	spopErrFragmentation
	spopErrInterlaced
	spopErrFrameIDNotFound
	spopErrResource
	spopErrUnknown = 99
)

// spopErrText are the reasons HAProxy reports for SPOP status codes; they
// are what the check's info shows.
var spopErrText = map[uint64]string{
	spopErrNone:            "normal",
	spopErrIO:              "I/O error",
	spopErrTimeout:         "a timeout occurred",
	spopErrTooBig:          "frame is too big",
	spopErrInvalid:         "invalid frame received",
	spopErrNoVersion:       "version value not found",
	spopErrNoFrameSize:     "max-frame-size value not found",
	spopErrNoCapabilities:  "capabilities value not found",
	spopErrBadVersion:      "unsupported version",
	spopErrBadFrameSize:    "max-frame-size too big or too small",
	spopErrFragmentation:   "fragmentation not supported",
	spopErrInterlaced:      "invalid interlaced frames",
	spopErrFrameIDNotFound: "frame-id not found",
	spopErrResource:        "resource allocation error",
	spopErrUnknown:         "an unknown error occurred",
}

// spopErrorText returns the text of an SPOP status code. An agent's
// DISCONNECT may carry any number: codes past the last one are "unknown",
// as in HAProxy, and so are the unassigned ones below it (HAProxy has no
// text for those).
func spopErrorText(code uint64) string {
	if s, ok := spopErrText[code]; ok {
		return s
	}
	return spopErrText[spopErrUnknown]
}

func spopPutVarint(b []byte, v uint64) []byte { return varint.Append(b, v) }

func spopPutString(b []byte, s string) []byte {
	return append(spopPutVarint(b, uint64(len(s))), s...)
}

// spopHealthcheckHello is the HAPROXY-HELLO frame of a health check, with
// its length prefix: version 2.0, HAProxy's largest frame size, no
// capabilities, and "healthcheck" set so that the agent answers and
// closes.
func spopHealthcheckHello() []byte {
	f := []byte{spopHAProxyHello, 0, 0, 0, spopFlagFin, 0, 0} // type, flags, stream-id 0, frame-id 0
	f = spopPutString(f, "supported-versions")
	f = append(f, spopTypeStr)
	f = spopPutString(f, "2.0")
	f = spopPutString(f, "max-frame-size")
	f = append(f, spopTypeUint32)
	f = spopPutVarint(f, spopMaxFrame)
	f = spopPutString(f, "capabilities")
	f = append(f, spopTypeStr)
	f = spopPutString(f, "")
	f = spopPutString(f, "healthcheck")
	f = append(f, spopTypeBool|spopFlagTrue)
	out := binary.BigEndian.AppendUint32(nil, uint32(len(f)))
	return append(out, f...)
}

// spopReader decodes the items of one frame; every read is bounded by the
// frame, and ok turns false at the first short or malformed field.
type spopReader struct {
	b  []byte
	ok bool
}

func (r *spopReader) more() bool { return r.ok && len(r.b) > 0 }

func (r *spopReader) byte() byte {
	if !r.ok || len(r.b) == 0 {
		r.ok = false
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *spopReader) varint() uint64 {
	if !r.ok {
		return 0
	}
	v, n := varint.Read(r.b)
	if n == 0 {
		r.ok = false
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *spopReader) bytes() []byte {
	n := r.varint()
	if !r.ok || n > uint64(len(r.b)) {
		r.ok = false
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// skip passes over a typed value whose key goha does not use.
func (r *spopReader) skip() {
	switch r.byte() & spopTypeMask {
	case spopTypeInt32, spopTypeInt64, spopTypeUint32, spopTypeUint64:
		r.varint()
	case spopTypeIPv4:
		r.fixed(4)
	case spopTypeIPv6:
		r.fixed(16)
	case spopTypeStr, spopTypeBin:
		r.bytes()
	}
}

func (r *spopReader) fixed(n int) {
	if !r.ok || len(r.b) < n {
		r.ok = false
		return
	}
	r.b = r.b[n:]
}

func spopIsInt(t byte) bool {
	switch t & spopTypeMask {
	case spopTypeInt32, spopTypeInt64, spopTypeUint32, spopTypeUint64:
		return true
	}
	return false
}

// spopKeyIs matches an item key the way HAProxy does: the key only has to
// start with the name.
func spopKeyIs(key []byte, name string) bool {
	return len(key) >= len(name) && string(key[:len(name)]) == name
}

// spopParseVersion reads "MAJOR.MINOR" (spaces around allowed) as
// 1000*MAJOR+MINOR, or -1.
func spopParseVersion(s []byte) int {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	maj := 0
	for i < len(s) && s[i] != '.' {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		if maj < 1<<20 {
			maj = maj*10 + int(s[i]-'0')
		}
		i++
	}
	if i >= len(s) || maj == 0 {
		return -1
	}
	i++
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return -1
	}
	min := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if min < 1<<20 {
			min = min*10 + int(s[i]-'0')
		}
		i++
	}
	if min > 999 {
		return -1
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i != len(s) || maj >= 1<<20 {
		return -1
	}
	return maj*1000 + min
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// spopCheckAgentFrame judges the frame an agent answered a health check
// with (without its length prefix): ok for a valid AGENT-HELLO, else the
// SPOP status code to report, the agent's own for an AGENT-DISCONNECT
// (even "normal"), or what HAProxy finds wrong.
func spopCheckAgentFrame(frame []byte) (code uint64, ok bool) {
	if len(frame) == 0 {
		return spopErrInvalid, false
	}
	switch frame[0] {
	case spopAgentDiscon:
		return spopDisconCode(frame), false
	case spopAgentHello:
	default:
		return spopErrInvalid, false
	}
	code = spopAgentHelloCode(frame)
	return code, code == spopErrNone
}

// spopAgentHelloCode checks an AGENT-HELLO frame's fields.
func spopAgentHelloCode(frame []byte) uint64 {
	if len(frame) < 7 {
		return spopErrInvalid
	}
	if binary.BigEndian.Uint32(frame[1:])&spopFlagFin == 0 {
		return spopErrFragmentation
	}
	if frame[5] != 0 || frame[6] != 0 {
		return spopErrInvalid
	}
	r := &spopReader{b: frame[7:], ok: true}
	vsn, maxFrame := 0, uint64(0)
	for r.more() {
		key := r.bytes()
		if !r.ok || len(key) == 0 {
			return spopErrInvalid
		}
		switch {
		case spopKeyIs(key, "version"):
			if r.byte()&spopTypeMask != spopTypeStr || !r.ok {
				return spopErrInvalid
			}
			s := r.bytes()
			if !r.ok {
				return spopErrInvalid
			}
			if vsn = spopParseVersion(s); vsn != spopVersion {
				return spopErrBadVersion
			}
		case spopKeyIs(key, "max-frame-size"):
			if t := r.byte(); !r.ok || !spopIsInt(t) {
				return spopErrInvalid
			}
			maxFrame = r.varint()
			if !r.ok {
				return spopErrInvalid
			}
			if maxFrame < spopMinFrame || maxFrame > spopMaxFrame {
				return spopErrBadFrameSize
			}
		case spopKeyIs(key, "capabilities"):
			// Which capabilities the agent has does not matter to a
			// health check, but the value must be a well-formed string.
			if r.byte()&spopTypeMask != spopTypeStr || !r.ok {
				return spopErrInvalid
			}
			if r.bytes(); !r.ok {
				return spopErrInvalid
			}
		default:
			if r.skip(); !r.ok {
				return spopErrInvalid
			}
		}
	}
	if vsn == 0 {
		return spopErrNoVersion
	}
	if maxFrame == 0 {
		return spopErrNoFrameSize
	}
	return spopErrNone
}

// spopDisconCode reads an AGENT-DISCONNECT frame: its "status-code" is the
// result, unless the frame is malformed.
func spopDisconCode(frame []byte) uint64 {
	if len(frame) < 7 {
		return spopErrInvalid
	}
	if binary.BigEndian.Uint32(frame[1:])&spopFlagFin == 0 {
		return spopErrFragmentation
	}
	if frame[5] != 0 || frame[6] != 0 {
		return spopErrInvalid
	}
	code := uint64(spopErrNone)
	r := &spopReader{b: frame[7:], ok: true}
	for r.more() {
		key := r.bytes()
		if !r.ok || len(key) == 0 {
			return spopErrInvalid
		}
		switch {
		case spopKeyIs(key, "status-code"):
			if t := r.byte(); !r.ok || !spopIsInt(t) {
				return spopErrInvalid
			}
			code = r.varint()
			if !r.ok {
				return spopErrInvalid
			}
		case spopKeyIs(key, "message"):
			if r.byte()&spopTypeMask != spopTypeStr || !r.ok {
				return spopErrInvalid
			}
			if m := r.bytes(); !r.ok || len(m) > 255 {
				return spopErrInvalid
			}
		default:
			if r.skip(); !r.ok {
				return spopErrInvalid
			}
		}
	}
	return code
}

// SPOPRuleset is "option spop-check": send a HAPROXY-HELLO with
// "healthcheck", expect an AGENT-HELLO.
func SPOPRuleset() *Ruleset {
	return sharedRuleset("*spop-check", [][]string{
		tc("send-binary", hex.EncodeToString(spopHealthcheckHello())),
		tc("expect", "custom", "min-recv", "4"),
	}, map[int]customFunc{1: spopExpect})
}

// spopExpect judges the agent's answer. A good one is reported at once
// with "SPOA server is ok" and the ruleset then ends as a protocol check
// does, with no info: HAProxy applies (and logs) both results, so a probe
// moves a rising server's counter twice, and the info of the last probe
// stays empty.
func spopExpect(p *probe, r *Rule, lastRead bool) evalRet {
	in := p.in
	var size uint64
	if len(in) >= 4 {
		size = uint64(binary.BigEndian.Uint32(in))
	}
	if !lastRead && uint64(len(in)) < 4+size {
		return evalWait
	}
	var frame []byte
	if len(in) > 4 {
		frame = in[4:]
		if uint64(len(frame)) > size {
			frame = frame[:size]
		}
	}
	if code, ok := spopCheckAgentFrame(frame); !ok {
		return p.fail(r, StatusL7Rsp, false, spopErrorText(code))
	}
	st := r.Expect.OKStatus
	if st == StatusUnknown {
		st = StatusL7OK
	}
	p.setPrior(st, "SPOA server is ok")
	return evalContinue
}
