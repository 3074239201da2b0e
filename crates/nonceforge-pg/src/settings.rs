//! The extension's settings (the key files they name are read by `keys`).
//!
//! | setting | context | what |
//! |---|---|---|
//! | `nonceforge.machine_id` | `postgresql.conf` / `ALTER SYSTEM` (reload) | this server's id in nonces, 0..511 (0..65535 with `nonceforge.layout = wide`), or `lease` (server start, preloaded); unset means nonce functions refuse |
//! | `nonceforge.layout` | `postgresql.conf` / `ALTER SYSTEM` (reload) | `standard` (default: NoNoncense's 9-bit machine id) or `wide` (16 bits, 96- and 128-bit nonces only); the same on every member of the fleet |
//! | `nonceforge.lease_url` | server start, preloaded only | the lease store (`postgres://`, `redis://`, `etcd://`), without a password |
//! | `nonceforge.lease_url_file` | server start, preloaded only | a file (mode 0600) holding the store's URL, password included |
//! | `nonceforge.lease_namespace` | server start, preloaded only | the store's namespace, as every member of the fleet uses it (default `nonceforge`) |
//! | `nonceforge.lease_ttl` | server start, preloaded only | how long the store keeps the id without a renewal (default 10 s) |
//! | `nonceforge.lease_fast_start` | server start, preloaded only | `off` (default: every grant's nonces start the TTL and margin later, safe when the store goes back to an older copy), `verify` or `declared` (docs/lease-protocol.md) |
//! | `nonceforge.key_file` | server start, preloaded only | file with the base key of `encrypted_nonce()` |
//! | `nonceforge.extid_key_file` | server start, preloaded only | file with the master key of `extid_encode()`/`extid_decode()`: the current key version |
//! | `nonceforge.extid_key_version` | server start, preloaded only | that key's version, 0..15 (default 0): new ids carry it |
//! | `nonceforge.extid_old_key_files` | server start, preloaded only | older versions' key files, `VERSION:PATH, …`: their ids still decode after a rotation |
//! | `nonceforge.extid_version_in_band` | server start, preloaded only | on (default): ids carry their key version (sequence numbers < 2^56); off: the Plan B post's layout (< 2^60), the version kept beside the id |
//! | `nonceforge.server_order` | server start, preloaded only | `uuidv7()`/`tuid6()` strictly increasing across every backend and restart |
//! | `nonceforge.max_clock_wait` | `postgresql.conf` / `ALTER SYSTEM` (reload) | the longest a call waits for a clock that went back (default 5 s); further behind, calls refuse |
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

use crate::errors::{PRELOAD_HINT, not_configured};
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting, PostgresGucEnum};
use pgrx::pg_guard;
use pgrx::pg_sys;
use std::ffi::CString;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering};
use zeroize::Zeroizing;

static MACHINE_ID: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LEASE_URL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LEASE_URL_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LEASE_NAMESPACE: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"nonceforge"));
static LEASE_TTL_MS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
static LEASE_FAST_START: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"off"));

/// Whether `nonceforge.machine_id` was `lease` when the postmaster loaded the
/// library (the lease keeper runs): fixed for the server's life.
static LEASE_MODE: OnceLock<bool> = OnceLock::new();
static KEY_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static EXTID_KEY_FILE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static EXTID_KEY_VERSION: GucSetting<i32> = GucSetting::<i32>::new(0);
static EXTID_OLD_KEY_FILES: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static EXTID_VERSION_IN_BAND: GucSetting<bool> = GucSetting::<bool>::new(true);
static SERVER_ORDER: GucSetting<bool> = GucSetting::<bool>::new(false);
static MAX_CLOCK_WAIT_MS: GucSetting<i32> = GucSetting::<i32>::new(5_000);

/// `nonceforge.layout`'s values.
#[derive(Clone, Copy, PartialEq, Eq, PostgresGucEnum)]
enum LayoutSetting {
    #[name = c"standard"]
    Standard,
    #[name = c"wide"]
    Wide,
}
static LAYOUT: GucSetting<LayoutSetting> =
    GucSetting::<LayoutSetting>::new(LayoutSetting::Standard);

