//! The lease crate on real stores (PostgreSQL, Redis alone, under Sentinel
//! and as a cluster, etcd), each started on a loopback port by the test:
//! the attach rules and the floor carried between holders, a lease lost
//! behind its holder's back, starting fast only where the store shows it is
//! safe, and — with manual clocks — a holder that finds no history or an
//! older copy of the store starting above every value the store forgot.
//! The same stores with many `nonceforge` processes as members are the CLI
//! crate's tests (crates/nonceforge-cli/tests/lease*.rs).
//!
//! One test at a time (they time leases against real clocks on a small
//! machine), each on its own servers.

use nonceforge_testkit::{Etcd, Postgres, Redis, RedisCluster, RedisFailover, TempDir, serial};
use std::time::{Duration, Instant};

const SEC: Duration = Duration::from_secs(1);

/// The library on its own: the attach rules, a fast clock's timestamps carried
/// to the next holder through the floor (which must wait for its clock, or
/// fail), and a lease lost behind its holder's back.
#[test]
fn library_floors_attach_rules_and_loss() {
    use nonceforge::{Error, MachineId, ManualClock, NonceGenerator};
    use nonceforge_lease::{Lease, LeaseError, LeaseOptions, LeaseState};
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let opts = LeaseOptions {
        ttl: SEC,
        renew_every: Some(Duration::from_millis(200)),
        namespace: "lib".into(),
        ..Default::default()
    };
    let wait_renewal = |lease: &Lease| {
        let before = lease.renewals().0;
        let t = Instant::now();
        while lease.renewals().0 == before {
            assert!(t.elapsed() < 5 * SEC, "no renewal");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let wall = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let before = wall();
    let lease = Lease::acquire(&url, &opts).unwrap();
    assert_eq!(lease.machine_id().get(), 0);
    assert!(matches!(lease.state(), LeaseState::Held { .. }));
    // A new namespace: no history, so the start lies the TTL and margin ahead.
    assert!(!lease.has_history());
    assert!(
        lease.floor_unix_ms() >= before + 1100,
        "{}",
        lease.floor_unix_ms()
    );
    let stranger = NonceGenerator::builder(MachineId::new(5).unwrap())
        .build()
        .unwrap();
    assert!(matches!(
        lease.attach(&stranger),
        Err(LeaseError::Generator { .. })
    ));
    // A generator of the other layout on the leased id: refused (the
    // namespace holds standard members; a wide one's values can meet theirs).
    let wide = lease
        .builder()
        .layout(nonceforge::Layout::Wide)
        .build()
        .unwrap();
    match lease.attach(&wide) {
        Err(e @ LeaseError::Generator { .. }) => {
            assert!(e.to_string().contains("layout"), "{e}")
        }
        other => panic!("a wide generator attached: {other:?}"),
    }

    // A generator whose clock runs a minute ahead of its host's issues
    // nothing, renewals or not: no holder issues above its host's clock plus
    // the hold (the cap), which is what lets a holder that finds no history
    // start above its own clock.
    let fast = ManualClock::at_unix_ms(wall() + 60_000);
    let g = lease.builder().clock(fast.clone()).build().unwrap();
    lease.attach(&g).unwrap();
    wait_renewal(&lease);
    wait_renewal(&lease);
    assert!(matches!(g.counter_64(), Err(Error::Disabled)));
    assert!(matches!(g.sortable_64(), Err(Error::Disabled)));
    // One on the host's clock issues once the host's clock passes the start.
    let on_time = lease.generator().unwrap();
    let ts = on_time
        .decompose(&on_time.sortable_64().unwrap())
        .unwrap()
        .unix_ms;
    assert!(ts > lease.floor_unix_ms());
    lease.release().unwrap();
    assert!(matches!(g.sortable_64(), Err(Error::Disabled)));
    let records = nonceforge_lease::status(&url, &opts).unwrap();
    assert_eq!(records.len(), 1);
    let floor = records[0].floor_unix_ms;
    assert!(floor >= ts && records[0].holder.is_empty(), "{records:?}");
    assert!(
        floor < wall() + 1000,
        "{floor}: above the host's clock plus the hold"
    );

    // The next holder has history, but by default starts the TTL and margin
    // ahead anyway: a store that went back may not show every live holder.
    let before = wall();
    let slow = Lease::acquire(&url, &opts).unwrap();
    assert!(slow.has_history() && !slow.started_fast());
    assert!(slow.floor_unix_ms() >= before + 1100 && slow.floor_unix_ms() > floor);
    assert!(slow.slow_start_reason().unwrap().contains("off"));
    slow.release().unwrap();
    let floor = nonceforge_lease::status(&url, &opts).unwrap()[0].floor_unix_ms;

    // Starting fast (declared: this Redis never goes back), on a clock
    // further behind the floor than it may wait, it fails instead of issuing
    // below it.
    let strict = LeaseOptions {
        max_clock_wait: Some(Duration::from_millis(1)),
        fast_start: nonceforge_lease::FastStart::Declared,
        ..opts.clone()
    };
    let next = Lease::acquire(&url, &strict).unwrap();
    assert!(next.has_history() && next.started_fast());
    assert_eq!((next.machine_id().get(), next.floor_unix_ms()), (0, floor));
    assert!(matches!(
        next.builder()
            .clock(ManualClock::at_unix_ms(floor - 500))
            .build(),
        Err(Error::ClockBehind { .. })
    ));
    let careless = NonceGenerator::builder(next.machine_id())
        .clock(ManualClock::at_unix_ms(floor - 100))
        .build()
        .unwrap();
    assert!(matches!(
        next.attach(&careless),
        Err(LeaseError::Generator { .. })
    ));
    // With a clock past the floor it starts above it. (Once the host's clock
    // is past it too: a generator's clock may not run ahead of its host's
    // plus the hold, and the floor lies the TTL and margin ahead of the host
    // clock that set it — under load the test can get here before that.)
    let t = Instant::now();
    while wall() <= floor + 5 {
        assert!(
            t.elapsed() < 5 * SEC,
            "the host's clock never passed the floor"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let g2 = next
        .builder()
        .clock(ManualClock::at_unix_ms(floor + 5))
        .build()
        .unwrap();
    next.attach(&g2).unwrap();
    wait_renewal(&next);
    assert!(g2.decompose(&g2.counter_64().unwrap()).unwrap().unix_ms > floor);

    // Taken behind its back (an operator's eviction, then another process):
    // the holder finds out at its next renewal and stops for good.
    assert!(nonceforge_lease::evict(&url, &opts, 0, None).unwrap());
    let thief = Lease::acquire(&url, &opts).unwrap();
    assert_eq!(thief.machine_id().get(), 0);
    let t = Instant::now();
    while next.state() != LeaseState::Lost {
        assert!(t.elapsed() < 5 * SEC, "{:?}", next.state());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(matches!(g2.counter_64(), Err(Error::Disabled)));
    assert!(matches!(
        next.release(),
        Err(LeaseError::Lost {
            machine_id: 0,
            reason: nonceforge_lease::LostReason::Taken
        })
    ));
    thief.release().unwrap();
}

/// An async application calls the (blocking) lease API from inside its own
/// tokio runtime: the lease runs its I/O on a thread of its own, so nothing
/// panics with "Cannot start a runtime from within a runtime".
/// Namespaces of the wide layout (ids 0..=65535) on every store: the
/// namespace records its layout and refuses a member of the other one with
/// both named; wide members sample the range (distinct ids from many
/// concurrent acquirers), their generators are wide; PostgreSQL's tables of
/// the earlier shape (int2 ids, every row put in ahead, no layout column)
/// are brought up to date, and an id whose row was deleted is found again
/// once the range's top is reached.
#[test]
fn wide_namespaces_on_every_store() {
    use nonceforge::Layout;
    use nonceforge_lease::{Lease, LeaseError, LeaseOptions};
    let _g = serial();
    let (pg, redis, cluster, etcd) = (
        Postgres::start(),
        Redis::start(),
        RedisCluster::start(),
        Etcd::start(1),
    );
    // Generous timeouts: 24 members connect, renew and release at once on a
    // small machine that may be building beside the test (a Redis Cluster
    // release once took more than the default request timeout, TTL / 3), so a
    // request may take all the TTL leaves (TTL - margin: 2 s - 200 ms).
    let slow_requests = Some(Duration::from_millis(1800));
    let wide = |ns: &str| LeaseOptions {
        ttl: 2 * SEC,
        connect_timeout: 60 * SEC,
        request_timeout: slow_requests,
        namespace: ns.into(),
        ..LeaseOptions::for_layout(Layout::Wide)
    };
    let standard = |ns: &str| LeaseOptions {
        ttl: 2 * SEC,
        request_timeout: slow_requests,
        namespace: ns.into(),
        ..Default::default()
    };
    for url in [pg.url(), redis.url(), cluster.url(), etcd.url()] {
        // 24 members at once, each on its own thread: distinct ids.
        let leases: Vec<Lease> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..24)
                .map(|_| s.spawn(|| Lease::acquire(&url, &wide("wide")).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut ids: Vec<u16> = leases.iter().map(|l| l.machine_id().get()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 24, "{url}: an id given twice");
        for l in &leases {
            assert_eq!(l.layout(), Layout::Wide);
            let g = l.builder().build().unwrap();
            assert_eq!(g.layout(), Layout::Wide);
            assert_eq!(g.machine_id(), l.machine_id());
            l.attach(&g).unwrap();
        }
        // PostgreSQL takes the lowest never-leased ids; the others sample
        // the whole range (24 ids all below 512 would be a 1-in-10^40 draw).
        if url.starts_with("postgres") {
            assert_eq!(ids, (0..24).collect::<Vec<_>>(), "{url}");
        } else {
            assert!(ids.iter().any(|&i| i > 511), "{url}: {ids:?}");
        }
        // A standard member of the wide namespace, and a wide member of a
        // standard one: refused, both layouts named, nothing held.
        let refused = |o: &LeaseOptions, recorded: &str, asked: &str| match Lease::acquire(&url, o)
        {
            Err(e @ LeaseError::Refused { .. }) => {
                let t = e.to_string();
                assert!(
                    t.contains(&format!("members of the {recorded} layout"))
                        && t.contains(&format!("asks for the {asked} layout")),
                    "{url}: {t}"
                );
            }
            other => panic!("{url}: {other:?}"),
        };
        refused(&standard("wide"), "wide", "standard");
        let std_lease = Lease::acquire(&url, &standard("narrow")).unwrap();
        refused(&wide("narrow"), "standard", "wide");
        let (info, records) = nonceforge_lease::status_of_store(&url, &wide("wide")).unwrap();
        assert_eq!(info.layout, "wide", "{url}");
        assert_eq!(
            records.iter().filter(|r| !r.holder.is_empty()).count(),
            24,
            "{url}"
        );
        std_lease.release().unwrap();
        for l in leases {
            l.release().unwrap();
        }
    }

    // PostgreSQL: tables of the earlier shape are brought up to date and
    // served as they are (their rows put in ahead: the lowest id first).
    pg.psql(
        "CREATE SCHEMA IF NOT EXISTS nonceforge_lease; \
         CREATE TABLE nonceforge_lease.old_leases (machine_id int2 PRIMARY KEY CHECK (machine_id >= 0 AND machine_id <= 511), grant_id text, holder text, token int8 NOT NULL DEFAULT 0, expires_at timestamptz, floor_unix_ms int8); \
         CREATE TABLE nonceforge_lease.old_meta (one bool PRIMARY KEY DEFAULT true CHECK (one), protocol int4 NOT NULL, incarnation text NOT NULL, created_at timestamptz NOT NULL DEFAULT clock_timestamp(), last_token int8 NOT NULL DEFAULT 0); \
         INSERT INTO nonceforge_lease.old_meta (protocol, incarnation) VALUES (2, 'abc'); \
         INSERT INTO nonceforge_lease.old_leases (machine_id) SELECT generate_series(0, 511);",
    );
    let old = Lease::acquire(&pg.url(), &standard("old")).unwrap();
    assert_eq!(old.machine_id().get(), 0);
    refused_pg(&pg.url(), &wide("old"));
    old.release().unwrap();

    // An id whose row was deleted (no history) is taken again once the
    // range's top is reached; a full range is AllTaken.
    let small = LeaseOptions {
        ids: 60_000..=60_002,
        ..wide("small")
    };
    let held: Vec<Lease> = (0..3)
        .map(|_| Lease::acquire(&pg.url(), &small).unwrap())
        .collect();
    let got: Vec<u16> = held.iter().map(|l| l.machine_id().get()).collect();
    assert_eq!(got, [60_000, 60_001, 60_002]);
    assert!(matches!(
        Lease::acquire(&pg.url(), &small),
        Err(LeaseError::AllTaken {
            first: 60_000,
            last: 60_002,
            ..
        })
    ));
    let mut held = held;
    held.remove(1).release().unwrap();
    pg.psql("DELETE FROM nonceforge_lease.small_leases WHERE machine_id = 60001");
    let again = Lease::acquire(&pg.url(), &small).unwrap();
    assert_eq!(again.machine_id().get(), 60_001);
    assert!(!again.has_history());
}

fn refused_pg(url: &str, o: &nonceforge_lease::LeaseOptions) {
    match nonceforge_lease::Lease::acquire(url, o) {
        Err(e @ nonceforge_lease::LeaseError::Refused { .. }) => {
            assert!(e.to_string().contains("standard layout"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn usable_from_inside_a_tokio_runtime() {
    use nonceforge_lease::{Lease, LeaseOptions};
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let opts = LeaseOptions {
        namespace: "in_tokio".into(),
        ..Default::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let lease = Lease::acquire(&url, &opts).unwrap();
        let generator = lease.generator().unwrap();
        generator.counter_96().unwrap();
        assert_eq!(nonceforge_lease::status(&url, &opts).unwrap().len(), 1);
        assert!(!nonceforge_lease::evict(&url, &opts, 7, None).unwrap());
        lease.release().unwrap();
    });
}

/// The generators' side, with manual clocks. Holder A draws on its id until
/// its lease stops it; the store loses everything; holder B finds no history.
/// B's first value lies above every value A issued, with B's host clock
/// behind A's by anything short of twice the margin (the stated bound), and A
/// reports the loss at its next renewal.
#[test]
fn no_history_start_is_above_every_earlier_value() {
    use nonceforge::ManualClock;
    use nonceforge_lease::{Lease, LeaseEvent, LeaseOptions, LeaseState, LostReason};
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let opts = LeaseOptions {
        ttl: 2 * SEC,
        renew_every: Some(Duration::from_millis(300)),
        namespace: "manual".into(),
        ..Default::default()
    };
    let margin_ms = 200; // TTL / 10
    let wall = nonceforge_testkit::wall_ms;
    let a = Lease::acquire(&url, &opts).unwrap();
    assert!(!a.has_history());
    // A's generator reads a clock that runs as fast as A's lease lets it: it
    // is moved a millisecond a value, so A issues as far ahead as the cap
    // allows (its host's clock plus the hold).
    let clock_a = ManualClock::at_unix_ms(wall());
    let ga = a.builder().clock(clock_a.clone()).build().unwrap();
    a.attach(&ga).unwrap();
    let top_a = nonceforge_testkit::draw_ahead(&ga, &clock_a, 3 * SEC);
    let t = Instant::now();
    assert!(top_a > 0, "A issued nothing");
    assert!(
        top_a > wall() + 1000,
        "A did not run ahead of its host's clock: {top_a}"
    );
    let events = a.subscribe();
    assert_eq!(redis.cli(&["FLUSHALL"]), "OK");
    let b = Lease::acquire(&url, &opts).unwrap();
    assert_eq!(b.machine_id(), a.machine_id());
    assert!(!b.has_history());
    assert!(
        b.floor_unix_ms() > top_a,
        "{} <= {top_a}",
        b.floor_unix_ms()
    );
    // B's host clock lags A's by just under twice the margin.
    let clock_b = ManualClock::at_unix_ms(wall() - 2 * margin_ms + 1);
    let gb = b.builder().clock(clock_b.clone()).build().unwrap();
    b.attach(&gb).unwrap();
    let first_b = loop {
        match gb.sortable_64() {
            Ok(n) => break gb.decompose(&n).unwrap().unix_ms,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
        assert!(t.elapsed() < 20 * SEC, "B never issued");
    };
    assert!(first_b > top_a, "B's first {first_b} <= A's last {top_a}");
    // A learns it at its next renewal, and issues nothing after.
    let t = Instant::now();
    while a.state() != LeaseState::Lost {
        assert!(t.elapsed() < 5 * SEC, "{:?}", a.state());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(a.lost_reason(), Some(LostReason::StoreLostData));
    assert!(ga.sortable_64().is_err());
    // Its subscribers heard it as it happened: renewals (a lapse, on a
    // stalled machine), then the loss, last.
    let heard: Vec<LeaseEvent> = events.try_iter().collect();
    assert_eq!(
        heard.last(),
        Some(&LeaseEvent::Lost(LostReason::StoreLostData)),
        "{heard:?}"
    );
    assert!(
        heard[..heard.len() - 1].iter().all(|e| matches!(
            e,
            LeaseEvent::Renewed { .. } | LeaseEvent::Lapsed | LeaseEvent::Resumed
        )),
        "{heard:?}"
    );
    b.release().unwrap();
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
    let wall = nonceforge_testkit::wall_ms;
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
    let top_a = nonceforge_testkit::draw_ahead(&ga, &clock_a, 3 * SEC);
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

/// A [`LeasePool`] on each store: 40 leases over 3 connections take the 40
/// ids of the range, each once, and the 41st is refused; every lease renews
/// on its own; PostgreSQL connections the server cuts are opened again and
/// the leases renew on; the pool dropped, its leases go on; a released id
/// comes back, and leases dropped free their ids for another pool.
///
/// [`LeasePool`]: nonceforge_lease::LeasePool
#[test]
fn pool_on_every_store() {
    use nonceforge_lease::{Lease, LeaseError, LeaseOptions, LeasePool, LeaseState};
    let _g = serial();
    let (pg, redis, etcd) = (Postgres::start(), Redis::start(), Etcd::start(1));
    let o = LeaseOptions {
        // Long enough that no lease expires while a busy machine acquires
        // the 40 (the 41st must find every id held).
        ttl: 4 * SEC,
        ids: 0..=39,
        namespace: "pool".into(),
        connect_timeout: 30 * SEC,
        ..Default::default()
    };
    for url in [pg.url(), redis.url(), etcd.url()] {
        let pool = LeasePool::connect(&url, &o, 3).unwrap();
        assert_eq!(pool.conns(), 3);
        let leases: Vec<Lease> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..40)
                .map(|_| s.spawn(|| pool.acquire().unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut ids: Vec<u16> = leases.iter().map(|l| l.machine_id().get()).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..40).collect::<Vec<_>>(), "{url}");
        match pool.acquire() {
            Err(LeaseError::AllTaken { .. }) => {}
            other => panic!("{url}: the 41st: {other:?}"),
        }
        let renewed = |from: &[u64]| {
            let limit = Instant::now() + 30 * SEC;
            for (l, &n) in leases.iter().zip(from) {
                while !(l.renewals().0 >= n + 2 && matches!(l.state(), LeaseState::Held { .. })) {
                    assert!(
                        Instant::now() < limit,
                        "{url}: id {} {:?} {:?} {:?}",
                        l.machine_id().get(),
                        l.renewals(),
                        l.state(),
                        l.last_error()
                    );
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        };
        renewed(&[0; 40]);
        if url.starts_with("postgres") {
            let before: Vec<u64> = leases.iter().map(|l| l.renewals().0).collect();
            let failed_before: u64 = leases.iter().map(|l| l.renewals().1).sum();
            pg.psql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
            );
            renewed(&before);
            let failed: u64 = leases.iter().map(|l| l.renewals().1).sum();
            assert!(failed > failed_before, "{url}: no renewal saw the cut");
        }
        // The pool gone, its leases renew on.
        drop(pool);
        let before: Vec<u64> = leases.iter().map(|l| l.renewals().0).collect();
        renewed(&before);
        let mut leases = leases;
        let gone = leases.swap_remove(7);
        let id = gone.machine_id();
        gone.release().unwrap();
        let again = LeasePool::connect(&url, &o, 1).unwrap();
        assert_eq!(again.acquire().unwrap().machine_id(), id, "{url}");
        drop(leases);
        let all: Vec<Lease> = (0..40).map(|_| again.acquire().unwrap()).collect();
        assert_eq!(all.len(), 40);
    }
}
