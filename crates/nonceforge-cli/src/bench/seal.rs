//! The sanitizer rows of `nonceforge bench`: ring AES-256-GCM seals, plain and
//! sanitized (exact window with random-looking nonces; counter path), at 64,
//! 1350 and 8192 bytes. Every variant computes its nonce the same way, so the
//! difference between rows is the guard.

use super::row::CHUNK;
use nonceforge::aead::{GuardConfig, NonceMode, SanitizedLessSafeKey};
use ring::aead as r;
use std::hint::black_box;
use std::sync::atomic::{AtomicU8, Ordering};

/// What one bench thread keeps for the seal rows.
pub(super) struct SealState {
    plain: r::LessSafeKey,
    window: SanitizedLessSafeKey,
    counter: SanitizedLessSafeKey,
    i: u64,
    buf: Vec<u8>,
}

/// Keys differ per thread and per row measurement: sanitizer state is per
/// key, and two threads counting from 0 under one key would be a real reuse.
static NEXT_KEY: AtomicU8 = AtomicU8::new(0);

impl SealState {
    pub(super) fn new() -> Self {
        let mut key = [0x77u8; 32];
        key[0] = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        key[1] = std::process::id() as u8;
        let sanitized = |mode, tag: u8| {
            let mut k = key;
            k[2] = tag;
            SanitizedLessSafeKey::new(&r::AES_256_GCM, &k, GuardConfig::new().mode(mode))
                .expect("a 32-byte key")
        };
        SealState {
            plain: r::LessSafeKey::new(
                r::UnboundKey::new(&r::AES_256_GCM, &key).expect("a 32-byte key"),
            ),
            window: sanitized(NonceMode::Random, 1),
            counter: sanitized(NonceMode::Counter, 2),
            i: 0,
            buf: vec![0; 8192],
        }
    }
}

#[inline]
fn nonce(i: u64, scramble: bool) -> r::Nonce {
    let v = if scramble {
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    } else {
        i
    };
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&v.to_be_bytes());
    r::Nonce::assume_unique_for_key(n)
}

macro_rules! seal_op {
    ($field:ident, $bytes:expr, $scramble:expr) => {
        |s: &mut SealState| {
            for _ in 0..CHUNK {
                let n = nonce(s.i, $scramble);
                s.i += 1;
                let _ = black_box(
                    s.$field
                        .seal_in_place_separate_tag(n, r::Aad::empty(), &mut s.buf[..$bytes])
                        .expect("seal"),
                );
            }
            CHUNK
        }
    };
}

/// One row per message size (64, 1350, 8192 bytes) for one variant.
macro_rules! at_each_size {
    ($s:ident, $name:literal, $note:literal, $field:ident, $scramble:expr) => {
        [
            $s($name, "64B", 64, $note, seal_op!($field, 64, $scramble)),
            $s(
                $name,
                "1350B",
                1350,
                $note,
                seal_op!($field, 1350, $scramble),
            ),
            $s(
                $name,
                "8192B",
                8192,
                $note,
                seal_op!($field, 8192, $scramble),
            ),
        ]
    };
}

/// A seal row's operation, on the thread's seal state.
pub(super) type SealOp = fn(&mut SealState) -> u64;

/// The rows, each made by `s` from (name, op, bytes, note, run).
pub(super) fn specs<S>(
    s: impl Fn(&'static str, &'static str, usize, &'static str, SealOp) -> S,
) -> Vec<S> {
    [
        at_each_size!(s, "seal_ring_aes256gcm", "unwrapped", plain, true),
        at_each_size!(
            s,
            "seal_sanitized_window_ring_aes256gcm",
            "random-looking nonces",
            window,
            true
        ),
        at_each_size!(
            s,
            "seal_sanitized_counter_ring_aes256gcm",
            "counter nonces",
            counter,
            false
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}
