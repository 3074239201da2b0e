//! Lease stores that go back in time, with real servers on loopback ports and
//! real members (`nonceforge gen --lease`) drawing nonces: a Redis replica
//! that fell behind promoted by Sentinel, a PostgreSQL standby that fell
//! behind promoted (members on a multi-host URL with
//! `target_session_attrs=read-write`), Redis and PostgreSQL restored from an
//! older copy, etcd restored from an older snapshot.
//!
//! Every scenario plays the incident that repeated values before rule 3
//! applied to every grant (docs/lease-protocol.md, "A store that goes back"):
//! ids with history are released, the copy is taken, new members take those
//! ids (the copy never sees their grants), the store goes back, and another
//! wave of members finds the ids released in the copy and takes them at once.
//! No value repeats across members, and every member whose grant the copy
//! never saw reports that the store went back.
//!
//! One test at a time (they time leases against real clocks on a small
//! machine), each on its own servers.

mod support;

use std::collections::HashSet;
use std::time::{Duration, Instant};
use support::{
    Etcd, Postgres, Proc, Redis, RedisCluster, RedisFailover, TempDir, drawing, serial, stop,
};

const SEC: Duration = Duration::from_secs(1);

/// How long members hold a lease: long enough to ride out the store's
/// failover instead of lapsing, so each member hears what happened.
#[derive(Clone, Copy)]
enum Hold {
    /// TTL 4 s (a hold of 3.6 s, less a renewal period).
    Short,
    /// TTL 8 s: PostgreSQL's restarts (recovery from a base backup) and
    /// Sentinel's failovers took more than 3.6 s on a loaded 2-core machine,
    /// where members lapsed before the store came back (make test, both
    /// lanes at work).
    Long,
}

/// A wave of members; B waits for the store to come back (acquiring tries
/// again until the connect timeout).
fn wave(url: &str, ns: &str, n: usize, hold: Hold) -> Vec<(&'static str, Proc)> {
    let (ttl, connect) = match hold {
        Hold::Short => ("4s", "10s"),
        Hold::Long => ("8s", "20s"),
    };
    support::wave(url, ns, n, &["--ttl", ttl, "--connect-timeout", connect])
}

/// The machine id a member leased, from its first line on stderr.
fn leased_id(p: &Proc) -> u16 {
    // The whole line: stderr is unbuffered, so a line may come in pieces.
    let id = |e: &str| {
        let rest = e.split("lease: machine id ").nth(1)?;
        let (id, after) = rest.split_once(' ')?;
        after.starts_with("from ").then(|| id.parse().ok())?
    };
    p.wait_for("its lease", 30 * SEC, |_, e| id(e).is_some());
    id(&p.stderr()).unwrap()
}

/// Every member of `procs` stops by itself and says why: the store went
/// back, or (where another member took its id before its next renewal
/// looked) another member took it. Returns (id, reason) per member.
fn all_report_loss(procs: &[(&str, Proc)], what: &str) -> Vec<(u16, bool)> {
    procs
        .iter()
        .map(|(_, p)| {
            // The whole line (stderr is unbuffered: it may come in pieces).
            p.wait_for(&format!("{what}: the loss"), 30 * SEC, |_, e| {
                e.split(" was lost (")
                    .nth(1)
                    .is_some_and(|r| r.contains('\n'))
            });
            let err = p.stderr();
            let went_back = err.contains("was lost (the store went back to an older copy");
            assert!(
                went_back || err.contains("was lost (another holder took the id)"),
                "{what}: a member stopped without saying why: {err}"
            );
            assert!(!err.contains("lapsed"), "{what}: a member lapsed: {err}");
            (leased_id(p), went_back)
        })
        .collect()
}

