//! `nonceforge bench`: every kind of nonce, side by side with the baselines
//! (the OS random source, the `uuid` crate), measured in the same run.
//!
//! Each row runs for `--seconds` on each thread count in `--threads`; threads
//! share one generator and each takes its own per-thread handle. The 64-bit
//! counter family is capped by its layout at 8192 a millisecond, so its rows are
//! measured as bursts on banked idle time (sleep 250 ms, then spend 200 ms of
//! bank), the way a real service meets it; `counter_sustained` shows the cap.

mod extid;
mod row;
mod seal;

use crate::CliError;
use clap::Args;
use extid::ExtState;
use nonceforge::{LocalNonces, MachineId, NonceGenerator};
pub(crate) use row::{CHUNK, Method};
use seal::SealState;
use serde::Serialize;
use std::hint::black_box;
use std::io::{IsTerminal, Write};
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Print one JSON object a line instead of a table.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print the table as Markdown (for bench/RESULTS.md).
    #[arg(long)]
    markdown: bool,
    /// Thread counts to measure, comma-separated (each 1..=256).
    #[arg(long, default_value = "1,2", value_parser = parse_threads)]
    threads: ThreadList,
    /// Seconds per row and thread count (0.05..=600).
    #[arg(long, default_value_t = 0.5, value_parser = parse_seconds)]
    seconds: f64,
    /// Only rows whose "name/bits" contains this text (baselines are always measured).
    #[arg(long)]
    filter: Option<String>,
    /// Measure every row this many times (1..=99) and report the median.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=99))]
    runs: u32,
}

#[derive(Debug, Clone)]
struct ThreadList(Vec<usize>);

fn parse_threads(s: &str) -> Result<ThreadList, String> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let n: usize = part.trim().parse().map_err(|_| {
            format!("{part:?} is not a thread count: give numbers in 1..=256, comma-separated")
        })?;
        if !(1..=256).contains(&n) {
            return Err(format!(
                "thread count {n} is out of range: it must be in 1..=256"
            ));
        }
        if !v.contains(&n) {
            v.push(n);
        }
    }
    Ok(ThreadList(v))
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.05..=600.0).contains(&v) {
        return Err(format!(
            "{v} seconds is out of range: it must be in 0.05..=600"
        ));
    }
    Ok(v)
}

/// The run with the median rate (the lower middle one for an even count).
fn median(mut runs: Vec<Row>) -> Row {
    runs.sort_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
    let n = runs.len();
    let mut row = runs.swap_remove((n - 1) / 2);
    row.runs = n;
    row
}

/// One line of the results.
#[derive(Debug, Clone, Serialize)]
struct Row {
    name: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    op: &'static str,
    bits: u32,
    /// Message size, for the AEAD rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<usize>,
    threads: usize,
    ops_per_sec: f64,
    /// Time per operation on one thread.
    ns_per_op: f64,
    /// This row's rate over `os_random` of the same width and thread count.
    #[serde(skip_serializing_if = "Option::is_none")]
    vs_os_random: Option<f64>,
    /// Cores busy while measuring (user + system time over wall time); not for
    /// bursts, which are shorter than the kernel's CPU-time accounting tick.
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu: Option<f64>,
    #[serde(skip_serializing_if = "str::is_empty")]
    note: &'static str,
    /// How many runs the median was taken over.
    runs: usize,
}

type Op = fn(&mut Worker) -> u64;

/// What a row runs, on the part of the worker it needs: the nonce rows on
/// the worker, the external-id and seal rows on their own state (which keeps
/// those modules from importing this one).
#[derive(Clone, Copy)]
enum Run {
    Nonces(Op),
    ExtIds(extid::ExtOp),
    Seals(seal::SealOp),
}

/// What one thread owns while measuring.
struct Worker {
    /// One atomic shared by all threads of a row (the `atomic_u64` baseline).
    shared_atomic: &'static AtomicU64,
    generator: NonceGenerator,
    local: LocalNonces,
    buf8: Vec<[u8; 8]>,
    buf12: Vec<[u8; 12]>,
    buf16: Vec<[u8; 16]>,
    ext: ExtState,
    seal: SealState,
}

static SHARED_ATOMIC: AtomicU64 = AtomicU64::new(0);

/// A 1 MiB buffer (fits this machine's 2 MiB L2).
const BATCH_BYTES: usize = 1 << 20;

impl Worker {
    fn new(generator: &NonceGenerator) -> Self {
        Worker {
            shared_atomic: &SHARED_ATOMIC,
            generator: generator.clone(),
            local: generator.local(),
            buf8: vec![[0; 8]; BATCH_BYTES / 8],
            buf12: vec![[0; 12]; BATCH_BYTES / 12],
            buf16: vec![[0; 16]; BATCH_BYTES / 16],
            ext: ExtState::new(),
            seal: SealState::new(),
        }
    }
}

