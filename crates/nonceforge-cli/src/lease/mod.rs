//! `nonceforge lease acquire|status|release`, and the lease options `gen --lease` shares.

mod args;
mod bench;

use crate::CliError;
pub use args::{LayoutArg, LeaseArgs, parse_duration};
use clap::Subcommand;
use nonceforge::Layout;
use nonceforge_lease::{Lease, LeaseError, LeaseState};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The store URLs every `--backend` and `--lease` takes (the lease crate
/// parses them).
pub(crate) const STORE_URLS: &str = "The store: postgres://… (several hosts with \
target_session_attrs=read-write follow a promotion), redis://…, \
redis+sentinel://host:port[,…]/service[/db], redis+cluster://host:port[,…] or \
etcd://host:port[,host:port…]";

#[derive(Debug, Subcommand)]
pub enum LeaseCommand {
    /// Take a free machine id, print it, and hold it (renewing) until
    /// SIGINT/SIGTERM or --for has passed; then release it.
    ///
    /// Example:
    ///   nonceforge lease acquire --backend postgres://app@127.0.0.1/app --for 30s
    #[command(verbatim_doc_comment)]
    Acquire {
        #[arg(long, value_name = "URL", help = STORE_URLS)]
        backend: String,
        /// Hold the lease this long, then release it (default: until a signal).
        #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
        hold_for: Option<Duration>,
        /// Print JSON instead of key=value text: one object at the grant, and
        /// the lease's figures (state, renewals; docs/operations.md) at the end.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        layout: LayoutArg,
        #[command(flatten)]
        lease: LeaseArgs,
    },
    /// List the machine ids the store has records of: holder, token, time left, floor.
    ///
    /// A wide namespace may hold 65,536: --summary counts them (held, free,
    /// expired, expiring, never leased), and the list comes in pages of
    /// --limit ids (default 1000) from --after ID on.
    ///
    /// Example:
    ///   nonceforge lease status --backend redis://127.0.0.1:6379 --layout wide --summary
    #[command(verbatim_doc_comment)]
    Status {
        #[arg(long, value_name = "URL", help = STORE_URLS)]
        backend: String,
        /// One JSON object a line.
        #[arg(long)]
        json: bool,
        /// Counts only: held (and of them expiring within --expiring), free,
        /// expired, never leased; no list.
        #[arg(long)]
        summary: bool,
        /// The most ids listed (a line after the last says how to go on).
        #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
        limit: u32,
        /// List only ids above this one (the next page).
        #[arg(long, value_name = "ID")]
        after: Option<u16>,
        /// --summary: a held id counts as expiring when less than this is left.
        #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
        expiring: Duration,
        #[command(flatten)]
        layout: LayoutArg,
        #[command(flatten)]
        lease: LeaseArgs,
    },
    /// Time acquiring (median of many), and nonce rates with a lease held and without.
    ///
    /// Example:
    ///   nonceforge lease bench --backend redis://127.0.0.1:6379 --acquires 100
    #[command(verbatim_doc_comment)]
    Bench(bench::LeaseBenchArgs),
    /// Free a machine id held by a process known to be gone (its floor stays).
    Release {
        #[arg(long, value_name = "URL", help = STORE_URLS)]
        backend: String,
        /// The machine id to free (0..=511; 0..=65535 with --layout wide).
        #[arg(long)]
        id: u16,
        /// Only if this holder holds it.
        #[arg(long = "if-holder", value_name = "TEXT")]
        if_holder: Option<String>,
        #[command(flatten)]
        layout: LayoutArg,
        #[command(flatten)]
        lease: LeaseArgs,
    },
}

impl From<LeaseError> for CliError {
    fn from(e: LeaseError) -> Self {
        match e {
            LeaseError::BadUrl { .. } | LeaseError::BadOption { .. } => {
                CliError::Usage(e.to_string())
            }
            other => CliError::Lease(other),
        }
    }
}

/// Set by SIGINT/SIGTERM/SIGHUP: stop, release, exit.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Catches SIGINT, SIGTERM and SIGHUP so a lease is released on the way out.
pub fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe,
        // and `signal` with a valid handler has no other precondition.
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// Whether a signal asked us to stop.
pub fn stopping() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Acquires for `gen --lease`, saying what it got on stderr.
pub fn acquire_for_gen(url: &str, args: &LeaseArgs, layout: Layout) -> Result<Lease, CliError> {
    let lease = Lease::acquire(url, &args.options(layout)?)?;
    announce(lease)
}

/// `gen --lease URL --lease-id-from SOURCE`: exactly the id the source gives
/// (a StatefulSet pod's index), waiting, and saying so, while another member
/// holds it.
pub fn acquire_exact_for_gen(
    url: &str,
    source: &nonceforge_lease::PodIndex,
    max_wait: Option<Duration>,
    args: &LeaseArgs,
    layout: Layout,
) -> Result<Lease, CliError> {
    let id = source.read_in(layout)?;
    let options = args.options(layout)?;
    let lease = match Lease::acquire_exact(url, id, &options, Some(Duration::ZERO)) {
        Err(LeaseError::AllTaken { .. }) => {
            eprintln!(
                "nonceforge: lease: machine id {id} (from {}) is held by another member — the pod this one replaces, or another with the same index: waiting for it to be released or to lapse (at most the TTL, {}, after it stops renewing); nothing is issued meanwhile",
                match source {
                    nonceforge_lease::PodIndex::Env(v) => format!("${v}"),
                    nonceforge_lease::PodIndex::LabelsFile(p) => p.display().to_string(),
                    nonceforge_lease::PodIndex::Hostname => "the host name".into(),
                },
                humantime(options.ttl)
            );
            // Signals keep their default meaning while it waits: a pod
            // deleted meanwhile (SIGTERM) just ends; it holds nothing.
            Lease::acquire_exact(url, id, &options, max_wait)?
        }
        other => other?,
    };
    announce(lease)
}

fn humantime(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Says which id was leased, and what its start waits for.
fn announce(lease: Lease) -> Result<Lease, CliError> {
    eprintln!(
        "nonceforge: lease: machine id {} from {} in {:.1} ms (token {}, starting above {} ms)",
        lease.machine_id().get(),
        lease.backend(),
        lease.acquired_in().as_secs_f64() * 1000.0,
        lease.token(),
        lease.floor_unix_ms()
    );
    if let Some(note) = start_note(&lease) {
        eprintln!("{note}");
    }
    catch_signals();
    Ok(lease)
}

/// What a grant that does not start right above the store's floor waits
/// for, and why: a warning for an id the store had no record of, a note
/// otherwise.
fn start_note(lease: &Lease) -> Option<String> {
    if !lease.has_history() {
        Some(format!(
            "nonceforge: warning: machine id {} has no history in the store (never leased in this namespace, or the store lost its data): waiting until {} ms (the TTL and margin) so that no earlier holder can still be issuing below it",
            lease.machine_id().get(),
            lease.floor_unix_ms()
        ))
    } else {
        lease.slow_start_reason().map(|why| format!(
            "nonceforge: machine id {}: waiting until {} ms (the TTL and margin), above any holder a store that went back to an older copy may no longer show ({why}; --fast-start verify or declared where the store cannot go back, or hold one lease across jobs)",
            lease.machine_id().get(),
            lease.floor_unix_ms()
        ))
    }
}

/// Why a leased generator is disabled, in words.
pub fn why_disabled(lease: &Lease) -> String {
    let state = match lease.state() {
        LeaseState::Lost => match lease.lost_reason() {
            Some(reason) => format!("was lost ({reason})"),
            None => "was lost".to_string(),
        },
        LeaseState::Lapsed | LeaseState::Held { .. } => {
            "lapsed: no renewal succeeded before the local deadline".to_string()
        }
        LeaseState::Released => "was released".to_string(),
    };
    let last = lease
        .last_error()
        .map(|e| format!(" (last renewal error: {e})"))
        .unwrap_or_default();
    format!(
        "the lease on machine id {} {state}{last}; the generator stopped and issued nothing past the deadline",
        lease.machine_id().get()
    )
}

/// A record's state as `lease status --json` gives it: held, expired or free.
/// A field of the namespace's record as status shows it: `-` while it has none.
fn or_dash(field: &str) -> &str {
    if field.is_empty() { "-" } else { field }
}

fn state_word(r: &nonceforge_lease::Record) -> &'static str {
    match r.expires_in {
        Some(_) => "held",
        None if r.holder.is_empty() => "free",
        None => "expired",
    }
}

pub fn run(cmd: LeaseCommand) -> Result<(), CliError> {
    match cmd {
        LeaseCommand::Bench(args) => bench::run(args),
        LeaseCommand::Acquire {
            backend,
            hold_for,
            json,
            layout,
            lease,
        } => {
            let options = lease.options(layout.layout)?;
            let l = Lease::acquire(&backend, &options)?;
            if let Some(note) = start_note(&l) {
                eprintln!("{note}");
            }
            catch_signals();
            let mut out = std::io::stdout().lock();
            let (id, token, floor) = (l.machine_id().get(), l.token(), l.floor_unix_ms());
            let ms = l.acquired_in().as_secs_f64() * 1000.0;
            if json {
                let line = serde_json::json!({
                    "machine_id": id, "token": token, "floor_unix_ms": floor,
                    "holder": l.holder(), "acquired_in_ms": ms, "history": l.has_history(),
                    "started_fast": l.started_fast(),
                });
                writeln!(out, "{line}")?;
            } else {
                writeln!(
                    out,
                    "machine_id={id} token={token} floor_unix_ms={floor} acquired_in_ms={ms:.1} history={} started_fast={} holder={}",
                    l.has_history(),
                    l.started_fast(),
                    l.holder()
                )?;
            }
            out.flush()?;
            let start = Instant::now();
            loop {
                if stopping() || hold_for.is_some_and(|d| start.elapsed() >= d) {
                    break;
                }
                if let Some(reason) = l.lost_reason() {
                    return Err(CliError::Lease(LeaseError::Lost {
                        machine_id: id,
                        reason,
                    }));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if json {
                // The lease's figures at the end of its hold (docs/operations.md).
                let line = serde_json::json!({"lease": crate::stats_json::lease(&l)});
                writeln!(out, "{line}")?;
                out.flush()?;
            }
            l.release()?;
            Ok(())
        }
        LeaseCommand::Status {
            backend,
            json,
            summary,
            limit,
            after,
            expiring,
            layout,
            lease,
        } => {
            let options = lease.options(layout.layout)?;
            let (info, mut records) = nonceforge_lease::status_of_store(&backend, &options)?;
            records.sort_by_key(|r| r.machine_id);
            let mut out = std::io::stdout().lock();
            if summary {
                let range = u32::from(*options.ids.end()) - u32::from(*options.ids.start()) + 1;
                let count = |w: &str| records.iter().filter(|r| state_word(r) == w).count();
                let soon = records
                    .iter()
                    .filter(|r| r.expires_in.is_some_and(|d| d < expiring))
                    .count();
                let (held, free, expired) = (count("held"), count("free"), count("expired"));
                let never = range as usize - records.len();
                if json {
                    let line = serde_json::json!({
                        "protocol": info.protocol, "incarnation": info.incarnation, "layout": info.layout,
                        "ids": [options.ids.start(), options.ids.end()], "held": held, "expiring": soon,
                        "free": free, "expired": expired, "never_leased": never,
                    });
                    writeln!(out, "{line}")?;
                } else {
                    writeln!(
                        out,
                        "# {}: lease protocol {}, layout {}, ids {}-{}",
                        nonceforge_lease::redact_url(&backend),
                        or_dash(&info.protocol),
                        or_dash(&info.layout),
                        options.ids.start(),
                        options.ids.end(),
                    )?;
                    writeln!(
                        out,
                        "held={held} expiring={soon} free={free} expired={expired} never_leased={never}"
                    )?;
                }
                return Ok(());
            }
            let shown: Vec<_> = records
                .iter()
                .filter(|r| after.is_none_or(|a| r.machine_id > a))
                .collect();
            let more = shown.len() > limit as usize;
            let shown = &shown[..shown.len().min(limit as usize)];
            if !json {
                writeln!(
                    out,
                    "# {}: lease protocol {}, incarnation {}",
                    nonceforge_lease::redact_url(&backend),
                    or_dash(&info.protocol),
                    or_dash(&info.incarnation),
                )?;
                writeln!(
                    out,
                    "{:>4}  {:<8}  {:>16}  {:>14}  holder",
                    "id", "state", "token", "floor_unix_ms"
                )?;
            }
            for r in shown {
                let state = match r.expires_in {
                    Some(d) => format!("{:.1}s", d.as_secs_f64()),
                    None => state_word(r).into(),
                };
                if json {
                    let line = serde_json::json!({
                        "machine_id": r.machine_id, "state": state_word(r), "holder": r.holder, "token": r.token,
                        "expires_in_ms": r.expires_in.map(|d| d.as_millis() as u64),
                        "floor_unix_ms": r.floor_unix_ms,
                    });
                    writeln!(out, "{line}")?;
                } else {
                    writeln!(
                        out,
                        "{:>4}  {:<8}  {:>16}  {:>14}  {}",
                        r.machine_id, state, r.token, r.floor_unix_ms, r.holder
                    )?;
                }
            }
            if more && let Some(last) = shown.last() {
                // Where the next page starts (on stderr with --json: stdout
                // stays one record a line).
                let next = format!(
                    "# more: the next page with --after {} (--limit {limit}; --summary counts them all)",
                    last.machine_id
                );
                if json {
                    eprintln!("{next}");
                } else {
                    writeln!(out, "{next}")?;
                }
            }
            Ok(())
        }
        LeaseCommand::Release {
            backend,
            id,
            if_holder,
            layout,
            lease,
        } => {
            let max = layout.layout.max_machine_id();
            if id > max {
                return Err(CliError::Usage(format!(
                    "--id {id}: the {} layout's machine ids are 0..={max} (--layout wide: 0..=65535)",
                    layout.layout
                )));
            }
            let freed = nonceforge_lease::evict(
                &backend,
                &lease.options(layout.layout)?,
                id,
                if_holder.as_deref(),
            )?;
            if freed {
                println!("released machine id {id}");
                Ok(())
            } else {
                // Not a usage error: the command was right, the store said no.
                Err(CliError::Stopped(format!(
                    "--id {id}: not held{}",
                    if_holder.map(|h| format!(" by {h:?}")).unwrap_or_default()
                )))
            }
        }
    }
}
