package sanitizer_test

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"runtime"
	"testing"
	"time"

	schacha "github.com/nonceforge/nonceforge/go/sanitizer/chacha20poly1305"
	sgcm "github.com/nonceforge/nonceforge/go/sanitizer/gcm"
	"golang.org/x/crypto/chacha20poly1305"
)

// BenchmarkLiveKeys holds b.N live keys, each sealing 4 messages of 64 bytes,
// plain and sanitized: B/key is the heap each key holds (after a collection,
// every key still live), ns/new what making one costs. Run as
//
//	go test -run '^$' -bench LiveKeys -benchtime 100000x -count 5 ./sanitizer/
//
// (100,000 live keys; bench/RESULTS.md has the figures).
func BenchmarkLiveKeys(b *testing.B) {
	gcm := func(wrap func(cipher.Block) (cipher.AEAD, error)) func([]byte) cipher.AEAD {
		return func(key []byte) cipher.AEAD {
			block, err := aes.NewCipher(key)
			if err != nil {
				b.Fatal(err)
			}
			a, err := wrap(block)
			if err != nil {
				b.Fatal(err)
			}
			return a
		}
	}
	chacha := func(wrap func([]byte) (cipher.AEAD, error)) func([]byte) cipher.AEAD {
		return func(key []byte) cipher.AEAD {
			a, err := wrap(key)
			if err != nil {
				b.Fatal(err)
			}
			return a
		}
	}
	rows := []struct {
		name    string
		newAEAD func([]byte) cipher.AEAD
	}{
		{"gcm/plain", gcm(cipher.NewGCM)},
		{"gcm/sanitized", gcm(sgcm.NewGCM)},
		{"chacha20poly1305/plain", chacha(chacha20poly1305.New)},
		{"chacha20poly1305/sanitized", chacha(schacha.New)},
	}
	for _, nonces := range []string{"counter", "random"} {
		for _, row := range rows {
			b.Run(nonces+"/"+row.name, func(b *testing.B) {
				liveKeys(b, row.newAEAD, nonces == "random")
			})
		}
	}
}

// keysMade makes each run's keys new: the sanitizer's state is per key.
var keysMade uint64

func liveKeys(b *testing.B, newAEAD func([]byte) cipher.AEAD, random bool) {
	held := make([]cipher.AEAD, b.N)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	key := make([]byte, 32)
	nonce := make([]byte, 12)
	msg := make([]byte, 64)
	buf := make([]byte, 0, 64+16)
	var making time.Duration
	for i := range b.N {
		keysMade++
		binary.LittleEndian.PutUint64(key, keysMade)
		t := time.Now()
		a := newAEAD(key)
		making += time.Since(t)
		held[i] = a
		for s := range uint64(4) {
			v := s
			if random {
				v = (s + keysMade<<2) * 0x9e3779b97f4a7c15
				binary.BigEndian.PutUint32(nonce, uint32(v>>32))
			}
			binary.BigEndian.PutUint64(nonce[4:], v)
			buf = a.Seal(buf[:0], nonce, msg, nil)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "B/key")
	b.ReportMetric(float64(making.Nanoseconds())/float64(b.N), "ns/new")
	runtime.KeepAlive(held)
}

func make_[T any](n int) []T { return make([]T, n) }
