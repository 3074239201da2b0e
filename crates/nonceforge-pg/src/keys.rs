//! The keys: read once by the postmaster, from files named by
//! `nonceforge.key_file` and `nonceforge.extid_key_file` (see `settings` for
//! why a key never travels through a setting), inherited by every backend,
//! zeroized when dropped.

use crate::errors::not_configured;
use crate::settings::PRELOAD_HINT;
use pgrx::guc::GucSetting;
use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::sync::OnceLock;
use zeroize::Zeroizing;

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

/// Reads both key files (in the postmaster, while it loads
/// shared_preload_libraries).
pub(crate) fn load(
    key_file: &GucSetting<Option<CString>>,
    extid_key_file: &GucSetting<Option<CString>>,
) {
    NONCE_KEY.get_or_init(|| load_key("nonceforge.key_file", key_file));
    EXTID_KEY.get_or_init(|| load_key("nonceforge.extid_key_file", extid_key_file));
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
    let bytes = read_secret_file(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| "it is not text".to_string())?;
    decode_key(text).ok_or_else(|| "it must hold hex or base64 of at least 32 bytes".into())
}

/// A secret file's bytes, if only its owner may read or write it.
pub(crate) fn read_secret_file(path: &str) -> Result<Zeroizing<Vec<u8>>, String> {
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
    std::fs::read(path)
        .map(Zeroizing::new)
        .map_err(|e| format!("cannot read it ({e})"))
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
