package sample

import (
	"encoding/binary"
	"fmt"
	"math"
)

// protobuf and ungrpc read a field of a protocol buffers message (ungrpc:
// of the messages of a gRPC body, each after its 5-byte header) by its
// dotted field number, as HAProxy 2.6 walks the message: raw bytes
// without a type, an integer with one.

func init() {
	kinds := []argKind{aPbuf, aStr}
	RegisterConvs(
		Conv{Name: "protobuf", Max: 2, In: TBin, Out: TBin, Check: typedArgs(1, kinds, protobufArgs), Fn: convProtobuf},
		Conv{Name: "ungrpc", Max: 2, In: TBin, Out: TBin, Check: typedArgs(1, kinds, protobufArgs), Fn: convUngrpc},
	)
}

// Wire types.
const (
	pbVarint = 0
	pb64     = 1
	pbBytes  = 2
	pb32     = 5
)

// Field types (the second argument); pbRaw when absent.
const (
	pbRaw = iota + 1
	pbInt32
	pbUint32
	pbInt64
	pbUint64
	pbBool
	pbEnum
	pbSint32
	pbSint64
	pbFixed32
	pbSfixed32
	pbFloat
	pbFixed64
	pbSfixed64
	pbDouble
)

var pbTypes = map[string]int64{
	"int32": pbInt32, "uint32": pbUint32, "int64": pbInt64, "uint64": pbUint64, "bool": pbBool, "enum": pbEnum,
	"sint32": pbSint32, "sint64": pbSint64, "fixed32": pbFixed32, "sfixed32": pbSfixed32, "float": pbFloat,
	"fixed64": pbFixed64, "sfixed64": pbSfixed64, "double": pbDouble,
}

func protobufArgs(env *Env, a []Arg) error {
	if len(a) < 2 {
		return nil
	}
	t, ok := pbTypes[a[1].S]
	if !ok {
		return fmt.Errorf("Wrong protocol buffer type '%s'", a[1].S)
	}
	a[1].I = t
	return nil
}

// pbFixedSize is the size of a 64-bit or 32-bit wire type's value.
func pbFixedSize(wire uint64) int {
	if wire == pb64 {
		return 8
	}
	return 4
}

// pbVarintRead reads a varint of at most 10 bytes; n 0 when it is cut
// short or longer.
func pbVarintRead(b []byte) (v uint64, n int) {
	for i, shift := 0, 0; i < len(b); i++ {
		v |= uint64(b[i]&0x7f) << shift
		if b[i] < 0x80 {
			return v, i + 1
		}
		if shift += 7; shift > 63 {
			return 0, 0
		}
	}
	return 0, 0
}

// pbLookup finds the field ids in msg, and says how many bytes it read.
// It follows HAProxy's walk: a field found before the last is entered
// without being skipped, and leaving a length-delimited field's bytes (as
// counted from the last length read) starts the search over from the
// first id.
func pbLookup(ids []uint32, typ int64, msg []byte, s *Sample) (found bool, read int) {
	var elen uint64
	p, field := 0, 0
	for field < len(ids) {
		if p == len(msg) {
			return false, p
		}
		sleft := len(msg) - p
		key, n := pbVarintRead(msg[p:])
		if n == 0 {
			return false, p
		}
		p += n
		wire := key & 7
		match := uint32(key>>3) == ids[field]
		switch wire {
		case pbVarint:
			if !match {
				_, n := pbVarintRead(msg[p:])
				if n == 0 && p < len(msg) {
					return false, p
				}
				p += n
			}
		case pb64, pb32:
			size := pbFixedSize(wire)
			if !match {
				if len(msg)-p < size {
					return false, p
				}
				p += size
			}
		case pbBytes:
			v, n := pbVarintRead(msg[p:])
			if n == 0 && p < len(msg) {
				return false, p
			}
			p += n
			if v > uint64(len(msg)-p) {
				return false, p
			}
			elen, sleft = v, len(msg)-p
			if !match {
				p += int(v)
			}
		default:
			return false, p
		}
		if match && field == len(ids)-1 {
			return pbStore(wire, typ, msg[p:], elen, s), p
		}
		if int64(elen) > 0 {
			elen -= uint64(sleft - (len(msg) - p))
		}
		if match {
			field++
		} else if int64(elen) <= 0 {
			field = 0
		}
	}
	return false, p
}

func pbStore(wire uint64, typ int64, b []byte, elen uint64, s *Sample) bool {
	switch wire {
	case pbVarint:
		v, n := pbVarintRead(b)
		if n == 0 && len(b) > 0 {
			return false
		}
		switch {
		case typ == pbRaw:
			if n == 0 {
				// An empty value is zero bytes long, as in HAProxy.
				s.T, s.B = TBin, b[:0]
				return true
			}
			s.T, s.B = TBin, b[:n]
		case typ >= pbInt32 && typ <= pbEnum:
			s.setInt(int64(v))
		case typ == pbSint32 || typ == pbSint64:
			s.setInt(int64(v>>1) ^ -int64(v&1))
		default:
			return false
		}
	case pbBytes:
		if uint64(len(b)) < elen || typ != pbRaw {
			return false
		}
		s.T, s.B = TBin, b[:elen]
	case pb64, pb32:
		size := pbFixedSize(wire)
		if len(b) < size {
			return false
		}
		var v uint64
		if size == 8 {
			v = binary.LittleEndian.Uint64(b)
		} else {
			v = uint64(binary.LittleEndian.Uint32(b))
		}
		switch {
		case typ == pbRaw:
			s.T, s.B = TBin, b[:size]
		case size == 8 && (typ == pbFixed64 || typ == pbSfixed64), size == 4 && typ == pbFixed32:
			s.setInt(int64(v))
		case size == 8 && typ == pbDouble:
			s.setInt(int64(cDoubleToUint64(math.Float64frombits(v))))
		case size == 4 && typ == pbSfixed32:
			s.setInt(int64(int32(v)))
		case size == 4 && typ == pbFloat:
			s.setInt(int64(uint32(cvtt(float64(math.Float32frombits(uint32(v)))))))
		default:
			return false
		}
	}
	return true
}

// cvtt truncates as x86's cvttsd2si: out of range or NaN gives the
// smallest int64.
func cvtt(f float64) int64 {
	if f != f || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// cDoubleToUint64 is C's conversion of a double to uint64_t as gcc
// compiles it on x86-64, which HAProxy's double fields go through.
func cDoubleToUint64(f float64) uint64 {
	if f >= 1<<63 {
		return uint64(cvtt(f-(1<<63))) ^ 1<<63
	}
	return uint64(cvtt(f))
}

func convProtobuf(r *Request, a []Arg, s *Sample) bool {
	found, _ := pbLookup(a[0].V.([]uint32), pbType(a), s.B, s)
	return found
}

func pbType(a []Arg) int64 {
	if len(a) > 1 {
		return a[1].I
	}
	return pbRaw
}

// convUngrpc looks in each gRPC message in turn. As in HAProxy, the next
// header is read where the lookup stopped, which is the message's end
// only when the lookup read all of it.
func convUngrpc(r *Request, a []Arg, s *Sample) bool {
	ids, typ := a[0].V.([]uint32), pbType(a)
	b := s.B
	p, left := 0, len(b)
	for left > 5 {
		l := int(binary.BigEndian.Uint32(b[p+1:]))
		p, left = p+5, left-5
		if l < 0 || left < l {
			return false
		}
		found, read := pbLookup(ids, typ, b[p:p+l], s)
		if found {
			return true
		}
		p, left = p+read, left-l
	}
	return false
}
