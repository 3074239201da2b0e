//! Machine-id leases against the real stores (PostgreSQL 15, Redis 7, etcd 3.4),
//! started on loopback ports by nonceforge-testkit and stopped after: processes
//! acquiring at once, holders killed and paused, stores going down and coming
//! back, a 30 s run of churning processes whose nonces are all collected and
//! counted, and a three-member etcd cluster losing its leader. The library on
//! its own (attach rules, floors, starting fast) is tested in the lease crate
//! (crates/nonceforge-lease/tests/stores.rs).
//!
//! The tests run one at a time (they time leases against real clocks on a
//! small machine), each on its own servers.

#[path = "../support/mod.rs"]
mod support;

mod churn;
mod pods;

use nonceforge::layout::{self, DEFAULT_EPOCH_UNIX_MS};
use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use support::{Etcd, Postgres, Proc, Redis, RedisCluster, TempDir};

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

const SEC: Duration = Duration::from_secs(1);

/// One of the three stores, to run the same scenarios on each.
enum Store {
    Pg(Postgres),
    Redis(Redis),
    Cluster(RedisCluster),
    Etcd(Etcd),
}

impl Store {
    fn url(&self) -> String {
        match self {
            Store::Pg(s) => s.url(),
            Store::Redis(s) => s.url(),
            Store::Cluster(s) => s.url(),
            Store::Etcd(s) => s.url(),
        }
    }
    fn down(&mut self) {
        match self {
            Store::Pg(s) => s.down(),
            Store::Redis(s) => s.down(),
            Store::Cluster(s) => s.down(),
            Store::Etcd(s) => s.down(0),
        }
    }
    fn up(&mut self) {
        match self {
            Store::Pg(s) => s.up(),
            Store::Redis(s) => s.up(),
            Store::Cluster(s) => s.up(),
            Store::Etcd(s) => {
                s.up(0);
                s.wait_up(0);
            }
        }
    }
}

/// (timestamp Unix ms, machine id) of a plain nonce in hex.
fn parts(hex_nonce: &str) -> (u64, u16) {
    let bytes = hex::decode(hex_nonce).unwrap_or_else(|_| panic!("not hex: {hex_nonce:?}"));
    let p = layout::decompose(&bytes, DEFAULT_EPOCH_UNIX_MS).expect("a nonce");
    (p.unix_ms, p.machine_id)
}

/// The number after `key` in `text` (`machine id 3`, `starting above 17… ms`).
fn number_after(text: &str, key: &str) -> u64 {
    let rest = text
        .split(key)
        .nth(1)
        .unwrap_or_else(|| panic!("no {key:?} in {text:?}"));
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no number after {key:?} in {text:?}"))
}

fn run(args: &[&str]) -> (Option<i32>, Vec<String>, String) {
    Proc::spawn(args).finish(30 * SEC)
}

/// `nonceforge lease acquire --backend URL --namespace NS MORE…`, left running.
fn holder(url: &str, ns: &str, more: &[&str]) -> Proc {
    let mut args = vec!["lease", "acquire", "--backend", url, "--namespace", ns];
    args.extend_from_slice(more);
    Proc::spawn(&args)
}

/// `nonceforge gen KIND --bits BITS -n N --rate RATE --lease URL --namespace NS
/// --ttl TTL`, left running.
fn leased_gen(url: &str, ns: &str, kind: &str, bits: &str, n: &str, rate: &str, ttl: &str) -> Proc {
    Proc::spawn(&[
        "gen",
        kind,
        "--bits",
        bits,
        "-n",
        n,
        "--rate",
        rate,
        "--lease",
        url,
        "--namespace",
        ns,
        "--ttl",
        ttl,
    ])
}

/// The same, run to the end.
fn run_acquire(url: &str, ns: &str, more: &[&str]) -> (Option<i32>, Vec<String>, String) {
    holder(url, ns, more).finish(30 * SEC)
}

/// `nonceforge lease status --json`: one line a machine id.
fn status(url: &str, ns: &str) -> (Option<i32>, Vec<String>, String) {
    status_with(url, ns, &[])
}

