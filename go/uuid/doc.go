// Package uuid makes the time-prefixed ids of nonceforge, byte-compatible with
// the Rust core, the CLI, PostgreSQL, Node and Elixir:
//
//   - UUIDv7 (RFC 9562 §5.7): 48-bit Unix milliseconds, version 7, a 12-bit
//     fraction of the millisecond (§6.2 method 3, as PostgreSQL 18), the
//     variant, 62 random bits. A [V7Generator] is monotonic: when the clock has
//     not moved past the last id's (millisecond, fraction), the next id takes
//     the last one's plus 1/4096 ms, so ids never go backwards, even when the
//     wall clock does. [NewV7] uses one generator for the process, safe for
//     concurrent use: every id it returns is greater than every id it returned
//     before.
//   - tuid6 (pg_tuid's format): 48-bit Unix milliseconds, then 80 random bits,
//     no version bits.
//   - stuid (pg_tuid's): 64-bit Unix microseconds, then 192 random bits.
//   - compact forms: base64url without padding (22 characters for 16 bytes,
//     43 for 32), parsed strictly: one spelling per value.
//
// The system clock is read about once a millisecond (wall clock included);
// within a millisecond the fraction comes from the CPU's invariant TSC, so a
// UUIDv7 costs about a seventh of google/uuid's NewV7 (bench/RESULTS.md). At
// more than 4096 ids a millisecond from one generator the fraction runs ahead
// of the clock (the RFC's monotonic counter), as in PostgreSQL 18.
//
// Random bits come from the runtime's per-thread ChaCha8 generator (the one
// behind math/rand/v2's top-level functions, seeded from the OS's random
// source), not one crypto/rand call per id.
package uuid
