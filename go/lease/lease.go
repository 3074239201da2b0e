// Package lease leases machine ids from PostgreSQL, Redis or etcd under
// nonceforge's lease protocol (docs/lease-protocol.md at the repository's
// root): the same records, scripts, token, floor and deadline as the Rust
// lease crate, so Go, Rust, Node and Elixir holders share one store.
//
//	l, err := lease.Acquire(ctx, "postgres://app@db/app", lease.Options{TTL: 10 * time.Second})
//	g, err := l.Generator(ctx, nonce.Options{Key: key}) // its machine id, above the floor, held to the deadline
//	defer l.Release(context.Background())
//
// A goroutine renews the lease; the generators stop (ErrDisabled) the moment
// the lease may have lapsed — the local deadline, TTL minus a margin after the
// last successful renewal was sent — and for good if another holder took the id.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nonceforge/nonceforge/go/nonce"
)

// Error is every error of this package.
type Error struct {
	Code string // "bad-option", "bad-url", "unreachable", "timeout", "all-taken", "lost", "refused", "store", "closed" (a Pool)
	Msg  string
	Err  error
}

func (e *Error) Error() string { return "lease: " + e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// ErrAllTaken, ErrLost, ErrRefused: compare with errors.Is.
var (
	ErrAllTaken = errors.New("lease: every machine id of the range is leased")
	ErrLost     = errors.New("lease: the grant on the machine id is gone")
	// ErrRefused: the store holds something this client will not trust
	// (another protocol's records, a malformed record, objects of another role).
	ErrRefused = errors.New("lease: the store was refused")
)

// LostReason says why a lease was lost.
type LostReason int

const (
	notLost       LostReason = iota
	LostTaken                // another holder took the id
	LostEvicted              // an operator released the id
	LostStoreData            // the store lost its data (restarted empty, flushed, restored, wiped)
	// LostStoreBack: the store went back to an older copy of its data (a
	// replica that was behind promoted, a backup or snapshot restored).
	LostStoreBack
)

// Name is the reason's short name, as every face gives it: "taken",
// "evicted", "store" or "rollback".
func (r LostReason) Name() string {
	switch r {
	case LostTaken:
		return "taken"
	case LostEvicted:
		return "evicted"
	case LostStoreData:
		return "store"
	case LostStoreBack:
		return "rollback"
	}
	return ""
}

// FastStart says when a new grant may start right above the store's floor
// instead of the TTL and margin ahead of this host's clock
// (docs/lease-protocol.md, "A store that goes back"). Use the same on every
// member of a namespace.
type FastStart int

const (
	// FastOff (the zero value, the default): every grant starts the TTL and
	// margin ahead of this host's clock at the acquire, safe whatever copy of
	// its data the store comes back with.
	FastOff FastStart = iota
	// FastVerify starts fast only where this member checks that an
	// acknowledged write survives a failover: PostgreSQL with
	// synchronous_standby_names set, Redis with at least one connected replica
	// (each write waits for all of them with WAIT; a renewal they do not all
	// acknowledge fails), etcd (Raft). Otherwise it starts as FastOff.
	FastVerify
	// FastDeclared starts fast on the operator's word that the store never
	// goes back to an older copy while members run.
	FastDeclared
)

// String is the option's text form: "off", "verify" or "declared".
func (f FastStart) String() string {
	switch f {
	case FastVerify:
		return "verify"
	case FastDeclared:
		return "declared"
	}
	return "off"
}

// ParseFastStart reads "off", "verify" or "declared".
func ParseFastStart(s string) (FastStart, error) {
	for _, f := range []FastStart{FastOff, FastVerify, FastDeclared} {
		if s == f.String() {
			return f, nil
		}
	}
	return FastOff, badOption("FastStart", s, "must be off, verify or declared")
}

func (r LostReason) String() string {
	switch r {
	case LostTaken:
		return "another holder took the id"
	case LostEvicted:
		return "an operator released the id"
	case LostStoreData:
		return "the store lost its data (restarted empty, flushed, restored or wiped)"
	case LostStoreBack:
		return "the store went back to an older copy of its data (a replica that was behind promoted, a backup or snapshot restored)"
	}
	return "not lost"
}

// refusedError is a store's contents this client will not trust.
type refusedError struct{ why string }

func (e *refusedError) Error() string { return e.why }

func refused(why string) error { return &refusedError{why: why} }

// randomID is 128 random bits in hex: grant ids and incarnations.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand: Go 1.24+)
	return hex.EncodeToString(b[:])
}

// grant is what acquiring gave.
type grant struct {
	id          int
	token       uint64
	floor       int64
	history     bool   // the store had a record of the id
	grantID     string // 128 random bits: renewals and the release succeed only for it
	incarnation string // the store's, when granted: another one means it lost its data
	etcdLease   int64
}

