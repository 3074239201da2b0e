//! The sanitizer's overhead: ring AES-256-GCM and RustCrypto AES-256-GCM, each
//! plain and sanitized (counter path, exact window with random-looking nonces),
//! side by side in one run, at 64, 1350 and 8192 bytes.
//!
//! Every variant computes its nonce the same way (a counter, scrambled by an
//! odd multiplier for the window rows), so the difference is the guard alone.

use aes_gcm::{Aes256Gcm, KeyInit, aead::AeadInOut};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nonceforge::aead::{GuardConfig, NonceMode, Sanitized, SanitizedLessSafeKey};
use ring::aead as r;
use std::hint::black_box;

const SIZES: [usize; 3] = [64, 1350, 8192];

fn nonce(i: u64, scramble: bool) -> [u8; 12] {
    let v = if scramble {
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    } else {
        i
    };
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&v.to_be_bytes());
    n
}

fn ring(c: &mut Criterion) {
    let mut g = c.benchmark_group("seal_ring_aes256gcm");
    for size in SIZES {
        g.throughput(Throughput::Bytes(size as u64));
        let mut buf = vec![0u8; size];
        let plain = r::LessSafeKey::new(r::UnboundKey::new(&r::AES_256_GCM, &[1; 32]).unwrap());
        let mut i = 0u64;
        g.bench_function(BenchmarkId::new("plain", size), |b| {
            b.iter(|| {
                i += 1;
                let n = r::Nonce::assume_unique_for_key(nonce(i, true));
                black_box(
                    plain
                        .seal_in_place_separate_tag(n, r::Aad::empty(), &mut buf)
                        .unwrap(),
                )
            })
        });
        for (label, mode, scramble, key) in [
            ("window", NonceMode::Random, true, 2u8),
            ("counter", NonceMode::Counter, false, 3u8),
        ] {
            // A new key per size, so state starts empty.
            let k = SanitizedLessSafeKey::new(
                &r::AES_256_GCM,
                &[key + size as u8; 32],
                GuardConfig::new().mode(mode),
            )
            .unwrap();
            let mut i = 0u64;
            g.bench_function(BenchmarkId::new(label, size), |b| {
                b.iter(|| {
                    // From 0: the key's first nonce is 0, so nonce XOR first
                    // counts 0, 1, 2, ... (a counter starting at 1 would count
                    // 0, 3, 2, 5, ...: still exact, but on the locked path).
                    let n = r::Nonce::assume_unique_for_key(nonce(i, scramble));
                    i += 1;
                    black_box(
                        k.seal_in_place_separate_tag(n, r::Aad::empty(), &mut buf)
                            .unwrap(),
                    )
                })
            });
        }
    }
}

fn rustcrypto(c: &mut Criterion) {
    let mut g = c.benchmark_group("seal_rustcrypto_aes256gcm");
    for size in SIZES {
        g.throughput(Throughput::Bytes(size as u64));
        let mut buf = vec![0u8; size];
        let plain = Aes256Gcm::new(&[4; 32].into());
        let mut i = 0u64;
        g.bench_function(BenchmarkId::new("plain", size), |b| {
            b.iter(|| {
                i += 1;
                let n = nonce(i, true).into();
                black_box(
                    plain
                        .encrypt_inout_detached(&n, b"", buf.as_mut_slice().into())
                        .unwrap(),
                )
            })
        });
        let k = Sanitized::<Aes256Gcm>::with_config(
            &[5 + size as u8; 32].into(),
            GuardConfig::new().mode(NonceMode::Random),
        )
        .unwrap();
        let mut i = 0u64;
        g.bench_function(BenchmarkId::new("window", size), |b| {
            b.iter(|| {
                i += 1;
                let n = nonce(i, true).into();
                black_box(
                    k.encrypt_inout_detached(&n, b"", buf.as_mut_slice().into())
                        .unwrap(),
                )
            })
        });
    }
}

/// The guard alone, without a cipher: its cost per seal.
fn guard_only(c: &mut Criterion) {
    let mut g = c.benchmark_group("guard_only");
    for (label, mode, scramble, key) in [
        ("window", NonceMode::Random, true, 7u8),
        ("counter", NonceMode::Counter, false, 8u8),
    ] {
        let guard = nonceforge::aead::NonceGuard::<12>::new(
            "AES-256-GCM",
            &[key; 32],
            GuardConfig::new().mode(mode),
        )
        .unwrap();
        let mut i = 0u64;
        g.bench_function(label, |b| {
            b.iter(|| {
                let t = guard.begin_seal(&nonce(i, scramble), 64).unwrap();
                i += 1;
                guard.finish_seal(t, &[0; 16]).unwrap();
            })
        });
    }
}

criterion_group!(benches, ring, rustcrypto, guard_only);
criterion_main!(benches);
