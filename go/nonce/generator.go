package nonce

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nonceforge/nonceforge/go/internal/tsc"
)

// The generator's state word: stateLive once New has built it, and a stop
// bit for each reason it may not issue. A zero Generator (not made by New) is
// not live, so it issues nothing.
const (
	stateLive           = 1
	stoppedByUser       = 2
	stoppedPastDeadline = 4
)

// DefaultEpochUnixMilli is the default epoch, 2025-01-01T00:00:00Z, in Unix
// milliseconds: every generator of a cluster must use the same epoch.
const DefaultEpochUnixMilli = 1_735_689_600_000

// DefaultEpoch is the default epoch as a time.
var DefaultEpoch = time.UnixMilli(DefaultEpochUnixMilli).UTC()

// epochMilli is an epoch option in Unix ms: the zero time.Time is the
// default; otherwise a whole millisecond at or after 1970.
func epochMilli(op string, epoch time.Time) (int64, error) {
	if epoch.IsZero() {
		return DefaultEpochUnixMilli, nil
	}
	ms := epoch.UnixMilli()
	if ms < 0 || epoch.Nanosecond()%1e6 != 0 {
		return 0, &Error{Op: op, Arg: "Epoch", Rule: fmt.Sprintf("must be a whole millisecond at or after 1970-01-01T00:00:00Z, got %s", epoch.Format(time.RFC3339Nano))}
	}
	return ms, nil
}

const (
	timestampEnd = 1 << 42 // ms after the epoch: 139 years
	last128Tick  = 1<<63 - 1
	maxMachineID = 511
)

// Kind is a kind of nonce.
type Kind int

const (
	Counter   Kind = iota // strictly unique, predictable: timestamp | machine | counter
	Sortable              // increasing per generator, carries the millisecond it was made in
	Encrypted             // a counter nonce through a keyed permutation: unpredictable
)