// store is one of the three stores, speaking the protocol.
type store interface {
	acquire(ctx context.Context, s *settled, cap int64, grantID string) (*grant, error) // nil: all taken
	// renew: 0 held, else why the grant is gone.
	renew(ctx context.Context, s *settled, g *grant, cap int64) (LostReason, error)
	release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error)
	// durable: nil where an acknowledged write (the last grant) survives a
	// failover as far as FastVerify can check; else why not.
	durable() error
	close()
}

// State is where a lease stands.
type State int

const (
	Held     State = iota // issuing until the deadline
	Lapsed                // the deadline passed without a renewal: stopped; renewals go on
	Lost                  // another holder took the id: stopped for good
	Released              // released
)

func (s State) String() string {
	return [...]string{"held", "lapsed", "lost", "released"}[s]
}

// Lease is a machine id held in a store and kept alive by a goroutine.
type Lease struct {
	s     settled
	url   string
	st    store // nil after a failed request: reconnect before the next
	pool  *Pool // when acquired through a Pool: its connections, not st
	shown string
	mu    sync.Mutex
	g     grant // the renewal goroutine rewrites it: read under mu
	// id and history are the grant's, fixed at Acquire: read without mu.
	id      int
	history bool
	floor   int64
	wait    time.Duration // the start's extra wait (TTL + margin) unless it started fast
	slow    error         // why it did not start fast; nil when it did
	gens    []*nonce.Generator
	dead    time.Time // the local deadline (monotonic)
	cap     int64
	lapsed  bool
	lost    LostReason
	done    bool
	stop    chan struct{}
	stopped chan struct{}
	lastErr error
	c       counts // the figures Metrics gives (metrics.go)
	// timer stops the generators at the deadline, apart from the renewal
	// loop (a renewal can hang up to the request timeout): single counter
	// nonces read no clock, so nothing else would stop them (the core's rule).
	timer *time.Timer
}

func wallMs() int64 { return time.Now().UnixMilli() }

// Acquire connects to the store at url (postgres://…, redis://host:port[/db],
// etcd://host:port[,host:port…]), takes a free id of the range and
// starts renewing it. Nothing is held after an error. The lease has a
// connection of its own; a process holding many ids shares a few through
// a Pool.
func Acquire(ctx context.Context, url string, o Options) (*Lease, error) {
	s, err := settle(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.connect)
	defer cancel()
	st, shown, err := connect(ctx, url, &s)
	if err != nil {
		return nil, err
	}
	l, err := grantOn(ctx, st, s, shown)
	if err != nil {
		st.close()
		return nil, err
	}
	l.url, l.st = url, st
	l.start()
	return l, nil
}

// grantOn takes a free id through st and makes the lease of it (not yet
// renewing: start).
func grantOn(ctx context.Context, st store, s settled, shown string) (*Lease, error) {
	hold := s.ttl - s.margin
	send := time.Now()
	capMs := wallMs() + hold.Milliseconds()
	g, err := st.acquire(ctx, &s, capMs, randomID())
	acquiredIn := time.Since(send)
	if err != nil {
		return nil, wrap(ctx, shown, err)
	}
	if g == nil {
		return nil, &Error{Code: "all-taken", Msg: fmt.Sprintf("all machine ids in %d..=%d are leased in %s: wait for a lease to expire, release one, or use another namespace", s.first, s.last, shown), Err: ErrAllTaken}
	}
	l := &Lease{s: s, shown: shown, g: *g, floor: g.floor, dead: send.Add(hold), cap: capMs, stop: make(chan struct{}), stopped: make(chan struct{})}
	l.c.acquiredIn = acquiredIn
	l.id, l.history = g.id, g.history
	switch s.fast {
	case FastOff:
		l.slow = errors.New("FastStart is off")
	case FastVerify:
		l.slow = st.durable()
	}
	if !g.history {
		l.slow = errors.New("the id has no history in the store")
	}
	if l.slow != nil {
		// A holder the store no longer shows (its data lost, or an older copy
		// put back that shows the id expired or released) made its last
		// successful request before the store answered this acquire, and
		// issues nothing above its host's clock then plus the hold. Start
		// above this clock now plus the TTL and margin
		// (docs/lease-protocol.md, "A store that goes back").
		l.wait = s.ttl + s.margin
		l.floor = max(l.floor, wallMs()+l.wait.Milliseconds())
	}
	switch {
	case !g.history:
		s.log.Warn("nonceforge lease: machine id has no history in the store (never leased in this namespace, or the store lost its data): generators start the TTL and margin ahead",
			"machine_id", g.id, "store", shown, "start_above_unix_ms", l.floor, "token", g.token)
	case l.slow != nil:
		s.log.Info("nonceforge lease: generators start the TTL and margin ahead, above any holder a store that went back may no longer show",
			"machine_id", g.id, "store", shown, "start_above_unix_ms", l.floor, "token", g.token, "why", l.slow.Error())
	}
	return l, nil
}

