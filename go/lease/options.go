package lease

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/nonceforge/nonceforge/go/nonce"
)

// Options are the CLI's lease options; the zero value of each field is its default.
type Options struct {
	TTL            time.Duration // default 10 s; 1 s to 1 h
	RenewEvery     time.Duration // default min(TTL/3, (TTL-Margin)/2)
	Margin         time.Duration // default TTL/10, at least 50 ms
	RequestTimeout time.Duration // default min(RenewEvery, 2 s)
	ConnectTimeout time.Duration // default 5 s
	// IDs is the range leased, "FIRST-LAST" or one id (default: every id
	// of the layout, "0-511" or "0-65535").
	IDs string
	// Layout is where the machine id sits in the members' nonces (default
	// nonce.Standard). The namespace records the layout its first member
	// asked for and refuses a member asking for the other: a standard and a
	// wide member's values can meet.
	Layout    nonce.Layout
	Namespace string // default "nonceforge"
	Holder    string // default host/pid/random
	// MaxClockWait: how far a generator's clock may be behind the floor
	// (default TTL + 2×Margin: a floor lies up to TTL + Margin ahead after a
	// holder that started without history released early).
	MaxClockWait time.Duration
	// PGSchema is the PostgreSQL schema of the lease tables (default
	// "nonceforge_lease"), the store role's own: created when missing,
	// refused when another role owns it or its tables.
	PGSchema string
	// FastStart: whether a new grant may skip the start-up wait (default
	// FastOff; see FastStart).
	FastStart FastStart
	// Logger receives what an operator must see: an id without history
	// (warning), a lost grant and its reason (error). Default slog.Default().
	Logger *slog.Logger
}

type settled struct {
	ttl, renew, margin, request, connect, maxWait time.Duration
	first, last                                   int
	layout                                        nonce.Layout
	ns, holder, schema                            string
	fast                                          FastStart
	log                                           *slog.Logger
}

func badOption(name string, v any, rule string) error {
	return &Error{Code: "bad-option", Msg: fmt.Sprintf("%s = %v: %s", name, v, rule)}
}

// digits reads a number in decimal digits only (no sign, space or prefix):
// what the lease vocabulary and the stores' records call a number.
func digits(s string) (uint64, bool) {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// parseIDs reads "FIRST-LAST" or one id as the CLI does: decimal digits only
// (no sign, prefix or separator), spaces around each number allowed,
// FIRST <= LAST <= the layout's highest id (tied to the Rust crate's
// parse_ids_in by testdata/vectors/lease-syntax.json's ranges).
func parseIDs(s string, layout nonce.Layout) (first, last int, ok bool) {
	maxMachineID := uint64(layout.MaxMachineID())
	a, b, found := strings.Cut(s, "-")
	if !found {
		b = a
	}
	num := func(t string) (int, bool) {
		n, ok := digits(strings.TrimSpace(t))
		if !ok || n > maxMachineID {
			return 0, false
		}
		return int(n), true
	}
	first, okA := num(a)
	last, okB := num(b)
	return first, last, okA && okB && first <= last
}

func settle(o Options) (settled, error) {
	s := settled{ttl: o.TTL, ns: o.Namespace, holder: o.Holder}
	if s.ttl == 0 {
		s.ttl = 10 * time.Second
	}
	if s.ttl < time.Second || s.ttl > time.Hour {
		return s, badOption("TTL", s.ttl, "must be between 1 s and 1 h")
	}
	s.margin = o.Margin
	if s.margin == 0 {
		s.margin = max(s.ttl/10, 50*time.Millisecond)
	}
	if s.margin < 10*time.Millisecond || s.margin >= s.ttl/2 {
		return s, badOption("Margin", s.margin, "must be at least 10 ms and less than half the TTL")
	}
	room := s.ttl - s.margin
	s.renew = o.RenewEvery
	if s.renew == 0 {
		s.renew = min(s.ttl/3, room/2)
	}
	if s.renew < 10*time.Millisecond || s.renew > room/2 {
		return s, badOption("RenewEvery", s.renew, "must be at least 10 ms and at most (TTL - margin) / 2, so a failed renewal is retried before the deadline")
	}
	s.request = o.RequestTimeout
	if s.request == 0 {
		s.request = min(s.renew, 2*time.Second)
	}
	if s.request <= 0 || s.request > room {
		return s, badOption("RequestTimeout", s.request, "must be more than 0 and at most TTL - margin")
	}
	s.connect = o.ConnectTimeout
	if s.connect == 0 {
		s.connect = 5 * time.Second
	}
	if s.connect < 0 {
		return s, badOption("ConnectTimeout", s.connect, "must be more than 0")
	}
	s.maxWait = o.MaxClockWait
	if s.maxWait < 0 {
		return s, badOption("MaxClockWait", s.maxWait, "must not be negative (0: the TTL)")
	}
	if s.maxWait == 0 {
		s.maxWait = s.ttl + 2*s.margin
	}
	s.layout = o.Layout
	if s.layout != nonce.Standard && s.layout != nonce.Wide {
		return s, badOption("Layout", int(s.layout), "must be nonce.Standard or nonce.Wide")
	}
	top := s.layout.MaxMachineID()
	ids := o.IDs
	if ids == "" {
		ids = fmt.Sprintf("0-%d", top)
	}
	first, last, ok := parseIDs(ids, s.layout)
	if !ok {
		rule := "use FIRST-LAST (e.g. 0-511) or one id, within 0..=511"
		if s.layout == nonce.Wide {
			rule = "use FIRST-LAST (e.g. 0-65535) or one id, within 0..=65535 (the wide layout)"
		}
		return s, badOption("IDs", ids, rule)
	}
	s.first, s.last = first, last
	if s.ns == "" {
		s.ns = "nonceforge"
	}
	if !validNamespace(s.ns) {
		return s, badOption("Namespace", s.ns, "must be 1 to 40 lower-case letters, digits or '_', starting with a letter")
	}
	s.schema = o.PGSchema
	if s.schema == "" {
		s.schema = "nonceforge_lease"
	}
	if !validSchema(s.schema) {
		return s, badOption("PGSchema", s.schema, "must be 1 to 63 lower-case letters, digits or '_', starting with a letter or '_', not pg_…")
	}
	s.fast = o.FastStart
	if s.fast < FastOff || s.fast > FastDeclared {
		return s, badOption("FastStart", int(s.fast), "must be FastOff, FastVerify or FastDeclared")
	}
	s.log = o.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.holder == "" {
		host, _ := os.Hostname()
		s.holder = fmt.Sprintf("%s/%d/%08x", host, os.Getpid(), uint32(time.Now().UnixNano()))
	}
	if len(s.holder) > 200 || strings.ContainsFunc(s.holder, unicode.IsControl) {
		return s, badOption("Holder", s.holder, "must be 1 to 200 bytes without control characters")
	}
	return s, nil
}

func validSchema(s string) bool {
	if len(s) == 0 || len(s) > 63 || strings.HasPrefix(s, "pg_") || !(s[0] >= 'a' && s[0] <= 'z' || s[0] == '_') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func validNamespace(ns string) bool {
	if len(ns) == 0 || len(ns) > 40 || ns[0] < 'a' || ns[0] > 'z' {
		return false
	}
	for _, c := range ns {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