macro_rules! single {
    ($e:expr) => {{
        for _ in 0..CHUNK {
            black_box($e.expect("generation failed while measuring"));
        }
        CHUNK
    }};
}

macro_rules! batch {
    ($w:ident, $method:ident, $buf:ident, $n:expr) => {{
        let n = $n.min($w.$buf.len());
        $w.generator
            .$method(&mut $w.$buf[..n])
            .expect("generation failed while measuring");
        black_box(&$w.$buf);
        n as u64
    }};
}

struct Spec {
    name: &'static str,
    /// What is measured, where a row name covers more than one operation.
    op: &'static str,
    /// Measured whatever the filter says: other rows are read against it.
    baseline: bool,
    bits: u32,
    /// Message size (AEAD rows), 0 otherwise.
    bytes: usize,
    method: Method,
    note: &'static str,
    run: Run,
}

impl Spec {
    fn label(&self) -> String {
        if self.bytes > 0 {
            format!("{}/{}B", self.name, self.bytes)
        } else {
            format!("{}/{}", self.name, self.bits)
        }
    }
}

fn specs() -> Vec<Spec> {
    use Method::*;
    let s = |name: &'static str, bits, method, note, run: Op| Spec {
        name,
        op: "",
        baseline: matches!(
            name,
            "os_random" | "uuid_v4" | "uuid_v7" | "atomic_u64" | "snowflake"
        ),
        bits,
        bytes: 0,
        method,
        note,
        run: Run::Nonces(run),
    };
    let mut all = vec![
        s("os_random", 64, Timed, "getrandom, 8 bytes", |_| {
            single!(getrandom::u64().map_err(|e| e.to_string()))
        }),
        s("os_random", 96, Timed, "getrandom, 12 bytes", |_| {
            single!({
                let mut b = [0u8; 12];
                getrandom::fill(&mut b).map(|_| b)
            })
        }),
        s("os_random", 128, Timed, "getrandom, 16 bytes", |_| {
            single!({
                let mut b = [0u8; 16];
                getrandom::fill(&mut b).map(|_| b)
            })
        }),
        s("uuid_v4", 128, Timed, "uuid crate", |_| {
            single!(Ok::<_, ()>(uuid::Uuid::new_v4()))
        }),
        s("atomic_u64", 64, Timed, "shared AtomicU64 fetch_add", |w| {
            single!(Ok::<_, ()>(w.shared_atomic.fetch_add(1, Ordering::Relaxed)))
        }),
        s(
            "snowflake",
            128,
            Timed,
            "snowflake crate, thread-local",
            |_| single!(Ok::<_, ()>(snowflake::ProcessUniqueId::new())),
        ),
        s("uuid_v7", 128, Timed, "uuid crate", |_| {
            single!(Ok::<_, ()>(uuid::Uuid::now_v7()))
        }),
        s("uuidv7", 128, Timed, "monotonic, ChaCha12 random", |_| {
            single!(Ok::<_, ()>(nonceforge::uuid::uuidv7()))
        }),
        s("tuid6", 128, Timed, "ChaCha12 random", |_| {
            single!(Ok::<_, ()>(nonceforge::uuid::tuid6()))
        }),
        s("stuid", 256, Timed, "32 bytes, ChaCha12 random", |_| {
            single!(Ok::<_, ()>(nonceforge::uuid::stuid()))
        }),
        s("counter", 64, Burst, "burst on banked idle time", |w| {
            single!(w.local.counter_64())
        }),
        s("counter", 96, Timed, "", |w| single!(w.local.counter_96())),
        s("counter", 128, Timed, "", |w| {
            single!(w.local.counter_128())
        }),
        s("counter_sustained", 64, Timed, "layout cap 8192/ms", |w| {
            single!(w.local.counter_64())
        }),
        s("counter_shared", 64, Burst, "shared atomic; burst", |w| {
            single!(w.generator.counter_64())
        }),
        s("counter_shared", 96, Timed, "shared atomic", |w| {
            single!(w.generator.counter_96())
        }),
        s("counter_shared", 128, Timed, "shared atomic", |w| {
            single!(w.generator.counter_128())
        }),
        s("sortable", 64, Timed, "layout cap 8192/ms", |w| {
            single!(w.local.sortable_64())
        }),
        s("sortable", 96, Timed, "increasing per handle", |w| {
            single!(w.local.sortable_96())
        }),
        s("sortable", 128, Timed, "increasing per handle", |w| {
            single!(w.local.sortable_128())
        }),
        s(
            "sortable_shared",
            96,
            Timed,
            "one sequence, shared word",
            |w| single!(w.generator.sortable_96()),
        ),
        s(
            "sortable_shared",
            128,
            Timed,
            "one sequence, shared word",
            |w| single!(w.generator.sortable_128()),
        ),
        s("encrypted", 64, Burst, "Speck64/128; burst", |w| {
            single!(w.local.encrypted_64())
        }),
        s("encrypted", 96, Timed, "Speck96/144", |w| {
            single!(w.local.encrypted_96())
        }),
        s("encrypted", 128, Timed, "AES-256", |w| {
            single!(w.local.encrypted_128())
        }),
        s("counter_batch", 64, Burst, "1 MiB buffer; burst", |w| {
            batch!(w, fill_counter_64, buf8, 16384)
        }),
        s("counter_batch", 96, Timed, "1 MiB buffer", |w| {
            batch!(w, fill_counter_96, buf12, usize::MAX)
        }),
        s("counter_batch", 128, Timed, "1 MiB buffer", |w| {
            batch!(w, fill_counter_128, buf16, usize::MAX)
        }),
        s("encrypted_batch", 64, Burst, "Speck64/128; burst", |w| {
            batch!(w, fill_encrypted_64, buf8, 16384)
        }),
        s("encrypted_batch", 96, Timed, "Speck96/144", |w| {
            batch!(w, fill_encrypted_96, buf12, usize::MAX)
        }),
        s("encrypted_batch", 128, Timed, "AES-256 (VAES)", |w| {
            batch!(w, fill_encrypted_128, buf16, usize::MAX)
        }),
    ];
    all.extend(extid::specs(|name, bits, method, op, note, run| Spec {
        name,
        op,
        baseline: false,
        bits,
        bytes: 0,
        method,
        note,
        run: Run::ExtIds(run),
    }));
    all.extend(seal::specs(|name, op, bytes, note, run| Spec {
        name,
        op,
        baseline: false,
        bits: 96,
        bytes,
        method: Method::Timed,
        note,
        run: Run::Seals(run),
    }));
    all
}

