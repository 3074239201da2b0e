//! `nonceforge gen`: nonces, one a line, fast enough to pipe millions.

use crate::{CliError, key, lease};
use base64::Engine;
use clap::{Args, ValueEnum};
use nonceforge::{Bits, Cipher64, Cipher128, Layout, MachineId, NonceGenerator, NonceKind};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Kind {
    /// Unique and predictable; the fastest.
    Counter,
    /// Strictly increasing, carrying the millisecond it was made in.
    Sortable,
    /// Unique and unpredictable (needs a key: --key-file or $NONCEFORGE_KEY).
    Encrypted,
    /// RFC 9562 UUIDv7, monotonic (ms + 12-bit fraction + 62 random bits).
    Uuidv7,
    /// pg_tuid's tuid6: 48-bit Unix ms + 80 random bits.
    Tuid6,
    /// pg_tuid's stuid: 32 bytes, 64-bit Unix µs + 192 random bits.
    Stuid,
    /// RFC 9562 UUIDv4 (122 random bits).
    Uuidv4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Lower-case hex, zero-padded to the full width.
    Hex,
    /// The canonical UUID form, 8-4-4-4-12 (16-byte values).
    Uuid,
    /// Base64url without padding.
    Base64url,
    /// The unsigned big-endian integer, in decimal.
    Int,
}

#[derive(Debug, Args)]
pub struct GenArgs {
    /// Which kind of nonce.
    kind: Kind,
    /// Size in bits of a nonce: 64, 96 or 128 (default 128).
    #[arg(long, value_parser = parse_bits)]
    bits: Option<u32>,
    /// How many nonces to print.
    #[arg(short = 'n', long = "count", default_value_t = 1)]
    count: u64,
    /// Output format (default: uuid for tuid6, uuidv7 and uuidv4; hex otherwise).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// This machine's id, 0..=511 (0..=65535 with --layout wide), unique among
    /// the live generators of a cluster. One of --machine-id, --machine-id-env,
    /// --hosts, --lease or the environment variable NONCEFORGE_MACHINE_ID is
    /// required: there is no default id.
    #[arg(long, conflicts_with_all = ["machine_id_env", "hosts"], value_parser = parse_machine_id)]
    machine_id: Option<u16>,
    /// Take the machine id from the number at the end of this environment variable
    /// (e.g. POD_NAME=nonces-3).
    #[arg(long, value_name = "VAR", conflicts_with = "hosts")]
    machine_id_env: Option<String>,
    /// Take the machine id from this host's position in a comma-separated host list.
    #[arg(long, value_name = "HOST,HOST,...")]
    hosts: Option<String>,
    /// This host's name in --hosts (default: the OS host name).
    #[arg(long, requires = "hosts")]
    host: Option<String>,
    /// Epoch in milliseconds since 1970 (default 2025-01-01T00:00:00Z).
    #[arg(long, value_name = "UNIX_MS")]
    epoch: Option<u64>,
    /// The layout: standard (NoNoncense's 9-bit machine id, every size) or
    /// wide (a 16-bit machine id, 0..=65535, for 96- and 128-bit nonces only).
    /// Every member of a fleet must use the same one: decompose reads a nonce
    /// only with the layout it was made in.
    #[arg(long, default_value = "standard", value_parser = parse_layout)]
    layout: Layout,
    /// File holding the base key (hex or base64, at least 32 bytes) for encrypted
    /// nonces. Default: the environment variable NONCEFORGE_KEY.
    #[arg(long, value_name = "PATH")]
    key_file: Option<PathBuf>,
    /// Cipher for 64-bit encrypted nonces: speck64-128, blowfish or 3des.
    #[arg(long, default_value = "speck64-128", value_parser = parse_cipher64)]
    cipher64: Cipher64,
    /// Cipher for 128-bit encrypted nonces: aes256 or speck128-256.
    #[arg(long, default_value = "aes256", value_parser = parse_cipher128)]
    cipher128: Cipher128,
    /// At most this many nonces a second (paced in small batches, flushed as
    /// they are made), for long runs and load tests.
    #[arg(long, value_name = "PER_SECOND", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    rate: Option<u64>,
    /// Lease the machine id from a store (the URL as --backend's in `lease
    /// acquire --help`: postgres://, redis://, redis+sentinel://,
    /// redis+cluster://, etcd://). Generation stops (exit status 1) if the
    /// lease is lost; the id is released at the end, on SIGINT or SIGTERM.
    #[arg(long, value_name = "URL", conflicts_with_all = ["machine_id", "machine_id_env", "hosts"])]
    lease: Option<String>,
    /// With --lease, lease exactly the id this source gives — a Kubernetes
    /// StatefulSet pod's index: env:VAR (the index, or a name ending in it),
    /// file:PATH (a downward API labels file's apps.kubernetes.io/pod-index)
    /// or hostname. While another member holds that id (the pod this one
    /// replaces, still running or cut off) this one waits, saying so, and
    /// issues nothing until the id is released or has lapsed.
    #[arg(long, value_name = "SOURCE", requires = "lease", value_parser = parse_pod_index)]
    lease_id_from: Option<nonceforge_lease::PodIndex>,
    /// With --lease-id-from: give up waiting for the id after this long
    /// (default: wait as long as it takes).
    #[arg(long, value_name = "DURATION", requires = "lease_id_from", value_parser = lease::parse_duration)]
    lease_wait: Option<Duration>,
    /// At the end, print the generator's figures — and with --lease the
    /// lease's — as one JSON object on stderr: what was issued, waited for
    /// and refused, the headroom, the lease's state and renewals (the numbers
    /// the metrics export: docs/operations.md).
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    lease_args: crate::lease::LeaseArgs,
}