/// The same with more options (`--limit`, `--after`, `--summary`).
fn status_with(url: &str, ns: &str, more: &[&str]) -> (Option<i32>, Vec<String>, String) {
    run(&[&status_args(url, ns)[..], &["--json"], more].concat())
}

/// `lease status` of one namespace, before its output options.
fn status_args<'a>(url: &'a str, ns: &'a str) -> [&'a str; 6] {
    ["lease", "status", "--backend", url, "--namespace", ns]
}

fn all_distinct<'a>(what: &str, lines: impl IntoIterator<Item = &'a String>) -> usize {
    let mut seen = HashSet::new();
    for l in lines {
        assert!(seen.insert(l.clone()), "{what}: {l} issued twice");
    }
    seen.len()
}

// ------------------------------------------------------------------ scenarios

/// 16 processes acquire at once: 16 different ids, all listed as held, all
/// free again after a clean release.
fn sixteen_at_once(url: &str) {
    let ns = "sixteen";
    let procs: Vec<Proc> = (0..16).map(|_| holder(url, ns, &["--for", "6s"])).collect();
    let mut ids = HashSet::new();
    for p in &procs {
        p.wait_for("an id", 20 * SEC, |l, _| !l.is_empty());
        let line = p.lines.lock().unwrap()[0].clone();
        assert!(
            ids.insert(number_after(&line, "machine_id=")),
            "{line}: an id given twice"
        );
    }
    let (code, held, err) = status(url, ns);
    assert_eq!(code, Some(0), "{err}");
    let live = held
        .iter()
        .filter(|l| !l.contains("\"expires_in_ms\":null"))
        .count();
    assert_eq!(live, 16, "{held:?}");
    // The summary counts them; the list comes in pages.
    let (code, sum, err) = run(&[&status_args(url, ns)[..], &["--summary"]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(
        sum[1].starts_with("held=16 ") && sum[1].ends_with(" free=0 expired=0 never_leased=496"),
        "{sum:?}"
    );
    let page = |more: &[&str]| status_with(url, ns, more);
    let (code, first, err) = page(&["--limit", "10"]);
    assert_eq!((code, first.len()), (Some(0), 10), "{err}");
    let last = number_after(&first[9], "\"machine_id\":");
    assert!(err.contains(&format!("--after {last}")), "{err}");
    let (_, rest, err) = page(&["--limit", "10", "--after", &last.to_string()]);
    assert_eq!(rest.len(), 6, "{rest:?}");
    assert!(!err.contains("# more"), "{err}");
    for p in procs {
        let (code, _, err) = p.finish(20 * SEC);
        assert_eq!(code, Some(0), "{err}");
    }
    let (_, after, _) = status(url, ns);
    assert_eq!(after.len(), 16);
    assert!(
        after
            .iter()
            .all(|l| l.contains("\"expires_in_ms\":null") && l.contains("\"holder\":\"\"")),
        "{after:?}"
    );
}

/// kill -9 a holder: its id stays taken until the TTL has run out, then comes free.
fn kill_nine(url: &str) {
    let ns = "killed";
    let ttl = "2s";
    let a = holder(url, ns, &["--ttl", ttl, "--for", "60s"]);
    a.wait_for("an id", 20 * SEC, |l, _| !l.is_empty());
    let id = number_after(&a.lines.lock().unwrap()[0], "machine_id=");
    std::thread::sleep(Duration::from_millis(900)); // a renewal or two
    // What the store says is left of the lease, just before the kill.
    let (_, listed, _) = status(url, ns);
    let line = listed
        .iter()
        .find(|l| l.contains(&format!("\"machine_id\":{id},")))
        .unwrap_or_else(|| panic!("{listed:?}"));
    let left = Duration::from_millis(number_after(line, "\"expires_in_ms\":"));
    a.signal(libc::SIGKILL);
    let killed = Instant::now();
    drop(a);
    let acquire = || {
        let (code, out, err) = run_acquire(url, ns, &["--ttl", ttl, "--for", "0s"]);
        assert_eq!(code, Some(0), "{err}");
        number_after(&out[0], "machine_id=")
    };
    assert_ne!(acquire(), id, "the killed holder's id was free at once");
    let freed = loop {
        if acquire() == id {
            break killed.elapsed();
        }
        assert!(killed.elapsed() < 10 * SEC, "the id never came free");
        std::thread::sleep(Duration::from_millis(100));
    };
    // Not before the store's TTL ran out (less the time it took to read it).
    assert!(
        freed + Duration::from_millis(100) >= left,
        "free after {freed:?}, before the {left:?} the store had left"
    );
}

/// SIGSTOP a holder past its TTL; another process takes the id meanwhile. On
/// SIGCONT the first is disabled: it exits with an error, and every nonce it
/// ever printed lies at or below the floor the second one started above.
fn paused_past_the_ttl(url: &str, kind: &str, bits: &str) {
    let ns = "paused";
    let generate = |n: &str, rate: &str| leased_gen(url, ns, kind, bits, n, rate, "2s");
    let a = generate("1000000000", "2000");
    a.wait_for("nonces", 20 * SEC, |l, _| l.len() >= 300);
    a.signal(libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(200));
    let printed_before = a.count();
    std::thread::sleep(Duration::from_millis(3500));
    let (code, b_lines, b_err) = generate("4000", "8000").finish(30 * SEC);
    assert_eq!(code, Some(0), "{b_err}");
    let a_id = number_after(&a.stderr(), "machine id");
    assert_eq!(
        number_after(&b_err, "machine id"),
        a_id,
        "B took another id: {b_err}"
    );
    let floor = number_after(&b_err, "starting above");
    a.signal(libc::SIGCONT);
    let (code, a_lines, a_err) = a.finish(20 * SEC);
    assert_eq!(code, Some(1), "A went on after its lease was lost: {a_err}");
    assert!(
        a_err.contains("issued nothing past the deadline"),
        "{a_err}"
    );
    // What it printed after waking was made before the stop (a batch in flight).
    assert!(
        a_lines.len() <= printed_before + 8,
        "{} then {}",
        printed_before,
        a_lines.len()
    );
    for l in &a_lines {
        let (ts, m) = parts(l);
        assert!(
            ts <= floor && m as u64 == a_id,
            "A's {l} at {ts} > floor {floor}"
        );
    }
    for l in &b_lines {
        assert!(parts(l).0 > floor, "B's {l} at or below the floor {floor}");
    }
    all_distinct("A and B", a_lines.iter().chain(&b_lines));
}

/// The store goes down for a moment and comes back: the generator rides it
/// out. Down for longer than the TTL: the generator stops with an error.
fn store_down_and_back(store: &mut Store, kind: &str, bits: &str) {
    let url = store.url();
    let a = leased_gen(&url, "outage", kind, bits, "1000000000", "2000", "5s");
    a.wait_for("nonces", 20 * SEC, |l, _| l.len() >= 300);
    store.down();
    std::thread::sleep(Duration::from_millis(500));
    store.up();
    std::thread::sleep(Duration::from_millis(500));
    let n = a.count();
    std::thread::sleep(3 * SEC);
    assert!(
        a.count() > n + 1000,
        "stalled after a short outage: {}",
        a.stderr()
    );
    store.down();
    let (code, lines, err) = a.finish(30 * SEC);
    store.up();
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("lapsed"), "{err}");
    all_distinct("one generator across outages", &lines);
}

/// The store goes away after the nonces were written: the release fails, which
/// is a warning (every nonce is valid; the id frees itself when its TTL runs
/// out), not a failed run.
fn store_gone_before_release(store: &mut Store, kind: &str, bits: &str) {
    let url = store.url();
    let a = leased_gen(&url, "gone", kind, bits, "3000", "2000", "5s");
    a.wait_for("nonces", 20 * SEC, |l, _| l.len() >= 300);
    store.down();
    let (code, lines, err) = a.finish(30 * SEC);
    store.up();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning: could not release the lease"),
        "{err}"
    );
    assert_eq!(
        all_distinct("written before a failed release", &lines),
        3000
    );
}

