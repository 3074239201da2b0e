//! Every time-dependent rule, on a manual clock: throttling, banking, clocks
//! stepping backwards, restarts, the end of the 42-bit range.

use nonceforge::layout::{DEFAULT_EPOCH_UNIX_MS, TIMESTAMP_END};
use nonceforge::{
    Bits, Error, MachineId, ManualClock, NonceGenerator, NonceKind, shared_sortable_word,
};
use std::sync::atomic::AtomicU64;
use std::time::Duration;

const T0: u64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn build(clock: &ManualClock) -> NonceGenerator<ManualClock> {
    NonceGenerator::builder(MachineId::new(9).unwrap())
        .key(&[1; 32])
        .clock(clock.clone())
        .build()
        .unwrap()
}

fn ts_of(g: &NonceGenerator<ManualClock>, nonce: &[u8]) -> u64 {
    g.decompose(nonce).unwrap().unix_ms
}

#[test]
fn build_starts_in_the_next_millisecond() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    assert_eq!(g.started_unix_ms(), T0 + 1);
    assert_eq!(clock.slept(), Duration::from_millis(1));
}

#[test]
fn counter64_throttles_at_8192_per_ms_by_sleeping() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    let sleeps0 = clock.sleeps();
    let mut per_ms = std::collections::BTreeMap::<u64, u32>::new();
    for _ in 0..8192 * 5 {
        let n = g.counter_64().unwrap();
        let ts = ts_of(&g, &n);
        assert!(
            ts <= clock.wall_unix_ms(),
            "a timestamp never passes the clock"
        );
        *per_ms.entry(ts).or_default() += 1;
    }
    assert_eq!(per_ms.len(), 5);
    assert!(per_ms.values().all(|&c| c == 8192));
    // 4 carries past the clock, each met with one sleep to the next millisecond
    // (not a spin of many short ones).
    assert_eq!(clock.sleeps() - sleeps0, 4);
    assert_eq!(clock.wall_unix_ms(), T0 + 5);
}

#[test]
fn idle_time_is_banked() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    clock.advance(Duration::from_millis(100));
    let sleeps0 = clock.sleeps();
    let mut local = g.local();
    let mut last = 0;
    for _ in 0..100 * 8192 {
        last = ts_of(&g, &local.counter_64().unwrap());
    }
    assert_eq!(
        clock.sleeps(),
        sleeps0,
        "a burst on banked time never waits"
    );
    assert!(last <= clock.wall_unix_ms());
    // The bank is spent: the next block has to wait.
    for _ in 0..2 * 8192 {
        local.counter_64().unwrap();
    }
    assert!(clock.sleeps() > sleeps0);
}

#[test]
fn sortable64_reaches_8192_per_ms_then_sleeps() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    let sleeps0 = clock.sleeps();
    let mut prev = [0u8; 8];
    for i in 0..8192 * 3 {
        let n = g.sortable_64().unwrap();
        assert!(n > prev, "strictly increasing at #{i}");
        prev = n;
        let p = g.decompose(&n).unwrap();
        assert_eq!(
            p.unix_ms,
            clock.wall_unix_ms(),
            "carries the current millisecond"
        );
        assert_eq!(p.counter, i % 8192);
    }
    assert_eq!(clock.sleeps() - sleeps0, 2);
}

#[test]
fn sortable_counter_restarts_each_millisecond() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    let a = g.decompose(&g.sortable_96().unwrap()).unwrap();
    let b = g.decompose(&g.sortable_96().unwrap()).unwrap();
    clock.advance(Duration::from_millis(7));
    let c = g.decompose(&g.sortable_96().unwrap()).unwrap();
    assert_eq!((a.counter, b.counter, c.counter), (0, 1, 0));
    assert_eq!(c.unix_ms, a.unix_ms + 7);
}

#[test]
fn wall_clock_stepping_back_after_build_changes_nothing() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    let before = g.sortable_128().unwrap();
    clock.set_wall_unix_ms(T0 - 3_600_000); // NTP steps the clock back an hour
    clock.advance(Duration::from_millis(2));
    let after = g.sortable_128().unwrap();
    assert!(after > before);
    assert_eq!(
        ts_of(&g, &after),
        T0 + 1 + 2,
        "time follows the monotonic clock"
    );
    // 64-bit counters do not stall either.
    for _ in 0..3 * 8192 {
        g.counter_64().unwrap();
    }
}

