// Package nonce makes counter, sortable and encrypted nonces of 64, 96 and
// 128 bits in nonceforge's layout, byte for byte what the Rust core, the CLI,
// PostgreSQL, Node and Elixir make: one id space across a polyglot fleet.
//
// Layout (big-endian): a 42-bit millisecond timestamp since the epoch
// (default 2025-01-01T00:00:00Z), the 9-bit machine id, then the counter —
// 13 bits (64-bit nonces), 45 bits (96) or 13 zero bits and 64 bits (128).
// Every live generator of a cluster needs its own machine id (0..511): give
// it one (Options.MachineID), take it from an environment variable
// (MachineIDFromEnv), from a host list (MachineIDFromHostList), or lease it
// (package lease of this module: the same stores and records as the Rust
// lease crate, docs/lease-protocol.md).
//
// Time rules, as the core's: the wall clock is read once, when the generator
// is built, and the monotonic clock after that, so a wall clock stepped back
// cannot repeat a nonce; a new generator starts in the millisecond after the
// one it was built in (and after Options.NotBefore), so a restarted process
// never reuses its previous instance's timestamps. A counter nonce's
// timestamp may not pass the clock: 64-bit counter nonces are held to 8192 a
// millisecond — a burst draws on the milliseconds the generator was idle, and
// waits (sleeping, not spinning) only when that bank is spent.
//
// Encrypted nonces are counter nonces put through a block cipher keyed per
// size from the base key by HKDF-SHA256 (label
// "nonceforge/encrypted-nonce/v1/<cipher>/<bits>"): Speck64/128 (or Blowfish,
// 3DES), Speck96/144, AES-256 (or Speck128/256). A permutation of unique
// inputs: unique, unpredictable, and Decrypt gives the counter nonce back.
//
// Unique means: among all nonces of one kind and size issued by generators
// with distinct machine ids and one epoch. Counter and sortable nonces share
// the layout and may be equal: use one kind per key.
//
// A Generator is safe for concurrent use; one nonce costs one atomic add and
// no allocation (figures: bench/RESULTS.md, "Go"). For many
// goroutines, give each a Local (Generator.Local), as the Rust core's
// LocalNonces: counter nonces from blocks of ticks (no shared write a nonce),
// encrypted nonces made eight at a time.
//
// The system clock is read about once a millisecond: the CPU's invariant TSC
// tells when the millisecond may have ended (as in the Rust core). A deadline
// (SetValidUntil, which a lease sets) costs nothing per nonce: it is checked
// where the clock is read anyway, and by CheckDeadline, which the lease calls
// from a timer.
package nonce
