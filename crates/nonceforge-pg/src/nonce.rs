//! Nonces in SQL: `nonce(bits)`, `sortable_nonce(bits)`, `encrypted_nonce(bits)`.
//!
//! Every backend is its own process, and all of them share the machine id in
//! `nonceforge.machine_id`, so none may count on its own. All of their state is
//! server-wide, in shared memory (`server`): counter and encrypted nonces take
//! their ticks from one counter per size, a block at a time (256 64-bit ticks
//! or 65,536 wider ones per atomic add), over the start of the server's run;
//! `sortable_nonce(64)` takes its values from one shared word. Sortable
//! 96/128-bit nonces come from a per-backend sequence whose slot is the
//! backend's own number (unique among live backends; a backend that takes over
//! a number starts in a later millisecond than its predecessor's last value).
//! So the library must be in `shared_preload_libraries`; otherwise these
//! functions refuse with a hint.
//!
//! Nothing is per database: two databases of one server, a template copy, a
//! dropped and re-created extension all draw from the same counters. Restarts,
//! crashes, backup restores and promotions are covered by the run's start and
//! the floor (`server`); a server in recovery refuses.
//!
//! **Roles.** An application role needs EXECUTE on these functions and nothing
//! else. No SQL runs behind them and nothing runs under another identity, so
//! nothing of a caller's (`search_path`, its objects) is ever consulted.
//! `encrypted_nonce()` uses the server's key: it is not executable by PUBLIC
//! after `CREATE EXTENSION` (grant it to the roles that need it).
//!
//! **Machine id.** `nonceforge.machine_id` must be set for the server (0..511,
//! or 0..65535 with `nonceforge.layout = wide`), or be `lease` (the lease keeper's id, see `lease`): until it is, every
//! function here refuses with a hint; there is no default. Under a lease, a
//! value leaves only if the lease covers the millisecond it was made in.
//!
//! These functions change shared state, so they are VOLATILE and PARALLEL UNSAFE.

use crate::errors::invalid;
use crate::keys::{self, Key};
use crate::lease;
use crate::metrics::Refusal;
use crate::server::{self, ServerClock, SharedState};
use crate::settings::{self, MachineSource};
use nonceforge_core::{Bits, Layout, MachineId, NonceGenerator, NonceKind, SortableSequence};
use pgrx::prelude::*;
use std::cell::RefCell;
use std::sync::atomic::Ordering;

type Generator = NonceGenerator<ServerClock>;

/// One backend's generator and what it has reserved.
struct Backend {
    machine_id: u64,
    /// `nonceforge.layout` when the generator was made.
    layout: Layout,
    /// The id is the lease keeper's.
    leased: bool,
    state: &'static SharedState,
    generator: Generator,
    /// The generator for encrypted nonces (same machine id and start), made at
    /// the first encrypted nonce.
    keyed: Option<Generator>,
    /// Next tick and end of the reserved block, per size.
    blocks: [(u64, u64); 3],
    sortable: [Option<SortableSequence<ServerClock>>; 2],
    /// Whether this backend has raised the shared 64-bit word to the run's start.
    sortable_64_started: bool,
    /// This backend's stripe of the issued counts (`metrics`).
    stripe: usize,
}

thread_local! {
    static BACKEND: RefCell<Option<Backend>> = const { RefCell::new(None) };
}

fn block_len(bits: Bits) -> u64 {
    if bits == Bits::B64 { 256 } else { 1 << 16 }
}

/// The bytes of a nonce of `bits` (checked as the functions check it).
pub(crate) fn nonce_len(function: &str, bits: i32) -> usize {
    bits_arg(function, bits).bytes()
}

fn bits_arg(function: &str, bits: i32) -> Bits {
    Bits::new(bits.max(0) as u64).unwrap_or_else(|_| {
        invalid(format!(
            "{function}: bits = {bits}, but a nonce is 64, 96 or 128 bits"
        ))
    })
}