#[test]
fn restart_within_the_same_millisecond_cannot_collide() {
    let clock = ManualClock::at_unix_ms(T0);
    let a = build(&clock);
    let from_a: Vec<[u8; 16]> = (0..1000).map(|_| a.counter_128().unwrap()).collect();
    let s_a: Vec<[u8; 8]> = (0..1000).map(|_| a.sortable_64().unwrap()).collect();
    let up_to = a.issued_up_to_unix_ms();
    drop(a);
    // The process restarts at once: the clock has not moved.
    let b = build(&clock);
    assert!(b.started_unix_ms() > up_to);
    for n in (0..1000).map(|_| b.counter_128().unwrap()) {
        assert!(!from_a.contains(&n));
    }
    for n in (0..1000).map(|_| b.sortable_64().unwrap()) {
        assert!(!s_a.contains(&n));
    }
}

#[test]
fn restart_after_the_wall_clock_stepped_back_needs_the_floor() {
    let clock = ManualClock::at_unix_ms(T0);
    let a = build(&clock);
    clock.advance(Duration::from_millis(500));
    let first_a = a.counter_128().unwrap();
    let floor = a.issued_up_to_unix_ms();
    drop(a);

    // Restart onto a host whose clock reads what the first host's did at its
    // start. Without the floor the new generator starts in the past, and repeats:
    // the limit of what a process can know alone.
    clock.set_wall_unix_ms(T0);
    let careless = build(&clock);
    assert!(careless.started_unix_ms() < floor);
    assert_eq!(careless.counter_128().unwrap(), first_a, "a repeat, shown");

    // With the floor, and patience enough, the generator waits until past it.
    clock.set_wall_unix_ms(T0 - 5_000);
    let slept = clock.slept();
    let b = NonceGenerator::builder(MachineId::new(9).unwrap())
        .not_before(floor)
        .max_wait(Duration::from_secs(10))
        .clock(clock.clone())
        .build()
        .unwrap();
    assert!(b.started_unix_ms() > floor);
    assert!(clock.slept() - slept >= Duration::from_millis(5_000));

    // With less patience, it refuses, and says why.
    clock.set_wall_unix_ms(T0 - 5_000);
    let e = NonceGenerator::builder(MachineId::new(9).unwrap())
        .not_before(floor + 5_000)
        .max_wait(Duration::from_secs(1))
        .clock(clock.clone())
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::ClockBehind { .. }), "{e}");
    assert!(e.to_string().contains("max_wait"), "{e}");
}

#[test]
fn end_of_the_42_bit_range() {
    let end = DEFAULT_EPOCH_UNIX_MS + TIMESTAMP_END;
    // Far from the end: no warning.
    let g = build(&ManualClock::at_unix_ms(T0));
    assert_eq!(g.epoch_ends_in(), None);

    // Within a year: a warning.
    let clock = ManualClock::at_unix_ms(end - 200 * 86_400_000);
    let g = build(&clock);
    let left = g.epoch_ends_in().expect("within a year of the end");
    assert!(left < Duration::from_secs(200 * 86_400));

    // At the last millisecond: what fits is issued, then a clear error.
    let clock = ManualClock::at_unix_ms(end - 3);
    let g = build(&clock); // starts at end - 2
    let mut ok = 0;
    let err = loop {
        match g.sortable_64() {
            Ok(_) => ok += 1,
            Err(e) => break e,
        }
        assert!(ok <= 2 * 8192, "must stop at the end of the range");
    };
    assert_eq!(ok, 2 * 8192, "the last two milliseconds are used in full");
    assert!(matches!(err, Error::EpochExhausted { .. }), "{err}");
    assert!(err.to_string().contains("2^42"));
    let mut ok64 = 0;
    while g.counter_64().is_ok() {
        ok64 += 1;
        assert!(ok64 <= 2 * 8192);
    }
    assert_eq!(ok64, 2 * 8192);
    // The clock is at the last millisecond: sortable nonces still fit there,
    // counter nonces carry the start time.
    assert!(g.sortable_128().is_ok() && g.counter_96().is_ok());
    clock.advance(Duration::from_millis(1));
    assert!(matches!(
        g.sortable_128(),
        Err(Error::EpochExhausted { .. })
    ));

    // Past the end, or before the epoch: building fails.
    let e = NonceGenerator::builder(MachineId::new(1).unwrap())
        .clock(ManualClock::at_unix_ms(end))
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::EpochExhausted { .. }), "{e}");
    let e = NonceGenerator::builder(MachineId::new(1).unwrap())
        .clock(ManualClock::at_unix_ms(DEFAULT_EPOCH_UNIX_MS - 10))
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::ClockBeforeEpoch { .. }), "{e}");
}

