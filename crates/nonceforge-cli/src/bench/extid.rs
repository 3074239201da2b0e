//! The external-id rows of `nonceforge bench`.
//!
//! Latency rows chain the calls: each input depends on the previous output, so
//! the figure is the time of one id from input to output, not a throughput.
//! Encode chains feed the id's last 8 bytes back as the next sequence number;
//! decode chains feed the decoded sequence number into one byte of the next id
//! (a byte that keeps the id well formed). Batch rows encode 4096 independent
//! ids a call; `extid_text` writes or parses the canonical UUID form.

use super::row::{CHUNK, Method};
use nonceforge::extid::{Decoded, ExtId, ExtIdCodec, ExtIdMode, Keyring};
use std::hint::black_box;

/// Ids per batch call.
const BATCH: usize = 4096;

/// What one bench thread keeps for the external-id rows.
pub(super) struct ExtState {
    aes: ExtIdCodec,
    feistel: ExtIdCodec,
    seq: u64,
    id: ExtId,
    input: Vec<(u64, u64)>,
    out: Vec<ExtId>,
    aes_ids: Vec<ExtId>,
    feistel_ids: Vec<ExtId>,
    decoded: Vec<Decoded>,
    text: [u8; 36],
}

impl ExtState {
    pub(super) fn new() -> Self {
        let ring = Keyring::new(0, &[0x5a; 32]).expect("a 32-byte key");
        let aes = ExtIdCodec::builder(&ring, "user")
            .mode(ExtIdMode::Aes128)
            .build()
            .expect("valid options");
        let feistel = ExtIdCodec::new(&ring, "user").expect("valid options");
        let id = feistel.encode(1, 2).expect("in range");
        let input: Vec<(u64, u64)> = (0..BATCH as u64)
            .map(|i| (i, i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 2))
            .collect();
        let (mut aes_ids, mut feistel_ids) =
            (vec![ExtId::default(); BATCH], vec![ExtId::default(); BATCH]);
        aes.encode_batch(&input, &mut aes_ids).expect("in range");
        feistel
            .encode_batch(&input, &mut feistel_ids)
            .expect("in range");
        ExtState {
            aes,
            feistel,
            seq: 1,
            id,
            input,
            out: vec![ExtId::default(); BATCH],
            aes_ids,
            feistel_ids,
            decoded: vec![Decoded::default(); BATCH],
            text: [0; 36],
        }
    }
}

fn encode_chain(c: &ExtIdCodec, seq: &mut u64) {
    let (max_s, max_r) = (c.max_seq(), c.max_rand());
    let (mut s, mut r) = (*seq, 12345);
    for _ in 0..CHUNK {
        // Both halves of the next input come from the output: in feistel-uuid
        // the random half enters the first round, the sequence half the second.
        let id = c.encode(s, r).expect("in range");
        let v = u128::from_be_bytes(id.0);
        (s, r) = ((v >> 64) as u64 & max_s, v as u64 & max_r);
    }
    *seq = black_box(s);
}

fn decode_chain(c: &ExtIdCodec, id: &mut ExtId) {
    let mut x = *id;
    for _ in 0..CHUNK {
        let d = c.decode_unverified(&x).expect("well formed");
        // Byte 2 lies in the sequence half, clear of the key version, the UUID
        // version and the variant: in feistel-uuid it enters the first round
        // of decoding, so both AES calls stand on the chain.
        // (In a register: a one-byte store then a 16-byte load would stall
        // store forwarding and time the harness, not the decode.)
        let v = u128::from_be_bytes(x.0) ^ (((d.seq & 0xff) | 1) as u128) << 104;
        x = ExtId(v.to_be_bytes());
    }
    *id = black_box(x);
}

/// An external-id row's operation, on the thread's external-id state.
pub(super) type ExtOp = fn(&mut ExtState) -> u64;

/// The rows, each made by `s` from (name, bits, method, op, note, run).
pub(super) fn specs<S>(
    s: impl Fn(&'static str, u32, Method, &'static str, &'static str, ExtOp) -> S,
) -> Vec<S> {
    use Method::Timed;
    vec![
        s(
            "extid_aes128_latency",
            128,
            Timed,
            "encode",
            "chained",
            |e: &mut ExtState| {
                encode_chain(&e.aes, &mut e.seq);
                CHUNK
            },
        ),
        s(
            "extid_aes128_latency",
            128,
            Timed,
            "decode",
            "chained",
            |e: &mut ExtState| {
                let mut id = e.aes_ids[0];
                decode_chain(&e.aes, &mut id);
                e.aes_ids[0] = id;
                CHUNK
            },
        ),
        s(
            "extid_feistel_latency",
            128,
            Timed,
            "encode",
            "chained; 2 rounds",
            |e: &mut ExtState| {
                encode_chain(&e.feistel, &mut e.seq);
                CHUNK
            },
        ),
        s(
            "extid_feistel_latency",
            128,
            Timed,
            "decode",
            "chained; 2 rounds",
            |e: &mut ExtState| {
                decode_chain(&e.feistel, &mut e.id);
                CHUNK
            },
        ),
        s(
            "extid_aes128_batch",
            128,
            Timed,
            "encode",
            "4096 ids a call (VAES)",
            |e: &mut ExtState| {
                e.aes.encode_batch(&e.input, &mut e.out).expect("in range");
                black_box(&e.out);
                BATCH as u64
            },
        ),
        s(
            "extid_aes128_batch",
            128,
            Timed,
            "decode",
            "4096 ids a call (VAES)",
            |e: &mut ExtState| {
                e.aes
                    .decode_unverified_batch(&e.aes_ids, &mut e.decoded)
                    .expect("well formed");
                black_box(&e.decoded);
                BATCH as u64
            },
        ),
        s(
            "extid_feistel_batch",
            128,
            Timed,
            "encode",
            "4096 ids a call (VAES)",
            |e: &mut ExtState| {
                e.feistel
                    .encode_batch(&e.input, &mut e.out)
                    .expect("in range");
                black_box(&e.out);
                BATCH as u64
            },
        ),
        s(
            "extid_feistel_batch",
            128,
            Timed,
            "decode",
            "4096 ids a call (VAES)",
            |e: &mut ExtState| {
                e.feistel
                    .decode_unverified_batch(&e.feistel_ids, &mut e.decoded)
                    .expect("well formed");
                black_box(&e.decoded);
                BATCH as u64
            },
        ),
        s(
            "extid_text",
            128,
            Timed,
            "encode",
            "canonical UUID",
            |e: &mut ExtState| {
                for _ in 0..CHUNK {
                    black_box(e.id).write_uuid(&mut e.text);
                    black_box(&e.text);
                }
                CHUNK
            },
        ),
        s(
            "extid_text",
            128,
            Timed,
            "decode",
            "canonical UUID",
            |e: &mut ExtState| {
                e.id.write_uuid(&mut e.text);
                let text = std::str::from_utf8(&e.text).expect("ASCII");
                for _ in 0..CHUNK {
                    black_box(ExtId::parse_uuid(black_box(text)).expect("well formed"));
                }
                CHUNK
            },
        ),
    ]
}