/// A generator of this server's run: the machine id, the run's start and the
/// server's clock, and for encrypted nonces the key.
fn generator(
    state: &'static SharedState,
    machine_id: u64,
    layout: Layout,
    start: u64,
    key: Option<&[u8]>,
) -> Generator {
    let machine = MachineId::new_in(layout, machine_id).unwrap_or_else(|e| refuse(e));
    let builder = NonceGenerator::builder(machine)
        .layout(layout)
        .clock(ServerClock::new(state))
        .start_unix_ms(start);
    let builder = match key {
        Some(k) => builder.key(k),
        None => builder,
    };
    builder.build().unwrap_or_else(|e| refuse(e))
}

/// What a call makes, for the issued counts: sortable or not, the size, how
/// many.
struct Tally(bool, Bits, u64);

/// Runs `f` on this backend's generator (made at the first call, again when
/// `nonceforge.machine_id` or `nonceforge.layout` changes); under a lease, what `f` made leaves only
/// if the lease still covers it. What leaves is counted as `tally` says.
fn with_backend<T>(function: &str, tally: Tally, f: impl FnOnce(&mut Backend) -> T) -> T {
    let source = settings::machine_source(function);
    let layout = settings::layout();
    BACKEND.with(|cell| {
        let mut slot = cell.borrow_mut();
        let stale = match (slot.as_ref(), &source) {
            (None, _) => true,
            (Some(b), _) if b.layout != layout => true,
            (Some(b), MachineSource::Fixed(id)) => b.leased || b.machine_id != *id,
            (Some(b), MachineSource::Lease) => !b.leased,
        };
        if stale {
            let state = server::state(function);
            // SAFETY: reads a flag in shared memory.
            if unsafe { pgrx::pg_sys::RecoveryInProgress() } {
                crate::metrics::refused(Refusal::Disabled);
            }
            // Under a lease, above every value its earlier holders issued. The
            // run may have started below that (server-ordered ids start it
            // too): every backend computes the same start, so they agree.
            let (machine_id, above) = match source {
                MachineSource::Fixed(id) => (id, 0),
                MachineSource::Lease => {
                    let (id, floor) = lease::granted(state, function);
                    (id, floor + 1)
                }
            };
            // Refuses in recovery; waits until the server's clock is past the start
            // (the generator's clock may read up to a millisecond behind it).
            let start = state.run_start(function).max(above);
            state.wait_for_clock(function, start + 1);
            *slot = Some(Backend {
                machine_id,
                layout,
                leased: matches!(source, MachineSource::Lease),
                state,
                generator: generator(state, machine_id, layout, start, None),
                keyed: None,
                blocks: [(0, 0); 3],
                sortable: [None, None],
                sortable_64_started: false,
                stripe: backend_slot() as usize,
            });
        }
        let b = slot.as_mut().expect("made above");
        // A size the layout has not (64 bits, wide) is refused before a block
        // of ticks is reserved for it.
        b.layout.check(tally.1).unwrap_or_else(|e| refuse(e));
        let made = f(b);
        if b.leased {
            lease::admits(b.state, function);
        }
        let Tally(sortable, bits, n) = tally;
        b.state.stats.issued(b.stripe, sortable, bits, n);
        made
    })
}

/// Counts a refusal from the core by its reason, then raises it.
fn refuse(e: nonceforge_core::Error) -> ! {
    use nonceforge_core::Error;
    let why = match e {
        Error::EpochExhausted { .. } => Some(Refusal::EpochExhausted),
        Error::CounterExhausted { .. } => Some(Refusal::CounterExhausted),
        Error::Disabled => Some(Refusal::Disabled),
        Error::NoKey => Some(Refusal::NoKey),
        _ => None,
    };
    if let Some(why) = why {
        crate::metrics::refused(why);
    }
    crate::errors::raise(e)
}

