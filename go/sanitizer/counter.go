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
type counterTrack struct {
	width  uint64 // a power of two
	high   atomic.Uint64
	holes  []atomic.Uint64
	mu     sync.Mutex
	tags   []byte // width * 16, when identical messages are allowed
	tagged []bool
	slow   bool // every call takes the lock
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
