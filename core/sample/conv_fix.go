package sample

import (
	"bytes"
	"fmt"
)

// FIX (Financial Information eXchange) converters, read as HAProxy 2.6
// reads a message: tag=value fields ended by SOH (0x01), BeginString,
// BodyLength and MsgType first, CheckSum last. A message cut short gives
// no sample and may still change; one that is wrong is final.

func init() {
	RegisterConvs(
		Conv{Name: "fix_is_valid", In: TBin, Out: TBool, Fn: convFixIsValid},
		Conv{Name: "fix_tag_value", Max: 1, In: TBin, Out: TBin, Check: typedArgs(1, []argKind{aStr}, fixTagArgs), Fn: convFixTagValue},
	)
}

const (
	fixSOH         = 0x01
	fixBeginString = 8
	fixBodyLength  = 9
	fixCheckSum    = 10
	fixMsgType     = 35
	fixMinSize     = 26
)

// Outcomes of reading a message.
const (
	fixInvalid = -1
	fixMore    = 0
	fixValid   = 1
)

// fixVersions are the BeginString values and the highest standard tag of
// each (FIXT.1.1 stands for all 5.0 service packs).
var fixVersions = []struct {
	name   string
	maxTag uint32
}{
	{"FIX.4.0", 140}, {"FIX.4.1", 211}, {"FIX.4.2", 446}, {"FIX.4.3", 659}, {"FIX.4.4", 956}, {"FIXT.1.1", 1621},
}

var fixTagNames = []struct {
	name string
	id   uint32
}{
	{"MsgType", fixMsgType}, {"CheckSum", fixCheckSum}, {"BodyLength", fixBodyLength},
	{"TargetCompID", 56}, {"BeginString", fixBeginString}, {"SenderCompID", 49},
}

// readUint reads leading decimal digits as HAProxy's read_uint (wrapping
// on overflow) and returns the value and how many bytes it read.
func readUint(b []byte) (uint32, int) {
	var n uint32
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + uint32(b[i]-'0')
	}
	return n, i
}

// strl2ui is HAProxy's unchecked decimal reading: every byte counts as a
// digit, whatever it is.
func strl2ui(b []byte) uint32 {
	var n uint32
	for _, c := range b {
		n = n*10 - '0' + uint32(c)
	}
	return n
}

// fixCheckID is the tag number, or 0 when it is not all digits, is 0, or
// (version >= 0, an index in fixVersions) is beyond the version's tags
// and not a user-defined one.
func fixCheckID(tag []byte, version int) uint32 {
	n, l := readUint(tag)
	if l != len(tag) || n == 0 {
		return 0
	}
	if version < 0 || n >= 10000 && n <= 19999 || n <= fixVersions[version].maxTag {
		return n
	}
	return 0
}

// fixField splits the field at the start of b: its tag, its value, and
// the length of the whole field with its SOH; ok false when the SOH after
// the '=' is not there yet. The tag is empty when b starts with '='.
func fixField(b []byte) (tag, value []byte, n int, ok bool) {
	eq := bytes.IndexByte(b, '=')
	if eq < 0 {
		return nil, nil, 0, false
	}
	end := bytes.IndexByte(b[eq:], fixSOH)
	if end < 0 {
		return nil, nil, 0, false
	}
	end += eq
	return b[:eq], b[eq+1 : end], end + 1, true
}

func fixValidate(msg []byte) int {
	if len(msg) < fixMinSize {
		return fixMore
	}
	version := -1
	var bodyLen uint32
	var sum byte
	body := -1
	tags := 0
	for p := 0; p < len(msg); {
		tag, value, n, ok := fixField(msg[p:])
		if !ok {
			return fixMore
		}
		if len(tag) == 0 {
			return fixInvalid
		}
		id := fixCheckID(tag, version)
		if id == 0 {
			return fixInvalid
		}
		tags++
		switch {
		case tags == 1:
			if id != fixBeginString {
				return fixInvalid
			}
			version = -1
			for i, v := range fixVersions {
				if string(value) == v.name {
					version = i
				}
			}
			if version < 0 {
				return fixInvalid
			}
		case tags == 2:
			if id != fixBodyLength {
				return fixInvalid
			}
			v, l := readUint(value)
			if l != len(value) || v == 0 {
				return fixInvalid
			}
			bodyLen, body = v, p+n
		case tags == 3:
			if id != fixMsgType {
				return fixInvalid
			}
		case id == fixCheckSum:
			if int64(bodyLen) != int64(p-body) || len(value) != 3 || uint32(sum) != strl2ui(value) {
				return fixInvalid
			}
			return fixValid
		}
		for _, c := range msg[p : p+n] {
			sum += c
		}
		p += n
	}
	if body >= 0 {
		return fixMore
	}
	return fixInvalid
}

// fixTagValue finds the tag's value: ok false when the message is bad or
// ends (CheckSum) without it, value nil and ok true when more bytes are
// needed.
func fixTagValue(msg []byte, id uint32) (value []byte, ok bool) {
	for p := 0; p < len(msg); {
		tag, v, n, complete := fixField(msg[p:])
		if !complete {
			break
		}
		if len(tag) == 0 {
			return nil, false
		}
		t := fixCheckID(tag, -1)
		if t == 0 {
			return nil, false
		}
		if t == id {
			return v, true
		}
		if t == fixCheckSum {
			return nil, false
		}
		p += n
	}
	return nil, true
}

func fixTagArgs(env *Env, a []Arg) error {
	s := arg(a, 0).S
	id := fixCheckID([]byte(s), -1)
	for _, t := range fixTagNames {
		if id == 0 && eqFoldASCII([]byte(s), t.name) {
			id = t.id
		}
	}
	if id == 0 {
		return fmt.Errorf("Unknown FIX tag name '%s'", s)
	}
	a[0].I = int64(id)
	return nil
}

func convFixIsValid(r *Request, a []Arg, s *Sample) bool {
	v := fixValidate(s.B)
	r.final = v != fixMore
	if v == fixMore {
		return false
	}
	s.setBool(v == fixValid)
	return true
}

func convFixTagValue(r *Request, a []Arg, s *Sample) bool {
	v, ok := fixTagValue(s.B, uint32(a[0].I))
	r.final = len(v) > 0 || !ok
	if len(v) == 0 {
		return false
	}
	s.T, s.B = TBin, v
	return true
}