/// The next tick of `bits` from this backend's block (a new block from the
/// shared counter when it is used up); its millisecond is below the floor on
/// disk before it is returned.
fn next_tick(function: &str, b: &mut Backend, bits: Bits) -> u64 {
    let i = bits as usize;
    if b.blocks[i].0 == b.blocks[i].1 {
        let len = block_len(bits);
        let first = b.state.ticks[i].fetch_add(len, Ordering::Relaxed);
        let last = first.checked_add(len - 1).unwrap_or_else(|| {
            crate::metrics::refused(Refusal::CounterExhausted);
            invalid(format!("{function}: the tick counter is exhausted"))
        });
        // The block's last timestamp (128-bit counters never carry).
        let carry = if bits == Bits::B128 {
            0
        } else {
            last >> b.layout.counter_bits(bits)
        };
        let ms = b.generator.started_unix_ms().saturating_add(carry);
        b.state.admit(function, ms);
        b.blocks[i] = (first, first + len);
    }
    let t = b.blocks[i].0;
    b.blocks[i].0 += 1;
    t
}

/// A counter nonce of `bits` (64, 96 or 128): unique, predictable, fastest.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn nonce(bits: i32) -> Vec<u8> {
    let function = "nonce(bits)";
    let bits = bits_arg(function, bits);
    with_backend(function, Tally(false, bits, 1), |b| {
        counter_in(function, b, bits)
    })
}

/// An encrypted nonce of `bits`: unique and unpredictable (needs the key in
/// nonceforge.key_file).
#[pg_extern(volatile, strict, parallel_unsafe)]
fn encrypted_nonce(bits: i32) -> Vec<u8> {
    let function = "encrypted_nonce(bits)";
    let bits = bits_arg(function, bits);
    let key = keys::key(function, Key::Nonce);
    with_backend(function, Tally(false, bits, 1), |b| {
        encrypted_in(function, b, bits, key)
    })
}

/// A sortable nonce of 96 or 128 bits: strictly increasing within this backend,
/// carrying the millisecond it was made in.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn sortable_nonce(bits: i32) -> Vec<u8> {
    let function = "sortable_nonce(bits)";
    let bits = bits_arg(function, bits);
    with_backend(function, Tally(true, bits, 1), |b| {
        sortable_in(function, b, bits)
    })
}

/// The parts of a plain (counter or sortable) nonce made in `layout`
/// (`standard`, the default, or `wide`; the bytes do not say which) with the
/// epoch `epoch_unix_ms` (default 2025-01-01): the millisecond it carries (Unix
/// ms), its machine id and its counter field. For an encrypted nonce, the
/// parts of what it encrypts are hidden: it is refused or gives noise. It
/// reads no server state: IMMUTABLE, and any role may call it.
#[pg_extern(immutable, strict, parallel_safe)]
fn nonce_inspect(
    nonce: &[u8],
    layout: default!(&str, "'standard'"),
    epoch_unix_ms: default!(i64, 1_735_689_600_000),
) -> TableIterator<
    'static,
    (
        name!(unix_ms, i64),
        name!(machine_id, i32),
        name!(counter, pgrx::AnyNumeric),
    ),
> {
    let layout = Layout::parse(layout).unwrap_or_else(|e| crate::errors::raise(e));
    let p = layout
        .decompose(nonce, epoch_unix_ms as u64)
        .unwrap_or_else(|e| crate::errors::raise(e));
    TableIterator::once((
        p.unix_ms as i64,
        i32::from(p.machine_id),
        pgrx::AnyNumeric::from(p.counter),
    ))
}

/// The three kinds, for the set-returning forms (`series`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Counter,
    Encrypted,
    Sortable,
}

/// `count` nonces of a kind, in batches (one backend lookup, one lease check
/// and one interrupt check per batch): what `series` streams.
pub(crate) fn batch(function: &str, kind: Kind, bits: i32, count: usize) -> Vec<Vec<u8>> {
    let bits = bits_arg(function, bits);
    let key = matches!(kind, Kind::Encrypted).then(|| keys::key(function, Key::Nonce));
    let tally = Tally(kind == Kind::Sortable, bits, count as u64);
    with_backend(function, tally, |b| {
        (0..count)
            .map(|_| match (kind, key) {
                (Kind::Encrypted, Some(key)) => encrypted_in(function, b, bits, key),
                (Kind::Sortable, _) => sortable_in(function, b, bits),
                _ => counter_in(function, b, bits),
            })
            .collect()
    })
}