/// Every id of the range taken: a clear error, exit status 1, nothing printed.
fn all_taken(url: &str) {
    let ns = "full";
    let holders: Vec<Proc> = (0..2)
        .map(|_| holder(url, ns, &["--ids", "3-4", "--ttl", "3s", "--for", "30s"]))
        .collect();
    for h in &holders {
        h.wait_for("an id", 20 * SEC, |l, _| !l.is_empty());
    }
    let take = || {
        run(&[
            "gen",
            "counter",
            "--bits",
            "64",
            "-n",
            "5",
            "--lease",
            url,
            "--namespace",
            ns,
            "--ids",
            "3-4",
            "--ttl",
            "2s",
        ])
    };
    let (code, out, err) = take();
    assert_eq!(code, Some(1), "{err}");
    assert!(out.is_empty(), "{out:?}");
    assert!(err.contains("all machine ids in 3..=4 are leased"), "{err}");

    // An operator frees id 3 (only if its holder matches, first: it does not).
    let release = |more: &[&str]| {
        let mut args = vec![
            "lease",
            "release",
            "--backend",
            url,
            "--namespace",
            ns,
            "--id",
            "3",
        ];
        args.extend_from_slice(more);
        run(&args)
    };
    let (code, _, err) = release(&["--if-holder", "nobody"]);
    assert_eq!(
        code,
        Some(1),
        "not held is the store's answer, not a usage error: {err}"
    );
    assert!(err.contains("not held by \"nobody\""), "{err}");
    let (code, out, err) = release(&[]);
    assert_eq!(
        (code, out.join("")),
        (Some(0), "released machine id 3".into()),
        "{err}"
    );
    // Someone else takes it at once — and waits, before issuing, until the old
    // holder's deadline (its floor) has passed; the old holder learns at its
    // next renewal that the id is gone, and stops with an error.
    let (code, out, err) = take();
    assert_eq!(code, Some(0), "{err}");
    let floor = number_after(&err, "starting above");
    assert!(
        out.iter().all(|l| parts(l).1 == 3 && parts(l).0 > floor),
        "{out:?} (floor {floor})"
    );
    let mut holders: Vec<Proc> = holders;
    let i = holders
        .iter()
        .position(|h| h.lines.lock().unwrap()[0].starts_with("machine_id=3 "))
        .expect("a holder of id 3");
    let (code, _, err) = holders.remove(i).finish(20 * SEC);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("was lost"), "{err}");
    for h in holders {
        h.signal(libc::SIGTERM);
        let (code, _, err) = h.finish(20 * SEC);
        assert_eq!(code, Some(0), "released on SIGTERM: {err}");
    }
}