/// The layout `nonceforge.layout` names.
pub(crate) fn layout() -> nonceforge_core::Layout {
    match LAYOUT.get() {
        LayoutSetting::Standard => nonceforge_core::Layout::Standard,
        LayoutSetting::Wide => nonceforge_core::Layout::Wide,
    }
}

/// Set when `nonceforge.server_order` was asked for in a server that did not
/// preload the library: uuidv7()/tuid6() then refuse rather than quietly give
/// per-backend order.
static ORDER_WITHOUT_PRELOAD: OnceLock<bool> = OnceLock::new();

/// Defines the settings; `preloading` when the postmaster loads us.
pub(crate) fn register(preloading: bool) {
    // SAFETY: the check hook is a #[pg_guard] function that only reads its
    // argument and sets the hint PostgreSQL reports.
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"nonceforge.machine_id",
            c"This server's machine id in nonces: 0..511 (0..65535 with nonceforge.layout = wide), or 'lease' to lease one from nonceforge.lease_url at server start; empty (the default) means not configured, and nonce functions refuse.",
            c"Every server, process or service that makes nonces in the same id space needs its own: set it in postgresql.conf or with ALTER SYSTEM, then reload ('lease': restart).",
            &MACHINE_ID,
            GucContext::Sighup,
            GucFlags::default(),
            Some(check_machine_id),
            Some(assign_machine_id),
            None,
        );
    }
    GucRegistry::define_enum_guc(
        c"nonceforge.layout",
        c"Where the machine id sits in this server's nonces: standard (NoNoncense's 9 bits, machine ids 0..511, every size; the default) or wide (16 bits, machine ids 0..65535, 96- and 128-bit nonces only).",
        c"Every member of the fleet must use the same layout: the bytes of a nonce do not say which made them. A machine id above 511 needs wide.",
        &LAYOUT,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"nonceforge.max_clock_wait",
        c"The longest a call waits for the wall clock to catch up with values issued before (after a restart with the clock back, or a step back while running); a clock further behind is refused at once.",
        c"0 to 1 min; values are never issued below earlier ones, so a call either waits or refuses.",
        &MAX_CLOCK_WAIT_MS,
        0,
        60_000,
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    if preloading {
        define_lease_settings();
        LEASE_MODE.get_or_init(|| machine_setting() == Ok(MachineSetting::Lease));
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
        GucRegistry::define_int_guc(
            c"nonceforge.extid_key_version",
            c"The key version of nonceforge.extid_key_file's key (0..15): new external ids carry it.",
            c"After a rotation: the new key's file in nonceforge.extid_key_file, its version here, and the old key's file in nonceforge.extid_old_key_files.",
            &EXTID_KEY_VERSION,
            0,
            15,
            GucContext::Postmaster,
            // Not a secret, but hidden like every key setting: app roles see
            // a key version in each id they decode, not the server's keyring.
            GucFlags::SUPERUSER_ONLY,
        );
        GucRegistry::define_string_guc(
            c"nonceforge.extid_old_key_files",
            c"Older external-id key versions, as VERSION:PATH pairs separated by commas (files as nonceforge.extid_key_file's), read at server start: ids made under them still decode.",
            c"Superuser-only. A malformed list or an unusable file stops extid_encode()/extid_decode() until fixed (the server log says why).",
            &EXTID_OLD_KEY_FILES,
            GucContext::Postmaster,
            GucFlags::SUPERUSER_ONLY,
        );
        GucRegistry::define_bool_guc(
            c"nonceforge.extid_version_in_band",
            c"External ids carry their key version in 4 bits (on, the default: sequence numbers below 2^56), or not (off: the Plan B post's layout, sequence numbers below 2^60; the version is kept beside the id and given to extid_seq/extid_inspect).",
            c"Every face reading the same ids must use the same layout; changing it changes every id.",
            &EXTID_VERSION_IN_BAND,
            GucContext::Postmaster,
            GucFlags::default(),
        );
        GucRegistry::define_bool_guc(
            c"nonceforge.server_order",
            c"uuidv7() and tuid6() strictly increase across all backends and restarts (a shared clock and a floor persisted in the data directory).",
            c"Off: each backend's uuidv7() is monotonic on its own, as in PostgreSQL 18.",
            &SERVER_ORDER,
            GucContext::Postmaster,
            GucFlags::default(),
        );
        crate::keys::load(
            &KEY_FILE,
            &EXTID_KEY_FILE,
            u8::try_from(EXTID_KEY_VERSION.get()).unwrap_or(0),
            &EXTID_OLD_KEY_FILES,
            EXTID_VERSION_IN_BAND.get(),
        );
        ORDER_WITHOUT_PRELOAD.get_or_init(|| false);
    } else {
        ORDER_WITHOUT_PRELOAD.get_or_init(placeholder_asks_for_order);
    }
    // SAFETY: a plain C string; called while the process runs one thread.
    #[cfg(not(any(feature = "pg13", feature = "pg14")))]
    unsafe {
        pg_sys::MarkGUCPrefixReserved(c"nonceforge".as_ptr())
    };
    // PostgreSQL 14 cannot reserve a prefix: it only warns about placeholders
    // (SET nonceforge.key = … stays a harmless, unused placeholder there).
    // SAFETY: as above.
    #[cfg(any(feature = "pg13", feature = "pg14"))]
    unsafe {
        pg_sys::EmitWarningsOnPlaceholders(c"nonceforge".as_ptr())
    };
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

/// What `nonceforge.machine_id` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MachineSetting {
    /// Empty (or `-1`, as earlier versions wrote "not set").
    Unset,
    /// A fixed id, 0..65535 (above 511: the wide layout's only).
    Fixed(u64),
    /// Leased from the store in `nonceforge.lease_url` by the lease keeper.
    Lease,
}

