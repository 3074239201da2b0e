package sanitizer

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"testing"
)

// BenchmarkSeal: AES-256-GCM from crypto/aes, unwrapped and sanitized (the
// exact window with random-looking nonces; the counter path), side by side,
// at 64, 1350 and 8192 bytes. Every variant computes its nonce the same way.
//
//	go test -bench Seal -benchmem ./sanitizer/
func BenchmarkSeal(b *testing.B) {
	key := make([]byte, 32)
	for _, size := range []int{64, 1350, 8192} {
		for _, variant := range []string{"plain", "window", "counter"} {
			b.Run(fmt.Sprintf("%s/%d", variant, size), func(b *testing.B) {
				blk, _ := aes.NewCipher(key)
				var a cipher.AEAD
				a, _ = cipher.NewGCM(blk)
				scramble := variant != "counter"
				if variant != "plain" {
					mode := Random
					if variant == "counter" {
						mode = Counter
					}
					// A key per run: state is per key.
					k := benchKey(variant)
					s, err := NewWithConfig(a, "AES-256-GCM", k, Config{Mode: mode})
					if err != nil {
						b.Fatal(err)
					}
					a = s
				}
				msg := make([]byte, size)
				buf := make([]byte, 0, size+16)
				nonce := make([]byte, 12)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				var i uint64
				for b.Loop() {
					v := i
					if scramble {
						v *= 0x9e3779b97f4a7c15
					}
					binary.BigEndian.PutUint64(nonce[4:], v)
					i++
					a.Seal(buf[:0], nonce, msg, nil)
				}
			})
		}
	}
}
