package sanitizer

import (
	"encoding/binary"
	"math/bits"
)

// window is one shard's exact memory of at least the last `capacity` nonces it
// saw, in two generations (sides). Nonces go into the current side; once it
// holds `capacity`, the older side is cleared and becomes current. A lookup
// checks both, so every nonce among the last `capacity` insertions is found;
// nothing is deleted one by one (no tombstones), and everything remembered
// was really sealed, so remembering more than `capacity` never makes a false
// positive.
//
// Grown with use: a window holds nothing until its first nonce (a key whose
// nonces all take the counter path never allocates one); its first side holds
// firstLimit nonces and doubles each time it fills, until it holds
// `capacity`; the second side is made at the first swap. Until then nothing
// was ever dropped, so every size remembers all it saw: the detection is the
// same at every size, and a key that seals a few messages holds a few hundred
// bytes.
//
// A side keeps its nonces in the order they came (entries: appended, so the
// line written is the one the last insert wrote). One SwissTable indexes both
// sides: a hash picks a pair, one cache line holding that group of 8 slots for
// each side — a control word (a byte a slot, 0 when empty, else 0x80 | 7 bits
// of the hash) and the slots' entry numbers. A probe compares 8 control bytes
// at once (SWAR); with each side's slots at most half full it almost always
// ends in the first group, so a fresh nonce reads and writes one line and
// appends its entry. Measured against earlier layouts (nonces in the slots, a
// filter beside each table; a line a side): see bench/RESULTS.md.
type window struct {
	// What a fresh nonce's insert reads comes first: after the shard's lock
	// and budget, it takes two cache lines (measured: bench/RESULTS.md).
	cur   int // the side new nonces go to
	limit int // entries at which the current side is full
	n     int
	pairs []pair
	gmask uint64
	keys  []byte // the current side's (side[cur].keys)
	used  int    // the current side's entries (the older side holds capacity, once made)
	wide  bool   // hi is made

	capacity int
	keepTags bool
	hash     func([]byte) uint64 // what callers hash with, to re-insert
	// hi: entry bits above 16, two bytes a slot (one a side), for windows of
	// more than 65536 nonces; nil for the others.
	hi   []uint8
	side [2]side
}

// side is one generation's nonces.
type side struct {
	keys   []byte // entry*n -> nonce, in insertion order
	tags   []byte // 16 bytes an entry, when identical messages are allowed
	tagged []bool
}

// pair is group g of both sides, in one 64-byte line (a slice of 2^k pairs is
// an allocation of a power-of-two size class: 64-byte aligned).
type pair struct {
	ctrl  [2]uint64
	entry [2][8]uint16 // the low 16 bits (hi has the rest, if any)
	_     [16]byte
}

// pairBytes is a pair's size, for memoryBytes.
const pairBytes = 64

// firstLimit is how many nonces a window's first side holds.
const firstLimit = 8