/// Parses `nonceforge.machine_id`'s text.
pub(crate) fn parse_machine_id(text: &str) -> Result<MachineSetting, ()> {
    let t = text.trim();
    if t.is_empty() || t == "-1" {
        return Ok(MachineSetting::Unset);
    }
    if t.eq_ignore_ascii_case("lease") {
        return Ok(MachineSetting::Lease);
    }
    match t.parse::<u64>() {
        Ok(id) if id <= u64::from(WIDE_MAX) && t.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(MachineSetting::Fixed(id))
        }
        _ => Err(()),
    }
}

/// `nonceforge.machine_id` as parsed by its assign hook: -1 unset, 0..65535, or
/// [`LEASE_CODE`]. Read on every nonce call, so parsed once per change, not per
/// call (the string setting would be copied and parsed each time).
/// The largest id either layout takes (the wide one's); the core owns it.
const WIDE_MAX: u16 = nonceforge_core::MachineId::MAX_WIDE;
const WIDE_MAX_I64: i64 = WIDE_MAX as i64;

static MACHINE_PARSED: AtomicI64 = AtomicI64::new(-1);
const LEASE_CODE: i64 = 1 << 20;

fn machine_setting() -> Result<MachineSetting, ()> {
    Ok(match MACHINE_PARSED.load(Ordering::Relaxed) {
        LEASE_CODE => MachineSetting::Lease,
        id @ 0..=WIDE_MAX_I64 => MachineSetting::Fixed(id as u64),
        _ => MachineSetting::Unset,
    })
}

/// Keeps [`MACHINE_PARSED`] in step with the setting (the check hook has
/// accepted the value already).
#[pg_guard]
unsafe extern "C-unwind" fn assign_machine_id(
    newval: *const std::ffi::c_char,
    _extra: *mut std::ffi::c_void,
) {
    let parsed = if newval.is_null() {
        Ok(MachineSetting::Unset)
    } else {
        // SAFETY: PostgreSQL passes a NUL-terminated value.
        parse_machine_id(&unsafe { std::ffi::CStr::from_ptr(newval) }.to_string_lossy())
    };
    let code = match parsed {
        Ok(MachineSetting::Fixed(id)) => id as i64,
        Ok(MachineSetting::Lease) => LEASE_CODE,
        Ok(MachineSetting::Unset) | Err(()) => -1,
    };
    MACHINE_PARSED.store(code, Ordering::Relaxed);
}

