package nonce

import "errors"

// Error is every error of this package that names a cause: the operation,
// the argument and the rule it broke. Where the caller acts on the kind of
// failure, Err is one of the sentinels below, for errors.Is.
type Error struct {
	Op   string
	Arg  string
	Rule string
	Err  error // ErrExhausted, ErrNoKey, ErrNoMachineID, or nil
}

func (e *Error) Error() string {
	if e.Arg == "" {
		return "nonce: " + e.Op + ": " + e.Rule
	}
	return "nonce: " + e.Op + ": " + e.Arg + ": " + e.Rule
}

// Unwrap gives the sentinel the error is an instance of (nil: none).
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrDisabled: the generator issues nothing (Disable, or past its
	// deadline: a lease that may have lapsed). It may issue again.
	ErrDisabled = errors.New("nonce: the generator is disabled: no nonce was issued")
	// ErrExhausted: the generator has no nonce left to give — the 42-bit
	// timestamp range of its epoch has ended, or a 128-bit counter ran out.
	// It never will again: move to a new epoch.
	ErrExhausted = errors.New("nonce: exhausted")
	// ErrNoKey: the call needs the base key, and the generator has none.
	ErrNoKey = errors.New("nonce: no base key")
	// ErrNoMachineID: Options.MachineID was not set (New has no default id).
	ErrNoMachineID = errors.New("nonce: no machine id chosen")
	// ErrWideLayoutNo64: a 64-bit nonce asked of a generator of the Wide
	// layout, which has none.
	ErrWideLayoutNo64 = errors.New("nonce: the wide layout has no 64-bit nonces")
	// ErrNotBuilt: the Generator was not made by New (a zero value).
	ErrNotBuilt = errors.New("nonce: the Generator was not made by New: it issues nothing")
)