func (k Kind) String() string {
	switch k {
	case Counter:
		return "counter"
	case Sortable:
		return "sortable"
	case Encrypted:
		return "encrypted"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Options configure a Generator.
type Options struct {
	// MachineID, unique among the live generators of the cluster, chosen on
	// purpose: Machine(n) for 0..511 (n from your plan, MachineIDFromEnv,
	// MachineIDFromHostList, or a lease: lease.Lease.Generator sets it). Its
	// zero value is no id at all, which New refuses (ErrNoMachineID): two
	// members that both fell back on a default id would repeat each other's
	// nonces.
	MachineID MachineID
	// Layout: Standard (the zero value, NoNoncense's 9-bit machine id) or
	// Wide (a 16-bit machine id, 96- and 128-bit nonces only). Every member
	// of a cluster must use the same layout.
	Layout Layout
	// Key, the base key for encrypted nonces: at least 32 bytes (nil: no
	// encrypted nonces). Never used for anything else.
	Key []byte
	// Cipher64 and Cipher128 pick the ciphers ("" = Speck64/128, AES-256).
	Cipher64  Cipher64
	Cipher128 Cipher128
	// Epoch moves the epoch: a whole millisecond, at or after the Unix epoch
	// (which is allowed: time.UnixMilli(0), the CLI's --epoch 0). The zero
	// time.Time means DefaultEpoch.
	Epoch time.Time
	// NotBeforeUnixMilli: start after this millisecond (a lease's floor; 0: none).
	NotBeforeUnixMilli int64
	// MaxWait is the longest New waits for the clock to pass NotBeforeUnixMilli
	// (0: 1 s; negative is an error); a clock further behind is an error.
	MaxWait time.Duration
	// Clock (nil: the system clock).
	Clock Clock
}

type padded struct {
	atomic.Uint64
	_ [56]byte
}

// Generator makes nonces; safe for concurrent use.
type Generator struct {
	counters   [3]padded
	sortables  [3]padded
	verifiedTs padded
	validUntil atomic.Uint64 // Unix ms; MaxUint64: none
	state      atomic.Uint32 // stateLive | stoppedByUser | stoppedPastDeadline
	machine    uint64
	layout     Layout
	k96        uint   // the 96-bit counter field's width: 45 (standard), 38 (wide)
	m96        uint64 // the machine id in place in a 96-bit nonce's last 8 bytes (machine << k96)
	m128       uint64 // the machine id in place in a 128-bit nonce's first 8 bytes
	epoch      uint64
	initTs     uint64
	clock      Clock
	tk         *tsc.Ticker // the system clock, gated by the TSC (nil: a Clock of the caller's)
	hi128      uint64      // the first 8 bytes of every 128-bit counter nonce
	wall0      uint64      // Unix ms at New
	mono0      time.Duration
	ciphers    *ciphers
	counts     *counts // slow-path figures (stats.go); nil in a zero Generator
}

// counterBits is the counter field's width at bits in this generator's layout.
func (g *Generator) counterBits(bits int) uint {
	switch bits {
	case 64:
		return 13
	case 96:
		return g.k96
	}
	return 64
}

// New builds a generator: it checks the options, waits for the millisecond
// after the current one (and after NotBeforeUnixMilli, at most MaxWait), and
// starts there.
func New(o Options) (*Generator, error) {
	return NewContext(context.Background(), o)
}

// NewContext is New with a context that can cut its wait short (the wait for
// the clock to pass NotBeforeUnixMilli); it returns ctx.Err() then.
func NewContext(ctx context.Context, o Options) (*Generator, error) {
	if !o.MachineID.set {
		return nil, &Error{Op: "New", Arg: "MachineID", Err: ErrNoMachineID,
			Rule: "not set: choose one on purpose — nonce.Machine(n) for a planned id, nonce.MachineIDFromEnv, nonce.MachineIDFromHostList, or a lease (lease.Acquire, then Lease.Generator)"}
	}
	if o.Layout != Standard && o.Layout != Wide {
		return nil, &Error{Op: "New", Arg: "Layout", Rule: fmt.Sprintf("must be Standard or Wide, got %d", int(o.Layout))}
	}
	if id := o.MachineID.id; id < 0 || id > 1<<16-1 {
		return nil, &Error{Op: "New", Arg: "MachineID", Rule: fmt.Sprintf("must be in 0..511 (0..65535 in the wide layout), got %d", id)}
	} else if id > o.Layout.MaxMachineID() {
		return nil, &Error{Op: "New", Arg: "MachineID", Rule: fmt.Sprintf("%d needs the wide layout: the standard layout's machine ids are 0..511 (9 bits); set Options.Layout to Wide (16 bits, 96- and 128-bit nonces)", id)}
	}
	epoch, err := epochMilli("New", o.Epoch)
	if err != nil {
		return nil, err
	}
	if o.NotBeforeUnixMilli < 0 {
		return nil, &Error{Op: "New", Arg: "NotBeforeUnixMilli", Rule: fmt.Sprintf("must not be negative, got %d", o.NotBeforeUnixMilli)}
	}
	if o.MaxWait < 0 {
		return nil, &Error{Op: "New", Arg: "MaxWait", Rule: fmt.Sprintf("must not be negative (0: the default, 1 s), got %v", o.MaxWait)}
	}
	g := &Generator{machine: uint64(o.MachineID.id), epoch: uint64(epoch), clock: o.Clock, counts: &counts{}}
	g.setLayout(o.Layout)
	if g.clock == nil {
		base := time.Now()
		g.clock = systemClock{base: base}
		g.tk = tsc.NewTicker(base, base.UnixNano())
	}
	if o.Key != nil {
		c, err := newCiphers(o.Key, o.Cipher64, o.Cipher128)
		if err != nil {
			return nil, err
		}
		g.ciphers = c
	}
	wall := g.clock.WallUnixMilli()
	if wall < 0 {
		return nil, &Error{Op: "New", Arg: "Clock", Rule: "the clock reads before 1970"}
	}
	g.wall0, g.mono0 = uint64(wall), g.clock.Monotonic()
	maxWait := o.MaxWait
	if maxWait == 0 {
		maxWait = time.Second
	}
	floor := max(g.wall0, uint64(o.NotBeforeUnixMilli))
	if floor-g.wall0 > uint64(maxWait.Milliseconds()) {
		return nil, &Error{Op: "New", Arg: "NotBeforeUnixMilli", Rule: fmt.Sprintf("the clock (%d) is %d ms behind the floor %d, more than MaxWait %v", g.wall0, floor-g.wall0, floor, maxWait)}
	}
	if err := g.waitForContext(ctx, floor+1); err != nil {
		return nil, err
	}
	now := g.nowMs()
	if now < g.epoch {
		return nil, &Error{Op: "New", Arg: "Epoch", Rule: fmt.Sprintf("the clock (%d) is before the epoch %d", now, g.epoch)}
	}
	if now-g.epoch >= timestampEnd {
		return nil, &Error{Op: "New", Arg: "Epoch", Rule: fmt.Sprintf("the 42-bit timestamp range of epoch %d has ended", g.epoch), Err: ErrExhausted}
	}
	g.initTs = now - g.epoch
	g.hi128 = g.initTs<<22 | g.m128
	g.verifiedTs.Store(g.initTs)
	for i, k := range []uint{13, 21, 21} {
		g.sortables[i].Store(g.initTs << k)
	}
	g.validUntil.Store(^uint64(0))
	g.state.Store(stateLive)
	return g, nil
}

// MachineID is the generator's machine id.
func (g *Generator) MachineID() int { return int(g.machine) }

// Epoch is the generator's epoch.
func (g *Generator) Epoch() time.Time { return time.UnixMilli(int64(g.epoch)).UTC() }

// StartedUnixMilli is the millisecond the generator started in.
func (g *Generator) StartedUnixMilli() int64 { return int64(g.epoch + g.initTs) }

// noKey is the error of a call that needs the base key on a generator
// without one (ErrNoKey), or on one not made by New (ErrNotBuilt, whatever
// else the call needs).
func (g *Generator) noKey(op, rule string) error {
	if g.state.Load()&stateLive == 0 {
		return ErrNotBuilt
	}
	return g.refuse(refusedNoKey, &Error{Op: op, Arg: "Key", Rule: rule, Err: ErrNoKey})
}

const needKey = "encrypted nonces need a base key: set Options.Key (at least 32 bytes)"

func badBits(op string, bits int) error {
	return &Error{Op: op, Arg: "bits", Rule: fmt.Sprintf("must be 64, 96 or 128, got %d", bits)}
}

// compose writes timestamp | machine | counter into n.
func (g *Generator) compose(n *Nonce, bits int, ts, counter uint64) {
	n.bits = uint8(bits)
	switch bits {
	case 64:
		n.hi, n.lo = ts<<22|g.machine<<13|counter, 0
	case 96:
		// 42 + 9 + 45 bits (wide: 42 + 16 + 38): the top 32 bits (bytes 0-3),
		// then 64 (bytes 4-11); the machine id sits right above the counter.
		x := ts<<54 | g.m96 | counter
		n.hi, n.lo = uint64(uint32(ts>>10))<<32|x>>32, x<<32
	default:
		n.hi, n.lo = ts<<22|g.m128, counter
	}
}

// admit makes sure the timestamp of tick t (64 and 96 bits) has begun, waiting if not.
func (g *Generator) admit(bits int, t uint64) error {
	if bits == 128 {
		if t > last128Tick {
			return g.refuse(refusedCounterExhausted, &Error{Op: "Next", Rule: "the 128-bit counter is exhausted", Err: ErrExhausted})
		}
		return nil
	}
	// (& 63: a shift Go need not check for 64 and more; k is 13, 38 or 45.)
	ts := g.initTs + t>>(g.counterBits(bits)&63)
	if ts <= g.verifiedTs.Load() {
		return nil
	}
	return g.catchUp(ts)
}

func (g *Generator) catchUp(ts uint64) error {
	if ts >= timestampEnd {
		return g.refuse(refusedEpochExhausted, &Error{Op: "Next", Rule: "the 42-bit timestamp range of this epoch has ended", Err: ErrExhausted})
	}
	now, err := g.nowTs()
	if err != nil {
		return err
	}
	if now < ts {
		if err := g.waitTs(ts); err != nil {
			return err
		}
		if now, err = g.nowTs(); err != nil {
			return err
		}
	}
	for {
		v := g.verifiedTs.Load()
		if v >= now || g.verifiedTs.CompareAndSwap(v, now) {
			return nil
		}
	}
}

// waitTs sleeps until millisecond ts (since the epoch); past the deadline: stopped.
func (g *Generator) waitTs(ts uint64) error {
	if ts+g.epoch > g.validUntil.Load() {
		g.state.Or(stoppedPastDeadline)
		return g.refuse(refusedDeadline, ErrDisabled)
	}
	g.waitFor(ts + g.epoch)
	return nil
}

// tickNonce writes tick t's counter nonce.
func (g *Generator) tickNonce(n *Nonce, bits int, t uint64) {
	if bits == 128 {
		g.compose(n, bits, g.initTs, t)
		return
	}
	k := g.counterBits(bits) & 63
	g.compose(n, bits, g.initTs+t>>k, t&(1<<k-1))
}

// Counter returns a counter nonce of 64, 96 or 128 bits.
func (g *Generator) Counter(bits int) (Nonce, error) {
	var n Nonce
	if bits == 128 {
		// The common case, kept short: one atomic add, no clock.
		if g.state.Load() != stateLive {
			return n, g.stopErr()
		}
		t := g.counters[2].Add(1) - 1
		if t > last128Tick {
			g.counts.ticksUnused[2].Add(1)
			return n, g.refuse(refusedCounterExhausted, &Error{Op: "Next", Rule: "the 128-bit counter is exhausted", Err: ErrExhausted})
		}
		return Nonce{hi: g.hi128, lo: t, bits: 128}, nil
	}
	i := g.sizeOf(bits)
	if i < 0 {
		return n, badSize("Counter", bits)
	}
	if err := g.check(); err != nil {
		return n, err
	}
	t := g.counters[i].Add(1) - 1
	if err := g.admit(bits, t); err != nil {
		g.counts.ticksUnused[i].Add(1)
		return n, err
	}
	g.tickNonce(&n, bits, t)
	return n, nil
}

// Encrypted returns an encrypted nonce (the generator needs a Key).
func (g *Generator) Encrypted(bits int) (Nonce, error) {
	if g.ciphers == nil {
		return Nonce{}, g.noKey("Encrypted", needKey)
	}
	n, err := g.Counter(bits)
	if err != nil {
		return n, err
	}
	g.ciphers.encrypt(&n)
	return n, nil
}

// Sortable returns a sortable nonce: greater than every sortable nonce of this
// size the generator returned before, carrying the millisecond it was made in
// (up to 8192 a millisecond at 64 bits, 2^21 at 96 and 128; beyond that the
// call sleeps into the next millisecond).
func (g *Generator) Sortable(bits int) (Nonce, error) {
	var n Nonce
	i := g.sizeOf(bits)
	if i < 0 {
		return n, badSize("Sortable", bits)
	}
	if err := g.check(); err != nil {
		return n, err
	}
	k := uint(21)
	if bits == 64 {
		k = 13
	}
	state := &g.sortables[i]
	for {
		now, err := g.nowTs()
		if err != nil {
			return n, err
		}
		word := state.Add(1) - 1
		t := word >> k
		if t < now {
			g.lift(i, state, now<<k)
			continue
		}
		if t > now {
			if t >= timestampEnd {
				g.counts.sortableSkipped[i].Add(1)
				return n, g.refuse(refusedEpochExhausted, &Error{Op: "Sortable", Rule: "the 42-bit timestamp range of this epoch has ended", Err: ErrExhausted})
			}
			if err := g.waitTs(t); err != nil {
				g.counts.sortableSkipped[i].Add(1)
				return n, err
			}
		}
		g.compose(&n, bits, t, word&(1<<k-1))
		return n, nil
	}
}

// lift moves a sortable word that fell behind the clock up to word to (the
// new millisecond's first), unless another call did: the word this call took
// is given up, and the words up to to are skipped; neither makes a nonce, so
// both are counted for Stats. Apart from Sortable so that its loop stays
// small (a slow path once a millisecond).
//
//go:noinline
func (g *Generator) lift(i int, state *padded, to uint64) {
	skipped := uint64(1)
	for {
		v := state.Load()
		if v >= to {
			break
		}
		if state.CompareAndSwap(v, to) {
			skipped += to - v
			break
		}
	}
	g.counts.sortableSkipped[i].Add(skipped)
}

// Next returns a nonce of the kind and size.
func (g *Generator) Next(kind Kind, bits int) (Nonce, error) {
	switch kind {
	case Counter:
		return g.Counter(bits)
	case Sortable:
		return g.Sortable(bits)
	case Encrypted:
		return g.Encrypted(bits)
	}
	return Nonce{}, &Error{Op: "Next", Arg: "kind", Rule: fmt.Sprintf("must be Counter, Sortable or Encrypted, got %d", int(kind))}
}

// Fill writes len(dst)/(bits/8) nonces back to back into dst (a whole number
// of nonces); counter and encrypted nonces come from one reservation. Nothing
// is written on error.
func (g *Generator) Fill(kind Kind, bits int, dst []byte) error {
	i := g.sizeOf(bits)
	if i < 0 {
		return badSize("Fill", bits)
	}
	size := bits / 8
	if len(dst)%size != 0 {
		return &Error{Op: "Fill", Arg: "dst", Rule: fmt.Sprintf("its length must be a multiple of %d (the nonce size), got %d", size, len(dst))}
	}
	count := uint64(len(dst) / size)
	switch kind {
	case Sortable:
		// Check first, so that nothing is half-written by the loop below failing at once.
		if err := g.check(); err != nil {
			return err
		}
		for j := range count {
			n, err := g.Sortable(bits)
			if err != nil {
				return err
			}
			a := n.array()
			copy(dst[j*uint64(size):], a[:size])
		}
		return nil
	case Counter, Encrypted:
	default:
		return &Error{Op: "Fill", Arg: "kind", Rule: fmt.Sprintf("must be Counter, Sortable or Encrypted, got %d", int(kind))}
	}
	if kind == Encrypted && g.ciphers == nil {
		return g.noKey("Fill", needKey)
	}
	if err := g.check(); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	if err := g.checkDeadline(); err != nil {
		return err
	}
	first := g.counters[i].Add(count) - count
	if err := g.admit(bits, first+count-1); err != nil {
		g.counts.ticksUnused[i].Add(count)
		return err
	}
	if kind == Counter {
		g.writeTicks(bits, first, dst)
		return nil
	}
	var n Nonce
	for j := range count {
		g.tickNonce(&n, bits, first+j)
		g.ciphers.encrypt(&n)
		a := n.array()
		copy(dst[j*uint64(size):], a[:size])
	}
	return nil
}

// writeTicks writes the counter nonces of ticks first, first+1, … into dst
// (a whole number of nonces), straight into place.
func (g *Generator) writeTicks(bits int, first uint64, dst []byte) {
	m := g.machine
	switch bits {
	case 64:
		for j := 0; j+8 <= len(dst); j += 8 {
			t := first + uint64(j/8)
			binary.BigEndian.PutUint64(dst[j:j+8], (g.initTs+t>>13)<<22|m<<13|t&0x1fff)
		}
	case 96:
		k, m96 := g.k96&63, g.m96
		mask := uint64(1)<<k - 1
		for j := 0; j+12 <= len(dst); j += 12 {
			t := first + uint64(j/12)
			ts := g.initTs + t>>k
			binary.BigEndian.PutUint32(dst[j:j+4], uint32(ts>>10))
			binary.BigEndian.PutUint64(dst[j+4:j+12], ts<<54|m96|t&mask)
		}
	default:
		hi := g.hi128
		for j := 0; j+16 <= len(dst); j += 16 {
			binary.BigEndian.PutUint64(dst[j:j+8], hi)
			binary.BigEndian.PutUint64(dst[j+8:j+16], first+uint64(j/16))
		}
	}
}

// Encrypt turns a counter nonce (8, 12 or 16 bytes) into its encrypted nonce:
// what Encrypted would have returned for it. Decrypt undoes it.
func (g *Generator) Encrypt(plain []byte) (Nonce, error) {
	if g.ciphers == nil {
		return Nonce{}, g.noKey("Encrypt", "encrypting needs the base key: set Options.Key")
	}
	n, err := FromBytes(plain)
	if err != nil {
		err.(*Error).Op = "Encrypt"
		return n, err
	}
	if n.bits == 64 && g.layout == Wide {
		return Nonce{}, wide64("Encrypt")
	}
	g.ciphers.encrypt(&n)
	return n, nil
}

// Decrypt turns an encrypted nonce back into its counter nonce.
func (g *Generator) Decrypt(encrypted []byte) (Nonce, error) {
	if g.ciphers == nil {
		return Nonce{}, g.noKey("Decrypt", "decrypting needs the base key: set Options.Key")
	}
	n, err := FromBytes(encrypted)
	if err != nil {
		err.(*Error).Op = "Decrypt"
		return n, err
	}
	if n.bits == 64 && g.layout == Wide {
		return Nonce{}, wide64("Decrypt")
	}
	g.ciphers.decrypt(&n)
	return n, nil
}

// Decompose reads the fields of one of this generator's counter or sortable nonces.
func (g *Generator) Decompose(nonce []byte) (Parts, error) {
	return g.layout.Decompose(nonce, g.Epoch())
}

// Layout is the generator's layout.
func (g *Generator) Layout() Layout { return g.layout }
