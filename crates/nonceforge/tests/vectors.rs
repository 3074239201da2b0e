//! testdata/vectors/nonces.json, written by an independent implementation
//! (testdata/vectors/make_nonces.py), read back through every path that makes nonces.

use nonceforge::{
    Bits, Cipher64, Cipher128, MachineId, ManualClock, NonceGenerator, decompose, layout,
};
use serde_json::Value;

fn doc() -> Value {
    serde_json::from_str(include_str!("../../../testdata/vectors/nonces.json")).unwrap()
}

fn hex_of(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

#[test]
fn layout_vectors() {
    let doc = doc();
    let epoch = doc["epoch_unix_ms"].as_u64().unwrap();
    let rows = doc["layout"].as_array().unwrap();
    assert!(rows.len() >= 15);
    for v in rows {
        let bits = Bits::new(v["bits"].as_u64().unwrap()).unwrap();
        let (ts, m, c) = (
            v["timestamp_ms"].as_u64().unwrap(),
            v["machine_id"].as_u64().unwrap() as u16,
            v["counter"].as_u64().unwrap(),
        );
        let value = layout::compose(bits, ts, m, c);
        let bytes = value.to_be_bytes()[16 - bits.bytes()..].to_vec();
        assert_eq!(hex_of(&bytes), v["hex"].as_str().unwrap(), "{v}");
        let parts = decompose(&bytes, epoch).unwrap();
        assert_eq!(
            (parts.timestamp_ms, parts.machine_id, parts.counter),
            (ts, m, c)
        );
        assert_eq!(parts.unix_ms, ts + epoch);
    }
}

fn generator(g: &Value, key: bool, c64: Cipher64, c128: Cipher128) -> NonceGenerator<ManualClock> {
    let clock = ManualClock::at_unix_ms(g["clock_unix_ms"].as_u64().unwrap());
    let mut b = NonceGenerator::builder(MachineId::new(g["machine_id"].as_u64().unwrap()).unwrap())
        .cipher64(c64)
        .cipher128(c128);
    if key {
        b = b.key(&hex::decode(g["base_key_hex"].as_str().unwrap()).unwrap());
    }
    b.clock(clock).build().unwrap()
}

#[test]
fn counter_vectors_by_every_path() {
    let doc = doc();
    let g = &doc["generator"];
    let rows = g["counter"].as_array().unwrap();
    for bits in Bits::ALL {
        let want: Vec<(usize, &str)> = rows
            .iter()
            .filter(|v| v["bits"].as_u64() == Some(bits.bits() as u64))
            .map(|v| {
                (
                    v["index"].as_u64().unwrap() as usize,
                    v["hex"].as_str().unwrap(),
                )
            })
            .collect();
        let n = want.iter().map(|w| w.0).max().unwrap() + 1;
        let width = bits.bytes();

        // 1. one call at a time on the generator
        let ng = generator(g, false, Cipher64::default(), Cipher128::default());
        let single: Vec<String> = (0..n)
            .map(|_| {
                ng.next(nonceforge::NonceKind::Counter, bits)
                    .unwrap()
                    .to_string()
            })
            .collect();
        // 2. one batch
        let ng = generator(g, false, Cipher64::default(), Cipher128::default());
        let mut buf = vec![0u8; n * width];
        ng.fill(nonceforge::NonceKind::Counter, bits, &mut buf)
            .unwrap();
        let batch: Vec<String> = buf.chunks(width).map(hex_of).collect();
        // 3. a per-thread handle
        let ng = generator(g, false, Cipher64::default(), Cipher128::default());
        let mut local = ng.local();
        let local: Vec<String> = (0..n)
            .map(|_| match bits {
                Bits::B64 => hex_of(&local.counter_64().unwrap()),
                Bits::B96 => hex_of(&local.counter_96().unwrap()),
                Bits::B128 => hex_of(&local.counter_128().unwrap()),
            })
            .collect();
        for (i, hex) in &want {
            assert_eq!(
                single[*i], *hex,
                "{bits}-bit counter nonce #{i}, one call at a time"
            );
            assert_eq!(batch[*i], *hex, "{bits}-bit counter nonce #{i}, batch");
            assert_eq!(
                local[*i], *hex,
                "{bits}-bit counter nonce #{i}, local handle"
            );
        }
    }
}

#[test]
fn encrypted_vectors() {
    let doc = doc();
    let g = &doc["generator"];
    for v in g["encrypted"].as_array().unwrap() {
        let bits = Bits::new(v["bits"].as_u64().unwrap()).unwrap();
        let name = v["cipher"].as_str().unwrap();
        let (c64, c128) = match bits {
            Bits::B64 => (name.parse().unwrap(), Cipher128::default()),
            Bits::B128 => (Cipher64::default(), name.parse().unwrap()),
            Bits::B96 => (Cipher64::default(), Cipher128::default()),
        };
        let i = v["index"].as_u64().unwrap() as usize;
        let ng = generator(g, true, c64, c128);
        let mut buf = vec![0u8; (i + 1) * bits.bytes()];
        ng.fill(nonceforge::NonceKind::Encrypted, bits, &mut buf)
            .unwrap();
        let got = &buf[i * bits.bytes()..];
        assert_eq!(hex_of(got), v["hex"].as_str().unwrap(), "{name} #{i}");
        let plain = ng.decrypt(got).unwrap();
        assert_eq!(
            hex_of(&plain.to_vec()),
            v["plain_hex"].as_str().unwrap(),
            "{name} #{i} decrypts"
        );
        assert_eq!(
            hex_of(&ng.encrypt(&plain.to_vec()).unwrap().to_vec()),
            v["hex"].as_str().unwrap(),
            "{name} #{i} encrypts back"
        );
        let ng = generator(g, true, c64, c128);
        let mut local = ng.local();
        let by_local = (0..=i)
            .map(|_| match bits {
                Bits::B64 => hex_of(&local.encrypted_64().unwrap()),
                Bits::B96 => hex_of(&local.encrypted_96().unwrap()),
                Bits::B128 => hex_of(&local.encrypted_128().unwrap()),
            })
            .last()
            .unwrap();
        assert_eq!(
            by_local,
            v["hex"].as_str().unwrap(),
            "{name} #{i}: local handle"
        );
        if i == 0 {
            let ng = generator(g, true, c64, c128);
            let one = ng.next(nonceforge::NonceKind::Encrypted, bits).unwrap();
            assert_eq!(
                one.to_string(),
                v["hex"].as_str().unwrap(),
                "{name}: one call"
            );
        }
    }
}
