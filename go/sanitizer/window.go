package sanitizer

import (
	"encoding/binary"
	"math/bits"
)

// window is one shard's exact memory of at least the last `capacity` nonces it
// saw, in two generations of a small SwissTable. Nonces go into the current
// generation; once it holds `capacity`, the older one is cleared and becomes
// current. A lookup checks both, so every nonce among the last `capacity`
// insertions is found; nothing is deleted one by one (no tombstones), and
// everything remembered was really sealed, so remembering more than
// `capacity` never makes a false positive.
//
// A table is groups of 8 slots with one control word per group: a byte a slot,
// 0 when empty, else 0x80 | 7 bits of the hash. A probe compares the 8 bytes at
// once (SWAR), so it rarely branches on a single slot; with tables at most half
// full it almost always ends in the first group. Measured against linear
// probing with one branch a slot: see bench/RESULTS.md.
type window struct {
	n        int
	ctrl     [2][]uint64
	keys     [2][]byte // group*8+slot -> nonce
	gmask    uint64
	cur      int
	count    int
	capacity int
	epochs   [2]uint64
	epoch    uint64
	tags     [2][]byte // 16 bytes a slot, when identical messages are allowed
	tagged   [2][]bool
	// filter: one bit per bucket of 16 × capacity and generation; clear means
	// "not in this generation", so a fresh nonce usually probes neither table.
	filter [2][]uint64
	fmask  uint64
}

// wpos is where a nonce went: generation (by epoch) and slot.
type wpos struct {
	table int
	slot  uint64
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

func newWindow(capacity, n int, keepTags bool) *window {
	groups := 1
	for groups*8 < 2*capacity {
		groups <<= 1
	}
	fbits := 64
	for fbits < 16*capacity {
		fbits <<= 1
	}
	w := &window{n: n, gmask: uint64(groups - 1), capacity: capacity, epochs: [2]uint64{1, 0}, epoch: 1, fmask: uint64(fbits - 1)}
	for i := range w.ctrl {
		w.filter[i] = make([]uint64, fbits/64)
		w.ctrl[i] = make([]uint64, groups)
		w.keys[i] = make([]byte, groups*8*n)
		if keepTags {
			w.tags[i] = make([]byte, groups*8*16)
			w.tagged[i] = make([]bool, groups*8)
		}
	}
	return w
}

func (w *window) memoryBytes() int {
	total := 0
	for i := range w.ctrl {
		total += 8*len(w.ctrl[i]) + len(w.keys[i]) + len(w.tags[i]) + len(w.tagged[i]) + 8*len(w.filter[i])
	}
	return total
}

// matches has the top bit set in each byte of c equal to b (and, rarely, in a
// byte just above one: every match is confirmed against the stored nonce).
func matches(c uint64, b uint8) uint64 {
	x := c ^ (lsbs * uint64(b))
	return (x - lsbs) &^ x & msbs
}

// empties has the top bit set in each empty (zero) byte of c.
func empties(c uint64) uint64 {
	return ^c & msbs
}

func (w *window) equal(t int, slot uint64, nonce []byte) bool {
	k := w.keys[t][int(slot)*w.n : int(slot)*w.n+w.n]
	n := w.n
	// Nonces are 8 to 24 bytes: compare in words (the last word overlapping).
	if binary.LittleEndian.Uint64(k) != binary.LittleEndian.Uint64(nonce) ||
		binary.LittleEndian.Uint64(k[n-8:]) != binary.LittleEndian.Uint64(nonce[n-8:]) {
		return false
	}
	return n <= 16 || binary.LittleEndian.Uint64(k[8:]) == binary.LittleEndian.Uint64(nonce[8:])
}

// mayHold is false when nonce (of hash h) is surely not in table t. The bits
// used are neither the group index (low bits) nor the tag (top 7).
func (w *window) mayHold(t int, h uint64) bool {
	b := (h >> 20) & w.fmask
	return w.filter[t][b>>6]&(1<<(b&63)) != 0
}

// find looks nonce up in table t: its slot, or the empty slot where it goes.
func (w *window) find(t int, nonce []byte, h uint64) (slot uint64, ok bool) {
	tag := uint8(h>>57) | 0x80
	g := h & w.gmask
	ctrl := w.ctrl[t]
	for {
		c := ctrl[g]
		for m := matches(c, tag); m != 0; m &= m - 1 {
			s := g*8 + uint64(bits.TrailingZeros64(m)>>3)
			if w.equal(t, s, nonce) {
				return s, true
			}
		}
		if e := empties(c); e != 0 {
			return g*8 + uint64(bits.TrailingZeros64(e)>>3), false
		}
		g = (g + 1) & w.gmask
	}
}

func (w *window) tagOf(t int, s uint64) []byte {
	if w.tagged[t] == nil || !w.tagged[t][s] {
		return nil
	}
	return w.tags[t][s*16 : s*16+16]
}

// checkAndInsert reports whether nonce is remembered (with the tag of its
// first message, if recorded); if not, remembers it.
func (w *window) checkAndInsert(nonce []byte, h uint64) (p wpos, seen bool, tag []byte) {
	if w.count == w.capacity {
		older := 1 - w.cur
		clear(w.ctrl[older])
		clear(w.filter[older])
		if w.tagged[older] != nil {
			clear(w.tagged[older])
		}
		w.epoch++
		w.epochs[older] = w.epoch
		w.cur, w.count = older, 0
	}
	if w.mayHold(1-w.cur, h) {
		if s, ok := w.find(1-w.cur, nonce, h); ok {
			return wpos{1 - w.cur, s}, true, w.tagOf(1-w.cur, s)
		}
	}
	s, ok := w.find(w.cur, nonce, h) // also the empty slot to insert into
	if ok {
		return wpos{w.cur, s}, true, w.tagOf(w.cur, s)
	}
	g, i := s/8, s%8
	w.ctrl[w.cur][g] |= uint64(uint8(h>>57)|0x80) << (8 * i)
	copy(w.keys[w.cur][int(s)*w.n:], nonce)
	b := (h >> 20) & w.fmask
	w.filter[w.cur][b>>6] |= 1 << (b & 63)
	w.count++
	return wpos{w.cur, s}, false, nil
}

// setTag records the tag sealed under the nonce at p, if it is still there.
func (w *window) setTag(p wpos, nonce, tag []byte) {
	if w.tagged[p.table] == nil || w.ctrl[p.table][p.slot/8]>>(8*(p.slot%8))&0x80 == 0 || !w.equal(p.table, p.slot, nonce) {
		return
	}
	copy(w.tags[p.table][p.slot*16:p.slot*16+16], tag)
	w.tagged[p.table][p.slot] = true
}
