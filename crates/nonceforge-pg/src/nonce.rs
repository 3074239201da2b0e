//! Nonces in SQL: `nonce(bits)`, `sortable_nonce(bits)`, `encrypted_nonce(bits)`.
//!
//! Every backend is its own process, and all of them share the machine id in
//! `nonceforge.machine_id`, so none may count on its own. Counter and encrypted
//! nonces take their ticks from sequences owned by the extension, a block at a
//! time (one `nextval` per 256 64-bit nonces or 65,536 wider ones), over a start
//! time fixed when the extension was created: ticks never repeat across
//! backends, restarts or crashes (a sequence never goes back). Sortable 96/128-bit
//! nonces come from a per-backend sequence whose slot is drawn from another
//! sequence. 64-bit sortable nonces have no room for a slot: every backend
//! takes them from one word in shared memory, which exists only when the library
//! is in `shared_preload_libraries` (otherwise `sortable_nonce(64)` is refused
//! with a hint). The word starts, at each server start, in the millisecond
//! after: a restarted server never repeats one, unless its wall clock went back.
//!
//! **Roles.** An application role needs EXECUTE on these functions and nothing
//! else: the sequences are reached by OID through `nextval_internal` without a
//! permission check (how PostgreSQL's identity columns use their sequences),
//! and the start time is read once per backend as the extension's owner in a
//! restricted security context, with every name schema-qualified. Nothing here
//! is SECURITY DEFINER, so no `search_path` of the caller's is ever used with
//! raised rights, and no call pays for a change of identity. The tables and
//! sequences themselves stay closed to everyone but their owner.
//!
//! **Machine id.** `nonceforge.machine_id` must be set for the server (0..511):
//! until it is, every function here refuses with a hint; there is no default.
//!
//! These functions draw from sequences, so they are VOLATILE and PARALLEL UNSAFE.

use crate::errors::{fail, invalid, pg_call, raise};
use crate::settings::{self, Key};
use nonceforge_core::{
    Bits, MachineId, NonceGenerator, NonceKind, SortableSequence, shared_sortable_word,
};
use pgrx::prelude::*;
use pgrx::{PgAtomic, PgSqlErrorCode, pg_shmem_init};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The 64-bit sortable sequence of every backend (shared memory).
static SORTABLE_64: PgAtomic<AtomicU64> =
    // SAFETY: the name is this extension's own; nothing else registers it.
    unsafe { PgAtomic::new(c"nonceforge_sortable_64") };

/// Whether SORTABLE_64 was requested (set in the postmaster, inherited by every
/// backend it forks).
static SHARED_MEMORY: AtomicBool = AtomicBool::new(false);

/// Asks for the shared word; only while `shared_preload_libraries` loads us.
pub(crate) fn request_shared_memory() {
    pg_shmem_init!(
        SORTABLE_64 = AtomicU64::new(shared_sortable_word(
            Bits::B64,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        ))
    );
    SHARED_MEMORY.store(true, Ordering::Relaxed);
}

extension_sql!(
    r#"
-- Ticks and slots for nonce(), encrypted_nonce(), sortable_nonce(): shared by
-- every backend, never reused. Only the extension's owner may touch them: the
-- functions reach them by OID, without a permission check (see nonce.rs), so
-- application roles need no right on them, and get none.
CREATE SEQUENCE nonceforge_ticks_64 MINVALUE 0 START 0;
CREATE SEQUENCE nonceforge_ticks_96 MINVALUE 0 START 0;
CREATE SEQUENCE nonceforge_ticks_128 MINVALUE 0 START 0;
CREATE SEQUENCE nonceforge_sortable_slots MINVALUE 1 START 1;
-- The start time of every nonce generator of this database (Unix ms).
CREATE TABLE nonceforge_start (unix_ms bigint NOT NULL);
INSERT INTO nonceforge_start VALUES ((extract(epoch FROM clock_timestamp()) * 1000)::bigint);
REVOKE ALL ON nonceforge_ticks_64, nonceforge_ticks_96, nonceforge_ticks_128,
    nonceforge_sortable_slots, nonceforge_start FROM PUBLIC;
"#,
    name = "nonce_state"
);

unsafe extern "C-unwind" {
    /// commands/sequence.h: `nextval()` on a sequence by OID; with
    /// `check_permissions` false it skips the USAGE/UPDATE check, as
    /// PostgreSQL's own identity columns do.
    fn nextval_internal(relid: pg_sys::Oid, check_permissions: bool) -> i64;
}

