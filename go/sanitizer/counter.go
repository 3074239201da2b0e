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
type counterTrack struct {
	width  uint64 // a power of two
	high   atomic.Uint64
	holes  []atomic.Uint64
	mu     sync.Mutex
	tags   []byte // width * 16, when identical messages are allowed
	tagged []bool
	slow   bool // every call takes the lock
	lost   lostHoles
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
	c := &counterTrack{width: w, holes: make([]atomic.Uint64, w/64), slow: slow || keepTags}
	if keepTags {
		c.tags = make([]byte, w*16)
		c.tagged = make([]bool, w)
	}
	return c
}

func (c *counterTrack) memoryBytes() int {
	return 8*len(c.holes) + len(c.tags) + len(c.tagged)
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
	return c.holes[p>>6].Load()&(1<<(p&63)) == 0 && c.high.CompareAndSwap(h, h+1)
}

func (c *counterTrack) checkAndInsert(x uint64) (counterSeen, *[16]byte) {
	if !c.slow {
		h := c.high.Load()
		if h != 0 && x == h && h&counterLocked == 0 {
			w, b := c.bit(x)
			if c.holes[w].Load()&b == 0 && c.high.CompareAndSwap(h, h+1) {
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
			if c.holes[w].And(^b)&b != 0 {
				if c.tagged != nil {
					c.tagged[x&(c.width-1)] = false
				}
				return counterNew, nil
			}
			if c.tagged != nil && c.tagged[x&(c.width-1)] {
				p := x & (c.width - 1)
				t := new([16]byte) // a repeat: off the hot path
				copy(t[:], c.tags[p*16:p*16+16])
				return counterAgain, t
			}
			return counterAgain, nil
		}
		if !c.high.CompareAndSwap(h, h|counterLocked) {
			continue // a fast path moved high: decide again
		}
		from := h
		c.loseLeaving(from, x)
		if x-from >= c.width {
			for i := range c.holes {
				c.holes[i].Store(^uint64(0))
			}
		} else {
			for v := from; v < x; v++ {
				w, b := c.bit(v)
				c.holes[w].Or(b)
			}
		}
		w, b := c.bit(x)
		c.holes[w].And(^b)
		if c.tagged != nil {
			span := min(x-from+1, c.width)
			for v := x + 1 - span; v <= x; v++ {
				c.tagged[v&(c.width-1)] = false
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
		word := c.holes[w].Load()
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
	if c.tagged == nil || h == 0 || x >= h || h-1-x >= c.width {
		return
	}
	p := x & (c.width - 1)
	copy(c.tags[p*16:p*16+16], tag)
	c.tagged[p] = true
}

func (c *counterTrack) forget(x uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.high.Load() &^ counterLocked
	if h != 0 && x < h && h-1-x < c.width {
		w, b := c.bit(x)
		c.holes[w].Or(b)
	}
}
