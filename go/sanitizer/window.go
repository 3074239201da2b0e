package sanitizer

// window is one shard's exact memory of the last `capacity` nonces it saw: a
// ring of nonces (oldest evicted first) and an open-addressing index over it.
//
// An index slot holds fp<<24 | (position+1), where fp is 40 bits of the
// nonce's keyed hash and also gives the home slot (fp & mask), so probes and
// backward-shift deletion never touch the ring except to confirm a match.
type window struct {
	n        int      // nonce length
	nonces   []byte   // capacity * n
	slotOf   []uint32 // ring position -> index slot (noSlot: empty)
	index    []uint64 // 0: empty
	mask     uint64
	head     int
	tags     []byte // capacity * 16, when identical messages are allowed
	tagged   []bool
	capacity int
}

const noSlot = ^uint32(0)

// maxWindow keeps position+1 within the slot's 24 low bits.
const maxWindow = 1<<24 - 1

func newWindow(capacity, n int, keepTags bool) *window {
	slots := 1
	for slots < 2*capacity {
		slots <<= 1
	}
	w := &window{
		n:        n,
		nonces:   make([]byte, capacity*n),
		slotOf:   make([]uint32, capacity),
		index:    make([]uint64, slots),
		mask:     uint64(slots - 1),
		capacity: capacity,
	}
	for i := range w.slotOf {
		w.slotOf[i] = noSlot
	}
	if keepTags {
		w.tags = make([]byte, capacity*16)
		w.tagged = make([]bool, capacity)
	}
	return w
}

func (w *window) memoryBytes() int {
	return len(w.nonces) + 4*len(w.slotOf) + 8*len(w.index) + len(w.tags) + len(w.tagged)
}

func (w *window) nonceAt(pos int) []byte { return w.nonces[pos*w.n : (pos+1)*w.n] }

func (w *window) find(nonce []byte, fp uint64) (slot uint64, pos int, ok bool) {
	slot = fp & w.mask
	for {
		v := w.index[slot]
		if v == 0 {
			return 0, 0, false
		}
		if v>>24 == fp {
			p := int(v&(1<<24-1)) - 1
			if string(w.nonceAt(p)) == string(nonce) {
				return slot, p, true
			}
		}
		slot = (slot + 1) & w.mask
	}
}

// checkAndInsert reports whether nonce was remembered (with its tag, if
// recorded); if not, remembers it and returns its ring position.
func (w *window) checkAndInsert(nonce []byte, h uint64) (pos int, seen bool, tag []byte) {
	fp := h >> 24
	if _, p, ok := w.find(nonce, fp); ok {
		if w.tagged != nil && w.tagged[p] {
			return p, true, w.tags[p*16 : p*16+16]
		}
		return p, true, nil
	}
	pos = w.head
	if s := w.slotOf[pos]; s != noSlot {
		w.unindex(uint64(s))
	}
	copy(w.nonceAt(pos), nonce)
	if w.tagged != nil {
		w.tagged[pos] = false
	}
	slot := fp & w.mask
	for w.index[slot] != 0 {
		slot = (slot + 1) & w.mask
	}
	w.index[slot] = fp<<24 | uint64(pos+1)
	w.slotOf[pos] = uint32(slot)
	w.head++
	if w.head == w.capacity {
		w.head = 0
	}
	return pos, false, nil
}

// setTag records the tag sealed under the nonce at pos, if it is still there.
func (w *window) setTag(pos int, nonce, tag []byte) {
	if w.tagged == nil || w.slotOf[pos] == noSlot || string(w.nonceAt(pos)) != string(nonce) {
		return
	}
	copy(w.tags[pos*16:pos*16+16], tag)
	w.tagged[pos] = true
}

// forget removes the nonce at pos (a seal that failed before any output).
func (w *window) forget(pos int, nonce []byte) {
	if s := w.slotOf[pos]; s != noSlot && string(w.nonceAt(pos)) == string(nonce) {
		w.unindex(uint64(s))
	}
}

// unindex empties a slot by backward-shift deletion, so every remaining entry
// stays reachable from its home slot.
func (w *window) unindex(hole uint64) {
	w.slotOf[int(w.index[hole]&(1<<24-1))-1] = noSlot
	j := hole
	for {
		j = (j + 1) & w.mask
		v := w.index[j]
		if v == 0 {
			break
		}
		home := (v >> 24) & w.mask
		var between bool
		if hole <= j {
			between = hole < home && home <= j
		} else {
			between = hole < home || home <= j
		}
		if !between {
			w.index[hole] = v
			w.slotOf[int(v&(1<<24-1))-1] = uint32(hole)
			hole = j
		}
	}
	w.index[hole] = 0
}
