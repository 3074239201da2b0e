//! nonceforge as a PostgreSQL extension (`CREATE EXTENSION nonceforge;`).
//!
//! Each family of SQL functions lives in its own file, each function a thin
//! `#[pg_extern]` over the core crate. Bad input raises an ERROR with a 22xxx
//! SQLSTATE and a message naming the argument and the rule; a server that is
//! not set up for a call (no machine id, no key, not preloaded) raises 55000 or
//! 0A000 with a HINT; no panic, backtrace or source path reaches a client
//! (`errors`).

use pgrx::prelude::*;

::pgrx::pg_module_magic!(name, version);

mod errors;
mod extid;
mod keys;
mod lease;
mod metrics;
mod nonce;
mod order;
mod pg_tuid_c;
mod pg_uuidv7;
mod series;
mod server;
mod settings;
mod stuid;
mod tuid;
mod uuidv7;

/// Registers the extension's settings (and, preloaded, reads the keys and asks
/// for shared memory) when the library is loaded.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    errors::quiet_backtraces();
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries in
    // the postmaster; read here, in the same (single) thread.
    let preloading = unsafe { pg_sys::process_shared_preload_libraries_in_progress };
    settings::register(preloading);
    if preloading {
        server::request_shared_memory();
        if settings::lease_mode() {
            lease::register_keeper();
        }
    }
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![
            "shared_preload_libraries = 'nonceforge'",
            "nonceforge.machine_id = 7",
        ]
    }
}