/// Rejects a value of `nonceforge.machine_id` that is neither a number from 0
/// to 65535, `lease`, nor empty, wherever it is set (postgresql.conf, ALTER
/// SYSTEM, SET): 22023 with a hint.
#[pg_guard]
unsafe extern "C-unwind" fn check_machine_id(
    newval: *mut *mut std::ffi::c_char,
    _extra: *mut *mut std::ffi::c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to a NUL-terminated value (or NULL).
    let text = unsafe {
        if newval.is_null() || (*newval).is_null() {
            return true;
        }
        std::ffi::CStr::from_ptr(*newval)
            .to_string_lossy()
            .into_owned()
    };
    if parse_machine_id(&text).is_ok() {
        return true;
    }
    // SAFETY: the hint must be palloc'd; PostgreSQL reads and frees it.
    unsafe {
        pg_sys::GUC_check_errhint_string = pg_sys::pstrdup(
            c"nonceforge.machine_id is a number from 0 to 511 (to 65535 with nonceforge.layout = wide) that no other member of the fleet uses, or 'lease' (the library preloaded, nonceforge.lease_url set), or empty."
                .as_ptr(),
        );
    }
    false
}

/// Where this server's machine id comes from.
pub(crate) enum MachineSource {
    Fixed(u64),
    /// The lease keeper's id (see `lease`).
    Lease,
}

/// This server's machine id (or that it is leased), or an error that says how
/// to configure one.
pub(crate) fn machine_source(function: &str) -> MachineSource {
    let lease_mode = LEASE_MODE.get().copied().unwrap_or(false);
    let setting = machine_setting();
    let usable = matches!(
        (&setting, lease_mode),
        (Ok(MachineSetting::Lease), true) | (Ok(MachineSetting::Fixed(_)), false)
    );
    if !usable {
        crate::metrics::refused(crate::metrics::Refusal::Disabled);
    }
    match (setting, lease_mode) {
        (Ok(MachineSetting::Lease), true)
            if layout() as u64
                != crate::server::shared_state()
                    .lease_layout
                    .load(std::sync::atomic::Ordering::Acquire) =>
        {
            not_configured(
                format!(
                    "{function}: nonceforge.layout = '{}' differs from the layout the lease keeper leased its machine id in at server start (the lease namespace records one layout)",
                    layout().name()
                ),
                "Set nonceforge.layout back and reload, or restart the server to lease in the new layout (a namespace of the other layout refuses it: give it its own nonceforge.lease_namespace).",
            )
        }
        (Ok(MachineSetting::Lease), true) => MachineSource::Lease,
        (Ok(MachineSetting::Lease), false) => not_configured(
            format!(
                "{function}: nonceforge.machine_id = 'lease' takes effect when the server starts with the library in shared_preload_libraries"
            ),
            "As a superuser: add nonceforge to shared_preload_libraries, set nonceforge.lease_url (or nonceforge.lease_url_file), and restart the server.",
        ),
        (_, true) => not_configured(
            format!(
                "{function}: the server started with nonceforge.machine_id = 'lease' and holds a leased id; a change takes effect at the next restart"
            ),
            "Set nonceforge.machine_id back to 'lease', or restart the server to use the new value.",
        ),
        (Ok(MachineSetting::Fixed(id)), false)
            if id > 511 && layout() == nonceforge_core::Layout::Standard =>
        {
            not_configured(
                format!(
                    "{function}: nonceforge.machine_id = {id} needs nonceforge.layout = 'wide': the standard layout's machine ids are 0..511"
                ),
                "As a superuser, set nonceforge.layout = 'wide' (16-bit machine ids, 96- and 128-bit nonces; every member of the fleet the same) or give this server an id from 0 to 511, then SELECT pg_reload_conf().",
            )
        }
        (Ok(MachineSetting::Fixed(id)), false) => MachineSource::Fixed(id),
        (Ok(MachineSetting::Unset) | Err(()), false) => not_configured(
            format!("{function} needs this server's machine id: nonceforge.machine_id is not set"),
            "As a superuser, give this server an id from 0 to 511 that no other member of the cluster uses (nonceforge.machine_id = 12 in postgresql.conf, or ALTER SYSTEM SET nonceforge.machine_id = 12; then SELECT pg_reload_conf()), or lease one: nonceforge.machine_id = 'lease' with nonceforge.lease_url, and restart.",
        ),
    }
}

