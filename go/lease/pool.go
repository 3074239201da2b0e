package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// DefaultPoolConns is the number of store connections a Pool keeps when
// NewPool is given 0; MaxPoolConns the most it accepts.
const (
	DefaultPoolConns = 8
	MaxPoolConns     = 256
)

// Pool holds many leases of one namespace over a few shared store
// connections: a process that takes thousands of machine ids (one per
// worker, per tenant, per shard) needs thousands of connections otherwise,
// more than a PostgreSQL server allows. Each lease renews on its own
// schedule, exactly as one from Acquire does (the same deadline, the same
// stop); its requests wait for a free connection of the pool, and that wait
// counts against the request timeout, so a pool too small for its leases
// shows as renewal failures (Metrics), never as a lease held past its
// deadline.
//
//	p, err := lease.NewPool(ctx, "postgres://app@db/app", lease.Options{Layout: nonce.Wide}, 0)
//	l, err := p.Acquire(ctx) // as many as the range has ids
//	defer p.Close(context.Background()) // releases what is still held
type Pool struct {
	url, shown string
	s          settled
	n          int
	slots      chan *slot
	done       chan struct{} // closed by Close
	mu         sync.Mutex
	leases     map[*Lease]struct{}
	closed     bool
}

// slot is one connection of a pool: nil until first used, and after a
// request on it failed.
type slot struct{ st store }

// NewPool connects to the store at url (as Acquire does: the URL, the store
// and the namespace's tables are checked now) and keeps up to conns
// connections (0: DefaultPoolConns), opened as the leases need them. Every
// lease of the pool has the options o.
func NewPool(ctx context.Context, url string, o Options, conns int) (*Pool, error) {
	if conns == 0 {
		conns = DefaultPoolConns
	}
	if conns < 1 || conns > MaxPoolConns {
		return nil, badOption("conns", conns, fmt.Sprintf("the pool's store connections: 1..=%d (0: %d)", MaxPoolConns, DefaultPoolConns))
	}
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
	p := &Pool{url: url, shown: shown, s: s, n: conns, slots: make(chan *slot, conns), done: make(chan struct{}), leases: map[*Lease]struct{}{}}
	p.slots <- &slot{st: st}
	for range conns - 1 {
		p.slots <- &slot{}
	}
	return p, nil
}

// Acquire takes a free id of the range and starts renewing it, as the
// package's Acquire does, through the pool's connections.
func (p *Pool) Acquire(ctx context.Context) (*Lease, error) {
	ctx, cancel := context.WithTimeout(ctx, p.s.connect)
	defer cancel()
	var l *Lease
	err := p.with(ctx, func(st store) (err error) {
		l, err = grantOn(ctx, st, p.s, p.shown)
		return err
	})
	if err != nil {
		return nil, err
	}
	l.pool, l.url = p, p.url
	p.mu.Lock()
	if p.closed {
		// Closed while this acquire ran: give the id back at once.
		p.mu.Unlock()
		l.start()
		_ = l.Release(context.Background())
		return nil, p.closedError()
	}
	p.leases[l] = struct{}{}
	p.mu.Unlock()
	l.start()
	return l, nil
}

// Len is the number of leases of the pool not yet released.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.leases)
}

// Close releases every lease of the pool still held (each as Release does:
// its generators stop, its floor is recorded) and closes the connections.
// The errors of the releases are joined; Acquire refuses afterwards.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	held := make([]*Lease, 0, len(p.leases))
	for l := range p.leases {
		held = append(held, l)
	}
	p.mu.Unlock()
	var errs []error
	for _, l := range held {
		if err := l.Release(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	// Every connection, once its request (if any) is done.
	for range p.n {
		if sl := <-p.slots; sl.st != nil {
			sl.st.close()
		}
	}
	close(p.done)
	return errors.Join(errs...)
}

func (p *Pool) closedError() error {
	return &Error{Code: "closed", Msg: fmt.Sprintf("the lease pool for %s is closed", p.shown)}
}

// forget drops a released lease.
func (p *Pool) forget(l *Lease) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.leases, l)
}

// with runs f on a free connection of the pool, connecting it first where
// needed. A connection whose request failed is closed (it may be unusable:
// a request cut short by its timeout) unless the store answered with a
// refusal or had no free id.
func (p *Pool) with(ctx context.Context, f func(store) error) error {
	var sl *slot
	select {
	case sl = <-p.slots:
	case <-p.done:
		return p.closedError()
	case <-ctx.Done():
		return &Error{Code: "timeout", Msg: fmt.Sprintf("no connection of the lease pool for %s came free in time (all %d busy): give the pool more connections", p.shown, p.n), Err: ctx.Err()}
	}
	defer func() { p.slots <- sl }()
	if sl.st == nil {
		st, _, err := connect(ctx, p.url, &p.s)
		if err != nil {
			return err
		}
		sl.st = st
	}
	err := f(sl.st)
	var r *refusedError
	if err != nil && !errors.Is(err, ErrAllTaken) && !errors.Is(err, ErrRefused) && !errors.As(err, &r) {
		sl.st.close()
		sl.st = nil
	}
	return err
}
