//! testdata/vectors/nonces.json, written by an independent implementation
//! (testdata/vectors/make_nonces.py), read back through every path that makes nonces.

use nonceforge::{
    Bits, Cipher64, Cipher128, Error, Layout, MachineId, ManualClock, NonceGenerator, NonceKind,
    decompose, layout,
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
    layout_rows(
        Layout::Standard,
        &doc["layout"],
        doc["epoch_unix_ms"].as_u64().unwrap(),
        15,
    );
}

/// Every row of `rows` composed in `layout` gives its bytes, and its bytes
/// decompose to its fields.
fn layout_rows(layout: Layout, rows: &Value, epoch: u64, at_least: usize) {
    let rows = rows.as_array().unwrap();
    assert!(rows.len() >= at_least);
    for v in rows {
        let bits = Bits::new(v["bits"].as_u64().unwrap()).unwrap();
        let (ts, m, c) = (
            v["timestamp_ms"].as_u64().unwrap(),
            v["machine_id"].as_u64().unwrap() as u16,
            v["counter"].as_u64().unwrap(),
        );
        let value = layout.compose(bits, ts, m, c);
        let bytes = value.to_be_bytes()[16 - bits.bytes()..].to_vec();
        assert_eq!(hex_of(&bytes), v["hex"].as_str().unwrap(), "{v}");
        let parts = layout.decompose(&bytes, epoch).unwrap();
        assert_eq!(
            (
                parts.timestamp_ms,
                parts.machine_id,
                parts.counter,
                parts.unix_ms
            ),
            (ts, m, c, ts + epoch)
        );
        if layout == Layout::Standard {
            assert_eq!(layout::compose(bits, ts, m, c), value);
            assert_eq!(decompose(&bytes, epoch).unwrap(), parts);
        } else if let Ok(p) = decompose(&bytes, epoch) {
            // Read as the standard layout the same bytes mean something
            // else: a fleet must know which it uses.
            assert!(m < 512 || (p.machine_id, p.counter) != (m, c));
        }
    }
}

fn generator_in(
    layout: Layout,
    g: &Value,
    key: bool,
    c64: Cipher64,
    c128: Cipher128,
) -> NonceGenerator<ManualClock> {
    let clock = ManualClock::at_unix_ms(g["clock_unix_ms"].as_u64().unwrap());
    let machine = MachineId::new_in(layout, g["machine_id"].as_u64().unwrap()).unwrap();
    let mut b = NonceGenerator::builder(machine)
        .layout(layout)
        .cipher64(c64)
        .cipher128(c128);
    if key {
        b = b.key(&hex::decode(g["base_key_hex"].as_str().unwrap()).unwrap());
    }
    b.clock(clock).build().unwrap()
}

#[test]
fn counter_vectors_by_every_path() {
    counter_vectors_in(Layout::Standard, &doc()["generator"]);
}

#[test]
fn wide_counter_vectors_by_every_path() {
    counter_vectors_in(Layout::Wide, &doc()["wide"]["generator"]);
}

fn counter_vectors_in(layout: Layout, g: &Value) {
    let rows = g["counter"].as_array().unwrap();
    for bits in Bits::ALL.into_iter().filter(|&b| layout.has(b)) {
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
        let ng = generator_in(layout, g, false, Cipher64::default(), Cipher128::default());
        let single: Vec<String> = (0..n)
            .map(|_| {
                ng.next(nonceforge::NonceKind::Counter, bits)
                    .unwrap()
                    .to_string()
            })
            .collect();
        // 2. one batch
        let ng = generator_in(layout, g, false, Cipher64::default(), Cipher128::default());
        let mut buf = vec![0u8; n * width];
        ng.fill(nonceforge::NonceKind::Counter, bits, &mut buf)
            .unwrap();
        let batch: Vec<String> = buf.chunks(width).map(hex_of).collect();
        // 3. a per-thread handle
        let ng = generator_in(layout, g, false, Cipher64::default(), Cipher128::default());
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
    encrypted_vectors_in(Layout::Standard, &doc()["generator"]);
}

#[test]
fn wide_encrypted_vectors() {
    encrypted_vectors_in(Layout::Wide, &doc()["wide"]["generator"]);
}

fn encrypted_vectors_in(layout: Layout, g: &Value) {
    for v in g["encrypted"].as_array().unwrap() {
        let bits = Bits::new(v["bits"].as_u64().unwrap()).unwrap();
        let name = v["cipher"].as_str().unwrap();
        let (c64, c128) = match bits {
            Bits::B64 => (name.parse().unwrap(), Cipher128::default()),
            Bits::B128 => (Cipher64::default(), name.parse().unwrap()),
            Bits::B96 => (Cipher64::default(), Cipher128::default()),
        };
        let i = v["index"].as_u64().unwrap() as usize;
        let ng = generator_in(layout, g, true, c64, c128);
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
        let ng = generator_in(layout, g, true, c64, c128);
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
            let ng = generator_in(layout, g, true, c64, c128);
            let one = ng.next(nonceforge::NonceKind::Encrypted, bits).unwrap();
            assert_eq!(
                one.to_string(),
                v["hex"].as_str().unwrap(),
                "{name}: one call"
            );
        }
    }
}

