package aesni

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math/bits"

	"github.com/nonceforge/nonceforge/go/internal/scratch"
)

// Key256 is an AES-256 key for encrypting single blocks held as two
// big-endian words (a 128-bit nonce), in registers with AES-NI: through
// crypto/aes a block goes through memory and a cipher.Block interface call
// (with a lent block an encrypted 128-bit nonce fell below the 30 M/s wanted:
// bench/RESULTS.md, "The measurements behind the code"); here the words go
// into the AES unit directly.
type Key256 struct {
	rk     [15][16]byte
	b      cipher.Block // crypto/aes, where there is no AES-NI
	blocks scratch.Blocks
}

// New256 expands a 32-byte key.
func New256(key *[32]byte) *Key256 {
	k := &Key256{}
	if hasAESNI {
		expand256(key, &k.rk)
		return k
	}
	b, err := aes.NewCipher(key[:])
	if err != nil {
		panic("aesni: a 32-byte key is always valid: " + err.Error())
	}
	k.b = b
	return k
}

// Clear erases the round keys (the crypto/aes block cannot be erased).
func (k *Key256) Clear() { k.rk = [15][16]byte{} }

// Encrypt is AES-256 of the block whose bytes 0-7 are hi and 8-15 lo
// (big-endian), returned the same way.
func (k *Key256) Encrypt(hi, lo uint64) (uint64, uint64) {
	if k.b == nil {
		l, h := encrypt256(&k.rk, bits.ReverseBytes64(hi), bits.ReverseBytes64(lo))
		return bits.ReverseBytes64(l), bits.ReverseBytes64(h)
	}
	l := k.blocks.Get(hi ^ lo)
	binary.BigEndian.PutUint64(l.B[:8], hi)
	binary.BigEndian.PutUint64(l.B[8:], lo)
	k.b.Encrypt(l.B[:], l.B[:])
	hi, lo = binary.BigEndian.Uint64(l.B[:8]), binary.BigEndian.Uint64(l.B[8:])
	l.Return()
	return hi, lo
}
