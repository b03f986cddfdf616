package sample

import (
	"encoding/binary"
	"math/bits"
)

// xxh3 is XXH3-64 (xxHash 0.8) with a seed, as HAProxy's xxh3 converter
// computes it; written from the algorithm's specification.
func xxh3(b []byte, seed uint64) uint64 {
	n := len(b)
	switch {
	case n <= 16:
		return xxh3Short(b, seed)
	case n <= 128:
		acc := uint64(n) * xxP64_1
		if n > 32 {
			if n > 64 {
				if n > 96 {
					acc += xxh3Mix16(b[48:], xxh3Secret[96:], seed)
					acc += xxh3Mix16(b[n-64:], xxh3Secret[112:], seed)
				}
				acc += xxh3Mix16(b[32:], xxh3Secret[64:], seed)
				acc += xxh3Mix16(b[n-48:], xxh3Secret[80:], seed)
			}
			acc += xxh3Mix16(b[16:], xxh3Secret[32:], seed)
			acc += xxh3Mix16(b[n-32:], xxh3Secret[48:], seed)
		}
		acc += xxh3Mix16(b, xxh3Secret[:], seed)
		acc += xxh3Mix16(b[n-16:], xxh3Secret[16:], seed)
		return xxh3Avalanche(acc)
	case n <= 240:
		acc := uint64(n) * xxP64_1
		for i := 0; i < 8; i++ {
			acc += xxh3Mix16(b[16*i:], xxh3Secret[16*i:], seed)
		}
		acc = xxh3Avalanche(acc)
		for i := 8; i < n/16; i++ {
			acc += xxh3Mix16(b[16*i:], xxh3Secret[16*(i-8)+3:], seed)
		}
		acc += xxh3Mix16(b[n-16:], xxh3Secret[136-17:], seed)
		return xxh3Avalanche(acc)
	}
	return xxh3Long(b, seed)
}

const (
	xxP64_1 uint64 = 0x9E3779B185EBCA87
	xxP64_2 uint64 = 0xC2B2AE3D27D4EB4F
	xxP64_3 uint64 = 0x165667B19E3779F9
	xxP64_4 uint64 = 0x85EBCA77C2B2AE63
	xxP64_5 uint64 = 0x27D4EB2F165667C5
	xxPMX1  uint64 = 0x165667919E3779F9
	xxPMX2  uint64 = 0x9FB21C651E98DF25
)

// xxh3Secret is the specification's default secret.
var xxh3Secret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func xxh3Short(b []byte, seed uint64) uint64 {
	s := xxh3Secret[:]
	n := len(b)
	switch {
	case n > 8:
		lo := le64(b) ^ ((le64(s[24:]) ^ le64(s[32:])) + seed)
		hi := le64(b[n-8:]) ^ ((le64(s[40:]) ^ le64(s[48:])) - seed)
		return xxh3Avalanche(uint64(n) + bits.ReverseBytes64(lo) + hi + mulFold64(lo, hi))
	case n >= 4:
		seed ^= uint64(bits.ReverseBytes32(uint32(seed))) << 32
		in := uint64(le32(b[n-4:])) + uint64(le32(b))<<32
		h := in ^ ((le64(s[8:]) ^ le64(s[16:])) - seed)
		h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
		h *= xxPMX2
		h ^= h>>35 + uint64(n)
		h *= xxPMX2
		return h ^ h>>28
	case n > 0:
		c := uint32(b[0])<<16 | uint32(b[n>>1])<<24 | uint32(b[n-1]) | uint32(n)<<8
		return xxh64Avalanche(uint64(c) ^ (uint64(le32(s)^le32(s[4:])) + seed))
	}
	return xxh64Avalanche(seed ^ le64(s[56:]) ^ le64(s[64:]))
}

func mulFold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func xxh3Mix16(b, s []byte, seed uint64) uint64 {
	return mulFold64(le64(b)^(le64(s)+seed), le64(b[8:])^(le64(s[8:])-seed))
}

func xxh3Avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= xxPMX1
	return h ^ h>>32
}

func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xxP64_2
	h ^= h >> 29
	h *= xxP64_3
	return h ^ h>>32
}

// xxh3Long hashes more than 240 bytes in stripes of 64 with eight
// accumulators, the secret shifted by the seed.
func xxh3Long(b []byte, seed uint64) uint64 {
	var sec [192]byte
	for i := 0; i < len(sec); i += 16 {
		binary.LittleEndian.PutUint64(sec[i:], le64(xxh3Secret[i:])+seed)
		binary.LittleEndian.PutUint64(sec[i+8:], le64(xxh3Secret[i+8:])-seed)
	}
	acc := [8]uint64{uint64(xp3), xxP64_1, xxP64_2, xxP64_3, xxP64_4, uint64(xp2), xxP64_5, uint64(xp1)}
	const stripes = (192 - 64) / 8
	const block = 64 * stripes
	n := len(b)
	blocks := (n - 1) / block
	for i := 0; i < blocks; i++ {
		for j := 0; j < stripes; j++ {
			xxh3Acc512(&acc, b[i*block+j*64:], sec[j*8:])
		}
		for k := range acc {
			a := acc[k]
			a ^= a >> 47
			a ^= le64(sec[192-64+8*k:])
			acc[k] = a * uint64(xp1)
		}
	}
	last := ((n - 1) - block*blocks) / 64
	for j := 0; j < last; j++ {
		xxh3Acc512(&acc, b[blocks*block+j*64:], sec[j*8:])
	}
	xxh3Acc512(&acc, b[n-64:], sec[192-64-7:])
	h := uint64(n) * xxP64_1
	for i := 0; i < 4; i++ {
		h += mulFold64(acc[2*i]^le64(sec[11+16*i:]), acc[2*i+1]^le64(sec[11+16*i+8:]))
	}
	return xxh3Avalanche(h)
}

func xxh3Acc512(acc *[8]uint64, b, s []byte) {
	for i := 0; i < 8; i++ {
		v := le64(b[8*i:])
		k := v ^ le64(s[8*i:])
		acc[i^1] += v
		acc[i] += uint64(uint32(k)) * (k >> 32)
	}
}