pub fn run(args: BenchArgs) -> Result<(), CliError> {
    let progress = std::io::stderr().is_terminal();
    let chosen: Vec<Spec> = specs()
        .into_iter()
        .filter(|spec| {
            let label = spec.label();
            spec.baseline
                || args
                    .filter
                    .as_ref()
                    .is_none_or(|f| label.contains(f.as_str()))
        })
        .collect();
    // Each run measures every row once, so slow drifts of a shared machine
    // touch all rows alike; the median of the runs is reported.
    let mut samples: Vec<Vec<Row>> = Vec::new();
    for run in 0..args.runs {
        let mut i = 0;
        for spec in &chosen {
            for &threads in &args.threads.0 {
                if progress {
                    eprint!(
                        "\rrun {}/{}: measuring {:<24} threads={threads:<3}",
                        run + 1,
                        args.runs,
                        spec.label()
                    );
                }
                let row = measure(spec, threads, args.seconds)?;
                if run == 0 {
                    samples.push(Vec::new());
                }
                samples[i].push(row);
                i += 1;
            }
        }
    }
    let mut rows: Vec<Row> = samples.into_iter().map(median).collect();
    if progress {
        eprint!("\r{:60}\r", "");
    }
    for i in 0..rows.len() {
        let base = rows
            .iter()
            .find(|r| {
                r.name == "os_random" && r.bits == rows[i].bits && r.threads == rows[i].threads
            })
            .map(|r| r.ops_per_sec);
        if rows[i].name != "os_random" && rows[i].bytes.is_none() {
            rows[i].vs_os_random = base.map(|b| rows[i].ops_per_sec / b);
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        for r in &rows {
            serde_json::to_writer(&mut out, r).map_err(std::io::Error::other)?;
            writeln!(out)?;
        }
    } else if args.markdown {
        print_markdown(&mut out, &rows)?;
    } else {
        print_table(&mut out, &rows)?;
    }
    Ok(())
}

/// The columns of a printed row, with `none` for a figure that does not apply.
fn cells(r: &Row, none: &str) -> [String; 9] {
    [
        r.name.to_owned(),
        r.op.to_owned(),
        r.bits.to_string(),
        r.threads.to_string(),
        human(r.ops_per_sec),
        format!("{:.2}", r.ns_per_op),
        r.vs_os_random
            .map_or(none.to_owned(), |x| format!("{x:.1}×")),
        r.cpu.map_or(none.to_owned(), |c| format!("{c:.2}")),
        r.note.to_owned(),
    ]
}

const HEADER: [&str; 9] = [
    "name",
    "op",
    "bits",
    "threads",
    "ops/s",
    "ns/op",
    "×os_random",
    "cpu",
    "note",
];

fn print_table(out: &mut impl Write, rows: &[Row]) -> std::io::Result<()> {
    let line = |out: &mut dyn Write, c: &[&str; 9]| {
        writeln!(
            out,
            "{:<38} {:<6} {:>4} {:>7} {:>12} {:>9} {:>11} {:>5}  {}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        )
    };
    line(out, &HEADER)?;
    for r in rows {
        let c = cells(r, "-");
        line(out, &c.each_ref().map(String::as_str))?;
    }
    Ok(())
}

fn print_markdown(out: &mut impl Write, rows: &[Row]) -> std::io::Result<()> {
    writeln!(out, "| {} |", HEADER.join(" | "))?;
    writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---|")?;
    for r in rows {
        writeln!(out, "| {} |", cells(r, "–").join(" | "))?;
    }
    Ok(())
}

fn human(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.2} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn thread_cpu() -> Duration {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer we pass, which
    // points at a zeroed, properly aligned rusage that lives through the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, u.as_mut_ptr()) };
    if rc != 0 {
        return Duration::ZERO;
    }
    // SAFETY: zero-initialised above, and filled in by a successful getrusage.
    let u = unsafe { u.assume_init() };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn measure(spec: &Spec, threads: usize, seconds: f64) -> Result<Row, CliError> {
    let generator = NonceGenerator::builder(MachineId::new(1)?)
        .key(&[0x5a; 32])
        .build()?;
    let barrier = Barrier::new(threads);
    let per_thread: Vec<(u64, Duration, Duration)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (generator, barrier) = (&generator, &barrier);
                s.spawn(move || {
                    let mut w = Worker::new(generator);
                    // Called once per CHUNK operations: the indirection is noise.
                    let op: Box<dyn Fn(&mut Worker) -> u64> = match spec.run {
                        Run::Nonces(f) => Box::new(f),
                        Run::ExtIds(f) => Box::new(move |w: &mut Worker| f(&mut w.ext)),
                        Run::Seals(f) => Box::new(move |w: &mut Worker| f(&mut w.seal)),
                    };
                    match spec.method {
                        Method::Timed => run_timed(&mut w, &*op, barrier, seconds),
                        Method::Burst => run_bursts(&mut w, &*op, barrier, seconds, threads),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread"))
            .collect()
    });
    let ops: u64 = per_thread.iter().map(|p| p.0).sum();
    let wall = per_thread.iter().map(|p| p.1).max().unwrap_or_default();
    let cpu: Duration = per_thread.iter().map(|p| p.2).sum();
    let ops_per_sec = ops as f64 / wall.as_secs_f64();
    Ok(Row {
        name: spec.name,
        op: spec.op,
        bits: spec.bits,
        bytes: (spec.bytes > 0).then_some(spec.bytes),
        threads,
        ops_per_sec,
        ns_per_op: 1e9 * threads as f64 / ops_per_sec,
        vs_os_random: None,
        cpu: matches!(spec.method, Method::Timed).then(|| cpu.as_secs_f64() / wall.as_secs_f64()),
        note: spec.note,
        runs: 1,
    })
}

/// Runs `op` until `seconds` have passed; returns (ops, wall, cpu).
fn run_timed(
    w: &mut Worker,
    op: &dyn Fn(&mut Worker) -> u64,
    barrier: &Barrier,
    seconds: f64,
) -> (u64, Duration, Duration) {
    let limit = Duration::from_secs_f64(seconds);
    op(w); // warm up: first block reservation, page faults
    barrier.wait();
    let (cpu0, start) = (thread_cpu(), Instant::now());
    let mut ops = 0;
    while start.elapsed() < limit {
        ops += op(w);
    }
    (ops, start.elapsed(), thread_cpu() - cpu0)
}

/// Bank, then spend: sleep 250 ms (banking 2,048,000 64-bit ticks), then make
/// 200 ms worth of nonces (split across threads) as fast as possible. Only the
/// bursts are timed; rounds are long enough (about a millisecond) that a thread
/// waking late does not dominate.
fn run_bursts(
    w: &mut Worker,
    op: &dyn Fn(&mut Worker) -> u64,
    barrier: &Barrier,
    seconds: f64,
    threads: usize,
) -> (u64, Duration, Duration) {
    let rounds = ((seconds / 0.25) as usize).max(3);
    let quota = 200 * 8192 / threads as u64;
    let (mut ops, mut busy, mut cpu) = (0, Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        barrier.wait();
        std::thread::sleep(Duration::from_millis(250));
        barrier.wait();
        let (cpu0, start) = (thread_cpu(), Instant::now());
        let mut done = 0;
        while done < quota {
            done += op(w);
        }
        busy += start.elapsed();
        cpu += thread_cpu() - cpu0;
        ops += done;
    }
    (ops, busy, cpu)
}
