//! Set-returning forms for bulk work — backfills, `INSERT … SELECT` of millions
//! of rows: `uuidv7_series(count)`, `nonce_series(bits, count)`,
//! `sortable_nonce_series(bits, count)` and `encrypted_nonce_series(bits,
//! count)`. Named to read beside `generate_series`; each returns `count`
//! values, the same as that many calls of the one-value function in a row
//! (server order, the floor, leases, the machine id: all of it), made in
//! batches of [`BATCH`] so that a row costs a fraction of a function call.
//! Called in the select list (`SELECT uuidv7_series(1000000)`) a row costs no
//! call into PostgreSQL at all; in `FROM`, PostgreSQL first stores the rows in
//! a tuplestore, which costs more than making them (bench/RESULTS.md).
//!
//! They are written against PostgreSQL's value-per-call protocol directly,
//! not through pgrx's `SetOfIterator`: each value is returned from the batch,
//! which lives in the call's multi-call memory and outlives the row, where
//! pgrx's machinery took about half of a row's cost (bench/RESULTS.md, "The
//! measurements behind the code").

use crate::errors::invalid;
use crate::nonce::{self, Kind};
use nonceforge_core::uuid as ids;
use pgrx::prelude::*;

/// Values made per batch.
pub(crate) const BATCH: usize = 256;
/// The largest value: a 128-bit nonce in a bytea (4-byte header).
const SLOT: usize = 20;

/// What a series is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum What {
    UuidV7,
    UuidV7ServerOrder,
    Nonce(Kind),
}

/// What a series keeps between calls, in the call's multi-call memory (plain
/// data: nothing to drop; PostgreSQL frees it with the query).
#[repr(C, align(8))]
struct Series {
    /// The values: uuids (16 bytes), or byteas (a 4-byte header, then the
    /// nonce: 12, 16 or 20 bytes). First, so that every value is 4-byte
    /// aligned, as a varlena's header must be.
    buf: [u8; BATCH * SLOT],
    /// Values still to make after those in `buf`.
    left: u64,
    /// The next value of `buf` to return, and how many it holds.
    pos: u32,
    len: u32,
    /// Bytes per value in `buf`.
    slot: u32,
    bits: i32,
    what: What,
}

/// Fills the buffer with the next batch.
fn refill(function: &str, st: &mut Series) {
    pgrx::check_for_interrupts!();
    let k = st.left.min(BATCH as u64) as usize;
    st.left -= k as u64;
    match st.what {
        What::UuidV7 => {
            let mut ids = [[0u8; 16]; BATCH];
            crate::uuidv7::with_backend_v7(|g| g.generate_many(&mut ids[..k], 0));
            for (i, id) in ids[..k].iter().enumerate() {
                st.buf[i * 16..(i + 1) * 16].copy_from_slice(id);
            }
        }
        What::UuidV7ServerOrder => {
            let first = crate::order::next_ticks(function, k as u64);
            let mut rand = [0u8; BATCH * 8];
            ids::rng::fill(&mut rand[..k * 8]);
            for (i, r) in rand[..k * 8].chunks_exact(8).enumerate() {
                let r = u64::from_be_bytes(r.try_into().expect("8 bytes"));
                st.buf[i * 16..(i + 1) * 16]
                    .copy_from_slice(&ids::v7::from_tick(first + i as u64, r));
            }
        }
        What::Nonce(kind) => {
            let slot = st.slot as usize;
            for (i, n) in nonce::batch(function, kind, st.bits, k).iter().enumerate() {
                let at = i * slot;
                // A 4-byte varlena header (SET_VARSIZE), then the bytes.
                let header = ((n.len() + 4) as u32) << 2;
                st.buf[at..at + 4].copy_from_slice(&header.to_ne_bytes());
                st.buf[at + 4..at + 4 + n.len()].copy_from_slice(n);
            }
        }
    }
    st.pos = 0;
    st.len = k as u32;
}

