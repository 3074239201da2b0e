package nonce

import (
	"encoding/binary"
	"math/bits"
)

// Speck (Beaulieu et al., 2013) with words big-endian as in the designers'
// paper and the core: block = x ‖ y, key = l[m-2] … l[0] ‖ k[0].

type speck64 struct{ rk [27]uint32 }

func newSpeck64(key []byte) *speck64 {
	var s speck64
	k := binary.BigEndian.Uint32(key[12:16])
	l := []uint32{binary.BigEndian.Uint32(key[8:12]), binary.BigEndian.Uint32(key[4:8]), binary.BigEndian.Uint32(key[0:4])}
	for i := range 27 {
		s.rk[i] = k
		li := (bits.RotateLeft32(l[i], -8) + k) ^ uint32(i)
		k = bits.RotateLeft32(k, 3) ^ li
		l = append(l, li)
	}
	return &s
}

func (s *speck64) encrypt(v uint64) uint64 {
	x, y := uint32(v>>32), uint32(v)
	for _, k := range s.rk {
		x = (bits.RotateLeft32(x, -8) + y) ^ k
		y = bits.RotateLeft32(y, 3) ^ x
	}
	return uint64(x)<<32 | uint64(y)
}

// encrypt4 encrypts four blocks in place, their rounds interleaved: a round
// of one block waits on the last (4 cycles a round), so four side by side
// cost less than two alone (bench/RESULTS.md, "The measurements behind the
// code").
func (s *speck64) encrypt4(v *[4]uint64) {
	x0, y0 := uint32(v[0]>>32), uint32(v[0])
	x1, y1 := uint32(v[1]>>32), uint32(v[1])
	x2, y2 := uint32(v[2]>>32), uint32(v[2])
	x3, y3 := uint32(v[3]>>32), uint32(v[3])
	for _, k := range s.rk {
		x0 = (bits.RotateLeft32(x0, -8) + y0) ^ k
		x1 = (bits.RotateLeft32(x1, -8) + y1) ^ k
		x2 = (bits.RotateLeft32(x2, -8) + y2) ^ k
		x3 = (bits.RotateLeft32(x3, -8) + y3) ^ k
		y0 = bits.RotateLeft32(y0, 3) ^ x0
		y1 = bits.RotateLeft32(y1, 3) ^ x1
		y2 = bits.RotateLeft32(y2, 3) ^ x2
		y3 = bits.RotateLeft32(y3, 3) ^ x3
	}
	v[0], v[1] = uint64(x0)<<32|uint64(y0), uint64(x1)<<32|uint64(y1)
	v[2], v[3] = uint64(x2)<<32|uint64(y2), uint64(x3)<<32|uint64(y3)
}

func (s *speck64) decrypt(v uint64) uint64 {
	x, y := uint32(v>>32), uint32(v)
	for i := len(s.rk) - 1; i >= 0; i-- {
		y = bits.RotateLeft32(y^x, -3)
		x = bits.RotateLeft32((x^s.rk[i])-y, 8)
	}
	return uint64(x)<<32 | uint64(y)
}

const mask48 = 1<<48 - 1

func ror48(x uint64, r uint) uint64 { return (x>>r | x<<(48-r)) & mask48 }
func rol48(x uint64, r uint) uint64 { return (x<<r | x>>(48-r)) & mask48 }

func be48(b []byte) uint64 {
	return uint64(b[0])<<40 | uint64(b[1])<<32 | uint64(b[2])<<24 | uint64(b[3])<<16 | uint64(b[4])<<8 | uint64(b[5])
}

func put48(b []byte, v uint64) {
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// speck96: Speck96/144, a true 96-bit block of two 48-bit words.
type speck96 struct{ rk [29]uint64 }

func newSpeck96(key []byte) *speck96 {
	var s speck96
	k := be48(key[12:18])
	l := []uint64{be48(key[6:12]), be48(key[0:6])}
	for i := range 29 {
		s.rk[i] = k
		li := ((ror48(l[i], 8) + k) & mask48) ^ uint64(i)
		k = rol48(k, 3) ^ li
		l = append(l, li)
	}
	return &s
}

func (s *speck96) encrypt(b *[12]byte) {
	x, y := be48(b[:6]), be48(b[6:])
	for _, k := range s.rk {
		x = ((ror48(x, 8) + y) & mask48) ^ k
		y = rol48(y, 3) ^ x
	}
	put48(b[:6], x)
	put48(b[6:], y)
}

func (s *speck96) decrypt(b *[12]byte) {
	x, y := be48(b[:6]), be48(b[6:])
	for i := len(s.rk) - 1; i >= 0; i-- {
		y = ror48(y^x, 3)
		x = rol48(((x^s.rk[i])-y)&mask48, 8)
	}
	put48(b[:6], x)
	put48(b[6:], y)
}

// speck128: Speck128/256.
type speck128 struct{ rk [34]uint64 }

func newSpeck128(key []byte) *speck128 {
	var s speck128
	k := binary.BigEndian.Uint64(key[24:32])
	l := []uint64{binary.BigEndian.Uint64(key[16:24]), binary.BigEndian.Uint64(key[8:16]), binary.BigEndian.Uint64(key[0:8])}
	for i := range 34 {
		s.rk[i] = k
		li := (bits.RotateLeft64(l[i], -8) + k) ^ uint64(i)
		k = bits.RotateLeft64(k, 3) ^ li
		l = append(l, li)
	}
	return &s
}

func (s *speck128) encrypt(b *[16]byte) {
	x, y := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	for _, k := range s.rk {
		x = (bits.RotateLeft64(x, -8) + y) ^ k
		y = bits.RotateLeft64(y, 3) ^ x
	}
	binary.BigEndian.PutUint64(b[:8], x)
	binary.BigEndian.PutUint64(b[8:], y)
}

func (s *speck128) decrypt(b *[16]byte) {
	x, y := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	for i := len(s.rk) - 1; i >= 0; i-- {
		y = bits.RotateLeft64(y^x, -3)
		x = bits.RotateLeft64((x^s.rk[i])-y, 8)
	}
	binary.BigEndian.PutUint64(b[:8], x)
	binary.BigEndian.PutUint64(b[8:], y)
}
