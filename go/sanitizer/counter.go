package sanitizer

import (
	"sync"
	"sync/atomic"
)

// counterTrack is the counter path: exact over all history in O(1) memory, as
// IPsec's anti-replay window (RFC 4303 §3.4.3, RFC 6479). high is the highest
// value sealed plus one (0: none); holes is a circular bitmap of the width
// values below it, a set bit marking a value not sealed yet. The next value in
// order takes one load and one compare-and-swap; everything else takes the
// lock, and a jump marks high as locked while it rewrites bits.
//
// Below the window: a value leaves the window sealed unless it was a hole then
// (the fast path only reuses a slot whose value was sealed); the holes that
// leave are kept as ranges (lost, at most lostRanges; past that, everything
// from the lowest range dropped on is unknown). A value below the window is
// certainly sealed before unless it lies in a lost hole or the unknown part,
// so a counter that restarts from its first value after any number of seals
// is caught exactly (the Rust core's rule, crates/nonceforge/src/aead/counter.rs).
//
// State grows with use: the bitmap is made at the first hole (a counter that
// only goes up in order never needs it; none reads as no holes), and tags, when
// kept, grow to the highest position used.
type counterTrack struct {
	width    uint64 // a power of two
	high     atomic.Uint64
	holes    atomic.Pointer[[]atomic.Uint64]
	mu       sync.Mutex
	keepTags bool   // identical messages are allowed
	tags     []byte // 16 bytes a position, grown to the highest used
	tagged   []bool
	slow     bool // every call takes the lock
	lost     lostHoles
}

// holeWord is word w of the bitmap (0 while there is none).
func (c *counterTrack) holeWord(w int) uint64 {
	if p := c.holes.Load(); p != nil {
		return (*p)[w].Load()
	}
	return 0
}

// holesMade is the bitmap, made if need be (by lock holders only).
func (c *counterTrack) holesMade() []atomic.Uint64 {
	if p := c.holes.Load(); p != nil {
		return *p
	}
	h := make([]atomic.Uint64, c.width/64)
	c.holes.Store(&h)
	return h
}

// tagAt is the tag at position p, if one was recorded.
func (c *counterTrack) tagAt(p uint64) (*[16]byte, bool) {
	if p >= uint64(len(c.tagged)) || !c.tagged[p] {
		return nil, false
	}
	t := new([16]byte) // a repeat: off the hot path
	copy(t[:], c.tags[p*16:p*16+16])
	return t, true
}

func (c *counterTrack) clearTag(p uint64) {
	if p < uint64(len(c.tagged)) {
		c.tagged[p] = false
	}
}

// lostRanges is how many ranges of never-sealed values below the window are
// kept exactly.
const lostRanges = 64

// lostHoles: sorted, disjoint half-open ranges of values below the window that
// were never sealed, and where knowledge ends (unknown: values from
// unknownFrom up, below the window, may or may not have been sealed).
type lostHoles struct {
	ranges      [][2]uint64
	unknown     bool
	unknownFrom uint64
}

// sealedBefore says whether x, below the window, was certainly sealed.
func (l *lostHoles) sealedBefore(x uint64) bool {
	if l.unknown && x >= l.unknownFrom {
		return false
	}
	lo, hi := 0, len(l.ranges)
	for lo < hi { // the first range whose end is above x
		m := (lo + hi) / 2
		if l.ranges[m][1] <= x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo == len(l.ranges) || l.ranges[lo][0] > x
}

// add records [lo, hi) as never sealed (in increasing order: the window only
// moves up).
func (l *lostHoles) add(lo, hi uint64) {
	if lo >= hi || (l.unknown && lo >= l.unknownFrom) {
		return
	}
	n := len(l.ranges)
	switch {
	case n > 0 && l.ranges[n-1][1] >= lo:
		l.ranges[n-1][1] = max(l.ranges[n-1][1], hi)
	case n == lostRanges:
		l.unknown, l.unknownFrom = true, lo
	default:
		l.ranges = append(l.ranges, [2]uint64{lo, hi})
	}
}

const (
	counterLocked = 1 << 63
	// counterLimit: larger values are not treated as counters.
	counterLimit = 1 << 62
)

type counterSeen int

const (
	counterNew counterSeen = iota
	counterAgain
	counterTooOld
)

func newCounterTrack(width int, keepTags, slow bool) *counterTrack {
	w := uint64(64)
	for w < uint64(width) {
		w <<= 1
	}
	return &counterTrack{width: w, keepTags: keepTags, slow: slow || keepTags}
}

func (c *counterTrack) memoryBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	holes := 0
	if p := c.holes.Load(); p != nil {
		holes = 8 * len(*p)
	}
	return holes + cap(c.tags) + cap(c.tagged)
}