fn parse_bits(s: &str) -> Result<u32, String> {
    let v: u64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number: use 64, 96 or 128"))?;
    Bits::new(v).map(|b| b.bits()).map_err(|e| e.to_string())
}

/// A machine id of either layout (0..=65535); the generator's build checks
/// it against the layout chosen (MachineIdNeedsWide names the flag's value).
fn parse_machine_id(s: &str) -> Result<u16, String> {
    let v: u64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number in 0..=511 (0..=65535 with --layout wide)"))?;
    MachineId::new_in(Layout::Wide, v)
        .map(MachineId::get)
        .map_err(|e| e.to_string())
}

pub(crate) fn parse_layout(s: &str) -> Result<Layout, String> {
    Layout::parse(s).map_err(|e| e.to_string())
}

fn parse_pod_index(s: &str) -> Result<nonceforge_lease::PodIndex, String> {
    s.parse()
        .map_err(|e: nonceforge_lease::LeaseError| e.to_string())
}

fn parse_cipher64(s: &str) -> Result<Cipher64, String> {
    s.parse().map_err(|e: nonceforge::Error| e.to_string())
}

fn parse_cipher128(s: &str) -> Result<Cipher128, String> {
    s.parse().map_err(|e: nonceforge::Error| e.to_string())
}

fn machine_id(args: &GenArgs) -> Result<MachineId, CliError> {
    if let Some(var) = &args.machine_id_env {
        return Ok(MachineId::from_env(var)?);
    }
    if let Some(list) = &args.hosts {
        let hosts: Vec<&str> = list.split(',').collect();
        let host = match &args.host {
            Some(h) => h.clone(),
            None => MachineId::this_host().ok_or_else(|| {
                CliError::Usage("--hosts: cannot tell this host's name; pass --host".into())
            })?,
        };
        return Ok(MachineId::from_host_list(&hosts, &host)?);
    }
    // Either layout's range here; the build refuses an id above 511 in the
    // standard layout, naming the wide one.
    if let Some(id) = args.machine_id {
        return Ok(MachineId::new_in(Layout::Wide, id as u64)?);
    }
    match std::env::var(MACHINE_ID_ENV) {
        Ok(v) => {
            let id = parse_machine_id(v.trim())
                .map_err(|e| CliError::Usage(format!("{MACHINE_ID_ENV}={v:?}: {e}")))?;
            MachineId::new_in(args.layout, id as u64).map_err(|_| {
                CliError::Usage(format!(
                    "{MACHINE_ID_ENV}={v:?}: machine id {id} needs --layout wide (the standard layout's machine ids are 0..=511)"
                ))
            })
        }
        // No default: two members started alike would make the same nonces.
        Err(_) => Err(CliError::Usage(format!(
            "gen {}: needs this machine's id, chosen on purpose (two generators on one id make the same nonces): pass --machine-id N (0..=511; 0..=65535 with --layout wide), --machine-id-env VAR, --hosts HOST,HOST,… or --lease URL, or set {MACHINE_ID_ENV}",
            match args.kind {
                Kind::Sortable => "sortable",
                Kind::Encrypted => "encrypted",
                _ => "counter",
            }
        ))),
    }
}

