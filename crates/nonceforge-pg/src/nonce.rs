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
//! These functions call `nextval`, so they are VOLATILE and PARALLEL UNSAFE.

use crate::errors::{invalid, raise};
use nonceforge_core::{
    Bits, MachineId, NonceGenerator, NonceKind, SortableSequence, shared_sortable_word,
};
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;
use pgrx::{PgAtomic, PgSqlErrorCode, pg_shmem_init};
use sha2::Digest;
use std::cell::RefCell;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static MACHINE_ID: GucSetting<i32> = GucSetting::<i32>::new(0);
static KEY: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

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

pub(crate) fn register_settings() {
    GucRegistry::define_int_guc(
        c"nonceforge.machine_id",
        c"This server's machine id in nonces (0..511), unique in the cluster of servers.",
        c"Every server that makes nonces for the same purpose needs its own.",
        &MACHINE_ID,
        0,
        511,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"nonceforge.key",
        c"Base key for encrypted_nonce() (hex or base64, at least 32 bytes).",
        c"Superuser-only; never shown by SHOW ALL.",
        &KEY,
        GucContext::Suset,
        GucFlags::SUPERUSER_ONLY | GucFlags::NO_SHOW_ALL,
    );
}

extension_sql!(
    r#"
-- Ticks and slots for nonce(), encrypted_nonce(), sortable_nonce(): shared by
-- every backend, never reused.
CREATE SEQUENCE nonceforge_ticks_64 MINVALUE 0 START 0;
CREATE SEQUENCE nonceforge_ticks_96 MINVALUE 0 START 0;
CREATE SEQUENCE nonceforge_ticks_128 MINVALUE 0 START 0;
CREATE SEQUENCE nonceforge_sortable_slots MINVALUE 1 START 1;
-- The start time of every nonce generator of this database (Unix ms).
CREATE TABLE nonceforge_start (unix_ms bigint NOT NULL);
INSERT INTO nonceforge_start VALUES ((extract(epoch FROM clock_timestamp()) * 1000)::bigint);
"#,
    name = "nonce_state"
);

/// One backend's generator and what it has reserved.
struct Backend {
    settings: (i32, [u8; 32]),
    schema: String,
    generator: NonceGenerator,
    /// Next tick and end of the reserved block, per size.
    blocks: [(u64, u64); 3],
    sortable: [Option<SortableSequence>; 2],
}

thread_local! {
    static BACKEND: RefCell<Option<Backend>> = const { RefCell::new(None) };
}

fn block_len(bits: Bits) -> u64 {
    if bits == Bits::B64 { 256 } else { 1 << 16 }
}

fn bits_arg(bits: i32) -> Bits {
    Bits::new(bits.max(0) as u64)
        .unwrap_or_else(|_| invalid(format!("bits = {bits}: a nonce is 64, 96 or 128 bits")))
}

fn spi_i64(query: &str) -> i64 {
    Spi::get_one::<i64>(query)
        .unwrap_or_else(|e| invalid(format!("{query}: {e}")))
        .unwrap_or_else(|| invalid(format!("{query} returned NULL")))
}

fn with_backend<T>(f: impl FnOnce(&mut Backend) -> T) -> T {
    let key_text = KEY.get();
    let key_text = key_text.as_ref().map(|k| {
        k.to_str()
            .unwrap_or_else(|_| invalid("nonceforge.key is not UTF-8".into()))
    });
    let fingerprint: [u8; 32] = sha2::Sha256::digest(key_text.unwrap_or("").as_bytes()).into();
    let settings = (MACHINE_ID.get(), fingerprint);
    BACKEND.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|b| b.settings != settings) {
            let schema = Spi::get_one::<String>(
                "SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nonceforge'",
            )
            .ok()
            .flatten()
            .unwrap_or_else(|| invalid("the nonceforge extension is not installed in this database".into()));
            let start = spi_i64(&format!("SELECT unix_ms FROM {schema}.nonceforge_start"));
            let machine = MachineId::new(settings.0 as u64).unwrap_or_else(|e| raise(e));
            let mut builder = NonceGenerator::builder(machine).start_unix_ms(start as u64);
            if let Some(k) = key_text {
                let key = zeroize::Zeroizing::new(crate::extid::decode_key(k, "nonceforge.key"));
                builder = builder.key(&key);
            }
            let generator = builder.build().unwrap_or_else(|e| raise(e));
            *slot = Some(Backend { settings, schema, generator, blocks: [(0, 0); 3], sortable: [None, None] });
        }
        f(slot.as_mut().expect("made above"))
    })
}

fn next_tick(b: &mut Backend, bits: Bits) -> u64 {
    let i = bits as usize;
    if b.blocks[i].0 == b.blocks[i].1 {
        let n = spi_i64(&format!(
            "SELECT nextval('{}.nonceforge_ticks_{}')",
            b.schema,
            bits.bits()
        ));
        let first = (n as u64)
            .checked_mul(block_len(bits))
            .unwrap_or_else(|| invalid("the tick sequence is exhausted".into()));
        b.blocks[i] = (first, first + block_len(bits));
    }
    let t = b.blocks[i].0;
    b.blocks[i].0 += 1;
    t
}

fn from_tick(kind: NonceKind, bits: i32) -> Vec<u8> {
    let bits = bits_arg(bits);
    with_backend(|b| {
        if kind == NonceKind::Encrypted && !b.generator.has_key() {
            invalid("encrypted_nonce needs nonceforge.key: SET nonceforge.key = '<hex or base64 of 32+ bytes>' (as a superuser)".into());
        }
        let tick = next_tick(b, bits);
        b.generator
            .nonce_at_tick(kind, bits, tick)
            .unwrap_or_else(|e| raise(e))
            .to_vec()
    })
}

/// A counter nonce of `bits` (64, 96 or 128): unique, predictable, fastest.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn nonce(bits: i32) -> Vec<u8> {
    from_tick(NonceKind::Counter, bits)
}

/// An encrypted nonce of `bits`: unique and unpredictable (needs nonceforge.key).
#[pg_extern(volatile, strict, parallel_unsafe)]
fn encrypted_nonce(bits: i32) -> Vec<u8> {
    from_tick(NonceKind::Encrypted, bits)
}

/// A sortable nonce of 96 or 128 bits: strictly increasing within this backend,
/// carrying the millisecond it was made in.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn sortable_nonce(bits: i32) -> Vec<u8> {
    let bits = bits_arg(bits);
    if bits == Bits::B64 {
        if !SHARED_MEMORY.load(Ordering::Relaxed) {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "nonceforge: sortable_nonce(64) needs the library in shared_preload_libraries (one sequence shared by every backend)",
                "Add nonceforge to shared_preload_libraries in postgresql.conf and restart, or use sortable_nonce(96) or sortable_nonce(128)."
            );
        }
        return with_backend(|b| {
            b.generator
                .sortable_shared(Bits::B64, SORTABLE_64.get())
                .unwrap_or_else(|e| raise(e))
                .to_vec()
        });
    }
    with_backend(|b| {
        let j = bits as usize - 1;
        if b.sortable[j].is_none() {
            let slot = spi_i64(&format!(
                "SELECT nextval('{}.nonceforge_sortable_slots')",
                b.schema
            ));
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
