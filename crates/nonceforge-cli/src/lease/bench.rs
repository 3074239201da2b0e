//! `nonceforge lease bench`: how long acquiring takes, and whether holding a
//! lease costs anything per nonce (the same rows with and without a lease, in
//! alternating rounds of one run).

use super::args::LeaseArgs;
use crate::CliError;
use clap::Args;
use nonceforge::{Bits, MachineId, NonceGenerator};
use nonceforge_lease::Lease;
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct LeaseBenchArgs {
    #[arg(long, value_name = "URL", help = super::STORE_URLS)]
    backend: String,
    /// How many acquire + release cycles to time.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    acquires: u32,
    /// Rounds of each nonce row (with and without a lease, alternating).
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=1000))]
    rounds: u32,
    /// Seconds a round.
    #[arg(long, default_value_t = 0.3, value_parser = parse_seconds)]
    seconds: f64,
    /// One JSON object a line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    layout: super::LayoutArg,
    #[command(flatten)]
    lease: LeaseArgs,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| (0.01..=60.0).contains(v))
        .ok_or_else(|| format!("{s:?}: seconds must be a number in 0.01..=60"))
}

type Row = (
    &'static str,
    fn(&NonceGenerator, &mut nonceforge::LocalNonces) -> u64,
);

const CHUNK: u64 = 4096;

/// A row making CHUNK nonces one call at a time with `$call` on the generator
/// (`g`) or its per-thread handle (`l`).
macro_rules! one_at_a_time {
    ($name:literal, |$g:pat_param, $l:pat_param| $call:expr) => {
        ($name, |$g, $l| {
            for _ in 0..CHUNK {
                black_box($call.expect("issue"));
            }
            CHUNK
        })
    };
}

fn rows() -> Vec<Row> {
    vec![
        one_at_a_time!("counter/96 per-thread handle", |_, l| l.counter_96()),
        one_at_a_time!("sortable/96 per-thread handle", |_, l| l.sortable_96()),
        one_at_a_time!("counter/128 shared", |g, _| g.counter_128()),
        one_at_a_time!("encrypted/128 per-thread handle", |_, l| l.encrypted_128()),
        ("counter/96 batch of 4096", |g, _| {
            let mut buf = [0u8; 12 * CHUNK as usize];
            g.fill(nonceforge::NonceKind::Counter, Bits::B96, &mut buf)
                .expect("issue");
            black_box(&buf);
            CHUNK
        }),
    ]
}

