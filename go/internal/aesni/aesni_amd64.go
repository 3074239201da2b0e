//go:build gc && !purego

package aesni

import "golang.org/x/sys/cpu"

var hasAESNI = cpu.X86.HasAES && cpu.X86.HasSSE41

//go:noescape
func expand128(key *[16]byte, rk *[11][16]byte)

//go:noescape
func prf64(rk *[11][16]byte, x uint64) uint64

//go:noescape
func prf64x8(rk *[11][16]byte, xs *[8]uint64)

//go:noescape
func expand256(key *[32]byte, rk *[15][16]byte)

func encrypt256(rk *[15][16]byte, lo, hi uint64) (uint64, uint64)
