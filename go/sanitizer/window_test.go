package sanitizer

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// A deliberately bad hash (few distinct values, shared 7-bit tags) makes full
// groups, long probes and many tag matches; a model of the last 64 insertions
// checks every answer.
func TestWindowRemembersAtLeastTheLastCapacity(t *testing.T) {
	for _, n := range []int{8, 12, 24} {
		badHash := func(v uint64) uint64 { return (v%7)<<24 | v%5 }
		w := newWindow(64, n, false, func(b []byte) uint64 {
			return badHash(binary.BigEndian.Uint64(b[len(b)-8:]))
		})
		nonce := func(v uint64) []byte {
			b := make([]byte, n)
			binary.BigEndian.PutUint64(b[n-8:], v)
			return b
		}
		var recent []uint64
		ever := map[uint64]bool{}
		x := uint64(0x12345678)
		for step := 0; step < 200000; step++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v := x % 300
			h := badHash(v)
			_, seen, _ := w.checkAndInsert(nonce(v), h)
			for _, r := range recent {
				if r == v && !seen {
					t.Fatalf("n=%d step %d: %d is among the last 64", n, step, v)
				}
			}
			if seen && !ever[v] {
				t.Fatalf("n=%d step %d: %d was never inserted", n, step, v)
			}
			if !seen {
				ever[v] = true
				if len(recent) == 64 {
					recent = recent[1:]
				}
				recent = append(recent, v)
			}
		}
	}
}

func TestWindowTags(t *testing.T) {
	w := newWindow(4, 12, true, func([]byte) uint64 { return 99 })
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
}

// A window grows from nothing by doubling: each size remembers every nonce
// it was given (with its tag), and a place handed out before a doubling still
// takes its tag after.
func TestWindowGrowsWithUse(t *testing.T) {
	h := func(b []byte) uint64 { return hash(b, 0x1234, 0x5679) }
	w := newWindow(1024, 12, true, h)
	if w.memoryBytes() != 0 {
		t.Fatalf("%d bytes before the first nonce", w.memoryBytes())
	}
	nonce := func(v uint64) []byte {
		b := make([]byte, 12)
		binary.BigEndian.PutUint64(b[4:], v*0x9e3779b97f4a7c15)
		return b
	}
	tag := func(v uint64) []byte { return []byte(fmt.Sprintf("tag %012d", v)) }
	var early wpos
	for v := range uint64(1000) {
		p, seen, _ := w.checkAndInsert(nonce(v), h(nonce(v)))
		if seen {
			t.Fatalf("%d is new", v)
		}
		if v == 3 {
			early = p
		} else if v%3 == 0 {
			w.setTag(p, nonce(v), tag(v))
		}
		if v == 20 && w.memoryBytes() >= 4096 {
			t.Fatalf("%d bytes for 21 nonces", w.memoryBytes())
		}
	}
	w.setTag(early, nonce(3), tag(3)) // after several doublings
	for v := range uint64(1000) {
		_, seen, got := w.checkAndInsert(nonce(v), h(nonce(v)))
		want := ""
		if v%3 == 0 {
			want = string(tag(v))
		}
		if !seen || string(got) != want {
			t.Fatalf("%d: seen %v, tag %q, want %q", v, seen, got, want)
		}
	}
	if w.limit != 1024 || w.side[1].keys != nil {
		t.Fatalf("limit %d; older table made before the first swap", w.limit)
	}
}

// A window of more than 65,536 nonces keeps its entries' bits above 16
// apart: after the sides have swapped, every one of the last `capacity`
// nonces is still found with its tag, and the memory stays under Config's
// documented bound.
func TestWindowBeyond16BitEntries(t *testing.T) {
	const capacity, n = 70000, 12
	h := func(b []byte) uint64 { return hash(b, 0x1234, 0x5679) }
	w := newWindow(capacity, n, true, h)
	nonce := func(v int) []byte {
		b := make([]byte, n)
		binary.BigEndian.PutUint64(b[4:], uint64(v)*0x9e3779b97f4a7c15)
		return b
	}
	total := 2*capacity + 5000
	for v := range total {
		p, seen, _ := w.checkAndInsert(nonce(v), h(nonce(v)))
		if seen {
			t.Fatalf("%d is new", v)
		}
		if v%1000 == 0 {
			w.setTag(p, nonce(v), []byte(fmt.Sprintf("tag %012d", v)))
		}
	}
	if w.hi == nil {
		t.Fatal("no high bits for a window of 70000")
	}
	for v := total - capacity; v < total; v++ {
		_, seen, tag := w.checkAndInsert(nonce(v), h(nonce(v)))
		want := ""
		if v%1000 == 0 {
			want = fmt.Sprintf("tag %012d", v)
		}
		if !seen || string(tag) != want {
			t.Fatalf("%d: seen %v, tag %q, want %q", v, seen, tag, want)
		}
	}
	if m, bound := w.memoryBytes(), 2*capacity*(n+16)+8*capacity+34*capacity; m >= bound {
		t.Fatalf("%d bytes, over the documented %d", m, bound)
	}
}

// hash12, the fast path's inlined hash, is hash for every 12-byte nonce.
func TestHash12IsHash(t *testing.T) {
	x := uint64(0x9e3779b97f4a7c15)
	for range 10000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b := make([]byte, 12)
		binary.LittleEndian.PutUint64(b, x)
		binary.LittleEndian.PutUint32(b[8:], uint32(x>>17))
		k0, k1 := x*3, x*5|1
		if hash12(b, k0, k1) != hash(b, k0, k1) {
			t.Fatalf("%x: %x != %x", b, hash12(b, k0, k1), hash(b, k0, k1))
		}
	}
}