fn rate(g: &NonceGenerator, local: &mut nonceforge::LocalNonces, f: Row, secs: f64) -> f64 {
    let limit = Duration::from_secs_f64(secs);
    f.1(g, local);
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < limit {
        n += f.1(g, local);
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Sorts `v` (not empty) and returns its median, 90th percentile and maximum.
fn spread(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[n / 2], v[(n * 9 / 10).min(n - 1)], v[n - 1])
}

pub fn run(args: LeaseBenchArgs) -> Result<(), CliError> {
    let options = args.lease.options(args.layout.layout)?;
    let mut out = std::io::stdout().lock();
    // Acquire + release cycles: connect, take the lowest free id, give it back.
    let mut times = Vec::new();
    for _ in 0..args.acquires {
        let t = Instant::now();
        let lease = Lease::acquire(&args.backend, &options)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        lease.release()?;
    }
    let n = times.len();
    let (med, p90, max) = spread(&mut times);
    let lease = Lease::acquire(&args.backend, &options)?;
    if args.json {
        let line = serde_json::json!({"name": "lease_acquire", "backend": lease.backend(),
            "acquires": n, "median_ms": med, "p90_ms": p90, "max_ms": max});
        writeln!(out, "{line}")?;
    } else {
        writeln!(
            out,
            "acquire (connect + take the lowest free id), {n} times: median {med:.2} ms, p90 {p90:.2} ms, max {max:.2} ms — {}",
            lease.backend()
        )?;
        writeln!(
            out,
            "\n| nonces, one thread | without a lease | with a lease held | with ÷ without |\n|---|---:|---:|---:|"
        )?;
    }
    let held = lease.builder().key(&[0x5a; 32]).build()?;
    lease.attach(&held)?;
    // The same settings on another id, with no lease.
    let free = NonceGenerator::builder(MachineId::new(
        ((lease.machine_id().get() + 1) % 512) as u64,
    )?)
    .key(&[0x5a; 32])
    .build()?;
    let (mut lh, mut lf) = (held.local(), free.local());
    for row in rows() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for _ in 0..args.rounds {
            a.push(rate(&free, &mut lf, row, args.seconds));
            b.push(rate(&held, &mut lh, row, args.seconds));
        }
        let (a, b) = (median(a), median(b));
        if args.json {
            let line = serde_json::json!({"name": row.0, "without_lease_ops_per_sec": a,
                "with_lease_ops_per_sec": b, "ratio": b / a, "rounds": args.rounds});
            writeln!(out, "{line}")?;
        } else {
            writeln!(
                out,
                "| {} | {:.1} M/s | {:.1} M/s | {:.3} |",
                row.0,
                a / 1e6,
                b / 1e6,
                b / a
            )?;
        }
    }
    let (ok, failed) = lease.renewals();
    let mut rtts: Vec<f64> = lease
        .renewal_round_trips()
        .iter()
        .map(|d| d.as_secs_f64() * 1000.0)
        .collect();
    if !rtts.is_empty() {
        let n = rtts.len();
        let (med, p90, _) = spread(&mut rtts);
        if args.json {
            let line = serde_json::json!({"name": "lease_renewal", "renewals": n,
                "median_ms": med, "p90_ms": p90});
            writeln!(out, "{line}")?;
        } else {
            writeln!(
                out,
                "\nrenewal round trip, {n} renewals: median {med:.2} ms, p90 {p90:.2} ms"
            )?;
        }
    }
    if !args.json {
        writeln!(
            out,
            "\n(median of {} rounds of {} s each, alternating; {ok} renewals during the run, {failed} failed)",
            args.rounds, args.seconds
        )?;
    }
    lease.release()?;
    first_values(&args, &options, &mut out)
}

/// Acquire to first value, as a `gen --lease` or a restarting worker pays it:
/// on an id with history, slow (the TTL and margin: the default, safe when
/// the store goes back) and fast (`fast_start = declared`); on an id without
/// history (a new namespace stands in for a store that lost its data).
fn first_values(
    args: &LeaseBenchArgs,
    options: &nonceforge_lease::LeaseOptions,
    out: &mut impl Write,
) -> Result<(), CliError> {
    use nonceforge_lease::{FastStart, LeaseOptions};
    let mut pad = Duration::ZERO;
    let mut first_value = |o: &LeaseOptions| -> Result<(f64, bool), CliError> {
        let t = Instant::now();
        let lease = Lease::acquire(&args.backend, o)?;
        lease.generator()?.counter_96()?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let fast = lease.started_fast();
        pad = lease.ttl() + lease.margin();
        lease.release()?;
        Ok((ms, fast))
    };
    let cases = [
        (
            "slow start (fast_start off, the default)",
            "lease_first_value_slow",
            LeaseOptions {
                fast_start: FastStart::Off,
                ..options.clone()
            },
        ),
        (
            "fast start (fast_start declared)",
            "lease_first_value_fast",
            LeaseOptions {
                fast_start: FastStart::Declared,
                ..options.clone()
            },
        ),
        (
            "no history (a new namespace, as after a data loss)",
            "lease_first_value_no_history",
            LeaseOptions {
                namespace: format!("bench_fresh_{}", std::process::id()),
                ..options.clone()
            },
        ),
    ];
    if !args.json {
        writeln!(
            out,
            "
| acquire to first value | ms | started fast |
|---|---:|---|"
        )?;
    }
    for (label, name, o) in cases {
        let (ms, fast) = first_value(&o)?;
        if args.json {
            let line = serde_json::json!({"name": name, "first_value_after_ms": ms,
                "started_fast": fast});
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "| {label} | {ms:.0} | {fast} |")?;
        }
    }
    if !args.json {
        writeln!(
            out,
            "
(TTL + margin = {} ms: what a grant waits unless it starts fast; hold one lease across jobs to pay it once)",
            pad.as_millis()
        )?;
    }
    Ok(())
}