/// Where the extension keeps its state in this database.
struct Catalog {
    /// ticks_64, ticks_96, ticks_128, sortable_slots.
    sequences: [pg_sys::Oid; 4],
    start_unix_ms: u64,
}

/// One backend's generator and what it has reserved.
struct Backend {
    machine_id: u64,
    generator: NonceGenerator,
    /// Next tick and end of the reserved block, per size.
    blocks: [(u64, u64); 3],
    sortable: [Option<SortableSequence>; 2],
}

thread_local! {
    static CATALOG: RefCell<Option<Catalog>> = const { RefCell::new(None) };
    static BACKEND: RefCell<Option<Backend>> = const { RefCell::new(None) };
}

fn block_len(bits: Bits) -> u64 {
    if bits == Bits::B64 { 256 } else { 1 << 16 }
}

fn bits_arg(function: &str, bits: i32) -> Bits {
    Bits::new(bits.max(0) as u64).unwrap_or_else(|_| {
        invalid(format!(
            "{function}: bits = {bits}, but a nonce is 64, 96 or 128 bits"
        ))
    })
}

/// Runs `f` as `owner` in a restricted security context (no catalog or GUC
/// changes can happen in it); the caller's identity comes back however `f`
/// leaves (an ERROR unwinds through the guard; an abort restores it too).
fn as_owner<T>(owner: pg_sys::Oid, f: impl FnOnce() -> T) -> T {
    struct Restore(pg_sys::Oid, i32);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: puts back the identity read below.
            unsafe { pg_sys::SetUserIdAndSecContext(self.0, self.1) };
        }
    }
    let (mut user, mut context) = (pg_sys::InvalidOid, 0i32);
    // SAFETY: out-parameters for the current user and security context.
    unsafe { pg_sys::GetUserIdAndSecContext(&mut user, &mut context) };
    let _restore = Restore(user, context);
    let restricted =
        (pg_sys::SECURITY_LOCAL_USERID_CHANGE | pg_sys::SECURITY_RESTRICTED_OPERATION) as i32;
    // SAFETY: owner is the extension owner's OID, read from pg_extension.
    unsafe { pg_sys::SetUserIdAndSecContext(owner, context | restricted) };
    f()
}

/// Finds the extension's sequences and start time (once per backend).
fn catalog<T>(f: impl FnOnce(&Catalog) -> T) -> T {
    CATALOG.with(|cell| {
        if cell.borrow().is_none() {
            let found = pg_call("reading pg_extension", || {
                Spi::get_three::<pg_sys::Oid, pg_sys::Oid, String>(
                    "SELECT e.extowner, e.extnamespace, pg_catalog.quote_ident(n.nspname)
                       FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
                      WHERE e.extname OPERATOR(pg_catalog.=) 'nonceforge'",
                )
            });
            let Ok((Some(owner), Some(namespace), Some(schema))) = found else {
                invalid("the nonceforge extension is not installed in this database".into())
            };
            let oid = |name: &std::ffi::CStr| {
                // SAFETY: a NUL-terminated name and a namespace OID.
                let oid = unsafe { pg_sys::get_relname_relid(name.as_ptr(), namespace) };
                if oid == pg_sys::InvalidOid {
                    invalid(format!("the extension's relation {} is missing: ALTER EXTENSION nonceforge UPDATE, or drop and create it", name.to_string_lossy()));
                }
                oid
            };
            let sequences = [
                oid(c"nonceforge_ticks_64"),
                oid(c"nonceforge_ticks_96"),
                oid(c"nonceforge_ticks_128"),
                oid(c"nonceforge_sortable_slots"),
            ];
            let query = format!("SELECT unix_ms FROM {schema}.nonceforge_start");
            let start = as_owner(owner, || {
                pg_call("reading the nonce start time", || Spi::get_one::<i64>(&query))
            });
            let Ok(Some(start)) = start else {
                invalid("the extension's table nonceforge_start is empty".into())
            };
            *cell.borrow_mut() = Some(Catalog { sequences, start_unix_ms: start as u64 });
        }
        f(cell.borrow().as_ref().expect("set above"))
    })
}

/// The index of nonceforge_sortable_slots in [`Catalog::sequences`] (after the
/// three tick sequences, indexed by [`Bits`]).
const SORTABLE_SLOTS: usize = 3;

fn nextval(function: &str, which: usize) -> i64 {
    let relid = catalog(|c| c.sequences[which]);
    // SAFETY: relid is one of the extension's sequences, found by name in its
    // schema; an ERROR nextval_internal raises (the sequence is gone or at its
    // end) becomes a Rust panic at the FFI boundary, which pg_call reports.
    pg_call(function, || unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| nextval_internal(relid, false))
    })
}