// start arms the deadline and starts renewing.
func (l *Lease) start() {
	l.timer = time.AfterFunc(time.Until(l.dead), l.atDeadline)
	go l.keep()
}

func wrap(ctx context.Context, shown string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var r *refusedError
	if errors.As(err, &r) {
		return &Error{Code: "refused", Msg: fmt.Sprintf("the lease store at %s was refused: %s", shown, r.why), Err: ErrRefused}
	}
	// (DeadlineExceeded: the renewal loop cancels its context before it wraps.)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Code: "timeout", Msg: fmt.Sprintf("the lease store at %s did not answer in time: %v", shown, err), Err: err}
	}
	return &Error{Code: "store", Msg: fmt.Sprintf("the lease store at %s failed: %v", shown, err), Err: err}
}

// MachineID is the leased id.
func (l *Lease) MachineID() int { return l.id }

// Token is the fencing token of this grant.
func (l *Lease) Token() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.g.token
}

// FloorUnixMilli is the highest timestamp an earlier holder of the id may
// have issued; for an id without history, the TTL and margin ahead of the
// clock at acquiring.
func (l *Lease) FloorUnixMilli() int64 { return l.floor }

// StartedFast says whether the generators start right above the store's
// floor (FastStart verified or declared, and the id has history) rather than
// the TTL and margin ahead of this host's clock.
func (l *Lease) StartedFast() bool { return l.slow == nil }

// SlowStartReason says why the grant did not start fast; nil when it did.
func (l *Lease) SlowStartReason() error { return l.slow }

// HasHistory reports whether the store had a record of the id.
func (l *Lease) HasHistory() bool { return l.history }

// LostReason says why the lease was lost; ok is false while it is not.
func (l *Lease) LostReason() (reason LostReason, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost, l.lost != notLost
}

// Layout is the layout of the lease's namespace, which every generator on it has.
func (l *Lease) Layout() nonce.Layout { return l.s.layout }

// Holder is this holder's name in the store.
func (l *Lease) Holder() string { return l.s.holder }

// Generator builds a generator on the leased id (o.MachineID, o.Layout and
// o.NotBeforeUnixMilli are set here) and attaches it. It may wait for the
// clock to pass the previous holders' floor (at most MaxClockWait), or until
// ctx ends.
func (l *Lease) Generator(ctx context.Context, o nonce.Options) (*nonce.Generator, error) {
	if o.Layout != nonce.Standard && o.Layout != l.s.layout {
		return nil, &Error{Code: "bad-option", Msg: "generator: its layout is not the lease's (Options.Layout, which the namespace records): build it with Lease.Generator"}
	}
	o.Layout = l.s.layout
	o.MachineID = nonce.Machine(l.id)
	o.NotBeforeUnixMilli = l.floor
	if o.MaxWait == 0 {
		o.MaxWait = l.s.maxWait + l.wait
	}
	g, err := nonce.NewContext(ctx, o)
	if err != nil {
		return nil, err
	}
	return g, l.Attach(g)
}

// Attach holds g to the lease: it issues only until the lease's local deadline.
func (l *Lease) Attach(g *nonce.Generator) error {
	if g.MachineID() != l.id {
		return &Error{Code: "bad-option", Msg: "generator: its machine id is not the leased one: build it with Lease.Generator"}
	}
	if g.StartedUnixMilli() <= l.floor {
		return &Error{Code: "bad-option", Msg: "generator: it started at or below the previous holder's last timestamp: build it with Lease.Generator"}
	}
	if g.Layout() != l.s.layout {
		// The namespace holds members of the lease's layout only: a
		// standard and a wide member's values can meet.
		return &Error{Code: "bad-option", Msg: "generator: its layout is not the lease's (Options.Layout, which the namespace records): build it with Lease.Generator"}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gens = append(l.gens, g)
	l.gate(g, time.Now())
	return nil
}

// gate sets g's deadline from the lease's (mu held).
func (l *Lease) gate(g *nonce.Generator, now time.Time) {
	if l.lost != notLost || l.done || l.lapsed || !now.Before(l.dead) {
		g.SetValidUntil(0)
		return
	}
	g.SetValidUntil(min(g.ClockUnixMilli()+l.dead.Sub(now).Milliseconds(), l.cap))
}

// State is where the lease stands, and the time left until the deadline when held.
func (l *Lease) State() (State, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	switch {
	case l.done:
		return Released, 0
	case l.lost != notLost:
		return Lost, 0
	case l.lapsed || !now.Before(l.dead):
		return Lapsed, 0
	}
	return Held, l.dead.Sub(now)
}

// LastError is the last renewal's error while renewals fail.
func (l *Lease) LastError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}

