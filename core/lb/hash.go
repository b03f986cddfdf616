package lb

import (
	"errors"
	"hash/crc32"
)

// HashFunc hashes a key to 32 bits.
type HashFunc func([]byte) uint32

// SDBM is HAProxy's default hash function (hash_sdbm).
func SDBM(b []byte) uint32 {
	var h uint32
	for _, c := range b {
		h = uint32(c) + (h << 6) + (h << 16) - h
	}
	return h
}

// DJB2 is Bernstein's hash (hash_djb2).
func DJB2(b []byte) uint32 {
	h := uint32(5381)
	for _, c := range b {
		h = (h << 5) + h + uint32(c)
	}
	return h
}

// WT6 is HAProxy's wt6 hash (hash_wt6): two 32-bit lanes with data-driven
// rotations, designed to spread numeric keys.
func WT6(b []byte) uint32 {
	h0, h1 := uint32(0xa53c965a), uint32(0x5ca6953a)
	step0, step1 := uint32(6), uint32(18)
	for _, c := range b {
		t := uint32(c)
		h0 = ^(h0 ^ t)
		h1 = ^(h1 + t)
		t = h1<<step0 | h1>>(32-step0)
		h1 = h0<<step1 | h0>>(32-step1)
		h0 = t
		t = (h0>>16 ^ h1) & 0xffff
		step0 = t & 0x1f
		step1 = t >> 11
	}
	return h0 ^ h1
}

// CRC32 is the reflected IEEE CRC-32 (hash_crc32).
func CRC32(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// FullHash is Bob Jenkins' 32-bit integer avalanche followed by a
// multiplication by a large prime, HAProxy's full_hash(). It is a bijection.
func FullHash(a uint32) uint32 {
	a = (a + 0x7ed55d16) + (a << 12)
	a = (a ^ 0xc761c23c) ^ (a >> 19)
	a = (a + 0x165667b1) + (a << 5)
	a = (a + 0xd3a2646c) ^ (a << 9)
	a = (a + 0xfd7046c5) + (a << 3)
	a = (a ^ 0xb55a4f09) ^ (a >> 16)
	return a * 3221225473
}

// XXH64 adapts a 64-bit hash (the caller's xxhash) to a HashFunc by keeping
// its low 32 bits.
func XXH64(f func([]byte) uint64) HashFunc {
	return func(b []byte) uint32 { return uint32(f(b)) }
}

// HashType is a parsed "hash-type" line. The zero value is HAProxy's
// default: map-based sdbm without avalanche.
type HashType struct {
	Consistent bool
	// Func is nil for sdbm.
	Func HashFunc
	// FuncName is "sdbm", "djb2", "wt6", "crc32" (or a caller's name).
	FuncName  string
	Avalanche bool
}

// Sum hashes key as HAProxy's gen_hash followed by the optional avalanche.
func (h HashType) Sum(key []byte) uint32 {
	var v uint32
	if h.Func == nil {
		v = SDBM(key)
	} else {
		v = h.Func(key)
	}
	if h.Avalanche {
		v = FullHash(v)
	}
	return v
}

// HashFuncByName returns the named built-in hash function.
func HashFuncByName(name string) (HashFunc, bool) {
	switch name {
	case "sdbm":
		return SDBM, true
	case "djb2":
		return DJB2, true
	case "wt6":
		return WT6, true
	case "crc32":
		return CRC32, true
	}
	return nil, false
}

// ParseHashType parses the words after "hash-type":
// <map-based|consistent> [<function> [avalanche]]. extra, if not nil, names
// additional functions (e.g. "xxh64") the caller provides. Error texts are
// HAProxy 2.6's.
func ParseHashType(args []string, extra map[string]HashFunc) (HashType, error) {
	var h HashType
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch arg(0) {
	case "consistent":
		h.Consistent = true
	case "map-based":
	case "avalanche":
		return h, errors.New("experimental feature 'hash-type avalanche' is not supported anymore, please use 'hash-type map-based sdbm avalanche' instead.")
	default:
		return h, errors.New("'hash-type' only supports 'consistent' and 'map-based'.")
	}
	if arg(1) == "" {
		h.FuncName = "sdbm"
		h.Avalanche = h.Consistent
		return h, nil
	}
	f, ok := HashFuncByName(arg(1))
	if !ok {
		f, ok = extra[arg(1)]
	}
	if !ok {
		return h, errors.New("'hash-type' only supports 'sdbm', 'djb2', 'crc32', or 'wt6' hash functions.")
	}
	if arg(1) != "sdbm" {
		h.Func = f
	}
	h.FuncName = arg(1)
	switch arg(2) {
	case "avalanche":
		h.Avalanche = true
	case "":
	default:
		return h, errors.New("'hash-type' only supports 'avalanche' as a modifier for hash functions.")
	}
	return h, nil
}