fn scenarios(mut store: Store, kind: &str, bits: &str) {
    let url = store.url();
    sixteen_at_once(&url);
    kill_nine(&url);
    paused_past_the_ttl(&url, kind, bits);
    store_down_and_back(&mut store, kind, bits);
    store_gone_before_release(&mut store, kind, bits);
    all_taken(&url);
}

#[test]
fn postgres_leases() {
    let _g = serial();
    scenarios(Store::Pg(Postgres::start()), "sortable", "64");
}

#[test]
fn redis_leases() {
    let _g = serial();
    scenarios(Store::Redis(Redis::start()), "counter", "64");
}

/// The same on a three-primary Redis Cluster (`redis+cluster://`): each
/// scenario's namespace is one slot, on whichever node serves it; a
/// namespace's keys carry its hash tag (`{ns}:lease:3`), and the whole
/// cluster goes down and comes back in the outage scenarios.
#[test]
fn redis_cluster_leases() {
    let _g = serial();
    let cluster = RedisCluster::start();
    // The scenarios' namespaces are not all on one node.
    let nodes: HashSet<u16> = ["sixteen", "killed", "paused", "outage", "gone", "full"]
        .iter()
        .map(|ns| cluster.node_of(&format!("{{{ns}}}")).port)
        .collect();
    assert!(nodes.len() >= 2, "every namespace on one node");
    // The keys carry the namespace's hash tag, on the node of its slot.
    let (code, _, err) = run_acquire(&cluster.url(), "tagged", &["--for", "0s"]);
    assert_eq!(code, Some(0), "{err}");
    let node = cluster.node_of("{tagged}");
    assert_eq!(
        node.cli(&["EXISTS", "{tagged}:tokens", "{tagged}:rec:0"]),
        "2"
    );
    scenarios(Store::Cluster(cluster), "sortable", "64");
}

