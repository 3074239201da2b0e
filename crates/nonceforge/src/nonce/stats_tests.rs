//! `NonceGenerator::stats`: exact counts under real threads, every refusal
//! and wait counted once, the clock and the headroom, on a manual clock.

use super::super::NonceKind;
use crate::{Bits, Error, MachineId, ManualClock, NonceGenerator};
use std::time::Duration;

const T0: u64 = 1_800_000_000_000;

fn manual() -> (ManualClock, NonceGenerator<ManualClock>) {
    let clock = ManualClock::at_unix_ms(T0);
    let g = NonceGenerator::builder(MachineId::new(3).unwrap())
        .clock(clock.clone())
        .key(&[7; 32])
        .build()
        .unwrap();
    (clock, g)
}

/// Eight threads, each making every kind and size through every path (one
/// call, batches, run-time kind, a per-thread handle dropped with ticks
/// left): the counts are exactly what was handed out.
#[test]
fn counts_are_exact_under_threads() {
    let g = NonceGenerator::builder(MachineId::new(1).unwrap())
        .key(&[9; 32])
        .build()
        .unwrap();
    const THREADS: u64 = 8;
    const EACH: u64 = 3000;
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            let g = g.clone();
            s.spawn(move || {
                for i in 0..EACH {
                    g.counter_64().unwrap();
                    g.encrypted_96().unwrap();
                    g.sortable_64().unwrap();
                    g.sortable_128().unwrap();
                    g.next(NonceKind::Counter, Bits::B128).unwrap();
                    if i % 100 == 0 {
                        let mut out = [[0u8; 12]; 10];
                        g.fill_counter_96(&mut out).unwrap();
                        g.fill_encrypted_96(&mut out).unwrap();
                    }
                }
                let mut local = g.local();
                for _ in 0..EACH {
                    local.counter_64().unwrap();
                    local.encrypted_128().unwrap();
                    local.sortable_96().unwrap();
                }
            });
        }
    });
    let st = g.stats();
    let n = THREADS * EACH;
    let batches = THREADS * EACH.div_ceil(100) * 20;
    assert_eq!(st.counter_issued(Bits::B64), 2 * n);
    assert_eq!(st.counter_issued(Bits::B96), n + batches);
    assert_eq!(st.counter_issued(Bits::B128), 2 * n);
    assert_eq!(st.sortable_issued(Bits::B64), n);
    assert_eq!(st.sortable_issued(Bits::B96), n);
    assert_eq!(st.sortable_issued(Bits::B128), n);
    assert_eq!(st.refused, Default::default());
    assert!(st.enabled && st.deadline_in.is_none());
}

/// A 64-bit counter holds 8192 nonces a millisecond: the 8193rd waits for
/// the clock, and the wait is counted with its length.
#[test]
fn throttling_is_counted_with_its_time() {
    let (clock, g) = manual();
    // Building waited for a new millisecond (a sleep of the manual clock).
    let slept_before = clock.slept();
    for _ in 0..8192 {
        g.counter_64().unwrap();
    }
    assert_eq!(g.stats().throttled, 0);
    g.counter_64().unwrap();
    let st = g.stats();
    assert_eq!(st.throttled, 1);
    assert!(st.throttled_for >= Duration::from_millis(1), "{st:?}");
    assert_eq!(st.throttled_for, clock.slept() - slept_before);
    assert_eq!(st.counter_issued(Bits::B64), 8193);
}