fn counter_in(function: &str, b: &mut Backend, bits: Bits) -> Vec<u8> {
    let tick = next_tick(function, b, bits);
    let nonce = b
        .generator
        .nonce_at_tick(NonceKind::Counter, bits, tick)
        .unwrap_or_else(|e| refuse(e));
    nonce.to_vec()
}

fn encrypted_in(function: &str, b: &mut Backend, bits: Bits, key: &[u8]) -> Vec<u8> {
    let tick = next_tick(function, b, bits);
    if b.keyed.is_none() {
        let start = b.generator.started_unix_ms();
        b.keyed = Some(generator(b.state, b.machine_id, b.layout, start, Some(key)));
    }
    let nonce = b
        .keyed
        .as_ref()
        .expect("made above")
        .nonce_at_tick(NonceKind::Encrypted, bits, tick)
        .unwrap_or_else(|e| refuse(e));
    nonce.to_vec()
}

fn sortable_in(function: &str, b: &mut Backend, bits: Bits) -> Vec<u8> {
    let nonce = if bits == Bits::B64 {
        if !b.sortable_64_started {
            // The word starts at the run's start (ms << 13, counter 0).
            let word = b.generator.started_unix_ms() << 13;
            b.state.sortable_64.fetch_max(word, Ordering::Relaxed);
            b.sortable_64_started = true;
        }
        b.generator
            .sortable_shared(Bits::B64, &b.state.sortable_64)
            .unwrap_or_else(|e| refuse(e))
    } else {
        let j = bits as usize - 1;
        if b.sortable[j].is_none() {
            b.sortable[j] = Some(sortable_sequence(function, b, bits));
        }
        b.sortable[j]
            .as_mut()
            .expect("made above")
            .next_nonce()
            .unwrap_or_else(|e| refuse(e))
    };
    let bytes = nonce.to_vec();
    let ms = b
        .generator
        .decompose(&bytes)
        .unwrap_or_else(|e| refuse(e))
        .unix_ms;
    b.state.admit(function, ms);
    bytes
}

/// This backend's sortable sequence of `bits`, in the slot of its backend
/// number. The number was someone else's before: that backend's values carry
/// milliseconds up to the server's clock when it exited, so this sequence
/// starts two milliseconds later (the generator's clock may read up to one
/// behind the server's).
fn sortable_sequence(function: &str, b: &Backend, bits: Bits) -> SortableSequence<ServerClock> {
    b.state.wait_for_clock(function, b.state.now_ms() + 2);
    b.generator
        .sortable_sequence(bits, backend_slot())
        .unwrap_or_else(|e| refuse(e))
}

/// This backend's number, 1.., unique among the server's live processes.
fn backend_slot() -> u64 {
    #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15", feature = "pg16"))]
    // SAFETY: set once in InitPostgres, before any function can run.
    let n = i64::from(unsafe { pgrx::pg_sys::MyBackendId });
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    // SAFETY: set once in InitProcess, before any function can run.
    let n = i64::from(unsafe { pgrx::pg_sys::MyProcNumber }) + 1;
    u64::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .unwrap_or_else(|| invalid("sortable_nonce(): this process has no backend number".into()))
}

extension_sql!(
    r#"
-- It uses the server's key: only the roles an administrator names may call it.
REVOKE EXECUTE ON FUNCTION @extschema@.encrypted_nonce(integer) FROM PUBLIC;
"#,
    name = "encrypted_nonce_grants",
    requires = [encrypted_nonce]
);

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn sortable_64_from_shared_memory_increases() {
        // The test server preloads the library (pg_test::postgresql_conf_options).
        let ok = Spi::get_one::<bool>(
            "SELECT bool_and(n > p) AND count(*) = 19999 FROM (SELECT n, lag(n) OVER (ORDER BY i) p
             FROM (SELECT sortable_nonce(64) n, i FROM generate_series(1, 20000) i) g) s WHERE p IS NOT NULL",
        );
        assert_eq!(ok, Ok(Some(true)));
    }
}
