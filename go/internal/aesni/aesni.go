// Package aesni is AES-128 as a 64-bit pseudo-random function — the round
// function of the external-id Feistel network — one value at a time or eight
// side by side, with AES-NI on amd64 and crypto/aes elsewhere.
//
// Why by hand: through crypto/aes (cipher.Block) one PRF call pays the call,
// FIPS bookkeeping, an escaping block and a store-forwarding stall (the 8-byte
// input is written, the 16-byte block read), and a 2-round feistel-uuid id
// cost twice the Rust core's (bench/RESULTS.md, "The measurements behind the
// code"); and the
// standard library has no multi-block ECB, so a batch cannot overlap its AES
// rounds. Here the value goes from a register into the AES unit and back, and
// eight values share each round key load. Checked against crypto/aes for
// random keys and values (aesni_test.go) and by the shared extid vectors.
package aesni

//go:generate python3 gen.py

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"

	"github.com/nonceforge/nonceforge/go/internal/scratch"
)

// Key is an expanded AES-128 key.
type Key struct {
	rk     [11][16]byte // round keys (AES-NI)
	b      cipher.Block // crypto/aes, where there is no AES-NI
	blocks scratch.Blocks
}

// New expands a 16-byte key.
func New(key *[16]byte) *Key {
	k := &Key{}
	if hasAESNI {
		expand128(key, &k.rk)
		return k
	}
	b, err := aes.NewCipher(key[:])
	if err != nil {
		panic("aesni: a 16-byte key is always valid: " + err.Error())
	}
	k.b = b
	return k
}

// NewPortable expands a 16-byte key for crypto/aes only, never this
// package's AES-NI code: a second opinion that shares neither the key schedule
// nor the cipher code with New's (the external-id self-check).
func NewPortable(key *[16]byte) *Key {
	b, err := aes.NewCipher(key[:])
	if err != nil {
		panic("aesni: a 16-byte key is always valid: " + err.Error())
	}
	return &Key{b: b}
}

// Clear erases the round keys (the crypto/aes block cannot be erased).
func (k *Key) Clear() { k.rk = [11][16]byte{} }

// PRF64 is AES-128 of x (8 bytes little-endian, then 8 zero bytes), the first
// 8 bytes of the result read little-endian.
func (k *Key) PRF64(x uint64) uint64 {
	if k.b == nil {
		return prf64(&k.rk, x)
	}
	l := k.blocks.Get(x)
	binary.LittleEndian.PutUint64(l.B[:8], x)
	k.b.Encrypt(l.B[:], l.B[:])
	y := binary.LittleEndian.Uint64(l.B[:8])
	l.Return()
	return y
}

// PRF64x8 replaces each of 8 values with its PRF64.
func (k *Key) PRF64x8(xs *[8]uint64) {
	if k.b == nil {
		prf64x8(&k.rk, xs)
		return
	}
	for i, x := range xs {
		xs[i] = k.PRF64(x)
	}
}
