// Package scratch lends 16-byte blocks for cipher.Block calls.
//
// A slice handed to an interface method escapes, so a block on the stack
// passed to cipher.Block.Encrypt becomes a heap allocation per call. A
// sync.Pool avoids it, but a Get/Put pair costs as much as the AES call
// itself. A Blocks lends one of a few blocks it owns with one compare-and-swap
// (figures: bench/RESULTS.md, "The measurements behind the code"); callers
// spread over the slots by a
// hint (a counter tick, an id), and when every slot is busy it falls back to
// the pool.
package scratch

import (
	"sync"
	"sync/atomic"
)

const slots = 8

type slot struct {
	busy atomic.Uint32
	b    [16]byte
	_    [44]byte // a cache line each: callers on other cores do not share one
}

// Blocks is a set of blocks to lend; the zero value is ready. Safe for
// concurrent use.
type Blocks struct {
	s [slots]slot
}

var pool = sync.Pool{New: func() any { return new([16]byte) }}

// Loan is a lent block; give it back with Return.
type Loan struct {
	B    *[16]byte
	slot *slot
}

// Get lends a block (its contents are undefined).
func (bs *Blocks) Get(hint uint64) Loan {
	for j := range uint64(slots) {
		s := &bs.s[(hint+j)%slots]
		if s.busy.CompareAndSwap(0, 1) {
			return Loan{B: &s.b, slot: s}
		}
	}
	return Loan{B: pool.Get().(*[16]byte)}
}

// Return gives the block back; it is cleared first (it may have held a secret
// or a plaintext).
func (l Loan) Return() {
	*l.B = [16]byte{}
	if l.slot != nil {
		l.slot.busy.Store(0)
		return
	}
	pool.Put(l.B)
}