/// The id `nonceforge.machine_id` names, if it names one.
pub(crate) fn fixed_machine_id() -> Option<u64> {
    match machine_setting() {
        Ok(MachineSetting::Fixed(id)) => Some(id),
        _ => None,
    }
}

/// Whether the lease keeper runs in this server.
pub(crate) fn lease_mode() -> bool {
    LEASE_MODE.get().copied().unwrap_or(false)
}

fn define_lease_settings() {
    // SAFETY: the show hook is #[pg_guard]ed and returns a palloc'd string, as
    // PostgreSQL expects of a GUC's show hook; no check or assign hook.
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"nonceforge.lease_url",
            c"The lease store for nonceforge.machine_id = 'lease': postgres://…, redis://… or etcd://host:port[,host:port…], without a password (use nonceforge.lease_url_file for one).",
            c"Every member of the fleet (servers, services in any language) leases from the same store and namespace.",
            &LEASE_URL,
            GucContext::Postmaster,
            GucFlags::SUPERUSER_ONLY,
            None,
            None,
            Some(show_lease_url),
        );
    }
    GucRegistry::define_string_guc(
        c"nonceforge.lease_url_file",
        c"A file (mode 0600) holding the lease store's URL, password included; read by the lease keeper at server start.",
        c"Superuser-only. The URL never appears in a setting.",
        &LEASE_URL_FILE,
        GucContext::Postmaster,
        GucFlags::SUPERUSER_ONLY,
    );
    GucRegistry::define_string_guc(
        c"nonceforge.lease_namespace",
        c"The lease store's namespace (table {namespace}_leases or key prefix): the same for every member of the fleet.",
        c"Lower-case letters, digits and _, starting with a letter, at most 40.",
        &LEASE_NAMESPACE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"nonceforge.lease_fast_start",
        c"Whether a new grant's nonces may start right above the previous holders' floor: off, verify or declared.",
        c"off (the default) starts every grant the TTL and margin later, safe when the store fails over to a replica that was behind or is restored from a backup; verify where the store shows that acknowledged writes survive a failover; declared on the operator's word.",
        &LEASE_FAST_START,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"nonceforge.lease_ttl",
        c"How long the store keeps this server's machine id without a renewal; nonces stop a tenth of it earlier when renewals fail.",
        c"Renewals every third of it; 1 s to 1 h.",
        &LEASE_TTL_MS,
        1_000,
        3_600_000,
        GucContext::Postmaster,
        GucFlags::UNIT_MS,
    );
}

/// What `SHOW nonceforge.lease_url`, `current_setting()` and `pg_settings`
/// show: the URL with any credential replaced by `***` (the lease crate's one
/// rule). A URL carrying one is refused anyway; this keeps it off the screen
/// of whoever may read settings.
#[pg_guard]
unsafe extern "C-unwind" fn show_lease_url() -> *const std::ffi::c_char {
    let shown = LEASE_URL
        .get()
        .map(|v| nonceforge_lease::redact_url(&v.to_string_lossy()))
        .unwrap_or_default();
    let shown = CString::new(shown).unwrap_or_default();
    // SAFETY: pstrdup copies the NUL-terminated string into the current
    // memory context, which the caller of a show hook owns.
    unsafe { pg_sys::pstrdup(shown.as_ptr()) }
}

/// The lease settings, as the postmaster read them.
pub(crate) struct LeaseSettings {
    pub(crate) url: Zeroizing<String>,
    pub(crate) namespace: String,
    pub(crate) ttl: std::time::Duration,
    pub(crate) fast_start: nonceforge_lease::FastStart,
}

