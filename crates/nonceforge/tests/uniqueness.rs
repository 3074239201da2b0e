//! Two threads × 20 million nonces of every kind and size, all distinct (counted),
//! sortable nonces strictly increasing per thread. One thread takes the per-thread
//! handle, the other the shared generator and batches, so every path draws from
//! the same state. A manual clock moves underneath, pushed by a third thread and
//! by the generators' own throttling sleeps.
//!
//! Then the wide layout's six (a quarter as many each: the paths are the same,
//! only the fields' places differ), at a machine id above 9 bits.
//!
//! Run in release mode (`make test` does): 420 million nonces in all.

use nonceforge::{Bits, Layout, MachineId, ManualClock, NonceGenerator, NonceKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const PER_THREAD: usize = 20_000_000;

fn value(bytes: &[u8]) -> u128 {
    let mut w = [0u8; 16];
    w[16 - bytes.len()..].copy_from_slice(bytes);
    u128::from_be_bytes(w)
}

/// Thread A: one call at a time on a per-thread handle.
fn thread_a(g: &NonceGenerator<ManualClock>, kind: NonceKind, bits: Bits, n: usize) -> Vec<u128> {
    let mut local = g.local();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let v = match (kind, bits) {
            (NonceKind::Counter, Bits::B64) => value(&local.counter_64().unwrap()),
            (NonceKind::Counter, Bits::B96) => value(&local.counter_96().unwrap()),
            (NonceKind::Counter, Bits::B128) => value(&local.counter_128().unwrap()),
            (NonceKind::Encrypted, Bits::B64) => value(&local.encrypted_64().unwrap()),
            (NonceKind::Encrypted, Bits::B96) => value(&local.encrypted_96().unwrap()),
            (NonceKind::Encrypted, Bits::B128) => value(&local.encrypted_128().unwrap()),
            (NonceKind::Sortable, Bits::B64) => value(&local.sortable_64().unwrap()),
            (NonceKind::Sortable, Bits::B96) => value(&local.sortable_96().unwrap()),
            (NonceKind::Sortable, Bits::B128) => value(&local.sortable_128().unwrap()),
        };
        out.push(v);
    }
    out
}

/// Thread B: alternately single calls on the shared generator and batches.
fn thread_b(g: &NonceGenerator<ManualClock>, kind: NonceKind, bits: Bits, n: usize) -> Vec<u128> {
    let width = bits.bytes();
    let mut out = Vec::with_capacity(n);
    let mut buf = vec![0u8; 1000 * width];
    while out.len() < n {
        for _ in 0..1000 {
            out.push(g.next(kind, bits).unwrap().to_u128());
        }
        g.fill(kind, bits, &mut buf).unwrap();
        out.extend(buf.chunks_exact(width).map(value));
    }
    out.truncate(n);
    out
}

fn run(kind: NonceKind, bits: Bits) {
    run_in(Layout::Standard, kind, bits)
}

fn run_in(layout: Layout, kind: NonceKind, bits: Bits) {
    let (machine, n) = match layout {
        Layout::Standard => (77u16, PER_THREAD),
        Layout::Wide => (40_077, PER_THREAD / 4),
    };
    let clock = ManualClock::at_unix_ms(1_767_225_600_000);
    let g = NonceGenerator::builder(MachineId::new_in(layout, machine.into()).unwrap())
        .layout(layout)
        .key(&[9; 32])
        .clock(clock.clone())
        .build()
        .unwrap();
    let stop = AtomicBool::new(false);
    let (a, b) = std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                clock.advance(Duration::from_millis(1));
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        let a = s.spawn(|| thread_a(&g, kind, bits, n));
        let b = s.spawn(|| thread_b(&g, kind, bits, n));
        let r = (a.join().unwrap(), b.join().unwrap());
        stop.store(true, Ordering::Relaxed);
        r
    });
    if kind == NonceKind::Sortable {
        for (name, v) in [("A", &a), ("B", &b)] {
            if let Some(i) = v.windows(2).position(|w| w[0] >= w[1]) {
                panic!(
                    "{bits}-bit sortable, thread {name}: #{i} {:x} then {:x}",
                    v[i],
                    v[i + 1]
                );
            }
        }
    }
    let mut all = a;
    all.extend(b);
    assert_eq!(all.len(), 2 * n);
    all.sort_unstable();
    let before = all.len();
    all.dedup();
    assert_eq!(
        all.len(),
        before,
        "{} {bits}-bit: {} repeats among {before}",
        kind.name(),
        before - all.len()
    );
    if kind == NonceKind::Encrypted {
        // Decrypting gives plain nonces of this generator.
        for &v in all.iter().step_by(1_000_003) {
            let bytes = &v.to_be_bytes()[16 - bits.bytes()..];
            let plain = g.decrypt(bytes).unwrap().to_vec();
            assert_eq!(g.decompose(&plain).unwrap().machine_id, machine);
        }
    } else {
        for &v in all.iter().step_by(1_000_003) {
            let bytes = &v.to_be_bytes()[16 - bits.bytes()..];
            assert_eq!(g.decompose(bytes).unwrap().machine_id, machine);
        }
    }
}

#[test]
fn counter_64() {
    run(NonceKind::Counter, Bits::B64);
}
#[test]
fn counter_96() {
    run(NonceKind::Counter, Bits::B96);
}
#[test]
fn counter_128() {
    run(NonceKind::Counter, Bits::B128);
}
#[test]
fn sortable_64() {
    run(NonceKind::Sortable, Bits::B64);
}
#[test]
fn sortable_96() {
    run(NonceKind::Sortable, Bits::B96);
}
#[test]
fn sortable_128() {
    run(NonceKind::Sortable, Bits::B128);
}
#[test]
fn encrypted_64() {
    run(NonceKind::Encrypted, Bits::B64);
}
#[test]
fn encrypted_96() {
    run(NonceKind::Encrypted, Bits::B96);
}
#[test]
fn encrypted_128() {
    run(NonceKind::Encrypted, Bits::B128);
}

#[test]
fn wide_counter_96() {
    run_in(Layout::Wide, NonceKind::Counter, Bits::B96);
}
#[test]
fn wide_counter_128() {
    run_in(Layout::Wide, NonceKind::Counter, Bits::B128);
}
#[test]
fn wide_sortable_96() {
    run_in(Layout::Wide, NonceKind::Sortable, Bits::B96);
}
#[test]
fn wide_sortable_128() {
    run_in(Layout::Wide, NonceKind::Sortable, Bits::B128);
}
#[test]
fn wide_encrypted_96() {
    run_in(Layout::Wide, NonceKind::Encrypted, Bits::B96);
}
#[test]
fn wide_encrypted_128() {
    run_in(Layout::Wide, NonceKind::Encrypted, Bits::B128);
}
