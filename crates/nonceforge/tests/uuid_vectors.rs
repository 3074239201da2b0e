//! testdata/vectors/uuid.json, written from the layouts by
//! testdata/vectors/make_uuid.py: the bytes a generator on a manual clock
//! puts before its random bits, the compact text, the timestamps read back,
//! `extract_unix_ms` (PostgreSQL 18's uuid_extract_timestamp) — the same file
//! Go, Node and Elixir read.

use nonceforge::clock::ManualClock;
use nonceforge::uuid::{self, Tuid6Generator, UuidV7Generator};
use serde_json::Value;
use std::time::Duration;

fn doc() -> Value {
    serde_json::from_str(include_str!("../../../testdata/vectors/uuid.json")).unwrap()
}

fn bytes16(text: &str) -> [u8; 16] {
    hex::decode(text.replace('-', ""))
        .unwrap()
        .try_into()
        .unwrap()
}

fn clock_at_ns(ns: u64) -> ManualClock {
    let c = ManualClock::at_unix_ms(ns / 1_000_000);
    c.advance(Duration::from_nanos(ns % 1_000_000));
    c
}

#[test]
fn v7_layout_and_text() {
    let rows = doc()["v7"].as_array().unwrap().clone();
    assert!(rows.len() >= 5);
    for v in rows {
        let want = bytes16(v["uuid"].as_str().unwrap());
        let ms = v["unix_ms"].as_u64().unwrap();
        // The time and version before the random bits, from a generator on a
        // manual clock (a u64 of nanoseconds reaches the year 2554; at tick 0
        // a fresh generator issues tick 1, above the last it holds, 0).
        if let Some(ns) = v["unix_ns"].as_u64().filter(|&ns| ns > 1_000_000 / 4096) {
            let got = UuidV7Generator::with_clock(clock_at_ns(ns)).generate();
            assert_eq!(got[..8], want[..8], "{v}");
            assert_eq!(got[8] >> 6, 0b10, "{v}");
        }
        assert_eq!(uuid::unix_ms(&want), ms);
        assert_eq!(uuid::version(&want), Some(7));
        assert_eq!(uuid::to_compact(&want), v["compact"].as_str().unwrap());
        assert_eq!(
            uuid::from_compact::<16>(v["compact"].as_str().unwrap()).unwrap(),
            want
        );
    }
}

#[test]
fn tuid6_layout_and_text() {
    for v in doc()["tuid6"].as_array().unwrap() {
        let want = bytes16(v["uuid"].as_str().unwrap());
        let ms = v["unix_ms"].as_u64().unwrap();
        let random = u128::from_str_radix(v["random"].as_str().unwrap(), 16).unwrap();
        assert_eq!(uuid::tuid::compose(ms, random), want, "{v}");
        if ms < u64::MAX / 1_000_000 {
            let got = Tuid6Generator::with_clock(ManualClock::at_unix_ms(ms), false).generate();
            assert_eq!(got[..6], want[..6], "{v}");
        }
        assert_eq!(uuid::unix_ms(&want), ms);
        assert_eq!(uuid::to_compact(&want), v["compact"].as_str().unwrap());
        assert_eq!(
            uuid::from_compact::<16>(v["compact"].as_str().unwrap()).unwrap(),
            want
        );
    }
}

#[test]
fn stuid_layout_and_text() {
    for v in doc()["stuid"].as_array().unwrap() {
        let want: [u8; 32] = hex::decode(v["hex"].as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        let us = v["unix_us"].as_u64().unwrap();
        let got = uuid::stuid_with_clock(&clock_at_ns(us * 1_000));
        assert_eq!(got[..8], want[..8], "{v}");
        assert_eq!(uuid::stuid_unix_us(&want), us);
        assert_eq!(uuid::to_compact(&want), v["compact"].as_str().unwrap());
        assert_eq!(
            uuid::from_compact::<32>(v["compact"].as_str().unwrap()).unwrap(),
            want
        );
    }
}

#[test]
fn extract_as_postgresql_18() {
    for v in doc()["extract"].as_array().unwrap() {
        let id = bytes16(v["uuid"].as_str().unwrap());
        assert_eq!(
            uuid::version(&id),
            v["version"].as_u64().map(|n| n as u8),
            "{v}"
        );
        assert_eq!(uuid::extract_unix_ms(&id), v["unix_ms"].as_i64(), "{v}");
    }
}

#[test]
fn bad_compact_text_is_refused() {
    for v in doc()["bad_compact"].as_array().unwrap() {
        let text = v["text"].as_str().unwrap();
        assert!(uuid::from_compact::<16>(text).is_err(), "{v}");
    }
}