func (c *counterTrack) bit(x uint64) (int, uint64) {
	p := x & (c.width - 1)
	return int(p / 64), 1 << (p % 64)
}

// tryFast takes x if it is the next value in order and its slot holds no
// hole: one load of each word and one compare-and-swap (x == h also means
// high is not locked, as x < counterLimit).
func (c *counterTrack) tryFast(x uint64) bool {
	h := c.high.Load()
	if h == 0 || x != h {
		return false
	}
	p := x & (c.width - 1)
	return c.holeWord(int(p>>6))&(1<<(p&63)) == 0 && c.high.CompareAndSwap(h, h+1)
}

func (c *counterTrack) checkAndInsert(x uint64) (counterSeen, *[16]byte) {
	if !c.slow {
		h := c.high.Load()
		if h != 0 && x == h && h&counterLocked == 0 {
			w, b := c.bit(x)
			if c.holeWord(w)&b == 0 && c.high.CompareAndSwap(h, h+1) {
				return counterNew, nil
			}
		}
	}
	return c.slowPath(x)
}

func (c *counterTrack) slowPath(x uint64) (counterSeen, *[16]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		h := c.high.Load() // only lock holders set counterLocked
		if h != 0 && x < h {
			if h-1-x >= c.width {
				if c.lost.sealedBefore(x) {
					return counterAgain, nil
				}
				return counterTooOld, nil
			}
			w, b := c.bit(x)
			if p := c.holes.Load(); p != nil && (*p)[w].And(^b)&b != 0 {
				c.clearTag(x & (c.width - 1))
				return counterNew, nil
			}
			t, _ := c.tagAt(x & (c.width - 1))
			return counterAgain, t
		}
		if !c.high.CompareAndSwap(h, h|counterLocked) {
			continue // a fast path moved high: decide again
		}
		from := h
		c.loseLeaving(from, x)
		if x-from >= c.width {
			holes := c.holesMade()
			for i := range holes {
				holes[i].Store(^uint64(0))
			}
		} else if from < x {
			holes := c.holesMade()
			for v := from; v < x; v++ {
				w, b := c.bit(v)
				holes[w].Or(b)
			}
		}
		if p := c.holes.Load(); p != nil {
			w, b := c.bit(x)
			(*p)[w].And(^b)
		}
		if len(c.tagged) > 0 {
			span := min(x-from+1, c.width)
			for v := x + 1 - span; v <= x; v++ {
				c.clearTag(v & (c.width - 1))
			}
		}
		c.high.Store(x + 1)
		return counterNew, nil
	}
}

// loseLeaving records, before a jump from high = from to x rewrites the
// bitmap, the holes among the values whose slots [from, x] take over (they
// leave the window), and the holes the jump opens below its new window.
func (c *counterTrack) loseLeaving(from, x uint64) {
	leaveHi := uint64(0)
	if x+1 > c.width {
		leaveHi = x + 1 - c.width
	}
	leaveLo := uint64(0)
	if from > c.width {
		leaveLo = from - c.width
	}
	if leaveHi <= leaveLo || (c.lost.unknown && leaveLo >= c.lost.unknownFrom) {
		return
	}
	end := min(leaveHi, from)
	run, inRun := uint64(0), false
	for v := leaveLo; v < end; {
		w, b := c.bit(v)
		word := c.holeWord(w)
		if word == 0 && v%64 == 0 && v+64 <= end { // a whole word without holes
			if inRun {
				c.lost.add(run, v)
				inRun = false
			}
			v += 64
			continue
		}
		hole := word&b != 0
		if hole && !inRun {
			run, inRun = v, true
		} else if !hole && inRun {
			c.lost.add(run, v)
			inRun = false
		}
		v++
	}
	if inRun {
		c.lost.add(run, end)
	}
	c.lost.add(from, leaveHi)
}

func (c *counterTrack) setTag(x uint64, tag []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.high.Load() &^ counterLocked
	if !c.keepTags || h == 0 || x >= h || h-1-x >= c.width {
		return
	}
	p := x & (c.width - 1)
	if p >= uint64(len(c.tagged)) {
		n := uint64(firstLimit)
		for n <= p {
			n <<= 1
		}
		n = min(n, c.width)
		c.tags = append(c.tags, make([]byte, int(n)*16-len(c.tags))...)
		c.tagged = append(c.tagged, make([]bool, int(n)-len(c.tagged))...)
	}
	copy(c.tags[p*16:p*16+16], tag)
	c.tagged[p] = true
}

func (c *counterTrack) forget(x uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.high.Load() &^ counterLocked
	if h != 0 && x < h && h-1-x < c.width {
		w, b := c.bit(x)
		c.holesMade()[w].Or(b)
	}
}