#[test]
fn disabled_generator_issues_nothing() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    let mut local = g.local();
    local.counter_96().unwrap();
    g.disable();
    assert!(!g.is_enabled());
    assert_eq!(g.counter_64(), Err(Error::Disabled));
    assert_eq!(g.sortable_96(), Err(Error::Disabled));
    assert_eq!(g.encrypted_128(), Err(Error::Disabled));
    assert_eq!(
        local.counter_96(),
        Err(Error::Disabled),
        "even inside a reserved block"
    );
    assert_eq!(local.encrypted_64(), Err(Error::Disabled));
    let mut buf = [0xAAu8; 32];
    for kind in [
        NonceKind::Counter,
        NonceKind::Sortable,
        NonceKind::Encrypted,
    ] {
        assert_eq!(g.fill(kind, Bits::B128, &mut buf), Err(Error::Disabled));
        assert_eq!(buf, [0xAA; 32], "nothing half-written");
    }
    g.enable();
    assert!(g.counter_64().is_ok() && local.counter_96().is_ok());
}

#[test]
fn bad_input_is_refused_with_a_typed_error() {
    let clock = ManualClock::at_unix_ms(T0);
    let no_key = NonceGenerator::builder(MachineId::new(1).unwrap())
        .clock(clock.clone())
        .build()
        .unwrap();
    assert_eq!(no_key.encrypted_64(), Err(Error::NoKey));
    assert_eq!(no_key.local().encrypted_96(), Err(Error::NoKey));
    assert_eq!(no_key.decrypt(&[0; 16]), Err(Error::NoKey));
    assert_eq!(no_key.encrypt(&[0; 16]), Err(Error::NoKey));
    let e = NonceGenerator::builder(MachineId::new(1).unwrap())
        .key(&[0; 31])
        .clock(clock.clone())
        .build()
        .unwrap_err();
    assert_eq!(e, Error::KeyTooShort { len: 31 });
    assert!(e.to_string().contains("31") && e.to_string().contains("32"));

    let g = build(&clock);
    let mut buf = [0x55u8; 20];
    let e = g.fill(NonceKind::Counter, Bits::B96, &mut buf).unwrap_err();
    assert_eq!(
        e,
        Error::BufferLength {
            argument: "out",
            len: 20,
            width: 12
        }
    );
    assert_eq!(buf, [0x55; 20]);
    assert!(matches!(
        g.decrypt(&[0; 5]),
        Err(Error::NonceLength { len: 5, .. })
    ));
    assert!(matches!(
        g.encrypt(&[0; 13]),
        Err(Error::NonceLength { len: 13, .. })
    ));
    assert!(matches!(
        g.decompose(&[0; 17]),
        Err(Error::NonceLength { len: 17, .. })
    ));
    let n = g.next(NonceKind::Counter, Bits::B96).unwrap();
    let mut short = [0u8; 5];
    assert_eq!(
        n.write_to(&mut short),
        Err(Error::OutputLength {
            argument: "out",
            expected: 12,
            len: 5
        })
    );
    let mut exact = [0u8; 12];
    n.write_to(&mut exact).unwrap();
    assert_eq!(exact.to_vec(), n.to_vec());
    let mut empty: [u8; 0] = [];
    assert!(g.fill(NonceKind::Encrypted, Bits::B64, &mut empty).is_ok());
}