/// The environment variable that may hold the machine id, when no flag names one.
pub const MACHINE_ID_ENV: &str = "NONCEFORGE_MACHINE_ID";

/// Nonces made per batch (one atomic reservation each).
const BATCH: usize = 4096;

pub fn run(args: GenArgs) -> Result<(), CliError> {
    let kind = match args.kind {
        Kind::Counter => NonceKind::Counter,
        Kind::Sortable => NonceKind::Sortable,
        Kind::Encrypted => NonceKind::Encrypted,
        Kind::Uuidv7 | Kind::Tuid6 | Kind::Stuid | Kind::Uuidv4 => return run_ids(&args),
    };
    let bits = Bits::new(args.bits.unwrap_or(128) as u64)?;
    args.layout.check(bits)?;
    let format = args.format.unwrap_or(Format::Hex);
    if format == Format::Uuid && bits != Bits::B128 {
        return Err(CliError::Usage(format!(
            "--format uuid: a UUID is 128 bits; this nonce is {bits}"
        )));
    }
    let lease = match &args.lease {
        Some(url) => Some(match &args.lease_id_from {
            None => lease::acquire_for_gen(url, &args.lease_args, args.layout)?,
            Some(source) => lease::acquire_exact_for_gen(
                url,
                source,
                args.lease_wait,
                &args.lease_args,
                args.layout,
            )?,
        }),
        None => None,
    };
    let builder = match &lease {
        Some(l) => l.builder(),
        None => NonceGenerator::builder(machine_id(&args)?),
    };
    let mut builder = builder
        .layout(args.layout)
        .cipher64(args.cipher64)
        .cipher128(args.cipher128);
    if let Some(epoch) = args.epoch {
        builder = builder.epoch_unix_ms(epoch);
    }
    let key = key::load(args.key_file.as_deref(), key::KEY_ENV)?;
    match (&key, kind) {
        (Some(k), _) => builder = builder.key(k),
        (None, NonceKind::Encrypted) => {
            return Err(CliError::Usage(format!(
                "encrypted nonces need a base key of at least 32 bytes: pass --key-file PATH or set {} (hex or base64)",
                key::KEY_ENV
            )));
        }
        (None, _) => {}
    }
    let generator = builder.build()?;
    if let Some(l) = &lease {
        l.attach(&generator)?;
    }
    if let Some(left) = generator.epoch_ends_in() {
        eprintln!(
            "nonceforge: warning: the 42-bit timestamp range ends in {} days: pick a later --epoch",
            left.as_secs() / 86_400
        );
    }

    let result = write_nonces(&generator, kind, bits, format, args.count, args.rate);
    if args.stats {
        let mut figures =
            serde_json::json!({"generator": crate::stats_json::generator(&generator.stats())});
        if let Some(l) = &lease {
            figures["lease"] = crate::stats_json::lease(l);
        }
        eprintln!("{figures}");
    }
    match lease {
        None => result,
        Some(l) => {
            let result = match result {
                Err(CliError::Nonce(nonceforge::Error::Disabled)) => {
                    Err(CliError::Stopped(lease::why_disabled(&l)))
                }
                other => other,
            };
            // Release whatever happened. A release that fails (the store slow or
            // gone) leaves every nonce written valid and the id held only until
            // its TTL runs out: a warning, not a failure of the run.
            let id = l.machine_id().get();
            if let Err(e) = l.release() {
                eprintln!(
                    "nonceforge: warning: could not release the lease on machine id {id} ({e}); it frees itself when its TTL runs out"
                );
            }
            result
        }
    }
}

