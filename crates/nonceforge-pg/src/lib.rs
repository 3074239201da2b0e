//! nonceforge as a PostgreSQL extension (`CREATE EXTENSION nonceforge;`).
//!
//! Each family of SQL functions lives in its own file, each function a thin
//! `#[pg_extern]` over the core crate. Bad input raises an ERROR with a 22xxx
//! SQLSTATE and a message naming the argument and the rule; no panic reaches
//! PostgreSQL (pgrx turns a Rust panic into an ERROR, and none is expected).

use pgrx::prelude::*;

::pgrx::pg_module_magic!(name, version);

mod errors;
mod extid;
mod nonce;
mod stuid;
mod tuid;
mod uuidv7;

/// Registers the extension's settings when the library is loaded.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    extid::register_settings();
    nonce::register_settings();
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries in
    // the postmaster; read here, in the same (single) thread.
    if unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        nonce::request_shared_memory();
    }
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec!["shared_preload_libraries = 'nonceforge'"]
    }
}