#[test]
fn sortable_handles_increase_and_never_collide() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    let (mut a, mut b) = (g.local(), g.local());
    let pa: Vec<_> = (0..5)
        .map(|_| g.decompose(&a.sortable_96().unwrap()).unwrap())
        .collect();
    let pb = g.decompose(&b.sortable_96().unwrap()).unwrap();
    let shared = g.decompose(&g.sortable_96().unwrap()).unwrap();
    // Slot in the high bits of the counter field, per-millisecond counter below.
    assert_eq!(
        pa.iter().map(|p| p.counter & 0x1f_ffff).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    let slot = |p: &nonceforge::NonceParts| p.counter >> 21;
    assert!(slot(&pa[0]) >= 1 && slot(&pb) >= 1 && slot(&pa[0]) != slot(&pb));
    assert_eq!(slot(&shared), 0, "slot 0 is the shared sequence");
    clock.advance(Duration::from_millis(3));
    let next = g.decompose(&a.sortable_96().unwrap()).unwrap();
    assert_eq!(next.unix_ms, pa[0].unix_ms + 3);
    assert_eq!(
        next.counter & 0x1f_ffff,
        0,
        "the counter restarts each millisecond"
    );

    // 2^21 from one handle in one millisecond: the next waits for the next one.
    let mut c = g.local();
    let first = c.sortable_128().unwrap();
    let mut last = first;
    for _ in 1..(1 << 21) {
        let n = c.sortable_128().unwrap();
        assert!(n > last);
        last = n;
    }
    let sleeps = clock.sleeps();
    let over = c.sortable_128().unwrap();
    assert!(over > last);
    assert_eq!(clock.sleeps(), sleeps + 1);
    assert_eq!(ts_of(&g, &over), ts_of(&g, &first) + 1);
}

#[test]
fn processes_sharing_a_machine_id_through_external_ticks_and_slots() {
    // Two "processes" (generators) with one machine id, one fixed start and
    // one shared tick counter (a database sequence, say) never collide.
    let clock = ManualClock::at_unix_ms(T0);
    let make = || {
        NonceGenerator::builder(MachineId::new(4).unwrap())
            .key(&[3; 32])
            .start_unix_ms(T0 - 10)
            .clock(clock.clone())
            .build()
            .unwrap()
    };
    let (a, b) = (make(), make());
    assert_eq!(a.started_unix_ms(), T0 - 10);
    let mut seen = std::collections::HashSet::new();
    for tick in 0..20_000u64 {
        let g = if tick % 2 == 0 { &a } else { &b };
        for bits in Bits::ALL {
            for kind in [NonceKind::Counter, NonceKind::Encrypted] {
                let n = g.nonce_at_tick(kind, bits, tick).unwrap();
                assert!(seen.insert((kind as u8, n)), "{kind:?} {bits} tick {tick}");
            }
        }
    }
    // The same tick from either process gives the same nonce: the shared
    // counter, not the process, keeps nonces apart.
    assert_eq!(
        a.nonce_at_tick(NonceKind::Counter, Bits::B96, 7).unwrap(),
        b.nonce_at_tick(NonceKind::Counter, Bits::B96, 7).unwrap()
    );
    // 64-bit ticks wait for their millisecond (20,000 ticks > 10 ms of 8192).
    assert!(clock.wall_unix_ms() >= T0);
    assert!(matches!(
        a.nonce_at_tick(NonceKind::Sortable, Bits::B64, 0),
        Err(Error::InvalidOption { .. })
    ));

    // Sortable sequences in distinct slots.
    let mut s1 = a.sortable_sequence(Bits::B128, 1).unwrap();
    let mut s2 = b.sortable_sequence(Bits::B128, 2).unwrap();
    let (mut last1, mut last2) = (0u128, 0u128);
    let mut all = std::collections::HashSet::new();
    for _ in 0..10_000 {
        let (x, y) = (s1.next_value().unwrap(), s2.next_value().unwrap());
        assert!(x > last1 && y > last2);
        (last1, last2) = (x, y);
        assert!(all.insert(x) && all.insert(y));
    }
    assert!(a.sortable_sequence(Bits::B64, 1).is_err());
    assert!(a.sortable_sequence(Bits::B96, 0).is_err());
    assert!(a.sortable_sequence(Bits::B96, 1 << 24).is_err());

    // A start in the future is refused.
    let e = NonceGenerator::builder(MachineId::new(4).unwrap())
        .start_unix_ms(clock.wall_unix_ms() + 1000)
        .clock(clock.clone())
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::ClockBehind { .. }), "{e}");
}

