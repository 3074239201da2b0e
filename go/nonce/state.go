package nonce

import (
	"context"
	"time"
)

// Issuing or stopped: the generator's clock (the wall clock at New plus
// monotonic time since), its waits for the clock, the deadline a lease moves,
// and Disable/Enable. Every call that issues passes check (the state word) and
// reads the clock through nowTs, which stops the generator past its deadline.

// nowMs is the clock in Unix ms: the wall clock at New plus monotonic time
// since (the system clock: read about once a millisecond, the TSC telling
// when the millisecond may have ended, as in the Rust core).
func (g *Generator) nowMs() uint64 {
	if g.tk != nil {
		return g.tk.UnixMilli()
	}
	return g.wall0 + uint64((g.clock.Monotonic()-g.mono0)/time.Millisecond)
}

// untilMs is the time left until Unix millisecond ms begins (<= 0: it has).
func (g *Generator) untilMs(ms uint64) time.Duration {
	if g.tk != nil {
		return time.Duration(int64(ms)*1e6 - g.tk.UnixNano())
	}
	el := g.clock.Monotonic() - g.mono0
	if ms <= g.wall0 {
		return 0
	}
	return time.Duration(ms-g.wall0)*time.Millisecond - el
}

// waitForContext is waitFor in steps of at most 10 ms, stopping early with
// ctx.Err() when ctx ends.
func (g *Generator) waitForContext(ctx context.Context, ms uint64) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := g.untilMs(ms)
		if left <= 0 {
			return nil
		}
		g.clock.Sleep(min(left, 10*time.Millisecond))
	}
}

// waitFor sleeps until Unix millisecond ms has begun (a wait counted in Stats).
func (g *Generator) waitFor(ms uint64) {
	left := g.untilMs(ms)
	if left <= 0 {
		return
	}
	from := g.clock.Monotonic()
	for left > 0 {
		g.clock.Sleep(left)
		left = g.untilMs(ms)
	}
	g.counts.throttled.Add(1)
	g.counts.throttledNs.Add(uint64(g.clock.Monotonic() - from))
}

// nowTs is the clock in ms since the epoch; past the deadline it stops the generator.
func (g *Generator) nowTs() (uint64, error) {
	now := g.nowMs()
	if now > g.validUntil.Load() {
		g.state.Or(stoppedPastDeadline)
		return 0, g.refuse(refusedDeadline, ErrDisabled)
	}
	ts := now - g.epoch
	if ts >= timestampEnd {
		return 0, g.refuse(refusedEpochExhausted, &Error{Op: "Next", Rule: "the 42-bit timestamp range of this epoch has ended", Err: ErrExhausted})
	}
	return ts, nil
}

// Disable stops issuing: every call returns ErrDisabled until Enable.
func (g *Generator) Disable() { g.state.Or(stoppedByUser) }

// Enable resumes issuing after Disable. A generator stopped by its deadline
// (SetValidUntil) stays stopped.
func (g *Generator) Enable() { g.state.And(^uint32(stoppedByUser)) }

// Enabled reports whether the generator issues (neither disabled nor past its deadline).
func (g *Generator) Enabled() bool { return g.state.Load() == stateLive }

// SetValidUntil sets a deadline: the generator issues no nonce whose timestamp
// is later than unixMs (on its own clock), and stops — every call returns
// ErrDisabled — the first time it finds its clock past it; a negative value
// removes it. A deadline later than the clock resumes a generator its previous
// deadline had stopped. This is how a lease holds a generator: each renewal
// moves the deadline, and a process paused past it issues nothing when it wakes.
//
// As in the Rust core, the deadline costs nothing per nonce: it is checked
// where the generator reads its clock anyway — each sortable nonce, each new
// millisecond of 64-bit counters, each Fill, each block a Local reserves —
// and between those by CheckDeadline, which a lease calls from a timer at the
// deadline. Until one of those finds the clock past it, single 96- and 128-bit
// counter (and encrypted) nonces are still issued; their timestamps lie at or
// below the last reading that passed, so never above the deadline.
func (g *Generator) SetValidUntil(unixMs int64) {
	until := ^uint64(0)
	if unixMs >= 0 {
		until = uint64(unixMs)
	}
	g.validUntil.Store(until)
	if g.nowMs() <= until {
		g.state.And(^uint32(stoppedPastDeadline))
	} else {
		g.state.Or(stoppedPastDeadline)
	}
}

// ClockUnixMilli is the generator's clock (Unix ms): no nonce it has issued
// carries a later timestamp than this reading, except counter nonces of a
// burst drawn from banked idle time, which never pass the clock either.
func (g *Generator) ClockUnixMilli() int64 { return int64(g.nowMs()) }

func (g *Generator) check() error {
	if g.state.Load() != stateLive {
		return g.stopErr()
	}
	return nil
}

// stopErr is why a generator that is not live issues nothing (a refusal,
// counted). Out of line, so that check, on every call's path, stays small
// enough to inline.
//
//go:noinline
func (g *Generator) stopErr() error {
	if g.state.Load()&stateLive == 0 {
		return ErrNotBuilt
	}
	return g.refuseErr(ErrDisabled)
}

func (g *Generator) checkDeadline() error {
	if g.validUntil.Load() != ^uint64(0) {
		_, err := g.nowTs()
		return err
	}
	return nil
}

// CheckDeadline reads the clock and stops the generator if it is past its
// deadline (SetValidUntil); it returns ErrDisabled when the generator does not
// issue. A lease calls it from a timer at the deadline.
func (g *Generator) CheckDeadline() error {
	// Not a refusal (no nonce was asked for): nothing is counted.
	if until := g.validUntil.Load(); until != ^uint64(0) && g.nowMs() > until {
		g.state.Or(stoppedPastDeadline)
	}
	switch st := g.state.Load(); {
	case st&stateLive == 0:
		return ErrNotBuilt
	case st != stateLive:
		return ErrDisabled
	}
	return nil
}
