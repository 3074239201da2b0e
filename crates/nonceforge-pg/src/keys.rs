//! The keys: read once by the postmaster, from files named by
//! `nonceforge.key_file`, `nonceforge.extid_key_file` and
//! `nonceforge.extid_old_key_files` (see `settings` for why a key never travels
//! through a setting), inherited by every backend, zeroized when dropped.

use crate::errors::{PRELOAD_HINT, not_configured};
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
/// The external ids' key versions: the current one (`extid_key_file`'s), and
/// the older ones that still decode (`extid_old_key_files`).
static EXTID_VERSIONS: OnceLock<ExtIdVersions> = OnceLock::new();

/// The external ids' keyring beside the current key.
pub(crate) struct ExtIdVersions {
    /// `nonceforge.extid_key_version`: the current key's version.
    pub(crate) current: u8,
    /// Older versions' keys, for decoding.
    pub(crate) old: OldKeys,
    /// `nonceforge.extid_version_in_band`.
    pub(crate) in_band: bool,
}

/// Older external-id key versions and their keys.
pub(crate) type OldKeys = Vec<(u8, Zeroizing<Vec<u8>>)>;

/// Reads every key file (in the postmaster, while it loads
/// shared_preload_libraries).
pub(crate) fn load(
    key_file: &GucSetting<Option<CString>>,
    extid_key_file: &GucSetting<Option<CString>>,
    extid_key_version: u8,
    extid_old_key_files: &GucSetting<Option<CString>>,
    extid_in_band: bool,
) {
    NONCE_KEY.get_or_init(|| load_key("nonceforge.key_file", key_file));
    let old = load_old_keys(extid_key_version, extid_old_key_files);
    EXTID_KEY.get_or_init(|| match old {
        // A bad list of old keys stops the external ids altogether: ids of
        // those versions would fail to decode one by one otherwise, in
        // production, long after the restart that could have said so.
        Err(()) => KeyState::Unusable,
        Ok(_) => load_key("nonceforge.extid_key_file", extid_key_file),
    });
    EXTID_VERSIONS.get_or_init(|| ExtIdVersions {
        current: extid_key_version,
        old: old.unwrap_or_default(),
        in_band: extid_in_band,
    });
}

/// Parses `nonceforge.extid_old_key_files` ("VERSION:PATH, …") and reads each
/// file; every problem goes to the server log.
fn load_old_keys(current: u8, setting: &GucSetting<Option<CString>>) -> Result<OldKeys, ()> {
    let Some(list) = setting.get() else {
        return Ok(Vec::new());
    };
    let list = list.to_string_lossy().into_owned();
    let mut keys: OldKeys = Vec::new();
    let complain = |why: String| {
        pgrx::warning!(
            "nonceforge: nonceforge.extid_old_key_files: {why}; extid_encode() and extid_decode() will refuse until it is fixed and the server restarted"
        );
    };
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((v, path)) = entry.split_once(':') else {
            complain(format!(
                "'{}' is not VERSION:PATH",
                nonceforge_core::error::excerpt(entry)
            ));
            return Err(());
        };
        let Some(v) = v.trim().parse::<u8>().ok().filter(|v| *v <= 15) else {
            complain(format!(
                "'{}': the version must be in 0..15",
                nonceforge_core::error::excerpt(entry)
            ));
            return Err(());
        };
        if v == current || keys.iter().any(|(k, _)| *k == v) {
            complain(format!(
                "version {v} is given twice (nonceforge.extid_key_version is {current})"
            ));
            return Err(());
        }
        match read_key_file(path.trim()) {
            Ok(key) => keys.push((v, key)),
            Err(why) => {
                complain(format!("the file of version {v} cannot be used: {why}"));
                return Err(());
            }
        }
    }
    Ok(keys)
}

/// The external ids' key versions (current, and the older ones held).
pub(crate) fn extid_versions() -> Option<&'static ExtIdVersions> {
    EXTID_VERSIONS.get()
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
    if !matches!(state, Some(KeyState::Loaded(_))) && matches!(which, Key::Nonce) {
        crate::metrics::refused(crate::metrics::Refusal::NoKey);
    }
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