#[test]
fn generators_sharing_one_sortable_word_never_collide() {
    // Two "backends" (generators) of one machine id, each on its own thread,
    // share a 64-bit sortable sequence through one word (shared memory, say);
    // the 8192-per-millisecond cap makes both sleep, which moves the clock.
    let clock = ManualClock::at_unix_ms(T0);
    let make = || {
        NonceGenerator::builder(MachineId::new(5).unwrap())
            .clock(clock.clone())
            .build()
            .unwrap()
    };
    let word = AtomicU64::new(shared_sortable_word(Bits::B64, clock.wall_unix_ms()));
    let (a, b) = (make(), make());
    let per_thread = 100_000;
    let runs: Vec<Vec<u128>> = std::thread::scope(|s| {
        [&a, &b]
            .map(|g| {
                let word = &word;
                s.spawn(move || {
                    (0..per_thread)
                        .map(|_| g.sortable_shared(Bits::B64, word).unwrap().to_u128())
                        .collect::<Vec<_>>()
                })
            })
            .map(|h| h.join().unwrap())
            .into_iter()
            .collect()
    });
    let mut all = std::collections::HashSet::new();
    for run in &runs {
        assert!(
            run.windows(2).all(|w| w[0] < w[1]),
            "each thread's nonces increase"
        );
        for &n in run {
            assert!(all.insert(n), "repeat {n:#x}");
        }
    }
    assert_eq!(all.len(), 2 * per_thread);
    // 200,000 nonces at 8192 a millisecond span at least 25 ms of the clock.
    let last = runs.iter().map(|r| *r.last().unwrap()).max().unwrap();
    let last_ms = a.decompose(&(last as u64).to_be_bytes()).unwrap().unix_ms;
    assert!(last_ms >= T0 + 25, "{last_ms}");
    assert!(clock.wall_unix_ms() >= last_ms);

    // The word is lost (a server restart) and a fresh one is made in the
    // millisecond of the last nonce: it starts a millisecond later, so nothing
    // repeats, however often that happens...
    let mut seen = std::collections::HashSet::new();
    for _ in 0..3 {
        let fresh = AtomicU64::new(shared_sortable_word(Bits::B64, clock.wall_unix_ms()));
        let n = a.sortable_shared(Bits::B64, &fresh).unwrap().to_u128();
        assert!(n > last && !all.contains(&n) && seen.insert(n));
    }
    // ...while words that start at the current millisecond repeat.
    let ms = clock.wall_unix_ms();
    let naive = |ms: u64| AtomicU64::new(ms << 13);
    let x = a.sortable_shared(Bits::B64, &naive(ms)).unwrap();
    let y = a.sortable_shared(Bits::B64, &naive(ms)).unwrap();
    assert_eq!(x, y);
    let fresh = AtomicU64::new(shared_sortable_word(Bits::B64, clock.wall_unix_ms()));

    // A disabled generator issues nothing from a shared word either.
    b.disable();
    assert!(matches!(
        b.sortable_shared(Bits::B64, &fresh),
        Err(Error::Disabled)
    ));
}

/// A deadline (a machine-id lease's) bounds every timestamp issued, and the first
/// look at the clock past it stops the generator for good — until a later
/// deadline is set.
#[test]
fn a_deadline_bounds_timestamps_and_stops_the_generator() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    let until = g.issued_up_to_unix_ms() + 5;
    g.set_valid_until(Some(until));
    assert_eq!(g.valid_until(), Some(until));
    let mut local = g.local();
    // Sortable 64-bit nonces run ahead of the clock at 8192 a millisecond:
    // they stop at the deadline's millisecond, without waiting past it.
    let mut last = 0;
    let err = loop {
        match g.sortable_64() {
            Ok(n) => last = ts_of(&g, &n),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::Disabled), "{err}");
    assert_eq!(
        last, until,
        "the last sortable nonce is in the deadline's millisecond"
    );
    assert!(
        clock.wall_unix_ms() <= until,
        "it never waited past the deadline"
    );
    // Stopped: every kind, every path, even with the clock before the deadline.
    assert!(!g.is_enabled());
    assert!(matches!(g.counter_96(), Err(Error::Disabled)));
    assert!(matches!(local.counter_128(), Err(Error::Disabled)));
    assert!(matches!(g.encrypted_64(), Err(Error::Disabled)));
    // enable() undoes disable(), not the deadline.
    g.enable();
    assert!(matches!(g.counter_64(), Err(Error::Disabled)));
    // A later deadline resumes it; timestamps go on past the old one.
    g.set_valid_until(Some(clock.wall_unix_ms() + 1000));
    assert!(g.is_enabled());
    assert!(ts_of(&g, &g.sortable_64().unwrap()) > until);
    // A deadline already behind the clock stops it at once.
    g.set_valid_until(Some(clock.wall_unix_ms() - 1));
    assert!(matches!(g.counter_128(), Err(Error::Disabled)));
    g.set_valid_until(None);
    assert!(g.counter_128().is_ok());
}

