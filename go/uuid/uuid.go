package uuid

import (
	"database/sql/driver"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/nonceforge/nonceforge/go/internal/tsc"
)

// UUID is 16 bytes: a UUIDv7, a tuid6, or any UUID.
type UUID [16]byte

// Errors from parsing and extraction.
var (
	// ErrCompact: the text is not a compact (base64url, no padding) id.
	ErrCompact = errors.New("uuid: not an id in compact form")
	// ErrText: the text is not a UUID in 8-4-4-4-12 hex form.
	ErrText = errors.New("uuid: not a UUID in 8-4-4-4-12 hex form")
	// ErrBinary: the bytes are not 16.
	ErrBinary = errors.New("uuid: not 16 bytes")
)

// TextError is a parse error of the text or compact form: where the text
// breaks a rule, and the rule. errors.Is matches ErrText or ErrCompact.
type TextError struct {
	Kind     error // ErrText or ErrCompact
	Position int   // the byte where the rule breaks (the length, when it is wrong)
	Rule     string
	length   bool // the length is wrong: the message names no character
}

func (e *TextError) Error() string {
	if e.length {
		return fmt.Sprintf("%v: %s", e.Kind, e.Rule)
	}
	return fmt.Sprintf("%v: character %d: %s", e.Kind, e.Position, e.Rule)
}

func (e *TextError) Unwrap() error { return e.Kind }

func badLength(kind error, got, want int, rule string) error {
	return &TextError{Kind: kind, Position: min(got, want), Rule: rule, length: true}
}

// lastTick is the last (millisecond << 12 | fraction) a UUIDv7 can carry.
const lastTick = 1<<60 - 1

// random64 is 64 random bits from the runtime's per-thread ChaCha8 generator
// (math/rand/v2's top-level functions), which the runtime seeds from the OS's
// random source and reseeds as it goes: no lock, no system call per id. A
// sync.Pool of crypto/rand-seeded ChaCha8s measured slower here (the pool's
// Get/Put cost more than the draw).
func random64() uint64 { return rand.Uint64() }

// Compose7 is the UUIDv7 of (unix milliseconds, 12-bit fraction, 62 random
// bits); the top 2 bits of random are dropped.
func Compose7(unixMilli uint64, fraction uint16, random uint64) UUID {
	var u UUID
	hi := (unixMilli&(1<<48-1))<<16 | 0x7000 | uint64(fraction&0xfff)
	lo := 0b10<<62 | random&(1<<62-1)
	binary.BigEndian.PutUint64(u[:8], hi)
	binary.BigEndian.PutUint64(u[8:], lo)
	return u
}

// clock is the system clock as the generators read it: the OS clock about
// once a millisecond (wall clock included, so a step forward is followed), the
// time within the millisecond from the CPU's invariant TSC where there is one
// (go/internal/tsc: 25 ns a clock read here, the 47 ns of time.Now, against
// 10 ns). Ids never go back: the generator keeps its last tick.
var clock = tsc.NewWallTicker()

// tickOf is now as (ms << 12 | fraction), the fraction in 1/4096 ms.
func tickOf(t time.Time) uint64 { return tickOfNs(t.UnixNano()) }

func tickOfNs(ns int64) uint64 {
	if ns < 0 {
		return 0
	}
	ms := uint64(ns) / 1_000_000
	frac := (uint64(ns) % 1_000_000) * 4096 / 1_000_000
	return min(ms<<12|frac, lastTick)
}

// V7Generator makes monotonic UUIDv7s; safe for concurrent use. The zero value
// reads the system clock.
type V7Generator struct {
	last atomic.Uint64
	// Now is the clock (tests set a manual one); nil means the system clock,
	// read as described at the package's clock variable: the wall clock about
	// once a millisecond, the fraction from the CPU's counter in between.
	Now func() time.Time
}

// New returns the next UUIDv7: greater than every id this generator returned
// before, carrying the clock's millisecond unless ids came faster than 4096 a
// millisecond or the clock went back.
func (g *V7Generator) New() UUID {
	var t uint64
	if g.Now != nil {
		t = tickOf(g.Now())
	} else {
		t = tickOfNs(clock.UnixNanoCoarse())
	}
	for {
		last := g.last.Load()
		next := max(t, last+1)
		if next > lastTick {
			next = lastTick // past the 48-bit range: stay there
		}
		if g.last.CompareAndSwap(last, next) {
			return Compose7(next>>12, uint16(next&0xfff), random64())
		}
	}
}

var process V7Generator

// NewV7 returns a UUIDv7 from the process's generator: monotonic across every
// goroutine.
func NewV7() UUID { return process.New() }

// Tuid6 returns a tuid6 for the current time: 48-bit Unix milliseconds and 80
// random bits.
func Tuid6() UUID { return tuid6(int64(clock.UnixMilli())) }

// Tuid6At returns a tuid6 carrying t's millisecond (clamped to 1970…10889).
func Tuid6At(t time.Time) UUID {
	return tuid6(t.UnixMilli())
}

func tuid6(ms int64) UUID {
	ms = min(max(ms, 0), 1<<48-1)
	var u UUID
	binary.BigEndian.PutUint64(u[:8], uint64(ms)<<16|random64()&0xffff)
	binary.BigEndian.PutUint64(u[8:], random64())
	return u
}

