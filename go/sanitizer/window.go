package sanitizer

import "encoding/binary"

// window is one shard's exact memory of at least the last `capacity` nonces it
// saw, in two generations of an open-addressing table. Nonces go into the
// current table; once it holds `capacity` of them the older table is cleared
// and becomes current. A lookup checks both, so every nonce of the last
// `capacity` insertions (and some older ones) is found, and nothing is ever
// deleted from a table: no tombstones, no backward shifts, no ring.
//
// Each table has 2·capacity slots (at most half full); a slot is
// [meta uint32][nonce][pad] in one stride, meta = 0 when empty, else
// 1<<31 | 31 bits of the nonce's keyed hash.
//
// Everything remembered was really sealed, so remembering more than
// `capacity` never makes a false positive.
type window struct {
	n        int // nonce length
	stride   int
	tables   [2][]byte
	cur      int // index of the current table
	count    int // nonces in the current table
	capacity int
	mask     uint64
	tags     [2][]byte // 16 bytes a slot, when identical messages are allowed
	tagged   [2][]bool
}

func newWindow(capacity, n int, keepTags bool) *window {
	slots := 1
	for slots < 2*capacity {
		slots <<= 1
	}
	stride := (4 + n + 7) &^ 7
	w := &window{n: n, stride: stride, capacity: capacity, mask: uint64(slots - 1)}
	for i := range w.tables {
		w.tables[i] = make([]byte, slots*stride)
		if keepTags {
			w.tags[i] = make([]byte, slots*16)
			w.tagged[i] = make([]bool, slots)
		}
	}
	return w
}

func (w *window) memoryBytes() int {
	total := 0
	for i := range w.tables {
		total += len(w.tables[i]) + len(w.tags[i]) + len(w.tagged[i])
	}
	return total
}

// find looks nonce up in table t; ok with its slot, or the empty slot where
// it would go.
func (w *window) find(t int, nonce []byte, h uint64) (slot uint64, ok bool) {
	meta := uint32(h>>33) | 1<<31
	tab := w.tables[t]
	slot = h & w.mask
	for {
		e := tab[int(slot)*w.stride:]
		m := binary.LittleEndian.Uint32(e)
		if m == 0 {
			return slot, false
		}
		if m == meta && string(e[4:4+w.n]) == string(nonce) {
			return slot, true
		}
		slot = (slot + 1) & w.mask
	}
}

// A place in the window: table and slot.
type wpos struct {
	table int
	slot  uint64
}

// checkAndInsert reports whether nonce is remembered (with the tag of its
// first message, if recorded); if not, remembers it.
func (w *window) checkAndInsert(nonce []byte, h uint64) (p wpos, seen bool, tag []byte) {
	old := 1 - w.cur
	if s, ok := w.find(old, nonce, h); ok {
		return wpos{old, s}, true, w.tagOf(old, s)
	}
	s, ok := w.find(w.cur, nonce, h)
	if ok {
		return wpos{w.cur, s}, true, w.tagOf(w.cur, s)
	}
	if w.count == w.capacity {
		// The older generation is at least `capacity` insertions old: drop it.
		clear(w.tables[old])
		if w.tagged[old] != nil {
			clear(w.tagged[old])
		}
		w.cur, w.count = old, 0
		s, _ = w.find(w.cur, nonce, h)
	}
	e := w.tables[w.cur][int(s)*w.stride:]
	binary.LittleEndian.PutUint32(e, uint32(h>>33)|1<<31)
	copy(e[4:4+w.n], nonce)
	w.count++
	return wpos{w.cur, s}, false, nil
}

func (w *window) tagOf(t int, s uint64) []byte {
	if w.tagged[t] == nil || !w.tagged[t][s] {
		return nil
	}
	return w.tags[t][s*16 : s*16+16]
}

func (w *window) holds(p wpos, nonce []byte) bool {
	e := w.tables[p.table][int(p.slot)*w.stride:]
	return binary.LittleEndian.Uint32(e) != 0 && string(e[4:4+w.n]) == string(nonce)
}

// setTag records the tag sealed under the nonce at p, if it is still there.
func (w *window) setTag(p wpos, nonce, tag []byte) {
	if w.tagged[p.table] == nil || !w.holds(p, nonce) {
		return
	}
	copy(w.tags[p.table][p.slot*16:p.slot*16+16], tag)
	w.tagged[p.table][p.slot] = true
}