/// Reads the lease settings (in the lease keeper); an error says which setting
/// and why (for the server log: it may name a path, never the URL's password).
pub(crate) fn lease_settings() -> Result<LeaseSettings, String> {
    let text = |s: &GucSetting<Option<CString>>| {
        s.get()
            .map(|v| v.to_string_lossy().trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let url = match (text(&LEASE_URL), text(&LEASE_URL_FILE)) {
        (Some(_), Some(_)) => {
            return Err("set nonceforge.lease_url or nonceforge.lease_url_file, not both".into());
        }
        (None, None) => {
            return Err(
                "nonceforge.machine_id = 'lease' needs nonceforge.lease_url or nonceforge.lease_url_file".into(),
            );
        }
        (Some(url), None) => {
            if url_has_password(&url) {
                return Err("nonceforge.lease_url carries a password, which any superuser's SHOW, the server log or a dump could show: put the URL in a file (mode 0600) named by nonceforge.lease_url_file".into());
            }
            Zeroizing::new(url)
        }
        (None, Some(path)) => {
            let bytes = crate::keys::read_secret_file(&path)
                .map_err(|why| format!("nonceforge.lease_url_file = '{path}': {why}"))?;
            let url = std::str::from_utf8(&bytes)
                .map_err(|_| format!("nonceforge.lease_url_file = '{path}': not UTF-8 text"))?;
            Zeroizing::new(url.trim().to_owned())
        }
    };
    let fast_start = match text(&LEASE_FAST_START) {
        None => nonceforge_lease::FastStart::default(),
        Some(v) => v
            .parse()
            .map_err(|e| format!("nonceforge.lease_fast_start = '{v}': {e}"))?,
    };
    Ok(LeaseSettings {
        url,
        namespace: text(&LEASE_NAMESPACE).unwrap_or_else(|| "nonceforge".into()),
        ttl: std::time::Duration::from_millis(lease_ttl_ms()),
        fast_start,
    })
}

/// `nonceforge.lease_ttl` in ms, as the keeper leases with it.
pub(crate) fn lease_ttl_ms() -> u64 {
    LEASE_TTL_MS.get().max(1_000) as u64
}

/// Whether a store URL carries a credential, by the lease crate's one rule for
/// every face (the userinfo up to the last `@`, `?password=`, `?sslpassword=`,
/// any query parameter named like a password): what its clients would read a
/// password from.
pub(crate) fn url_has_password(url: &str) -> bool {
    nonceforge_lease::url_has_secret(url)
}

/// `nonceforge.max_clock_wait`, ms.
pub(crate) fn max_clock_wait_ms() -> u64 {
    u64::try_from(MAX_CLOCK_WAIT_MS.get()).unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_id_values() {
        use MachineSetting::*;
        assert_eq!(parse_machine_id(""), Ok(Unset));
        assert_eq!(parse_machine_id("-1"), Ok(Unset));
        assert_eq!(parse_machine_id("0"), Ok(Fixed(0)));
        assert_eq!(parse_machine_id(" 511 "), Ok(Fixed(511)));
        // The wide layout's ids: accepted when set, checked against the layout at use.
        assert_eq!(parse_machine_id("512"), Ok(Fixed(512)));
        assert_eq!(parse_machine_id("65535"), Ok(Fixed(65535)));
        assert_eq!(parse_machine_id("lease"), Ok(Lease));
        assert_eq!(parse_machine_id("LEASE"), Ok(Lease));
        for bad in [
            "65536", "-2", "+5", "1e2", "0x10", "leases", "lease 1", "7.0",
        ] {
            assert_eq!(parse_machine_id(bad), Err(()), "{bad}");
        }
    }

    #[test]
    fn passwords_in_urls() {
        assert!(url_has_password("postgres://app:pw@db/app"));
        assert!(url_has_password("redis://:pw@127.0.0.1:6379"));
        assert!(url_has_password("postgres://db/app?user=app&password=pw"));
        assert!(!url_has_password("postgres://app@db/app"));
        assert!(!url_has_password("redis://127.0.0.1:6379/0"));
        assert!(!url_has_password("etcd://10.0.0.1:2379,10.0.0.2:2379"));
        // What the clients read a password from, beyond `user:pass@host`.
        assert!(url_has_password("redis://u:s3/cret@127.0.0.1:6379"));
        assert!(url_has_password("postgres://app:a@b@db/app"));
        assert!(url_has_password("postgres://app@db/app?sslpassword=pw"));
        assert!(url_has_password("postgres://app@db/app?Pass%77ord=pw"));
        assert!(url_has_password("etcd://root:pw@10.0.0.1:2379"));
    }
}