// wpos is where a nonce went: side and entry. An entry keeps its number while
// the window grows, until its side is cleared.
type wpos struct {
	table int
	entry uint64
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// tagOf is a nonce's control byte: 7 bits of its hash that are neither the
// group index (the low bits, at most 22 of them) nor the shard (the top 32).
func tagOf(h uint64) uint8 {
	return uint8(h>>24) | 0x80
}

// newWindow remembers at least the last capacity nonces hashed by hash; it
// allocates nothing until the first.
func newWindow(capacity, n int, keepTags bool, hash func([]byte) uint64) window {
	return window{n: n, capacity: capacity, keepTags: keepTags, hash: hash}
}

// makeSide holds limit nonces.
func makeSide(limit, n int, keepTags bool) side {
	s := side{keys: make([]byte, limit*n)}
	if keepTags {
		s.tags = make([]byte, limit*16)
		s.tagged = make([]bool, limit)
	}
	return s
}

func (w *window) memoryBytes() int {
	total := pairBytes*len(w.pairs) + len(w.hi)
	for i := range w.side {
		s := &w.side[i]
		total += len(s.keys) + len(s.tags) + len(s.tagged)
	}
	return total
}

// grow doubles the first side (or makes it) and the index, before the first
// swap: the entries keep their numbers (and tags), and only the index is
// built again.
func (w *window) grow() {
	limit := min(max(w.limit*2, firstLimit), w.capacity)
	old := &w.side[0]
	s := makeSide(limit, w.n, w.keepTags)
	copy(s.keys, old.keys[:w.used*w.n])
	copy(s.tags, old.tags)
	copy(s.tagged, old.tagged)
	groups := 1
	for groups*8 < 2*limit {
		groups <<= 1
	}
	w.pairs, w.gmask, w.hi = make([]pair, groups), uint64(groups-1), nil
	if limit > 1<<16 {
		w.hi = make([]uint8, groups*16)
	}
	w.wide = w.hi != nil
	w.side[0], w.keys, w.limit = s, s.keys, limit
	for e := range w.used {
		nonce := s.keys[e*w.n : e*w.n+w.n]
		h := w.hash(nonce)
		slot, _, _ := w.find(0, nonce, h)
		w.link(0, slot, h, uint64(e))
	}
}

// link puts entry e of side sd, of hash h, into its empty slot.
func (w *window) link(sd int, slot, h, e uint64) {
	p := &w.pairs[slot/8]
	p.ctrl[sd] |= uint64(tagOf(h)) << (8 * (slot % 8))
	p.entry[sd][slot%8] = uint16(e)
	if w.hi != nil {
		w.hi[slot*2+uint64(sd)] = uint8(e >> 16)
	}
}

// entryAt is the entry in slot i of pair g's side sd.
func (w *window) entryAt(sd int, g uint64, i int) uint64 {
	e := uint64(w.pairs[g].entry[sd][i])
	if w.hi != nil {
		e |= uint64(w.hi[(g*8+uint64(i))*2+uint64(sd)]) << 16
	}
	return e
}

// add appends nonce, of hash h, to the current side, indexed at its empty slot.
func (w *window) add(slot uint64, nonce []byte, h uint64) uint64 {
	e, n := w.used, w.n
	putKey(w.keys[e*n:e*n+n], nonce)
	w.link(w.cur, slot, h, uint64(e))
	w.used++
	return uint64(e)
}

// putKey copies a nonce of 8 to 24 bytes in words, the way equal reads it
// (a copy call costs more than the rest of an insert).
func putKey(k, nonce []byte) {
	n := len(k)
	binary.LittleEndian.PutUint64(k, binary.LittleEndian.Uint64(nonce))
	if n > 16 {
		binary.LittleEndian.PutUint64(k[8:], binary.LittleEndian.Uint64(nonce[8:]))
	}
	binary.LittleEndian.PutUint64(k[n-8:], binary.LittleEndian.Uint64(nonce[n-8:]))
}

// equal: the key k (a stored nonce) is nonce.
func equal(k, nonce []byte) bool {
	n := len(k)
	// Nonces are 8 to 24 bytes: compare in words (the last word overlapping).
	if binary.LittleEndian.Uint64(k) != binary.LittleEndian.Uint64(nonce) ||
		binary.LittleEndian.Uint64(k[n-8:]) != binary.LittleEndian.Uint64(nonce[n-8:]) {
		return false
	}
	return n <= 16 || binary.LittleEndian.Uint64(k[8:]) == binary.LittleEndian.Uint64(nonce[8:])
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

// absent: a group's control word c shows that no nonce of this tag is in its
// side (no slot of the tag, and an empty slot to end the probe). An empty
// side's words are 0: absent.
func absent(c uint64, tag uint8) bool {
	return matches(c, tag) == 0 && empties(c) != 0
}

// find looks nonce up in side sd: its entry, or (not found) the empty slot
// where it goes.
func (w *window) find(sd int, nonce []byte, h uint64) (slot, entry uint64, ok bool) {
	tag := tagOf(h)
	g := h & w.gmask
	keys, n := w.side[sd].keys, w.n
	for {
		c := w.pairs[g].ctrl[sd]
		for m := matches(c, tag); m != 0; m &= m - 1 {
			e := w.entryAt(sd, g, bits.TrailingZeros64(m)>>3)
			if equal(keys[int(e)*n:int(e)*n+n], nonce) {
				return 0, e, true
			}
		}
		if e := empties(c); e != 0 {
			return g*8 + uint64(bits.TrailingZeros64(e)>>3), 0, false
		}
		g = (g + 1) & w.gmask
	}
}

func (s *side) tagOf(e uint64) []byte {
	if s.tagged == nil || !s.tagged[e] {
		return nil
	}
	return s.tags[e*16 : e*16+16]
}

// checkAndInsert reports whether nonce is remembered (with the tag of its
// first message, if recorded); if not, remembers it. The common case, a fresh
// nonce whose pair shows no slot of its tag and an empty slot on each side,
// is decided here from the pair's two control words; anything else takes
// lookup.
func (w *window) checkAndInsert(nonce []byte, h uint64) (p wpos, seen bool, tag []byte) {
	if w.used != w.limit && !w.wide {
		cur := w.cur & 1
		tag := tagOf(h)
		pr := &w.pairs[h&w.gmask]
		c := pr.ctrl[cur]
		if e := empties(c); e != 0 && matches(c, tag) == 0 && absent(pr.ctrl[cur^1], tag) {
			i := bits.TrailingZeros64(e) >> 3
			u, n := w.used, w.n
			putKey(w.keys[u*n:u*n+n], nonce)
			pr.ctrl[cur] = c | uint64(tag)<<(8*i)
			pr.entry[cur][i&7] = uint16(u)
			w.used = u + 1
			return wpos{cur, uint64(u)}, false, nil
		}
	}
	return w.lookup(nonce, h)
}

// lookup is checkAndInsert's general case: a full side, a tag met, a probe
// past the first group, a window of more than 65536.
func (w *window) lookup(nonce []byte, h uint64) (p wpos, seen bool, tag []byte) {
	if w.used == w.limit {
		w.full()
	}
	old := 1 - w.cur
	if w.entries(old) != 0 {
		if _, e, ok := w.find(old, nonce, h); ok {
			return wpos{old, e}, true, w.side[old].tagOf(e)
		}
	}
	s, e, ok := w.find(w.cur, nonce, h) // also the empty slot to index it at
	if ok {
		return wpos{w.cur, e}, true, w.side[w.cur].tagOf(e)
	}
	return wpos{w.cur, w.add(s, nonce, h)}, false, nil
}

// full handles a full current side: it doubles while smaller than the
// capacity, else the sides swap (the older one is cleared, or made at the
// first swap).
func (w *window) full() {
	if w.limit < w.capacity {
		w.grow()
		return
	}
	older := 1 - w.cur
	if w.side[older].keys == nil {
		w.side[older] = makeSide(w.capacity, w.n, w.keepTags)
	} else {
		for i := range w.pairs {
			w.pairs[i].ctrl[older] = 0
		}
		clear(w.side[older].tagged)
	}
	w.cur, w.keys, w.used = older, w.side[older].keys, 0
}

// entries is how many nonces side sd holds.
func (w *window) entries(sd int) int {
	switch {
	case sd == w.cur:
		return w.used
	case w.side[sd].keys == nil:
		return 0
	default:
		return w.capacity // it became the older side full
	}
}

// setTag records the tag sealed under the nonce at p, if it is still there
// (its side may have been cleared since).
func (w *window) setTag(p wpos, nonce, tag []byte) {
	s := &w.side[p.table]
	e := p.entry
	if s.tagged == nil || e >= uint64(w.entries(p.table)) || !equal(s.keys[int(e)*w.n:int(e)*w.n+w.n], nonce) {
		return
	}
	copy(s.tags[e*16:e*16+16], tag)
	s.tagged[e] = true
}
