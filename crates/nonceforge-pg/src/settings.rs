//! The extension's settings, and the keys.
//!
//! | setting | context | what |
//! |---|---|---|
//! | `nonceforge.machine_id` | `postgresql.conf` / `ALTER SYSTEM` (reload) | this server's id in nonces, 0..511; unset (-1) means nonce functions refuse |
//! | `nonceforge.key_file` | server start, preloaded only | file with the base key of `encrypted_nonce()` |
//! | `nonceforge.extid_key_file` | server start, preloaded only | file with the master key of `extid_encode()`/`extid_decode()` |
//! | `nonceforge.server_order` | server start, preloaded only | `uuidv7()`/`tuid6()` strictly increasing across every backend and restart |
//!
//! **Keys never travel through a setting.** A setting's value can be read back
//! by roles that should not see it in too many ways: a placeholder set before
//! the library is loaded carries no superuser-only flag, `ALTER ROLE … SET`
//! stores it in `pg_db_role_setting`, and so on. So a setting only names a
//! *file*; the postmaster reads the file once, at start, while it loads
//! `shared_preload_libraries`, and the backends it forks inherit the bytes. The
//! file must be readable by nobody but its owner (mode 0600, like
//! `ssl_key_file`). Without the library preloaded no key is ever read, and the
//! key-using functions say so. The `nonceforge.` prefix is reserved, so a key
//! cannot be parked in a made-up `nonceforge.*` setting by mistake either.

use crate::errors::not_configured;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_sys;
use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::sync::OnceLock;
use zeroize::Zeroizing;

static MACHINE_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);
static KEY_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static EXTID_KEY_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static SERVER_ORDER: GucSetting<bool> = GucSetting::<bool>::new(false);

/// Set when `nonceforge.server_order` was asked for in a server that did not
/// preload the library: uuidv7()/tuid6() then refuse rather than quietly give
/// per-backend order.
static ORDER_WITHOUT_PRELOAD: OnceLock<bool> = OnceLock::new();

/// A key as the postmaster found it.
pub(crate) enum KeyState {
    /// Read from its file.
    Loaded(Zeroizing<Vec<u8>>),
    /// Its setting is empty.
    NotSet,
    /// Its file could not be used; why is in the server log (not sent to
    /// clients: it may name paths).
    Unusable,
}

static NONCE_KEY: OnceLock<KeyState> = OnceLock::new();
static EXTID_KEY: OnceLock<KeyState> = OnceLock::new();

const PRELOAD_HINT: &str = "As a superuser: add nonceforge to shared_preload_libraries in postgresql.conf, set the key's file (see the README, \"Keys\"), and restart the server.";

/// Defines the settings; `preloading` when the postmaster loads us.
pub(crate) fn register(preloading: bool) {
    GucRegistry::define_int_guc(
        c"nonceforge.machine_id",
        c"This server's machine id in nonces (0..511); -1 (the default) means not configured, and nonce functions refuse.",
        c"Every server, process or service that makes nonces in the same id space needs its own: set it in postgresql.conf or with ALTER SYSTEM, then reload.",
        &MACHINE_ID,
        -1,
        511,
        GucContext::Sighup,
        GucFlags::default(),
    );
    if preloading {
        // PostgreSQL allows settings fixed at server start only while
        // shared_preload_libraries loads.
        GucRegistry::define_string_guc(
            c"nonceforge.key_file",
            c"File holding the base key of encrypted_nonce() (hex or base64 of 32+ bytes, mode 0600), read at server start.",
            c"Superuser-only. The file is read once by the postmaster; the key never appears in a setting.",
            &KEY_FILE,
            GucContext::Postmaster,
            GucFlags::SUPERUSER_ONLY,
        );
        GucRegistry::define_string_guc(
            c"nonceforge.extid_key_file",
            c"File holding the master key of extid_encode()/extid_decode() (hex or base64 of 32+ bytes, mode 0600), read at server start.",
            c"Superuser-only. The file is read once by the postmaster; the key never appears in a setting.",
            &EXTID_KEY_FILE,
            GucContext::Postmaster,
            GucFlags::SUPERUSER_ONLY,
        );
        GucRegistry::define_bool_guc(
            c"nonceforge.server_order",
            c"uuidv7() and tuid6() strictly increase across all backends and restarts (a shared clock and a floor persisted in the data directory).",
            c"Off: each backend's uuidv7() is monotonic on its own, as in PostgreSQL 18.",
            &SERVER_ORDER,
            GucContext::Postmaster,
            GucFlags::default(),
        );
        NONCE_KEY.get_or_init(|| load_key("nonceforge.key_file", &KEY_FILE));
        EXTID_KEY.get_or_init(|| load_key("nonceforge.extid_key_file", &EXTID_KEY_FILE));
        ORDER_WITHOUT_PRELOAD.get_or_init(|| false);
    } else {
        ORDER_WITHOUT_PRELOAD.get_or_init(placeholder_asks_for_order);
    }
    // SAFETY: a plain C string; called while the process runs one thread.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"nonceforge".as_ptr()) };
}

