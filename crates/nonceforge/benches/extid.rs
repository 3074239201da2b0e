//! Criterion benchmarks for external ids: one id's latency (each input depends
//! on the previous output), batches of independent ids, and the UUID text form,
//! beside the `aes` crate's own one-block call as the baseline in the same run.
//! `cargo bench -p nonceforge --bench extid`.

use aes::Aes128;
use cipher::{BlockCipherEncrypt, KeyInit};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nonceforge::extid::{Decoded, ExtId, ExtIdCodec, ExtIdMode, Keyring};
use std::hint::black_box;

fn codecs() -> (ExtIdCodec, ExtIdCodec) {
    let ring = Keyring::new(0, &[0x5a; 32]).unwrap();
    let aes = ExtIdCodec::builder(&ring, "user")
        .mode(ExtIdMode::Aes128)
        .build()
        .unwrap();
    (aes, ExtIdCodec::new(&ring, "user").unwrap())
}

fn latency(c: &mut Criterion) {
    let (aes, feistel) = codecs();
    let mut g = c.benchmark_group("extid_latency");
    let crate_aes = Aes128::new(&[9u8; 16].into());
    let mut block = [0u8; 16];
    g.bench_function("aes crate one block (baseline)", |b| {
        b.iter(|| {
            crate_aes.encrypt_block((&mut block).into());
        })
    });
    for (name, codec) in [("aes128", &aes), ("feistel-uuid", &feistel)] {
        let (ms, mr) = (codec.max_seq(), codec.max_rand());
        let (mut s, mut r) = (1u64, 2u64);
        g.bench_function(format!("{name} encode"), |b| {
            b.iter(|| {
                let v = u128::from_be_bytes(codec.encode(s, r).unwrap().0);
                (s, r) = ((v >> 64) as u64 & ms, v as u64 & mr);
            })
        });
        let mut id = codec.encode(3, 4).unwrap();
        g.bench_function(format!("{name} decode"), |b| {
            b.iter(|| {
                let d = codec.decode_unverified(&id).unwrap();
                let v = u128::from_be_bytes(id.0) ^ (((d.seq & 0xff) | 1) as u128) << 104;
                id = ExtId(v.to_be_bytes());
            })
        });
        // The call without a random half (one AES call more), and its
        // checked lookup (the next id depends on the last seq decoded).
        let mut seq = 1u64;
        g.bench_function(format!("{name} encode_seq"), |b| {
            b.iter(|| {
                let v = u128::from_be_bytes(codec.encode_seq(seq).unwrap().0);
                seq = (v >> 64) as u64 & ms;
            })
        });
        let ids: Vec<ExtId> = (0..256).map(|s| codec.encode_seq(s).unwrap()).collect();
        let mut i = 0usize;
        g.bench_function(format!("{name} decode_seq"), |b| {
            b.iter(|| {
                let s = codec.decode_seq(&ids[i]).unwrap();
                i = (i + 1 + (s as usize & 1)) & 255;
            })
        });
    }
    // After a rotation, an id that carries no key version (aes128): the
    // checked decode tries the current version, then the one that made it.
    let mut rotated_ring = Keyring::new(0, &[0x5a; 32]).unwrap();
    rotated_ring.add(1, &[0x5b; 32]).unwrap();
    rotated_ring.set_current(1).unwrap();
    let rotated = ExtIdCodec::builder(&rotated_ring, "user")
        .mode(ExtIdMode::Aes128)
        .build()
        .unwrap();
    let (old_aes, _) = codecs();
    let old_ids: Vec<ExtId> = (0..256).map(|s| old_aes.encode_seq(s).unwrap()).collect();
    let mut i = 0usize;
    g.bench_function(
        "aes128 decode_seq, an id of the older version (trial)",
        |b| {
            b.iter(|| {
                let s = rotated.decode_seq(&old_ids[i]).unwrap();
                i = (i + 1 + (s as usize & 1)) & 255;
            })
        },
    );
    // The self-check (decode every id before it is returned).
    let ring = Keyring::new(0, &[0x5a; 32]).unwrap();
    let checked = ExtIdCodec::builder(&ring, "user")
        .build_self_checked()
        .unwrap();
    let (ms, mr) = (checked.max_seq(), checked.max_rand());
    let (mut s, mut r) = (1u64, 2u64);
    g.bench_function("feistel-uuid encode, self-check", |b| {
        b.iter(|| {
            let v = u128::from_be_bytes(checked.encode(s, r).unwrap().0);
            (s, r) = ((v >> 64) as u64 & ms, v as u64 & mr);
        })
    });
    g.finish();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("ssse3") {
        // The floor of one id's latency: one AES-128 block, hand-written with
        // AES-NI, each block the last one's ciphertext, kept in a vector
        // register throughout (issue 50's yardstick for the aes128 rows).
        // 64 blocks a call: read the time per element (thrpt), or the time / 64.
        let mut g = c.benchmark_group("extid_latency_floor");
        g.throughput(Throughput::Elements(64));
        let mut x = [7u8; 16];
        g.bench_function("hand-written AES-NI, one block chained, x64", |b| {
            // SAFETY: the CPU has AES-NI (checked above).
            b.iter(|| x = unsafe { aesni_chain(&x) })
        });
        let mut words = (1u64, 2u64);
        g.bench_function("hand-written AES-NI, two u64 in and out, x64", |b| {
            // SAFETY: the CPU has AES-NI and SSSE3 (checked above).
            b.iter(|| words = unsafe { aesni_chain_words(words) })
        });
        // The codec's calls in the same shape: 64 chained in locals a call,
        // so that the harness's store and reload of the captured state (a
        // store-forwarding round trip) falls on one id in 64, as above.
        let (aes, _) = codecs();
        let mut sr = (1u64, 2u64);
        g.bench_function("aes128 encode, chained, x64", |b| {
            b.iter(|| {
                let (mut s, mut r) = sr;
                for _ in 0..64 {
                    let v = u128::from_be_bytes(aes.encode(s, r).unwrap().0);
                    (s, r) = ((v >> 64) as u64, v as u64);
                }
                sr = (s, r);
            })
        });
        let mut id = aes.encode(3, 4).unwrap();
        g.bench_function("aes128 decode, chained, x64", |b| {
            b.iter(|| {
                let mut x = id;
                for _ in 0..64 {
                    let d = aes.decode_unverified(&x).unwrap();
                    x = ExtId(((u128::from(d.seq) << 64) | u128::from(d.rand)).to_be_bytes());
                }
                id = x;
            })
        });
        g.finish();
    }
}

