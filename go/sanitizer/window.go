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
// Grown with use: a window holds nothing until its first nonce (a key whose
// nonces all take the counter path never allocates one); its first table
// holds firstLimit nonces and doubles (every nonce re-inserted) each time it
// fills, until it holds `capacity`; the older generation is made at the first
// swap. Until then nothing was ever dropped, so every size remembers all it
// saw: the detection is the same at every size, and a key that seals a few
// messages holds a few hundred bytes.
//
// A table is groups of 8 slots with one control word per group: a byte a slot,
// 0 when empty, else 0x80 | 7 bits of the hash. A probe compares the 8 bytes at
// once (SWAR), so it rarely branches on a single slot; with tables at most half
// full it almost always ends in the first group. Measured against linear
// probing with one branch a slot: see bench/RESULTS.md.
type window struct {
	n        int
	t        [2]table
	cur      int
	count    int
	limit    int // count at which the current table is full
	capacity int
	keepTags bool
	hash     func([]byte) uint64 // what callers hash with, to re-insert
}

// table is one generation.
type table struct {
	ctrl   []uint64
	keys   []byte // group*8+slot -> nonce
	gmask  uint64
	tags   []byte // 16 bytes a slot, when identical messages are allowed
	tagged []bool
	// filter: one bit per bucket of 16 × the nonces the table holds; clear
	// means "not in this table", so a fresh nonce usually probes neither.
	filter []uint64
	fmask  uint64
}

// firstLimit is how many nonces a window's first table holds.
const firstLimit = 8

// wpos is where a nonce went: generation and slot.
type wpos struct {
	table int
	slot  uint64
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// newWindow remembers at least the last capacity nonces hashed by hash; it
// allocates nothing until the first.
func newWindow(capacity, n int, keepTags bool, hash func([]byte) uint64) *window {
	return &window{n: n, capacity: capacity, keepTags: keepTags, hash: hash}
}

// makeTable sizes a table for limit nonces: at most half full.
func makeTable(limit, n int, keepTags bool) table {
	groups := 1
	for groups*8 < 2*limit {
		groups <<= 1
	}
	fbits := 64
	for fbits < 16*limit {
		fbits <<= 1
	}
	t := table{
		ctrl: make([]uint64, groups), keys: make([]byte, groups*8*n), gmask: uint64(groups - 1),
		filter: make([]uint64, fbits/64), fmask: uint64(fbits - 1),
	}
	if keepTags {
		t.tags = make([]byte, groups*8*16)
		t.tagged = make([]bool, groups*8)
	}
	return t
}

func (w *window) memoryBytes() int {
	total := 0
	for i := range w.t {
		t := &w.t[i]
		total += 8*len(t.ctrl) + len(t.keys) + len(t.tags) + len(t.tagged) + 8*len(t.filter)
	}
	return total
}

// grow doubles the current table (or makes the first), re-inserting what it
// holds with its tags; the older table is empty until the first swap.
func (w *window) grow() {
	limit := min(max(w.limit*2, firstLimit), w.capacity)
	old := w.t[w.cur]
	w.t[w.cur] = makeTable(limit, w.n, w.keepTags)
	w.limit = limit
	for g, c := range old.ctrl {
		for i := range 8 {
			if c>>(8*i)&0x80 == 0 {
				continue
			}
			s := uint64(g*8 + i)
			nonce := old.keys[int(s)*w.n : int(s)*w.n+w.n]
			d := w.insert(w.cur, nonce, w.hash(nonce))
			if old.tagged != nil && old.tagged[s] {
				copy(w.t[w.cur].tags[d*16:d*16+16], old.tags[s*16:s*16+16])
				w.t[w.cur].tagged[d] = true
			}
		}
	}
}

// insert puts nonce (not in table t) into t.
func (w *window) insert(t int, nonce []byte, h uint64) uint64 {
	s, _ := w.find(t, nonce, h)
	w.place(t, s, nonce, h)
	return s
}

// place writes nonce into the empty slot s of table t.
func (w *window) place(t int, s uint64, nonce []byte, h uint64) {
	tb := &w.t[t]
	g, i := s/8, s%8
	tb.ctrl[g] |= uint64(uint8(h>>57)|0x80) << (8 * i)
	copy(tb.keys[int(s)*w.n:], nonce)
	b := (h >> 20) & tb.fmask
	tb.filter[b>>6] |= 1 << (b & 63)
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
	k := w.t[t].keys[int(slot)*w.n : int(slot)*w.n+w.n]
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
	tb := &w.t[t]
	if tb.filter == nil {
		return false // not made yet
	}
	b := (h >> 20) & tb.fmask
	return tb.filter[b>>6]&(1<<(b&63)) != 0
}

// find looks nonce up in table t: its slot, or the empty slot where it goes.
func (w *window) find(t int, nonce []byte, h uint64) (slot uint64, ok bool) {
	tag := uint8(h>>57) | 0x80
	tb := &w.t[t]
	g := h & tb.gmask
	ctrl := tb.ctrl
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
		g = (g + 1) & tb.gmask
	}
}

func (w *window) tagOf(t int, s uint64) []byte {
	tb := &w.t[t]
	if tb.tagged == nil || !tb.tagged[s] {
		return nil
	}
	return tb.tags[s*16 : s*16+16]
}

// checkAndInsert reports whether nonce is remembered (with the tag of its
// first message, if recorded); if not, remembers it.
func (w *window) checkAndInsert(nonce []byte, h uint64) (p wpos, seen bool, tag []byte) {
	if w.count == w.limit {
		w.full()
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
	w.place(w.cur, s, nonce, h)
	w.count++
	return wpos{w.cur, s}, false, nil
}

// full handles a full current table: it doubles while smaller than the
// capacity, else the generations swap (the older one is cleared, or made at
// the first swap).
func (w *window) full() {
	if w.limit < w.capacity {
		w.grow()
		return
	}
	older := 1 - w.cur
	if w.t[older].ctrl == nil {
		w.t[older] = makeTable(w.capacity, w.n, w.keepTags)
	} else {
		tb := &w.t[older]
		clear(tb.ctrl)
		clear(tb.filter)
		if tb.tagged != nil {
			clear(tb.tagged)
		}
	}
	w.cur, w.count = older, 0
}

// setTag records the tag sealed under the nonce at p, if it is still there
// (looked up again if its table grew meanwhile).
func (w *window) setTag(p wpos, nonce, tag []byte) {
	tb := &w.t[p.table]
	if tb.tagged == nil {
		return
	}
	s := p.slot
	if s >= uint64(len(tb.tagged)) || tb.ctrl[s/8]>>(8*(s%8))&0x80 == 0 || !w.equal(p.table, s, nonce) {
		var ok bool
		if s, ok = w.find(p.table, nonce, w.hash(nonce)); !ok {
			return
		}
	}
	copy(tb.tags[s*16:s*16+16], tag)
	tb.tagged[s] = true
}