/// Paths that do not read the clock per nonce notice the deadline where they
/// do: 64-bit counters at the next millisecond, per-thread handles at the next
/// block, batches at every call, and any path at `check_deadline` (the lease's
/// timer).
#[test]
fn a_deadline_is_seen_where_the_clock_is_read() {
    let clock = ManualClock::at_unix_ms(T0);
    let g = build(&clock);
    g.set_valid_until(Some(g.issued_up_to_unix_ms() + 10));
    let mut local = g.local();
    let mut batch = [[0u8; 12]; 4];
    let a = local.counter_96().unwrap();
    g.fill_counter_96(&mut batch).unwrap();
    clock.advance(Duration::from_millis(20));
    // Within the block already reserved: no clock read, so it still issues, at
    // the block's old timestamp (at or below the deadline).
    let b = local.counter_96().unwrap();
    assert!(ts_of(&g, &b) <= g.valid_until().unwrap() && b != a);
    // A batch reserves afresh and reads the clock.
    assert!(matches!(
        g.fill_counter_96(&mut batch),
        Err(Error::Disabled)
    ));
    assert!(matches!(local.counter_96(), Err(Error::Disabled)));

    let g = build(&clock);
    g.set_valid_until(Some(g.issued_up_to_unix_ms() + 10));
    g.counter_64().unwrap();
    clock.advance(Duration::from_millis(20));
    // 64-bit counters: the rest of the current millisecond's 8192, then the clock.
    let mut issued = 0;
    while g.counter_64().is_ok() {
        issued += 1;
    }
    assert!(issued < 8192 * 11, "{issued}");
    assert!(!g.is_enabled());

    let g = build(&clock);
    g.set_valid_until(Some(g.issued_up_to_unix_ms() + 10));
    assert!(g.check_deadline());
    clock.advance(Duration::from_millis(20));
    assert!(g.counter_128().is_ok(), "no clock read yet");
    assert!(!g.check_deadline());
    assert!(matches!(g.counter_128(), Err(Error::Disabled)));
}

#[test]
fn an_epoch_before_1970_works_as_nononcenses() {
    // 1960-01-01: NoNoncense takes any epoch whose 42 bits have not run out.
    let epoch: i64 = -315_619_200_000;
    let clock = ManualClock::at_unix_ms(T0);
    let g = NonceGenerator::builder(MachineId::new(9).unwrap())
        .epoch_unix_ms_signed(epoch)
        .clock(clock.clone())
        .build()
        .unwrap();
    assert_eq!(g.epoch_unix_ms_signed(), epoch);
    assert_eq!(g.started_unix_ms(), T0 + 1);
    let a = g.sortable_64().unwrap();
    clock.advance(Duration::from_millis(5));
    let b = g.sortable_64().unwrap();
    // The timestamp field counts from 1960; the parts read back in Unix ms.
    assert_eq!(ts_of(&g, &a), T0 + 1);
    assert_eq!(ts_of(&g, &b), T0 + 6);
    let field = u64::from_be_bytes(a) >> 22;
    assert_eq!(field as i64, (T0 + 1) as i64 - epoch);
    assert!(a < b);
    for kind in [NonceKind::Counter, NonceKind::Sortable] {
        for bits in Bits::ALL {
            let n = g.next(kind, bits).unwrap();
            assert!(g.decompose(&n.to_vec()).unwrap().unix_ms <= clock.wall_unix_ms());
        }
    }
    // A shared sortable word counts in Unix ms whatever the epoch.
    let word = AtomicU64::new(0);
    let s = g.sortable_shared(Bits::B96, &word).unwrap();
    assert_eq!(g.decompose(&s.to_vec()).unwrap().unix_ms, T0 + 6);

    // One whose 42 bits ran out before now is refused.
    let too_old = -(TIMESTAMP_END as i64) + 1_000_000;
    let r = NonceGenerator::builder(MachineId::new(9).unwrap())
        .epoch_unix_ms_signed(too_old)
        .clock(ManualClock::at_unix_ms(T0))
        .build();
    assert!(matches!(r, Err(Error::EpochExhausted { .. })), "{r:?}");
}
