package sanitizer

import (
	"encoding/binary"
	"math/bits"
)

// window is one shard's exact memory of the last R nonces it saw (R = the
// capacity rounded up to a power of two): the nonces in a ring, and an index
// of R buckets, each one 64-byte line of 8 lanes. A lane holds 7 bits of the
// nonce's hash (a control byte, 0x80 | bits; 8 compared at once, SWAR) and the
// nonce's insertion number, whose low bits are its ring slot. A lane whose
// age (insertions since) is over R is stale and reused. A lookup reads one
// line and touches the ring only when a live lane's hash bits match; an insert
// writes that line and the next ring slot.
//
// Exact, because the ring decides: a nonce is found when a ring slot written
// within the last R insertions holds it. Insertion numbers are kept modulo
// 2^32; a sweep (one bucket every 4 insertions) resets stale lanes to age
// R+1, so no age wraps and looks live. A bucket whose 8 lanes are all live
// (about 1 insert in 10^5 at one live lane a bucket on average) puts the
// nonce in a spill list, checked while it is non-empty. Measured against the
// two SwissTable generations it replaces: see bench/RESULTS.md.
type window struct {
	n       int
	buckets []bucket
	bmask   uint64
	ring    []byte // R*n
	tags    []byte // 16 bytes a slot, when identical messages are allowed
	tagged  []bool
	rmask   uint64
	next    uint64 // insertions so far
	spill   []uint64
}

type bucket struct {
	ctrl uint64    // byte i: 0x80 | 7 hash bits of lane i; 0 if never used
	seq  [8]uint32 // insertion number (mod 2^32) of lane i
	_    [24]byte  // to one cache line
}

// wpos is where a nonce went: its insertion number (table is unused).
type wpos struct {
	table int
	slot  uint64
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

func newWindow(capacity, n int, keepTags bool) *window {
	r := 1
	for r < capacity {
		r <<= 1
	}
	w := &window{n: n, buckets: make([]bucket, r), bmask: uint64(r - 1), ring: make([]byte, r*n), rmask: uint64(r - 1), spill: make([]uint64, 0, 8)}
	dead := uint32(0) - uint32(r) - 1 // age R+1 at the start
	for i := range w.buckets {
		for j := range w.buckets[i].seq {
			w.buckets[i].seq[j] = dead
		}
	}
	if keepTags {
		w.tags = make([]byte, r*16)
		w.tagged = make([]bool, r)
	}
	return w
}

func (w *window) memoryBytes() int {
	return 64*len(w.buckets) + len(w.ring) + len(w.tags) + len(w.tagged) + 8*cap(w.spill)
}

// matches has the top bit set in each byte of c equal to b (and, rarely, in a
// byte just above one: every match is confirmed against the ring).
func matches(c uint64, b uint8) uint64 {
	x := c ^ (lsbs * uint64(b))
	return (x - lsbs) &^ x & msbs
}

// live reports whether a lane inserted as seq (mod 2^32) is among the last R.
func (w *window) live(seq uint32) bool {
	return uint64(uint32(w.next)-seq-1) <= w.rmask
}

// holds reports whether ring slot of insertion seq holds nonce.
func (w *window) holds(seq uint64, nonce []byte) bool {
	if w.next-seq-1 > w.rmask {
		return false
	}
	at := int(seq&w.rmask) * w.n
	k := w.ring[at : at+w.n]
	n := w.n
	// Nonces are 8 to 24 bytes: compare in words (the last word overlapping).
	if binary.LittleEndian.Uint64(k) != binary.LittleEndian.Uint64(nonce) ||
		binary.LittleEndian.Uint64(k[n-8:]) != binary.LittleEndian.Uint64(nonce[n-8:]) {
		return false
	}
	return n <= 16 || binary.LittleEndian.Uint64(k[8:]) == binary.LittleEndian.Uint64(nonce[8:])
}

func (w *window) tagOf(seq uint64) []byte {
	s := seq & w.rmask
	if w.tagged == nil || !w.tagged[s] {
		return nil
	}
	return w.tags[s*16 : s*16+16]
}

// checkAndInsert reports whether nonce is remembered (with the tag of its
// first message, if recorded); if not, remembers it.
func (w *window) checkAndInsert(nonce []byte, h uint64) (p wpos, seen bool, tag []byte) {
	b := &w.buckets[h&w.bmask]
	ctl := uint8(h>>40) | 0x80
	for m := matches(b.ctrl, ctl); m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m) >> 3
		if s := b.seq[i]; w.live(s) {
			seq := w.next - uint64(uint32(w.next)-s)
			if w.holds(seq, nonce) {
				return wpos{0, seq}, true, w.tagOf(seq)
			}
		}
	}
	if len(w.spill) > 0 {
		for _, seq := range w.spill {
			if w.holds(seq, nonce) {
				return wpos{0, seq}, true, w.tagOf(seq)
			}
		}
	}
	seq := w.next
	lane := -1
	for i := range b.seq {
		if !w.live(b.seq[i]) {
			lane = i
			break
		}
	}
	if lane >= 0 {
		b.ctrl = b.ctrl&^(0xff<<(8*lane)) | uint64(ctl)<<(8*lane)
		b.seq[lane] = uint32(seq)
	} else {
		w.spillPush(seq)
	}
	copy(w.ring[int(seq&w.rmask)*w.n:], nonce)
	if w.tagged != nil {
		w.tagged[seq&w.rmask] = false
	}
	w.next++
	if w.next&3 == 0 {
		w.sweep()
	}
	return wpos{0, seq}, false, nil
}

// sweep resets the stale lanes of one bucket (the next in turn) to age R+1.
func (w *window) sweep() {
	b := &w.buckets[(w.next>>2)&w.bmask]
	dead := uint32(w.next) - uint32(w.rmask) - 2
	for i := range b.seq {
		if !w.live(b.seq[i]) {
			b.seq[i] = dead
		}
	}
}

func (w *window) spillPush(seq uint64) {
	kept := w.spill[:0]
	for _, s := range w.spill {
		if w.next-s-1 < w.rmask { // still in the ring after this insertion
			kept = append(kept, s)
		}
	}
	w.spill = append(kept, seq)
}

// setTag records the tag sealed under the nonce at p, if it is still there.
func (w *window) setTag(p wpos, nonce, tag []byte) {
	if w.tagged == nil || !w.holds(p.slot, nonce) {
		return
	}
	s := p.slot & w.rmask
	copy(w.tags[s*16:s*16+16], tag)
	w.tagged[s] = true
}
