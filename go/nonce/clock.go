package nonce

import "time"

// Clock is what a generator reads time from: the wall clock once, at New, and
// the monotonic clock after that. Tests use a manual one.
type Clock interface {
	// WallUnixMilli is the wall-clock time in Unix milliseconds.
	WallUnixMilli() int64
	// Monotonic is a reading of a clock that never goes back.
	Monotonic() time.Duration
	// Sleep waits for d (a manual clock advances by it).
	Sleep(d time.Duration)
}

type systemClock struct{ base time.Time }

func (systemClock) WallUnixMilli() int64       { return time.Now().UnixMilli() }
func (c systemClock) Monotonic() time.Duration { return time.Since(c.base) }
func (systemClock) Sleep(d time.Duration)      { time.Sleep(d) }
