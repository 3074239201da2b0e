package aesni

import (
	"crypto/aes"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// reference is PRF64 through crypto/aes.
func reference(t *testing.T, key *[16]byte, x uint64) uint64 {
	b, err := aes.NewCipher(key[:])
	if err != nil {
		t.Fatal(err)
	}
	var blk [16]byte
	binary.LittleEndian.PutUint64(blk[:8], x)
	b.Encrypt(blk[:], blk[:])
	return binary.LittleEndian.Uint64(blk[:8])
}

// FIPS-197 appendix A.1: the last round key of 2b7e1516 28aed2a6 abf71588 09cf4f3c.
func TestKeyExpansionFIPS197(t *testing.T) {
	if !hasAESNI {
		t.Skip("no AES-NI: the crypto/aes path is used")
	}
	var key [16]byte
	hex.Decode(key[:], []byte("2b7e151628aed2a6abf7158809cf4f3c"))
	k := New(&key)
	if got := hex.EncodeToString(k.rk[10][:]); got != "d014f9a8c9ee2589e13f0cc8b6630ca6" {
		t.Fatalf("round key 10: %s", got)
	}
}

// Both paths against crypto/aes: 2,000 random keys, single values and
// batches of 8, edge values included.
func TestAgainstCryptoAES(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	paths := []bool{false}
	if hasAESNI {
		paths = append(paths, true)
	}
	for _, native := range paths {
		for range 2000 {
			var key [16]byte
			binary.LittleEndian.PutUint64(key[:8], r.Uint64())
			binary.LittleEndian.PutUint64(key[8:], r.Uint64())
			k := New(&key)
			if !native && k.b == nil {
				b, _ := aes.NewCipher(key[:])
				k = &Key{b: b}
			}
			var xs [8]uint64
			for i := range xs {
				xs[i] = r.Uint64()
			}
			xs[0], xs[1] = 0, ^uint64(0)
			want := xs
			for i, x := range xs {
				want[i] = reference(t, &key, x)
				if got := k.PRF64(x); got != want[i] {
					t.Fatalf("native=%v key %x: PRF64(%#x) = %#x, want %#x", native, key, x, got, want[i])
				}
			}
			k.PRF64x8(&xs)
			if xs != want {
				t.Fatalf("native=%v key %x: PRF64x8 = %x, want %x", native, key, xs, want)
			}
		}
	}
}

func BenchmarkPRF64(b *testing.B) {
	k := New(&[16]byte{1})
	x := uint64(1)
	for i := 0; i < b.N; i++ {
		x = k.PRF64(x)
	}
	_ = x
}

func BenchmarkPRF64x8(b *testing.B) {
	k := New(&[16]byte{1})
	var xs [8]uint64
	b.SetBytes(8 * 8)
	for i := 0; i < b.N; i++ {
		k.PRF64x8(&xs)
	}
}

// FIPS-197 appendix C.3, and both paths against crypto/aes for 2,000 random
// keys and blocks.
func TestAES256(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i)
	}
	k := New256(&key)
	hi, lo := k.Encrypt(0x0011223344556677, 0x8899aabbccddeeff)
	if hi != 0x8ea2b7ca516745bf || lo != 0xeafc49904b496089 {
		t.Fatalf("FIPS-197 C.3: %016x%016x", hi, lo)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		for i := range key {
			key[i] = byte(r.Uint32())
		}
		b, _ := aes.NewCipher(key[:])
		native := New256(&key)
		fallback := &Key256{b: b}
		for _, k := range []*Key256{native, fallback} {
			hi, lo := r.Uint64(), r.Uint64()
			var blk [16]byte
			binary.BigEndian.PutUint64(blk[:8], hi)
			binary.BigEndian.PutUint64(blk[8:], lo)
			b.Encrypt(blk[:], blk[:])
			gh, gl := k.Encrypt(hi, lo)
			if gh != binary.BigEndian.Uint64(blk[:8]) || gl != binary.BigEndian.Uint64(blk[8:]) {
				t.Fatalf("key %x: %016x%016x, crypto/aes %x", key, gh, gl, blk)
			}
		}
	}
}

func BenchmarkAES256(b *testing.B) {
	k := New256(&[32]byte{1})
	hi, lo := uint64(1), uint64(2)
	for i := 0; i < b.N; i++ {
		hi, lo = k.Encrypt(hi, lo)
	}
	_, _ = hi, lo
}
