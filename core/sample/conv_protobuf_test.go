package sample

import (
	"encoding/hex"
	"testing"
)

const (
	// The Rectangle of HAProxy's ungrpc example: lo {point {407838351,
	// -746143763}} as field 48, hi {point {408122808, -743999179}} as 49,
	// the points' messages as field 59.
	pbRect = "820314da0311088fbdbcc20110edff9a9cfdffffffff018a0314da031108b8ebcdc20110b5f29d9dfdffffffff01"
	// 1: varint 2^64-1, 2: zigzag -300, 3: float -5.5, 4: double -5.5,
	// 5: {1: 7, 2: "hello"}, 7: varint 2.
	pbMixed = "08ffffffffffffffffff0110d7041d0000b0c02100000000000016c02a090807120568656c6c6f3802"
)

// TestProtobuf: the values are HAProxy 2.6.12's (its float and double
// fields go through C's conversion to an unsigned integer).
func TestProtobuf(t *testing.T) {
	grpc := "000000002e" + pbRect
	checkExprs(t, &Request{}, []exprCase{
		{"bin(" + pbRect + "),protobuf(48.59.1,int32)", "407838351"},
		{"bin(" + pbRect + "),protobuf(48.59.2,int32)", "-746143763"},
		{"bin(" + pbRect + "),protobuf(49.59.1,int32)", "408122808"},
		{"bin(" + pbRect + "),protobuf(49.59.2,int32)", "-743999179"},
		{"bin(" + pbRect + "),protobuf(48.59),hex", "088FBDBCC20110EDFF9A9CFDFFFFFFFF01"},
		{"bin(" + grpc + "),ungrpc(49.59.2,int32)", "-743999179"},
		{"bin(" + grpc + "),ungrpc(48),protobuf(59.1,int32)", "407838351"},
		{"bin(" + grpc + "),ungrpc(48.59),protobuf(1,int32)", "407838351"},
		{"bin(" + grpc + "),ungrpc(1)", "<none>"},
		{"bin(" + pbMixed + "),protobuf(1,uint64)", "-1"},
		{"bin(" + pbMixed + "),protobuf(1),hex", "FFFFFFFFFFFFFFFFFF01"},
		{"bin(" + pbMixed + "),protobuf(2,sint32)", "-300"},
		{"bin(" + pbMixed + "),protobuf(2,int32)", "599"},
		{"bin(" + pbMixed + "),protobuf(3,float)", "4294967291"},
		{"bin(" + pbMixed + "),protobuf(3,sfixed32)", "-1062207488"},
		{"bin(" + pbMixed + "),protobuf(3),hex", "0000B0C0"},
		{"bin(" + pbMixed + "),protobuf(4,double)", "-5"},
		{"bin(" + pbMixed + "),protobuf(4,fixed64)", "-4605493568939753472"},
		{"bin(" + pbMixed + "),protobuf(5.2)", "hello"},
		{"bin(" + pbMixed + "),protobuf(5.1,enum)", "7"},
		{"bin(" + pbMixed + "),protobuf(7,bool)", "2"},
		{"bin(" + pbMixed + "),protobuf(5,int32)", "<none>"},
		{"bin(" + pbMixed + "),protobuf(8)", "<none>"},
		{"bin(" + pbMixed + "),ungrpc(1)", "<none>"},
	})
}

func TestParseDottedUints(t *testing.T) {
	for in, want := range map[string][]uint32{"1..2": {1, 0, 2}, ".5": {0, 5}, "48.59.1": {48, 59, 1}, "4294967297": {1}} {
		got, ok := parseDottedUints(in)
		if !ok || len(got) != len(want) {
			t.Errorf("%s: %v, want %v", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %v, want %v", in, got, want)
			}
		}
	}
}

func FuzzProtobuf(f *testing.F) {
	for _, h := range []string{pbRect, pbMixed, "000000002e" + pbRect, "2a", "2a05ab", "08ffffffffffffffffffff"} {
		b, _ := hex.DecodeString(h)
		f.Add(b, "48.59.1", int64(pbInt32))
	}
	f.Fuzz(func(t *testing.T, msg []byte, path string, typ int64) {
		ids, ok := parseDottedUints(path)
		if !ok || len(ids) == 0 {
			return
		}
		a := []Arg{{V: ids}, {I: typ%pbDouble + 1}}
		for _, fn := range []func(*Request, []Arg, *Sample) bool{convProtobuf, convUngrpc} {
			s := Sample{T: TBin, B: msg}
			if fn(&Request{}, a, &s) && s.T == TBin && len(s.B) > len(msg) {
				t.Fatalf("%d bytes out of %d", len(s.B), len(msg))
			}
		}
	})
}