/// A generator of this database's nonces: the server's machine id, the
/// extension's start time, and for encrypted nonces the key.
fn generator(machine_id: u64, key: Option<&[u8]>) -> NonceGenerator {
    let machine = MachineId::new(machine_id).unwrap_or_else(|e| raise(e));
    let builder = NonceGenerator::builder(machine).start_unix_ms(catalog(|c| c.start_unix_ms));
    let builder = match key {
        Some(k) => builder.key(k),
        None => builder,
    };
    builder.build().unwrap_or_else(|e| raise(e))
}

fn with_backend<T>(function: &str, f: impl FnOnce(&mut Backend) -> T) -> T {
    let machine_id = settings::machine_id(function);
    BACKEND.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|b| b.machine_id != machine_id) {
            *slot = Some(Backend {
                machine_id,
                generator: generator(machine_id, None),
                blocks: [(0, 0); 3],
                sortable: [None, None],
            });
        }
        f(slot.as_mut().expect("made above"))
    })
}

/// The generator for encrypted nonces: the same machine id and start, with the
/// key from nonceforge.key_file.
fn with_keyed<T>(function: &str, f: impl FnOnce(&mut Backend, &NonceGenerator) -> T) -> T {
    thread_local! {
        static KEYED: RefCell<Option<(u64, NonceGenerator)>> = const { RefCell::new(None) };
    }
    let key = settings::key(function, Key::Nonce);
    with_backend(function, |b| {
        KEYED.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.as_ref().is_none_or(|(id, _)| *id != b.machine_id) {
                *slot = Some((b.machine_id, generator(b.machine_id, Some(key))));
            }
            f(b, &slot.as_ref().expect("made above").1)
        })
    })
}

fn next_tick(function: &str, b: &mut Backend, bits: Bits) -> u64 {
    let i = bits as usize;
    if b.blocks[i].0 == b.blocks[i].1 {
        let n = nextval(function, i);
        let first = (n as u64)
            .checked_mul(block_len(bits))
            .unwrap_or_else(|| invalid(format!("{function}: the tick sequence is exhausted")));
        b.blocks[i] = (first, first + block_len(bits));
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
    with_backend(function, |b| {
        let tick = next_tick(function, b, bits);
        b.generator
            .nonce_at_tick(NonceKind::Counter, bits, tick)
            .unwrap_or_else(|e| raise(e))
            .to_vec()
    })
}

/// An encrypted nonce of `bits`: unique and unpredictable (needs the key in
/// nonceforge.key_file).
#[pg_extern(volatile, strict, parallel_unsafe)]
fn encrypted_nonce(bits: i32) -> Vec<u8> {
    let function = "encrypted_nonce(bits)";
    let bits = bits_arg(function, bits);
    with_keyed(function, |b, keyed| {
        let tick = next_tick(function, b, bits);
        keyed
            .nonce_at_tick(NonceKind::Encrypted, bits, tick)
            .unwrap_or_else(|e| raise(e))
            .to_vec()
    })
}

/// A sortable nonce of 96 or 128 bits: strictly increasing within this backend,
/// carrying the millisecond it was made in.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn sortable_nonce(bits: i32) -> Vec<u8> {
    let function = "sortable_nonce(bits)";
    let bits = bits_arg(function, bits);
    if bits == Bits::B64 {
        if !SHARED_MEMORY.load(Ordering::Relaxed) {
            fail(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "sortable_nonce(64) needs the library in shared_preload_libraries (one sequence shared by every backend)",
                Some(
                    "Add nonceforge to shared_preload_libraries in postgresql.conf and restart, or use sortable_nonce(96) or sortable_nonce(128).",
                ),
            );
        }
        return with_backend(function, |b| {
            b.generator
                .sortable_shared(Bits::B64, SORTABLE_64.get())
                .unwrap_or_else(|e| raise(e))
                .to_vec()
        });
    }
    with_backend(function, |b| {
        let j = bits as usize - 1;
        if b.sortable[j].is_none() {
            let slot = nextval(function, SORTABLE_SLOTS);
            b.sortable[j] = Some(
                b.generator
                    .sortable_sequence(bits, slot as u64)
                    .unwrap_or_else(|e| raise(e)),
            );
        }
        b.sortable[j]
            .as_mut()
            .expect("made above")
            .next_nonce()
            .unwrap_or_else(|e| raise(e))
            .to_vec()
    })
}

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