#[test]
fn wide_layout_vectors() {
    let doc = doc();
    let epoch = doc["epoch_unix_ms"].as_u64().unwrap();
    layout_rows(Layout::Wide, &doc["wide"]["layout"], epoch, 12);
}

#[test]
fn wide_layout_refuses_64_bits_on_every_path() {
    let g = &doc()["wide"]["generator"];
    let ng = generator_in(
        Layout::Wide,
        g,
        true,
        Cipher64::default(),
        Cipher128::default(),
    );
    let is_no64 = |e: Error| assert_eq!(e, Error::WideLayoutNo64, "{e}");
    is_no64(ng.counter_64().unwrap_err());
    is_no64(ng.sortable_64().unwrap_err());
    is_no64(ng.encrypted_64().unwrap_err());
    let mut eight = [[0u8; 8]; 4];
    is_no64(ng.fill_counter_64(&mut eight).unwrap_err());
    is_no64(ng.fill_encrypted_64(&mut eight).unwrap_err());
    is_no64(ng.fill_counter_64(&mut []).unwrap_err());
    assert_eq!(eight, [[0u8; 8]; 4], "nothing written");
    for kind in [
        NonceKind::Counter,
        NonceKind::Sortable,
        NonceKind::Encrypted,
    ] {
        is_no64(ng.next(kind, Bits::B64).unwrap_err());
        is_no64(ng.fill(kind, Bits::B64, &mut [0u8; 16]).unwrap_err());
    }
    is_no64(
        ng.nonce_at_tick(NonceKind::Counter, Bits::B64, 0)
            .unwrap_err(),
    );
    let word = std::sync::atomic::AtomicU64::new(nonceforge::shared_sortable_word(
        Bits::B64,
        g["clock_unix_ms"].as_u64().unwrap(),
    ));
    is_no64(ng.sortable_shared(Bits::B64, &word).unwrap_err());
    let mut local = ng.local();
    is_no64(local.counter_64().unwrap_err());
    is_no64(local.sortable_64().unwrap_err());
    is_no64(local.encrypted_64().unwrap_err());
    is_no64(ng.encrypt(&[0u8; 8]).unwrap_err());
    is_no64(ng.decrypt(&[0u8; 8]).unwrap_err());
    is_no64(ng.decompose(&[0u8; 8]).unwrap_err());
    // Not a refusal of a working generator: it issues 96 and 128 bits, and
    // its figures count no refusal.
    assert!(ng.is_enabled());
    assert!(ng.counter_96().is_ok() && local.sortable_128().is_ok());
    assert_eq!(ng.stats().refused.total(), 0);
    assert!(Error::WideLayoutNo64.to_string().contains("96 or 128"));
    // Disabled is still Disabled at 96 bits, and enabling leaves 64 refused.
    ng.disable();
    assert_eq!(ng.counter_96().unwrap_err(), Error::Disabled);
    ng.enable();
    assert!(ng.counter_96().is_ok());
    is_no64(ng.counter_64().unwrap_err());
}

#[test]
fn machine_ids_fit_their_layout() {
    let wide = MachineId::new_in(Layout::Wide, 512).unwrap();
    let e = NonceGenerator::builder(wide).build().unwrap_err();
    assert_eq!(e, Error::MachineIdNeedsWide { value: 512 });
    assert!(
        e.to_string().contains("0..=511") && e.to_string().contains("\"wide\""),
        "{e}"
    );
    assert_eq!(
        MachineId::new_in(Layout::Wide, 65_536),
        Err(Error::MachineIdOutOfWideRange { value: 65_536 })
    );
    assert_eq!(
        MachineId::new_in(Layout::Standard, 512),
        Err(Error::MachineIdOutOfRange { value: 512 })
    );
    // A wide generator takes any machine id, 9-bit ones too.
    let g = NonceGenerator::builder(MachineId::new_in(Layout::Wide, 65_535).unwrap())
        .layout(Layout::Wide)
        .build()
        .unwrap();
    assert_eq!(
        g.decompose(&g.sortable_128().unwrap()).unwrap().machine_id,
        65_535
    );
    let g = NonceGenerator::builder(MachineId::new(3).unwrap())
        .layout(Layout::Wide)
        .build()
        .unwrap();
    assert_eq!(g.layout(), Layout::Wide);
    assert_eq!(g.decompose(&g.counter_96().unwrap()).unwrap().machine_id, 3);
    for (name, layout) in [("standard", Layout::Standard), ("wide", Layout::Wide)] {
        assert_eq!(Layout::parse(name).unwrap(), layout);
        assert_eq!(layout.to_string(), name);
    }
    let e = Layout::parse("Wide16").unwrap_err().to_string();
    assert!(e.contains("\"Wide16\"") && e.contains("standard"), "{e}");
}