#[test]
fn etcd_leases() {
    let _g = serial();
    scenarios(Store::Etcd(Etcd::start(1)), "sortable", "96");
}

/// Every id taken (512 of them), in PostgreSQL and Redis, filled behind the
/// library's back.
#[test]
fn all_512_taken() {
    let _g = serial();
    let pg = Postgres::start();
    let (code, _, err) = run(&["lease", "acquire", "--backend", &pg.url(), "--for", "0s"]);
    assert_eq!(code, Some(0), "{err}");
    // Every id held elsewhere (a row is made only for an id leased: the
    // other 511 are put in, held).
    pg.psql("INSERT INTO nonceforge_lease.nonceforge_leases (machine_id) SELECT generate_series(0, 511) ON CONFLICT DO NOTHING");
    pg.psql("UPDATE nonceforge_lease.nonceforge_leases SET holder = 'elsewhere', grant_id = 'g', token = 1, expires_at = now() + interval '1 hour'");
    let redis = Redis::start();
    redis.cli(&[
        "EVAL",
        "for i = 0, 511 do redis.call('SET', 'nonceforge:lease:' .. i, 'x', 'PX', 3600000) end",
        "0",
    ]);
    for url in [pg.url(), redis.url()] {
        let (code, out, err) = run(&["gen", "counter", "-n", "5", "--lease", &url]);
        assert_eq!(code, Some(1), "{err}");
        assert!(out.is_empty());
        assert!(
            err.contains("all machine ids in 0..=511 are leased"),
            "{err}"
        );
    }
}

/// Unreachable stores and malformed URLs or options: a clear message, non-zero
/// exit, nothing printed.
#[test]
fn unreachable_and_malformed() {
    let port = support::free_port();
    for (url, backend) in [
        (
            format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            "postgres",
        ),
        (format!("redis://127.0.0.1:{port}"), "redis"),
        (format!("etcd://127.0.0.1:{port}"), "etcd"),
    ] {
        let (code, out, err) = run(&[
            "gen",
            "counter",
            "-n",
            "5",
            "--lease",
            &url,
            "--connect-timeout",
            "3s",
        ]);
        assert_eq!(code, Some(1), "{err}");
        assert!(out.is_empty());
        assert!(
            err.contains(&format!("cannot reach the {backend} lease store")),
            "{err}"
        );
    }
    for (args, needle) in [
        (
            vec!["gen", "counter", "--lease", "mysql://h/db"],
            "unknown scheme",
        ),
        (vec!["gen", "counter", "--lease", "etcd://"], "no endpoint"),
        (
            vec!["gen", "counter", "--lease", "postgres://u:hunter2@h:x/db"],
            "postgres://u:***@h:x/db",
        ),
        (
            vec!["gen", "counter", "--lease", "redis://h", "--ttl", "500ms"],
            "ttl = 500ms",
        ),
        (
            vec![
                "gen",
                "counter",
                "--lease",
                "redis://h",
                "--namespace",
                "Bad-Name",
            ],
            "namespace",
        ),
        (
            vec![
                "gen",
                "counter",
                "--lease",
                "redis://h",
                "--machine-id",
                "3",
            ],
            "cannot be used with",
        ),
        (
            vec![
                "lease",
                "status",
                "--backend",
                "redis://h",
                "--ids",
                "0-600",
            ],
            "within 0..=511",
        ),
        (
            vec!["lease", "release", "--backend", "redis://h", "--id", "512"],
            "512",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("hunter2"), "a password was printed: {err}");
    }
}
