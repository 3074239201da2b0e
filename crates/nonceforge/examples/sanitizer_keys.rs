//! Memory and set-up cost per live key: the sanitizer beside the plain AEAD.
//!
//! `cargo run --release -p nonceforge --example sanitizer_keys [-- KEYS SEALS]`
//! makes KEYS live keys (default 100,000), seals SEALS messages of 64 bytes
//! under each (default 4) with counter nonces, then again with random-looking
//! ones, keeps them all, and prints the
//! heap each key holds and what making one costs, for ring's AES-256-GCM and
//! RustCrypto's ChaCha20-Poly1305, plain and sanitized (defaults). Heap is
//! counted by a counting allocator (live bytes, after the seals), plus each
//! value's own size; median of 5 rounds.

use nonceforge::aead::{GuardConfig, Sanitized};
use ring::aead as r;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as for `dealloc`; `new` is the caller's new size.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A key no other round used: its index and the round in the bytes.
fn key_bytes(round: u32, i: u32, salt: u8) -> [u8; 32] {
    let mut k = [salt; 32];
    k[..4].copy_from_slice(&round.to_le_bytes());
    k[4..8].copy_from_slice(&i.to_le_bytes());
    k
}

/// Counter nonces (`spread` 1) or random-looking ones (an odd multiplier
/// scatters them, and a prefix in the first 4 bytes keeps them off the
/// counter path, as random 96-bit nonces are).
fn nonce_for(i: u64, spread: u64) -> [u8; 12] {
    let mut n = [0; 12];
    let v = i.wrapping_mul(spread);
    n[..4].copy_from_slice(&((v >> 32) as u32 * (spread != 1) as u32).to_be_bytes());
    n[4..].copy_from_slice(&v.to_be_bytes());
    n
}

/// (bytes a key, ns to make one) for `make` and `seal` over `keys` keys.
fn measure<T>(
    keys: u32,
    seals: u64,
    round: u32,
    make: impl Fn([u8; 32]) -> T,
    seal: impl Fn(&T, [u8; 12], &mut [u8]),
    salt: u8,
    spread: u64,
) -> (f64, f64) {
    let before = LIVE.load(Ordering::Relaxed);
    let mut held = Vec::with_capacity(keys as usize);
    let t = Instant::now();
    for i in 0..keys {
        held.push(make(key_bytes(round, i, salt)));
    }
    let made = t.elapsed().as_nanos() as f64 / keys as f64;
    let mut buf = [0u8; 64];
    for k in &held {
        for s in 0..seals {
            seal(k, nonce_for(s, spread), &mut buf);
        }
    }
    let heap = LIVE.load(Ordering::Relaxed) - before;
    // The Vec's slots are counted in `heap` already (allocated up front).
    let per_key = heap as f64 / keys as f64;
    drop(held);
    (per_key, made)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("KEYS and SEALS are whole numbers"))
        .collect();
    let keys = args.first().copied().unwrap_or(100_000) as u32;
    let seals = args.get(1).copied().unwrap_or(4);
    println!(
        "{keys} live keys, {seals} seals of 64 B each, median of 5 rounds; shards {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    type Row = Box<dyn Fn(u32, u64) -> (f64, f64)>;
    let rows: Vec<(&str, Row)> = vec![
        (
            "ring AES-256-GCM, plain",
            Box::new(move |round, spread| {
                measure(
                    keys,
                    seals,
                    round,
                    |k| r::LessSafeKey::new(r::UnboundKey::new(&r::AES_256_GCM, &k).unwrap()),
                    |k, n, buf| {
                        let _tag = k
                            .seal_in_place_separate_tag(
                                r::Nonce::assume_unique_for_key(n),
                                r::Aad::empty(),
                                buf,
                            )
                            .unwrap();
                    },
                    1,
                    spread,
                )
            }),
        ),
        (
            "ring AES-256-GCM, sanitized",
            Box::new(move |round, spread| {
                measure(
                    keys,
                    seals,
                    round,
                    |k| {
                        nonceforge::aead::SanitizedLessSafeKey::new(
                            &r::AES_256_GCM,
                            &k,
                            GuardConfig::new(),
                        )
                        .unwrap()
                    },
                    |k, n, buf| {
                        let _tag = k
                            .seal_in_place_separate_tag(
                                r::Nonce::assume_unique_for_key(n),
                                r::Aad::empty(),
                                buf,
                            )
                            .unwrap();
                    },
                    2,
                    spread,
                )
            }),
        ),
        (
            "RustCrypto ChaCha20-Poly1305, plain",
            Box::new(move |round, spread| {
                use chacha20poly1305::aead::{AeadInOut, KeyInit};
                measure(
                    keys,
                    seals,
                    round,
                    |k| chacha20poly1305::ChaCha20Poly1305::new(&k.into()),
                    |k, n, buf| {
                        k.encrypt_inout_detached(&n.into(), b"", buf.into())
                            .unwrap();
                    },
                    3,
                    spread,
                )
            }),
        ),
        (
            "RustCrypto ChaCha20-Poly1305, sanitized",
            Box::new(move |round, spread| {
                measure(
                    keys,
                    seals,
                    round,
                    |k| {
                        Sanitized::<chacha20poly1305::ChaCha20Poly1305>::with_config(
                            &k.into(),
                            GuardConfig::new(),
                        )
                        .unwrap()
                    },
                    |k, n, buf| {
                        k.seal_in_place_detached(&n.into(), b"", buf).unwrap();
                    },
                    4,
                    spread,
                )
            }),
        ),
    ];
    for (nonces, spread) in [("counter", 1), ("random", 0x9e37_79b9_7f4a_7c15)] {
        let mut results: Vec<(Vec<f64>, Vec<f64>)> = vec![(vec![], vec![]); rows.len()];
        for round in 0..5 {
            // Rows alternate within a round: one noisy moment touches all alike.
            for (i, (_, row)) in rows.iter().enumerate() {
                let (bytes, ns) = row(round * 2 + (spread != 1) as u32, spread);
                results[i].0.push(bytes);
                results[i].1.push(ns);
            }
        }
        println!("\n{nonces} nonces:\n");
        println!(
            "| {:<40} | {:>12} | {:>12} |",
            "AEAD", "bytes a key", "ns to make"
        );
        println!("|{:-<42}|{:->14}|{:->14}|", "", "", "");
        for ((name, _), (b, t)) in rows.iter().zip(results) {
            println!("| {name:<40} | {:>12.0} | {:>12.0} |", median(b), median(t));
        }
    }
}
