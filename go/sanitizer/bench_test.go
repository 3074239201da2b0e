package sanitizer

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"
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

// BenchmarkSealInterleaved: the same three variants, timed in alternating
// rounds of 256 Seals each, so the slow drifts of a shared machine touch all
// three alike; reports the median ns a Seal of each and the overheads over
// the unwrapped AEAD, in percent (window-%, counter-%).
//
//	go test -run '^$' -bench SealInterleaved ./sanitizer/
func BenchmarkSealInterleaved(b *testing.B) {
	const round = 256
	for _, size := range []int{64, 1350, 8192} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			key := make([]byte, 32)
			blk, _ := aes.NewCipher(key)
			plain, _ := cipher.NewGCM(blk)
			aeads := []cipher.AEAD{plain}
			for _, mode := range []Mode{Random, Counter} {
				s, err := NewWithConfig(plain, "AES-256-GCM", benchKey("interleaved"), Config{Mode: mode})
				if err != nil {
					b.Fatal(err)
				}
				aeads = append(aeads, s)
			}
			msg := make([]byte, size)
			buf := make([]byte, 0, size+16)
			nonce := make([]byte, 12)
			next := make([]uint64, len(aeads))
			times := make([][]float64, len(aeads))
			for b.Loop() {
				for v, a := range aeads {
					start := time.Now()
					for range round {
						x := next[v]
						next[v]++
						if v != 2 { // random-looking, except for the counter path
							x *= 0x9e3779b97f4a7c15
						}
						binary.BigEndian.PutUint64(nonce[4:], x)
						a.Seal(buf[:0], nonce, msg, nil)
					}
					times[v] = append(times[v], float64(time.Since(start).Nanoseconds())/round)
				}
			}
			med := make([]float64, len(aeads))
			for v := range times {
				slices.Sort(times[v])
				med[v] = times[v][len(times[v])/2]
			}
			b.ReportMetric(med[0], "plain-ns/seal")
			b.ReportMetric(med[1], "window-ns/seal")
			b.ReportMetric(100*(med[1]/med[0]-1), "window-%")
			b.ReportMetric(100*(med[2]/med[0]-1), "counter-%")
			b.ReportMetric(0, "ns/op")
		})
	}
}
