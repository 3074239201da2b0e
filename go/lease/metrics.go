package lease

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// Renewal failure kinds, as Metrics.RenewalFailures and the fleet's metrics
// name them (testdata/vectors/metrics.json, label "failure").
var FailureKinds = [3]string{"unreachable", "timeout", "store"}

// failureKind sorts a failed renewal: the store could not be reached (no
// connection could be made), did not answer in time, or answered with an
// error.
func failureKind(ctx context.Context, err error) int {
	var ne net.Error
	var le *Error
	switch {
	case errors.As(err, &le) && le.Code == "unreachable":
		return 0
	case errors.As(err, &le) && le.Code == "timeout":
		return 1
	case errors.As(err, new(*net.OpError)) || errors.As(err, new(*net.DNSError)):
		return 0
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return 1
	}
	return 2
}

// counts are the keeper's figures, kept under the lease's lock.
type counts struct {
	acquiredIn time.Duration
	renewals   uint64
	failures   [3]uint64
	lapses     uint64
	rttSum     time.Duration
	rttMax     time.Duration
	rttLast    time.Duration // 0: no renewal yet
}

// Metrics is a lease's figures at one moment (Lease.Metrics): where it
// stands, what its start cost, how its renewals went. Counts are since
// Acquire.
type Metrics struct {
	State          State
	MachineID      int
	Token          uint64
	FloorUnixMilli int64
	// DeadlineIn: time left until the local deadline (0 unless held).
	DeadlineIn time.Duration
	// AcquiredIn: how long Acquire took; StartWait: how long the first value
	// waits after the grant (the TTL and margin on a slow start);
	// StartedFast: the grant started right above the store's floor.
	AcquiredIn  time.Duration
	StartWait   time.Duration
	StartedFast bool
	// Renewals that succeeded; RenewalFailures by kind (FailureKinds' order).
	Renewals        uint64
	RenewalFailures [3]uint64
	// The successful renewals' round trips: added up, the last (0 before the
	// first renewal), the longest.
	RenewalTotal time.Duration
	RenewalLast  time.Duration
	RenewalMax   time.Duration
	// Lapses: times the deadline passed without a renewal.
	Lapses uint64
	// LostReason: why the lease was lost (its Name is "" while not lost).
	LostReason LostReason
}

// Metrics returns the lease's figures now (docs/operations.md).
func (l *Lease) Metrics() Metrics {
	state, left := l.State()
	l.mu.Lock()
	defer l.mu.Unlock()
	return Metrics{
		State:           state,
		MachineID:       l.id,
		Token:           l.g.token,
		FloorUnixMilli:  l.floor,
		DeadlineIn:      left,
		AcquiredIn:      l.c.acquiredIn,
		StartWait:       l.wait,
		StartedFast:     l.slow == nil,
		Renewals:        l.c.renewals,
		RenewalFailures: l.c.failures,
		RenewalTotal:    l.c.rttSum,
		RenewalLast:     l.c.rttLast,
		RenewalMax:      l.c.rttMax,
		Lapses:          l.c.lapses,
		LostReason:      l.lost,
	}
}

// ErrNotReady is what Ready's errors wrap.
var ErrNotReady = errors.New("lease: not ready")

// Ready says whether the lease lets its generators issue now — what a
// readiness probe returns: nil while held and past its start (the floor its
// generators start above), otherwise an error wrapping ErrNotReady that says
// why (starting, lapsed, lost and why, released).
func (l *Lease) Ready() error {
	state, _ := l.State()
	switch state {
	case Held:
		if wait := l.FloorUnixMilli() - wallMs(); wait >= 0 {
			return fmt.Errorf("%w: starting: values start in %v", ErrNotReady, time.Duration(wait+1)*time.Millisecond)
		}
		return nil
	case Lost:
		reason, _ := l.LostReason()
		return fmt.Errorf("%w: lost (%s)", ErrNotReady, reason.Name())
	}
	return fmt.Errorf("%w: %s", ErrNotReady, state)
}