/// Fixed AES-128 round keys for the floor rows (their values do not change
/// the timing).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn floor_round_keys() -> [std::arch::x86_64::__m128i; 11] {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of x86-64.
    std::array::from_fn(|i| unsafe { _mm_set1_epi8(i as i8 * 17 + 3) })
}

/// One AES-128 block in a vector register, the ten rounds back to back.
///
/// # Safety
/// The CPU must have AES-NI (the callers are compiled for it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn aes_block(
    rk: &[std::arch::x86_64::__m128i; 11],
    x: std::arch::x86_64::__m128i,
) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::*;
    // SAFETY: the caller checked AES-NI.
    unsafe {
        let mut x = _mm_xor_si128(x, rk[0]);
        for k in &rk[1..10] {
            x = _mm_aesenc_si128(x, *k);
        }
        _mm_aesenclast_si128(x, rk[10])
    }
}

/// 64 chained AES-128 encryptions of `block`, in one vector register from the
/// first to the last: the latency floor of `aes128` ids, 64 at a time so that
/// the call and the two trips through memory are spread thin.
///
/// # Safety
/// The CPU must have AES-NI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "aes")]
unsafe fn aesni_chain(block: &[u8; 16]) -> [u8; 16] {
    use std::arch::x86_64::*;
    let rk = floor_round_keys();
    // SAFETY: `block` and `out` are 16 bytes each; loadu/storeu take any
    // alignment; the caller checked AES-NI.
    unsafe {
        let mut x = _mm_loadu_si128(block.as_ptr().cast());
        for _ in 0..64 {
            x = aes_block(&rk, x);
        }
        let mut out = [0u8; 16];
        _mm_storeu_si128(out.as_mut_ptr().cast(), x);
        out
    }
}

/// [`aesni_chain`] with each block taken from, and given back as, two 64-bit
/// integers read big-endian — an id's (seq, rand) — as an API on integers
/// must: the floor of such an API, the trips between general and vector
/// registers included.
///
/// # Safety
/// The CPU must have AES-NI and SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "aes,ssse3")]
unsafe fn aesni_chain_words((mut hi, mut lo): (u64, u64)) -> (u64, u64) {
    use std::arch::x86_64::*;
    let rk = floor_round_keys();
    let swap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for _ in 0..64 {
        let x = _mm_shuffle_epi8(_mm_set_epi64x(hi as i64, lo as i64), swap);
        // SAFETY: the caller checked AES-NI.
        let x = _mm_shuffle_epi8(unsafe { aes_block(&rk, x) }, swap);
        lo = _mm_cvtsi128_si64(x) as u64;
        hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
    }
    (hi, lo)
}

fn batch(c: &mut Criterion) {
    let (aes, feistel) = codecs();
    let input: Vec<(u64, u64)> = (0..4096u64)
        .map(|i| (i, i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 2))
        .collect();
    let mut out = vec![ExtId::default(); input.len()];
    let mut dec = vec![Decoded::default(); input.len()];
    let mut g = c.benchmark_group("extid_batch");
    g.throughput(Throughput::Elements(input.len() as u64));
    for (name, codec) in [("aes128", &aes), ("feistel-uuid", &feistel)] {
        g.bench_function(format!("{name} encode"), |b| {
            b.iter(|| codec.encode_batch(black_box(&input), &mut out).unwrap())
        });
        let seqs: Vec<u64> = input.iter().map(|&(s, _)| s).collect();
        g.bench_function(format!("{name} encode_seq_batch"), |b| {
            b.iter(|| codec.encode_seq_batch(black_box(&seqs), &mut out).unwrap())
        });
        let mut got = vec![0u64; seqs.len()];
        g.bench_function(format!("{name} decode_seq_batch"), |b| {
            b.iter(|| codec.decode_seq_batch(black_box(&out), &mut got).unwrap())
        });
        codec.encode_batch(&input, &mut out).unwrap();
        g.bench_function(format!("{name} decode"), |b| {
            b.iter(|| {
                codec
                    .decode_unverified_batch(black_box(&out), &mut dec)
                    .unwrap()
            })
        });
    }
    g.finish();
}

fn text(c: &mut Criterion) {
    let (_, feistel) = codecs();
    let id = feistel.encode(42, 7).unwrap();
    let s = id.to_uuid_string();
    let mut buf = [0u8; 36];
    let mut g = c.benchmark_group("extid_text");
    g.bench_function("uuid write", |b| {
        b.iter(|| black_box(id).write_uuid(&mut buf))
    });
    g.bench_function("uuid parse", |b| {
        b.iter(|| ExtId::parse_uuid(black_box(&s)).unwrap())
    });
    g.bench_function("uuid crate parse (baseline)", |b| {
        b.iter(|| uuid::Uuid::parse_str(black_box(&s)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, latency, batch, text);
criterion_main!(benches);