/// Writes `count` nonces, `rate` a second at most; stops early on a signal
/// (with a lease: see `lease::catch_signals`).
fn write_nonces(
    generator: &NonceGenerator,
    kind: NonceKind,
    bits: Bits,
    format: Format,
    count: u64,
    rate: Option<u64>,
) -> Result<(), CliError> {
    let width = bits.bytes();
    // Paced: a batch every millisecond or so, flushed at once.
    let batch = rate.map_or(BATCH, |r| (r / 1000).clamp(1, BATCH as u64) as usize);
    let period = rate.map(|r| Duration::from_secs_f64(batch as f64 / r as f64));
    let mut raw = vec![0u8; batch * width];
    let mut text = Vec::with_capacity(batch * (width * 2 + 2).max(41));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut left = count;
    let start = Instant::now();
    let mut made = 0u64;
    while left > 0 && !lease::stopping() {
        let n = left.min(batch as u64) as usize;
        let raw = &mut raw[..n * width];
        generator.fill(kind, bits, raw)?;
        text.clear();
        for nonce in raw.chunks_exact(width) {
            format_into(&mut text, nonce, format);
        }
        out.write_all(&text)?;
        left -= n as u64;
        if let Some(period) = period {
            out.flush()?;
            made += 1;
            let due = start + period.mul_f64(made as f64);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// `gen uuidv7|tuid6|stuid|uuidv4`.
fn run_ids(args: &GenArgs) -> Result<(), CliError> {
    use nonceforge::uuid::{Tuid6Generator, UuidV7Generator, stuid, uuidv4};
    if args.bits.is_some() {
        return Err(CliError::Usage(
            "--bits applies to nonces; uuidv7, tuid6 and uuidv4 are 128 bits, stuid 256".into(),
        ));
    }
    let wide = matches!(args.kind, Kind::Stuid);
    let format = args
        .format
        .unwrap_or(if wide { Format::Hex } else { Format::Uuid });
    if wide && format == Format::Uuid {
        return Err(CliError::Usage(
            "--format uuid: a stuid is 32 bytes, not a UUID; use hex or base64url".into(),
        ));
    }
    if wide && format == Format::Int {
        return Err(CliError::Usage(
            "--format int: a stuid is 256 bits, too wide for an integer here; use hex or base64url"
                .into(),
        ));
    }
    let (mut v7, mut t6) = (UuidV7Generator::new(), Tuid6Generator::new(false));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut text = Vec::with_capacity(BATCH * 66);
    let mut left = args.count;
    while left > 0 {
        let n = left.min(BATCH as u64);
        text.clear();
        for _ in 0..n {
            match args.kind {
                Kind::Uuidv7 => format_into(&mut text, &v7.generate(), format),
                Kind::Tuid6 => format_into(&mut text, &t6.generate(), format),
                Kind::Uuidv4 => format_into(&mut text, &uuidv4(), format),
                _ => format_into(&mut text, &stuid(), format),
            }
        }
        out.write_all(&text)?;
        left -= n;
    }
    out.flush()?;
    Ok(())
}

fn format_into(text: &mut Vec<u8>, nonce: &[u8], format: Format) {
    match format {
        Format::Uuid => {
            let mut buf = [0u8; 36];
            nonceforge::extid::ExtId(nonce.try_into().expect("16 bytes")).write_uuid(&mut buf);
            text.extend_from_slice(&buf);
        }
        Format::Hex => {
            let at = text.len();
            text.resize(at + nonce.len() * 2, 0);
            hex::encode_to_slice(nonce, &mut text[at..]).expect("the slice is twice the input");
        }
        Format::Base64url => {
            let at = text.len();
            text.resize(at + nonce.len().div_ceil(3) * 4, 0);
            let n = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode_slice(nonce, &mut text[at..])
                .expect("4 bytes for every 3 is room enough");
            text.truncate(at + n);
        }
        Format::Int => {
            let mut w = [0u8; 16];
            w[16 - nonce.len()..].copy_from_slice(nonce);
            write!(text, "{}", u128::from_be_bytes(w)).expect("writing to a Vec cannot fail");
        }
    }
    text.push(b'\n');
}
