package sanitizer

import (
	"encoding/binary"
	"slices"
	"testing"
)

func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// startAt makes w look as if start insertions had happened (every lane
// stale), to test the arithmetic across the 2^32 wrap of insertion numbers.
func (w *window) startAt(start uint64) {
	w.next = start
	for i := range w.buckets {
		for j := range w.buckets[i].seq {
			w.buckets[i].seq[j] = uint32(start) - uint32(w.rmask) - 2
		}
	}
}

// exactAgainstModel checks every answer against a model: a nonce is seen
// exactly when it is among the last R (capacity rounded up to a power of two)
// nonces inserted.
func exactAgainstModel(t *testing.T, n, capacity int, start, domain uint64, steps int, hash func(uint64) uint64) {
	t.Helper()
	r := 1
	for r < capacity {
		r <<= 1
	}
	w := newWindow(capacity, n, false)
	w.startAt(start)
	nonce := func(v uint64) []byte {
		b := make([]byte, n)
		binary.BigEndian.PutUint64(b[n-8:], v)
		return b
	}
	var recent []uint64
	x := uint64(0x12345678)
	for step := 0; step < steps; step++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v := x % domain
		_, seen, _ := w.checkAndInsert(nonce(v), hash(v))
		if want := slices.Contains(recent, v); seen != want {
			t.Fatalf("n=%d step %d: %d seen %v, want %v", n, step, v, seen, want)
		}
		if !seen {
			if len(recent) == r {
				recent = recent[1:]
			}
			recent = append(recent, v)
		}
	}
}

// A deliberately bad hash (5 buckets, one control byte) fills buckets, spills
// and matches every lane, so the ring decides every answer.
func TestWindowExactWithABadHash(t *testing.T) {
	for _, n := range []int{8, 12, 24} {
		exactAgainstModel(t, n, 64, 0, 300, 200000, func(v uint64) uint64 { return v % 5 })
	}
}

// A good hash, starting just below the 2^32 wrap of insertion numbers.
func TestWindowExactAcrossTheWrap(t *testing.T) {
	for _, start := range []uint64{0, 1<<32 - 100000} {
		exactAgainstModel(t, 12, 100, start, 2000, 300000, splitmix)
	}
}

func TestWindowTags(t *testing.T) {
	w := newWindow(4, 12, true)
	n := []byte("twelve bytes")
	p, seen, _ := w.checkAndInsert(n, 99)
	if seen {
		t.Fatal("new nonce seen")
	}
	if _, seen, tag := w.checkAndInsert(n, 99); !seen || tag != nil {
		t.Fatal("no tag yet")
	}
	w.setTag(p, n, []byte("0123456789abcdef"))
	if _, seen, tag := w.checkAndInsert(n, 99); !seen || string(tag) != "0123456789abcdef" {
		t.Fatalf("tag %q", tag)
	}
	for i := uint64(0); i < 10; i++ {
		w.checkAndInsert([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, i)
	}
	w.setTag(p, n, []byte("fedcba9876543210")) // out of the ring: ignored
	if _, seen, _ := w.checkAndInsert(n, 99); seen {
		t.Fatal("a nonce out of the ring is new again")
	}
}