/// Every refusal counted once, under its reason; a refused call issues
/// nothing.
#[test]
fn refusals_by_reason() {
    let (clock, g) = manual();
    g.disable();
    assert!(matches!(g.counter_96(), Err(Error::Disabled)));
    assert!(matches!(g.sortable_64(), Err(Error::Disabled)));
    g.enable();
    let no_key = NonceGenerator::builder(MachineId::new(4).unwrap())
        .clock(clock.clone())
        .build()
        .unwrap();
    assert!(matches!(no_key.encrypted_64(), Err(Error::NoKey)));
    assert_eq!(no_key.stats().refused.no_key, 1);

    g.set_valid_until(Some(clock.wall_unix_ms() + 5));
    assert_eq!(g.stats().deadline_in, Some(Duration::from_millis(5)));
    g.counter_64().unwrap();
    clock.advance(Duration::from_millis(10));
    assert!(matches!(g.sortable_96(), Err(Error::Disabled)));
    assert!(matches!(g.counter_96(), Err(Error::Disabled)));
    assert!(!g.stats().enabled);

    let st = g.stats();
    assert_eq!(st.refused.disabled, 2);
    assert_eq!(st.refused.deadline, 2);
    assert_eq!(st.refused.total(), 4);
    assert_eq!(st.counter_issued(Bits::B64), 1);
    assert_eq!(st.counter_issued(Bits::B96), 0);
    assert_eq!(st.sortable_issued(Bits::B96), 0);
    assert_eq!(st.deadline_in, Some(Duration::ZERO));
}

/// The end of the 42-bit range: the headroom counts down, and past the end
/// each call that reads the clock is refused as exhausted (counter nonces
/// carry their start time plus ticks, and go on while those are in range).
#[test]
fn epoch_headroom_and_its_end() {
    let clock = ManualClock::at_unix_ms(T0);
    let end = T0 + 3_600_000;
    let g = NonceGenerator::builder(MachineId::new(2).unwrap())
        .clock(clock.clone())
        .epoch_unix_ms_signed(end as i64 - (1i64 << 42))
        .build()
        .unwrap();
    // Building waited for a new millisecond: the range ends an hour after T0.
    let left = end - g.issued_up_to_unix_ms();
    assert_eq!(g.stats().epoch_ends_in, Duration::from_millis(left));
    g.sortable_64().unwrap();
    clock.advance(Duration::from_secs(3600));
    assert!(matches!(g.sortable_64(), Err(Error::EpochExhausted { .. })));
    assert!(matches!(
        g.sortable_128(),
        Err(Error::EpochExhausted { .. })
    ));
    let st = g.stats();
    assert_eq!(st.epoch_ends_in, Duration::ZERO);
    assert_eq!(st.refused.epoch_exhausted, 2);
    assert_eq!(st.sortable_issued(Bits::B64), 1);
    assert_eq!(st.sortable_issued(Bits::B128), 0);
}

/// A wall clock stepped back shows as the distance behind the generator's
/// clock; the generator goes on without repeating itself.
#[test]
fn a_wall_clock_stepped_back_shows() {
    let (clock, g) = manual();
    assert_eq!(g.stats().clock_behind, Duration::ZERO);
    let a = g.sortable_64().unwrap();
    let now = g.issued_up_to_unix_ms();
    clock.set_wall_unix_ms(now - 90_000);
    assert_eq!(g.stats().clock_behind, Duration::from_secs(90));
    clock.advance(Duration::from_millis(1));
    assert!(g.sortable_64().unwrap() > a);
    clock.set_wall_unix_ms(g.issued_up_to_unix_ms());
    assert_eq!(g.stats().clock_behind, Duration::ZERO);
}

/// Sortable words given up when the millisecond moves on are not counted,
/// nor the words a lift skips; per-handle sequences count when dropped and
/// once a millisecond.
#[test]
fn sortable_counts_across_milliseconds() {
    let (clock, g) = manual();
    let mut local = g.local();
    for ms in 0..20 {
        for _ in 0..(ms % 5) * 100 + 1 {
            g.sortable_64().unwrap();
            g.sortable_96().unwrap();
            local.sortable_128().unwrap();
        }
        clock.advance(Duration::from_millis(1 + ms % 3));
    }
    // 9000 words overflow a 64-bit millisecond's 8192: the rest wait.
    for _ in 0..9000 {
        g.sortable_64().unwrap();
    }
    let issued: u64 = (0..20).map(|ms| (ms % 5) * 100 + 1).sum();
    let st = g.stats();
    assert_eq!(st.sortable_issued(Bits::B64), issued + 9000);
    assert_eq!(st.sortable_issued(Bits::B96), issued);
    // The handle's last millisecond is counted when it is dropped.
    assert!(st.sortable_issued(Bits::B128) < issued);
    drop(local);
    assert_eq!(g.stats().sortable_issued(Bits::B128), issued);
    assert!(g.stats().throttled >= 1);
}
