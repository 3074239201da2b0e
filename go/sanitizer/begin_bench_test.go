package sanitizer

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
)

// benchKeys makes every benchmark run's key new: state is per key, and a run
// that met the last run's state would count its nonces as repeats.
var benchKeys atomic.Uint64

func benchKey(name string) []byte {
	return []byte(fmt.Sprintf("%s/%d", name, benchKeys.Add(1)))
}

// BenchmarkGuard: the checks alone, without a cipher.
func BenchmarkGuard(b *testing.B) {
	for _, mode := range []Mode{Counter, Random} {
		name := map[Mode]string{Counter: "counter", Random: "window"}[mode]
		b.Run(name, func(b *testing.B) {
			s := stateFor("bench", benchKey(name), 12, &Config{Mode: mode})
			nonce := make([]byte, 12)
			tag := make([]byte, 16)
			var i uint64
			for b.Loop() {
				v := i
				if mode == Random {
					v *= 0x9e3779b97f4a7c15
				}
				binary.BigEndian.PutUint64(nonce[4:], v)
				i++
				var t ticket
				s.begin(nonce, 64, &t)
				s.finish(&t, nonce, tag)
			}
		})
	}
}