/// One call of a series: the first call checks the arguments and sets the
/// state up, each call returns the next value (a batch made when the last is
/// used up), the call after the last ends the set.
///
/// # Safety
/// `fcinfo` is PostgreSQL's, for a function declared `RETURNS SETOF` the type
/// `what` makes, with `count` its last argument (and `bits` before it for
/// nonces).
unsafe fn series_call(
    fcinfo: pg_sys::FunctionCallInfo,
    function: &str,
    kind: Option<Kind>,
) -> pg_sys::Datum {
    // SAFETY: PostgreSQL calls through fmgr with a valid fcinfo whose flinfo
    // lives for the query; fn_extra is ours (set by init_MultiFuncCall).
    unsafe {
        let flinfo = (*fcinfo).flinfo;
        let mut funcctx = (*flinfo).fn_extra as *mut pg_sys::FuncCallContext;
        if funcctx.is_null() {
            // The functions are STRICT: no argument is null.
            let (bits, count_at) = match kind {
                None => (0, 0),
                Some(_) => (pgrx::fcinfo::pg_getarg::<i32>(fcinfo, 0).unwrap_or(0), 1),
            };
            let count: i64 = pgrx::fcinfo::pg_getarg(fcinfo, count_at).unwrap_or(0);
            let left = u64::try_from(count).unwrap_or_else(|_| {
                invalid(format!("{function}: count = {count} must not be negative"))
            });
            let (what, slot) = match kind {
                None if crate::settings::server_order(function) => (What::UuidV7ServerOrder, 16),
                None => (What::UuidV7, 16),
                Some(k) => {
                    let len = nonce::nonce_len(function, bits);
                    // The machine id, the lease and the key: checked before any row.
                    nonce::batch(function, k, bits, 0);
                    (What::Nonce(k), 4 + len)
                }
            };
            // Refuses a caller that cannot take a set.
            funcctx = pg_sys::init_MultiFuncCall(fcinfo);
            let st = pg_sys::MemoryContextAllocZero(
                (*funcctx).multi_call_memory_ctx,
                std::mem::size_of::<Series>(),
            ) as *mut Series;
            (*st).left = left;
            (*st).what = what;
            (*st).bits = bits;
            (*st).slot = slot as u32;
            (*funcctx).user_fctx = st.cast();
        }
        let st = &mut *((*funcctx).user_fctx as *mut Series);
        let rsinfo = (*fcinfo).resultinfo as *mut pg_sys::ReturnSetInfo;
        if st.pos == st.len {
            if st.left == 0 {
                pg_sys::end_MultiFuncCall(fcinfo, funcctx);
                (*rsinfo).isDone = pg_sys::ExprDoneCond::ExprEndResult;
                (*fcinfo).isnull = true;
                return pg_sys::Datum::from(0usize);
            }
            refill(function, st);
        }
        let value = st.buf.as_ptr().add(st.pos as usize * st.slot as usize);
        st.pos += 1;
        (*rsinfo).isDone = pg_sys::ExprDoneCond::ExprMultipleResult;
        pg_sys::Datum::from(value)
    }
}

/// Declares a series' C entry point (and its version-1 record) for `$sql`.
macro_rules! series_entry {
    ($symbol:ident, $finfo:ident, $function:literal, $kind:expr) => {
        #[pg_guard]
        #[unsafe(no_mangle)]
        #[doc = concat!("The C entry point of `", $function, "`.")]
        pub unsafe extern "C-unwind" fn $symbol(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
            // SAFETY: the SQL declaration below matches what series_call reads.
            unsafe { series_call(fcinfo, $function, $kind) }
        }

        #[unsafe(no_mangle)]
        #[doc = concat!("Version 1 of the function-call interface, for `", $function, "`.")]
        pub extern "C-unwind" fn $finfo() -> *const pg_sys::Pg_finfo_record {
            static V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
            &V1
        }
    };
}

series_entry!(
    nonceforge_uuidv7_series,
    pg_finfo_nonceforge_uuidv7_series,
    "uuidv7_series(count)",
    None
);
series_entry!(
    nonceforge_nonce_series,
    pg_finfo_nonceforge_nonce_series,
    "nonce_series(bits, count)",
    Some(Kind::Counter)
);
series_entry!(
    nonceforge_sortable_nonce_series,
    pg_finfo_nonceforge_sortable_nonce_series,
    "sortable_nonce_series(bits, count)",
    Some(Kind::Sortable)
);
series_entry!(
    nonceforge_encrypted_nonce_series,
    pg_finfo_nonceforge_encrypted_nonce_series,
    "encrypted_nonce_series(bits, count)",
    Some(Kind::Encrypted)
);

extension_sql!(
    r#"
-- The set-returning forms (series.rs), declared by hand: their C entry points
-- follow PostgreSQL's value-per-call protocol themselves.
CREATE FUNCTION @extschema@.uuidv7_series(count pg_catalog.int8) RETURNS SETOF pg_catalog.uuid
STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_uuidv7_series';
CREATE FUNCTION @extschema@.nonce_series(bits pg_catalog.int4, count pg_catalog.int8) RETURNS SETOF pg_catalog.bytea
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_nonce_series';
CREATE FUNCTION @extschema@.sortable_nonce_series(bits pg_catalog.int4, count pg_catalog.int8) RETURNS SETOF pg_catalog.bytea
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_sortable_nonce_series';
CREATE FUNCTION @extschema@.encrypted_nonce_series(bits pg_catalog.int4, count pg_catalog.int8) RETURNS SETOF pg_catalog.bytea
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_encrypted_nonce_series';
-- It uses the server's key: only the roles an administrator names may call it.
REVOKE EXECUTE ON FUNCTION @extschema@.encrypted_nonce_series(integer, bigint) FROM PUBLIC;
"#,
    name = "series"
);