func (l *Lease) stopAll() {
	for _, g := range l.gens {
		g.SetValidUntil(0)
	}
}

// atDeadline runs when the deadline timer fires: past the deadline it stops
// the generators (lapsed); a deadline moved since re-arms the timer.
func (l *Lease) atDeadline() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != notLost || l.done {
		return
	}
	if left := time.Until(l.dead); left > 0 {
		l.timer.Reset(left)
		return
	}
	if !l.lapsed {
		l.lapsed = true
		l.c.lapses++
		l.stopAll()
	}
}

// keep renews until Release; the deadline timer (atDeadline) stops the
// generators when no renewal came in time.
func (l *Lease) keep() {
	defer close(l.stopped)
	defer l.timer.Stop()
	retry := max(l.s.renew/4, 10*time.Millisecond)
	next := time.Now().Add(l.s.renew)
	for {
		timer := time.NewTimer(max(time.Until(next), 0))
		select {
		case <-l.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		l.mu.Lock()
		if l.lost != notLost {
			l.mu.Unlock()
			return
		}
		// The cap: this host's clock plus the hold, whatever the generators
		// read (they may run ahead of it by at most the hold): what lets a
		// holder that finds no history start safely above its own clock.
		hold := l.s.ttl - l.s.margin
		capMs := wallMs() + hold.Milliseconds()
		g := l.g
		l.mu.Unlock()
		send := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), l.s.request)
		why, err := l.renew(ctx, &g, capMs)
		cancel()
		l.mu.Lock()
		switch {
		case err != nil:
			l.lastErr = wrap(ctx, l.shown, err)
			l.c.failures[failureKind(ctx, err)]++
			next = time.Now().Add(retry)
		case why != notLost:
			l.lost = why
			l.stopAll()
			l.s.log.Error("nonceforge lease: lost: generators stopped for good", "machine_id", g.id, "reason", why.String(), "store", l.shown)
			l.mu.Unlock()
			return
		default:
			rtt := time.Since(send)
			l.c.renewals++
			l.c.rttSum += rtt
			l.c.rttLast = rtt
			l.c.rttMax = max(l.c.rttMax, rtt)
			l.g = g
			l.dead = send.Add(hold)
			l.cap = capMs
			l.lapsed = false
			l.lastErr = nil
			l.timer.Reset(time.Until(l.dead))
			now := time.Now()
			for _, gen := range l.gens {
				l.gate(gen, now)
			}
			next = send.Add(l.s.renew)
		}
		l.mu.Unlock()
	}
}

// Release stops the generators, records the floor and frees the id. It
// returns an error wrapping ErrLost when another holder had taken the id.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return nil
	}
	l.done = true
	l.stopAll()
	floor := wallMs()
	for _, g := range l.gens {
		floor = max(floor, g.ClockUnixMilli())
	}
	floor = max(min(floor, l.cap), l.floor)
	lost := l.lost
	g := l.g
	l.mu.Unlock()
	close(l.stop)
	<-l.stopped
	if l.pool != nil {
		defer l.pool.forget(l)
	} else {
		defer func() {
			if l.st != nil {
				l.st.close()
			}
		}()
	}
	if lost != notLost {
		return &Error{Code: "lost", Msg: fmt.Sprintf("the lease on machine id %d was lost: %s; nothing was issued after the local deadline", g.id, lost), Err: ErrLost}
	}
	ctx, cancel := context.WithTimeout(ctx, l.s.request)
	defer cancel()
	var ok bool
	err := l.request(ctx, func(st store) (err error) {
		ok, err = st.release(ctx, &l.s, &g, floor)
		return err
	})
	if err != nil {
		return wrap(ctx, l.shown, err)
	}
	if !ok {
		return &Error{Code: "lost", Msg: fmt.Sprintf("the lease on machine id %d was lost: its grant is gone from the store", g.id), Err: ErrLost}
	}
	return nil
}

// renew sends one renewal.
func (l *Lease) renew(ctx context.Context, g *grant, capMs int64) (why LostReason, err error) {
	err = l.request(ctx, func(st store) (err error) {
		why, err = st.renew(ctx, &l.s, g, capMs)
		return err
	})
	return why, err
}

// request runs f on the lease's store: its pool's, or its own connection,
// connecting first when the last request failed (a request cut short by its
// timeout may leave the connection unusable).
func (l *Lease) request(ctx context.Context, f func(store) error) error {
	if l.pool != nil {
		return l.pool.with(ctx, f)
	}
	if l.st == nil {
		st, _, err := connect(ctx, l.url, &l.s)
		if err != nil {
			return err
		}
		l.st = st
	}
	err := f(l.st)
	if err != nil {
		l.st.close()
		l.st = nil
	}
	return err
}