/// Whether a placeholder (the library not preloaded) says
/// nonceforge.server_order = on.
fn placeholder_asks_for_order() -> bool {
    // SAFETY: GetConfigOption with missing_ok returns NULL or a string owned
    // by the GUC machinery, read at once.
    let value =
        unsafe { pg_sys::GetConfigOption(c"nonceforge.server_order".as_ptr(), true, false) };
    if value.is_null() {
        return false;
    }
    // SAFETY: non-null, NUL-terminated (above).
    let value = unsafe { std::ffi::CStr::from_ptr(value) }
        .to_string_lossy()
        .to_ascii_lowercase();
    matches!(value.trim(), "on" | "true" | "yes" | "1" | "t" | "y")
}

/// Reads a key file in the postmaster. Problems go to the server log, never to
/// a client.
fn load_key(setting: &str, file: &GucSetting<Option<CString>>) -> KeyState {
    let Some(path) = file.get() else {
        return KeyState::NotSet;
    };
    let path = path.to_string_lossy().into_owned();
    if path.is_empty() {
        return KeyState::NotSet;
    }
    match read_key_file(&path) {
        Ok(key) => KeyState::Loaded(key),
        Err(why) => {
            pgrx::warning!(
                "nonceforge: {setting} = '{path}' cannot be used: {why}; the functions that need this key will refuse until it is fixed and the server restarted"
            );
            KeyState::Unusable
        }
    }
}

fn read_key_file(path: &str) -> Result<Zeroizing<Vec<u8>>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it ({e})"))?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "it is readable or writable by group or others (mode {:o}); it must be mode 0600, owned by the server's user",
            meta.permissions().mode() & 0o777
        ));
    }
    let text =
        Zeroizing::new(std::fs::read_to_string(path).map_err(|e| format!("cannot read it ({e})"))?);
    decode_key(&text).ok_or_else(|| "it must hold hex or base64 of at least 32 bytes".into())
}

/// A key's bytes from hex or base64 text (at least 32 bytes).
pub(crate) fn decode_key(text: &str) -> Option<Zeroizing<Vec<u8>>> {
    use base64::Engine;
    let t = text.trim();
    let bytes = if t.len().is_multiple_of(2) && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        hex::decode(t).ok()
    } else {
        base64::engine::general_purpose::STANDARD.decode(t).ok()
    }?;
    let bytes = Zeroizing::new(bytes);
    (bytes.len() >= 32).then_some(bytes)
}

/// The key a function needs, or an error that says how to provide it.
/// `function` names the SQL function, `setting` the key's file setting.
pub(crate) fn key(function: &str, which: Key) -> &'static [u8] {
    let (setting, state) = match which {
        Key::Nonce => ("nonceforge.key_file", NONCE_KEY.get()),
        Key::ExtId => ("nonceforge.extid_key_file", EXTID_KEY.get()),
    };
    match state {
        Some(KeyState::Loaded(k)) => k,
        None => not_configured(
            format!(
                "{function} needs a key, and keys are read only when the library is in shared_preload_libraries"
            ),
            PRELOAD_HINT,
        ),
        Some(KeyState::NotSet) => not_configured(
            format!("{function} needs a key: {setting} is not set"),
            "As a superuser: write the key (hex or base64 of 32+ bytes) to a file only the server's user can read (chmod 600), name it in postgresql.conf, and restart the server.",
        ),
        Some(KeyState::Unusable) => not_configured(
            format!(
                "{function} needs a key: the file named by {setting} could not be used at server start"
            ),
            "The server log says why (a superuser can fix the file and restart the server).",
        ),
    }
}

/// Which key.
#[derive(Clone, Copy)]
pub(crate) enum Key {
    Nonce,
    ExtId,
}

/// This server's machine id, or an error that says how to configure one.
pub(crate) fn machine_id(function: &str) -> u64 {
    match MACHINE_ID.get() {
        id @ 0..=511 => id as u64,
        _ => not_configured(
            format!("{function} needs this server's machine id: nonceforge.machine_id is not set"),
            "As a superuser, give this server an id from 0 to 511 that no other member of the cluster uses: nonceforge.machine_id = 12 in postgresql.conf, or ALTER SYSTEM SET nonceforge.machine_id = 12; then SELECT pg_reload_conf().",
        ),
    }
}

/// Whether uuidv7()/tuid6() take their time from the server-wide clock.
pub(crate) fn server_order(function: &str) -> bool {
    if ORDER_WITHOUT_PRELOAD.get().copied().unwrap_or(false) {
        not_configured(
            format!(
                "{function}: nonceforge.server_order = on needs the library in shared_preload_libraries"
            ),
            PRELOAD_HINT,
        );
    }
    SERVER_ORDER.get()
}
