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
use support::{Etcd, Postgres, Proc, Redis, RedisFailover, TempDir, drawing, serial, stop};

const SEC: Duration = Duration::from_secs(1);

/// A wave of members; B waits for the store to come back (acquiring tries
/// again until the connect timeout). Members hold their leases long enough to
/// ride out the store's failover instead of lapsing, so each hears what
/// happened: TTL 8 s, as PostgreSQL's restarts (recovery from a base backup),
/// Sentinel's failovers, etcd's restore from a snapshot (kill, restore, start)
/// and Redis's restart from an older dump took more than a TTL-4 s member's
/// hold (3.6 s) on a loaded 2-core machine (make test, both lanes at work;
/// Redis's on a fresh clone, 2026-11-28).
/// On a slower day a PostgreSQL restore outlasted even that (2026-11-29): where
/// the store is away longer than [`RIDE_OUT`], a member may lapse instead,
/// which stops it as surely; the test accepts that then, and says so.
/// B's acquire tries for as long as the test waits for a failover (60 s,
/// `RedisFailover::wait_failover`): with 20 s, a Sentinel failover with both
/// cores building outlasted it and B gave up with "no primary for service"
/// (2026-11-29).
fn wave(url: &str, ns: &str, n: usize) -> Vec<(&'static str, Proc)> {
    support::wave(url, ns, n, &["--ttl", "8s", "--connect-timeout", "60s"])
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

/// How long the store may be away and every member still ride it out, at the
/// least: a member's hold at the waves' TTL (TTL − margin, 7.2 s) less one
/// renewal interval (TTL / 3) and one request's timeout (2 s: a renewal may
/// be under way as the store goes). A store away longer may leave members
/// lapsed: safe (they stop issuing), but then they cannot say why.
const RIDE_OUT: Duration = Duration::from_millis(7200 - 2667 - 2000);

/// Why a member of wave C stopped.
#[derive(Debug, PartialEq)]
enum Loss {
    /// Its renewal found the store older than its grant.
    WentBack,
    /// Another member had taken its id before its next renewal looked.
    OtherHolder,
    /// No renewal succeeded before its deadline: the store was away longer
    /// than [`RIDE_OUT`] (a loaded machine's restart), so it could not look.
    Lapsed,
}

/// Every member of `procs` stops by itself and says why: the store went
/// back, or another member took its id — or, only where the store was away
/// longer than [`RIDE_OUT`] (`away`), it lapsed. Returns (id, reason) per
/// member.
fn all_report_loss(procs: &[(&str, Proc)], what: &str, away: Duration) -> Vec<(u16, Loss)> {
    let lapse_ok = away > RIDE_OUT;
    procs
        .iter()
        .map(|(_, p)| {
            // The whole line (stderr is unbuffered: it may come in pieces).
            let said =
                |e: &str, words: &str| e.split(words).nth(1).is_some_and(|r| r.contains('\n'));
            p.wait_for(&format!("{what}: the loss"), 30 * SEC, |_, e| {
                said(e, " was lost (") || (lapse_ok && said(e, " lapsed: "))
            });
            let err = p.stderr();
            let id = leased_id(p);
            let loss = if err.contains("was lost (the store went back to an older copy") {
                Loss::WentBack
            } else if err.contains("was lost (another holder took the id)") {
                Loss::OtherHolder
            } else {
                assert!(
                    lapse_ok && said(&err, " lapsed: "),
                    "{what}: a member stopped without saying why (the store away {away:?}): {err}"
                );
                eprintln!(
                    "{what}: the store was away {away:?}, longer than a member surely rides out \
                     ({RIDE_OUT:?}); the member on id {id} lapsed, which stops it as surely"
                );
                return (id, Loss::Lapsed);
            };
            assert!(!err.contains("lapsed"), "{what}: a member lapsed: {err}");
            (id, loss)
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
    age: Duration,
    take_copy: impl FnOnce(),
    go_back: impl FnOnce(&mut dyn FnMut()),
) {
    let ns = "rollback";
    let a = wave(url, ns, 3);
    // A holds ids 0-2 (it draws once its start is over, beside P's).
    for (_, p) in &a {
        leased_id(p);
    }
    let p = wave(url, ns, 4);
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
    let c = wave(url, ns, 4);
    until(copied + age);
    let mut b = Vec::new();
    // B asks while the store is away (acquiring tries again until the
    // connect timeout), so it takes the two lowest ids the copy shows free
    // the moment it answers: 3 and 4, released by P, held by C.
    let gone = Instant::now();
    go_back(&mut || b = wave(url, ns, 2));
    let away = gone.elapsed();
    assert_eq!(b.len(), 2, "{what}: go_back did not start B");
    let taken: Vec<u16> = b.iter().map(|(_, p)| leased_id(p)).collect();
    for (id, loss) in all_report_loss(&c, what, away) {
        // C's renewal found the copy older than its grant, unless B had
        // taken the id first (then all it sees is another holder's grant).
        assert!(
            loss != Loss::OtherHolder || taken.contains(&id),
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
            age,
            || etcd.borrow().snapshot(0, &snap),
            |then| etcd.borrow_mut().restore(&snap, then),
        );
    }
}
