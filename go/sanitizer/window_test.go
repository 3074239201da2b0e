package sanitizer

import (
	"encoding/binary"
	"testing"
)

// A deliberately bad hash (few distinct values, shared 7-bit tags) makes full
// groups, long probes and many tag matches; a model of the last 64 insertions
// checks every answer.
func TestWindowRemembersAtLeastTheLastCapacity(t *testing.T) {
	for _, n := range []int{8, 12, 24} {
		w := newWindow(64, n, false)
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
			h := (v%7)<<57 | v%5
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
}