/// Waits until `at`: how old the copy is when the store goes back.
fn until(at: Instant) {
    while Instant::now() < at {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The incident: members A hold ids 0-2 throughout; members P draw on ids
/// 3-4 and release them (history with floors); the copy is taken
/// (`take_copy`); members C take ids 3-4, which the copy shows released;
/// `age` later the store goes back to the copy (`go_back`, which calls its
/// argument once the old store is gone: members B start then, and take ids
/// 3-4 the moment the copy answers, while C still issue until their next
/// renewal — and 0-2 where the copy shows A's leases expired). C report the
/// loss; nothing repeats. (With `--fast-start declared`, B start right above
/// P's floor and repeat C's values: the test fails.)
fn scenario(
    what: &str,
    url: &str,
    hold: Hold,
    age: Duration,
    take_copy: impl FnOnce(),
    go_back: impl FnOnce(&mut dyn FnMut()),
) {
    let ns = "rollback";
    let a = wave(url, ns, 3, hold);
    // A holds ids 0-2 (it draws once its start is over, beside P's).
    for (_, p) in &a {
        leased_id(p);
    }
    let p = wave(url, ns, 4, hold);
    drawing(&p);
    stop(&p);
    let mut p_out = Vec::new();
    for (kind, proc) in p {
        let (code, lines, err) = proc.finish(30 * SEC);
        assert_eq!(code, Some(0), "{what}: a member P did not release: {err}");
        p_out.push((kind, lines));
    }
    take_copy();
    let copied = Instant::now();
    let c = wave(url, ns, 4, hold);
    until(copied + age);
    let mut b = Vec::new();
    // B asks while the store is away (acquiring tries again until the
    // connect timeout), so it takes the two lowest ids the copy shows free
    // the moment it answers: 3 and 4, released by P, held by C.
    go_back(&mut || b = wave(url, ns, 2, hold));
    assert_eq!(b.len(), 2, "{what}: go_back did not start B");
    let taken: Vec<u16> = b.iter().map(|(_, p)| leased_id(p)).collect();
    for (id, went_back) in all_report_loss(&c, what) {
        // C's renewal found the copy older than its grant, unless B had
        // taken the id first (then all it sees is another holder's grant).
        assert!(
            went_back || taken.contains(&id),
            "{what}: member C on id {id} did not say the store went back (B took {taken:?})"
        );
    }
    drawing(&b);
    stop(&a);
    stop(&b);
    let mut seen: HashSet<(&str, String)> = HashSet::new();
    for (kind, lines) in p_out {
        for l in lines {
            assert!(seen.insert((kind, l)), "{what}: P repeated itself");
        }
    }
    let mut all = a;
    all.extend(c);
    all.extend(b);
    let mut n = seen.len();
    for (kind, proc) in all {
        let (_, lines, err) = proc.finish(30 * SEC);
        for l in lines {
            assert!(
                seen.insert((kind, l.clone())),
                "{what}: {kind} {l} issued twice ({err})"
            );
            n += 1;
        }
    }
    assert!(n > 10 * 200, "{what}: {n} values");
}

/// Redis behind Sentinel: the replica falls behind (its link to the primary
/// cut), the primary dies, Sentinel promotes the replica; members follow it
/// through the sentinel (`redis+sentinel://…`). Sentinel skips a replica whose
/// link has been down longer than 10 × `down-after-milliseconds` (plus the time
/// since the primary was seen down): 12 s behind needs 2 s; the others run at
/// 1 s. Members at TTL 8 s: a failover (detection, election, promotion) took
/// longer than a TTL-4 s member's hold under make test's load.
#[test]
fn redis_replica_behind_promoted_by_sentinel() {
    let _g = serial();
    for (age, down_after) in [
        (Duration::from_millis(500), 1000),
        (2 * SEC, 1000),
        (5 * SEC, 1000),
        (12 * SEC, 2000),
    ] {
        let f = std::cell::RefCell::new(RedisFailover::start(down_after));
        let url = f.borrow().url();
        let what = format!("Redis replica {age:?} behind, promoted by Sentinel");
        scenario(
            &what,
            &url,
            Hold::Long,
            age,
            || f.borrow().relay.cut(),
            |then| {
                f.borrow_mut().primary.down();
                then();
                f.borrow().wait_failover();
            },
        );
    }
}

/// Redis killed and started from a dump taken 1 s, 4 s and 20 s before.
#[test]
fn redis_restored_from_an_older_dump() {
    let _g = serial();
    for age in [SEC, 4 * SEC, 20 * SEC] {
        let mut redis = Redis::start();
        let url = redis.url();
        let dir = TempDir::new("redis-dump");
        let dump = dir.0.join("older.rdb");
        let redis = std::cell::RefCell::new(&mut redis);
        scenario(
            &format!("Redis restored from a dump {age:?} old"),
            &url,
            Hold::Short,
            age,
            || redis.borrow().snapshot(&dump),
            |then| redis.borrow_mut().restore_then(&dump, then),
        );
    }
}

/// A PostgreSQL standby cut off from its primary (so it falls behind 5 s and
/// 12 s, up and in recovery all along), the primary crashes, the standby is
/// promoted; members connect with a multi-host URL and
/// `target_session_attrs=read-write`, and so find the new primary. (A standby
/// crashed and started again in the primary's place took longer to take
/// writes than the members' hold on a loaded machine: they lapsed, safely,
/// before they could see the store had gone back.)
#[test]
fn postgres_standby_behind_promoted() {
    let _g = serial();
    for age in [5 * SEC, 12 * SEC] {
        let primary = Postgres::start();
        let standby = primary.copy(true);
        standby.up();
        let url = format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
            primary.port, standby.port
        );
        let caught_up = || {
            let t = Instant::now();
            let want = primary.psql("SELECT pg_current_wal_lsn()");
            loop {
                let got = standby.psql(&format!(
                    "SELECT pg_last_wal_replay_lsn() >= '{want}'::pg_lsn"
                ));
                if got == "t" {
                    return;
                }
                assert!(t.elapsed() < 30 * SEC, "the standby does not catch up");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        scenario(
            &format!("PostgreSQL standby {age:?} behind, promoted"),
            &url,
            Hold::Long,
            age,
            || {
                caught_up();
                standby.detach();
            },
            |then| {
                primary.kill();
                then();
                standby.promote();
            },
        );
    }
}

/// A PostgreSQL base backup taken 1 s, 4 s and 20 s before started in the
/// primary's place.
#[test]
fn postgres_restored_from_an_older_backup() {
    let _g = serial();
    for age in [SEC, 4 * SEC, 20 * SEC] {
        let primary = Postgres::start();
        let url = primary.url();
        let backup = std::cell::RefCell::new(None);
        scenario(
            &format!("PostgreSQL restored from a backup {age:?} old"),
            &url,
            Hold::Long,
            age,
            || *backup.borrow_mut() = Some(primary.copy(false)),
            |then| primary.restore_from_then(backup.borrow_mut().take().unwrap(), then),
        );
    }
}

/// etcd killed and restored from a snapshot taken 4 s and 20 s before (etcd 3.4:
/// no --bump-revision, so its revisions, the tokens, go back too).
#[test]
fn etcd_restored_from_an_older_snapshot() {
    let _g = serial();
    for age in [4 * SEC, 20 * SEC] {
        let mut etcd = Etcd::start(1);
        let url = etcd.url();
        let dir = TempDir::new("etcd-snapshot");
        let snap = dir.0.join("older.db");
        let etcd = std::cell::RefCell::new(&mut etcd);
        scenario(
            &format!("etcd restored from a snapshot {age:?} old"),
            &url,
            Hold::Short,
            age,
            || etcd.borrow().snapshot(0, &snap),
            |then| etcd.borrow_mut().restore(&snap, then),
        );
    }
}

/// Starting fast is detected, never assumed: `verify` starts fast on a
/// Redis primary whose replica acknowledges each write and on a PostgreSQL
/// primary with synchronous standbys, and slow (saying why) without them;
/// `declared` starts fast anywhere. Through the library, as every face
/// leases.
#[test]
fn fast_start_verified_or_declared() {
    use nonceforge_lease::{FastStart, Lease, LeaseOptions};
    let _g = serial();
    let opts = |fast| LeaseOptions {
        ttl: 2 * SEC,
        namespace: "fast".into(),
        fast_start: fast,
        ..Default::default()
    };
    // History first: an id without any is never started fast.
    let first = |url: &str| {
        let l = Lease::acquire(url, &opts(FastStart::Declared)).unwrap();
        assert!(!l.has_history() && !l.started_fast());
        l.release().unwrap();
    };
    let check = |url: &str, fast: FastStart, want: bool, why: &str| {
        let l = Lease::acquire(url, &opts(fast)).unwrap();
        assert!(l.has_history());
        assert_eq!(
            l.started_fast(),
            want,
            "{url} {fast}: {:?}",
            l.slow_start_reason()
        );
        if !want {
            let reason = l.slow_start_reason().unwrap();
            assert!(reason.contains(why), "{reason}");
        }
        l.release().unwrap();
    };
    let lone = Redis::start();
    first(&lone.url());
    check(&lone.url(), FastStart::Off, false, "off");
    check(&lone.url(), FastStart::Verify, false, "no replica");
    check(&lone.url(), FastStart::Declared, true, "");
    // A cluster: verify does not check each shard's replicas, and says so.
    let cluster = RedisCluster::start();
    first(&cluster.url());
    check(&cluster.url(), FastStart::Verify, false, "Redis Cluster");
    check(&cluster.url(), FastStart::Declared, true, "");
    drop(cluster);
    let f = RedisFailover::start(1000);
    first(&f.url());
    check(&f.url(), FastStart::Verify, true, "");
    // Every renewal waits for the replica: a lease renews while it keeps up.
    let l = Lease::acquire(&f.url(), &opts(FastStart::Verify)).unwrap();
    let t = Instant::now();
    while l.renewals().0 < 2 {
        assert!(t.elapsed() < 10 * SEC, "no renewal: {:?}", l.last_error());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Cut from its replica, the primary cannot show a renewal is safe: the
    // renewals fail (and would lapse the lease) rather than count.
    f.relay.cut();
    let failed = l.renewals().1;
    let t = Instant::now();
    while l.renewals().1 == failed {
        assert!(
            t.elapsed() < 10 * SEC,
            "a renewal counted without its replica"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(l.last_error().unwrap().contains("replicas acknowledged"));
    drop(l);

    let pg = Postgres::start();
    first(&pg.url());
    check(
        &pg.url(),
        FastStart::Verify,
        false,
        "synchronous_standby_names",
    );
    let standby = pg.copy(true);
    standby.up();
    pg.psql("ALTER SYSTEM SET synchronous_standby_names = '*'");
    pg.psql("SELECT pg_reload_conf()");
    check(&pg.url(), FastStart::Verify, true, "");
    let etcd = Etcd::start(1);
    first(&etcd.url());
    check(&etcd.url(), FastStart::Verify, true, "");
}

/// The generators' side, with manual clocks. P holds id 0 and releases it;
/// the copy is taken; A takes id 0 and draws as far ahead as its cap allows
/// (its clock moved a millisecond a value); the store goes back to the copy,
/// which shows id 0 released under P's floor — below A's values, so the
/// floor alone would repeat them. A hears that the store went back at its
/// next renewal; B takes id 0 and, on a host clock behind A's by just under
/// twice the margin, issues its first value above A's last.
#[test]
fn restored_copy_start_is_above_every_value_it_forgot() {
    use nonceforge::ManualClock;
    use nonceforge_lease::{Lease, LeaseOptions, LeaseState, LostReason};
    let _g = serial();
    let mut redis = Redis::start();
    let url = redis.url();
    let opts = LeaseOptions {
        ttl: 2 * SEC,
        renew_every: Some(Duration::from_millis(300)),
        namespace: "manual_back".into(),
        ..Default::default()
    };
    let margin_ms = 200; // TTL / 10
    let wall = support::wall_ms;
    let p = Lease::acquire(&url, &opts).unwrap();
    p.generator().unwrap().sortable_64().unwrap();
    p.release().unwrap();
    let p_floor = nonceforge_lease::status(&url, &opts).unwrap()[0].floor_unix_ms;
    let dir = TempDir::new("manual-dump");
    let dump = dir.0.join("copy.rdb");
    redis.snapshot(&dump);

    let a = Lease::acquire(&url, &opts).unwrap();
    assert_eq!(a.machine_id().get(), 0);
    assert!(a.has_history() && !a.started_fast());
    let clock_a = ManualClock::at_unix_ms(wall());
    let ga = a.builder().clock(clock_a.clone()).build().unwrap();
    a.attach(&ga).unwrap();
    let top_a = support::draw_ahead(&ga, &clock_a, 3 * SEC);
    assert!(top_a > p_floor, "A issued nothing above P's floor");

    redis.restore(&dump);
    let t = Instant::now();
    while a.state() != LeaseState::Lost {
        assert!(t.elapsed() < 10 * SEC, "{:?}", a.state());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(a.lost_reason(), Some(LostReason::StoreWentBack));
    assert!(ga.sortable_64().is_err());
    let records = nonceforge_lease::status(&url, &opts).unwrap();
    assert_eq!(
        (records[0].floor_unix_ms, records[0].holder.as_str()),
        (p_floor, ""),
        "the copy shows id 0 released under P's floor"
    );

    let b = Lease::acquire(&url, &opts).unwrap();
    assert_eq!(b.machine_id().get(), 0);
    assert!(b.has_history() && !b.started_fast());
    assert!(
        b.floor_unix_ms() > top_a,
        "{} <= {top_a}",
        b.floor_unix_ms()
    );
    let clock_b = ManualClock::at_unix_ms(wall() - 2 * margin_ms + 1);
    let gb = b.builder().clock(clock_b).build().unwrap();
    b.attach(&gb).unwrap();
    let first_b = loop {
        match gb.sortable_64() {
            Ok(n) => break gb.decompose(&n).unwrap().unix_ms,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
        assert!(t.elapsed() < 30 * SEC, "B never issued");
    };
    assert!(first_b > top_a, "B's first {first_b} <= A's last {top_a}");
    b.release().unwrap();
}