// Stuid returns a stuid: 64-bit Unix microseconds, then 192 random bits.
func Stuid() [32]byte {
	var s [32]byte
	us := time.Now().UnixMicro()
	binary.BigEndian.PutUint64(s[:8], uint64(max(us, 0)))
	for i := 8; i < 32; i += 8 {
		binary.BigEndian.PutUint64(s[i:], random64())
	}
	return s
}

// StuidTime is the time in a stuid.
func StuidTime(s [32]byte) time.Time {
	return time.UnixMicro(int64(binary.BigEndian.Uint64(s[:8]))).UTC()
}

// UnixMilli is the first 48 bits of u as Unix milliseconds (the time of a
// UUIDv7 or tuid6, whatever the version bits say).
func (u UUID) UnixMilli() int64 {
	return int64(binary.BigEndian.Uint64(u[:8]) >> 16)
}

// Version is u's RFC 9562 version, or -1 when its variant is not RFC 9562's.
func (u UUID) Version() int {
	if u[8]&0xc0 != 0x80 {
		return -1
	}
	return int(u[6] >> 4)
}

// Time is the creation time of a version 1 or 7 UUID (as PostgreSQL 18's
// uuid_extract_timestamp); ok is false for other versions.
func (u UUID) Time() (t time.Time, ok bool) {
	switch u.Version() {
	case 7:
		return time.UnixMilli(u.UnixMilli()).UTC(), true
	case 1:
		// 60-bit count of 100 ns since 1582-10-15.
		low := uint64(binary.BigEndian.Uint32(u[0:4]))
		mid := uint64(binary.BigEndian.Uint16(u[4:6]))
		high := uint64(binary.BigEndian.Uint16(u[6:8]) & 0x0fff)
		ticks := high<<48 | mid<<32 | low
		const gregorianToUnix = 122_192_928_000_000_000 // 100 ns ticks, 1582-10-15 → 1970-01-01
		if ticks < gregorianToUnix {
			return time.Time{}, false
		}
		d := ticks - gregorianToUnix
		return time.Unix(int64(d/10_000_000), int64(d%10_000_000)*100).UTC(), true
	}
	return time.Time{}, false
}

// String is u in 8-4-4-4-12 lower-case hex.
func (u UUID) String() string {
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hex[c>>4], hex[c&15]
		j += 2
	}
	return string(b[:])
}

// Parse reads the 8-4-4-4-12 hex form (either case).
func Parse(s string) (UUID, error) {
	var u UUID
	if len(s) != 36 {
		return u, badLength(ErrText, len(s), 36, fmt.Sprintf("it is 36 characters, got %d", len(s)))
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, &TextError{Kind: ErrText, Position: i, Rule: "a hyphen belongs here"}
			}
			i++
			continue
		}
		hi, ok1 := hexValue(s[i])
		lo, ok2 := hexValue(s[i+1])
		if !ok1 || !ok2 {
			at := i
			if ok1 {
				at = i + 1
			}
			return u, &TextError{Kind: ErrText, Position: at, Rule: "only hex digits 0-9 a-f A-F"}
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, nil
}

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

var compact = base64.RawURLEncoding.Strict()

// ToCompact is b (16 or 32 bytes) as base64url without padding: 22 or 43
// characters.
func ToCompact(b []byte) string { return compact.EncodeToString(b) }

// FromCompact parses the compact form of a 16-byte id (22 characters).
func FromCompact(s string) (UUID, error) {
	var u UUID
	return u, fromCompact(s, u[:])
}

// StuidFromCompact parses the compact form of a stuid (43 characters).
func StuidFromCompact(s string) ([32]byte, error) {
	var b [32]byte
	return b, fromCompact(s, b[:])
}

func fromCompact(s string, out []byte) error {
	want := compact.EncodedLen(len(out))
	if len(s) != want {
		return badLength(ErrCompact, len(s), want, fmt.Sprintf("it is %d characters of base64url without padding, got %d", want, len(s)))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return &TextError{Kind: ErrCompact, Position: i, Rule: "only A-Z a-z 0-9 - _"}
		}
	}
	n, err := compact.Decode(out, []byte(s))
	if err != nil || n != len(out) {
		// Strict: the last character's spare bits must be zero, so every value
		// has one spelling.
		return &TextError{Kind: ErrCompact, Position: len(s) - 1, Rule: "the last character's spare bits must be zero (for 16 bytes: A, Q, g or w)"}
	}
	return nil
}

// MarshalText gives the canonical form, for encoding/json and friends.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads the canonical form (Parse's rules).
func (u *UUID) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// MarshalBinary gives the 16 bytes.
func (u UUID) MarshalBinary() ([]byte, error) { return append([]byte(nil), u[:]...), nil }

// UnmarshalBinary reads 16 bytes.
func (u *UUID) UnmarshalBinary(b []byte) error {
	if len(b) != 16 {
		return badLength(ErrBinary, len(b), 16, fmt.Sprintf("a UUID is 16 bytes, got %d", len(b)))
	}
	copy(u[:], b)
	return nil
}

// Value stores the UUID as text (a PostgreSQL uuid column takes it).
func (u UUID) Value() (driver.Value, error) { return u.String(), nil }

// Scan reads a UUID stored as text or as 16 bytes.
func (u *UUID) Scan(src any) error {
	switch v := src.(type) {
	case string:
		return u.UnmarshalText([]byte(v))
	case []byte:
		if len(v) == 16 {
			return u.UnmarshalBinary(v)
		}
		return u.UnmarshalText(v)
	}
	return fmt.Errorf("uuid: Scan: a UUID is scanned from text or 16 bytes, got %T", src)
}
