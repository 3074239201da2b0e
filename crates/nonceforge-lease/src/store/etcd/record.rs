//! The etcd store's keys and values: the namespace's record, an id's lease key
//! and its record, and the transaction's condition "this grant is still ours".
//! Parsing is strict: anything but the protocol-2 form is refused.

use super::super::{Grant, StoreError};
use etcd_client::{Compare, CompareOp};
use nonceforge::Layout;
use std::time::Duration;

pub(super) fn meta_key(ns: &str) -> String {
    format!("/{ns}/meta")
}

pub(super) fn lease_key(ns: &str, id: u16) -> String {
    format!("/{ns}/lease/{id}")
}

pub(super) fn rec_key(ns: &str, id: u16) -> String {
    format!("/{ns}/rec/{id}")
}

/// An id's record: "v2 {grant or -} {token} {floor} {holder}".
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Rec {
    pub(super) grant: String,
    pub(super) token: u64,
    pub(super) floor: u64,
    pub(super) holder: String,
}

pub(super) fn rec_value(grant: &str, token: u64, floor: u64, holder: &str) -> String {
    let grant = if grant.is_empty() { "-" } else { grant };
    format!("v2 {grant} {token} {floor} {holder}")
}

/// Reads a record; anything but the protocol-2 form is an error, never a
/// record of token 0 and floor 0.
pub(super) fn parse_rec(key: &str, v: &[u8]) -> Result<Rec, StoreError> {
    let bad = || {
        StoreError::refused(format!(
            "{key} is malformed or not a lease protocol 2 record ({:?}): protocol-1 members may use this namespace",
            String::from_utf8_lossy(&v[..v.len().min(80)])
        ))
    };
    let s = std::str::from_utf8(v).map_err(|_| bad())?;
    let mut it = s.splitn(5, ' ');
    if it.next() != Some("v2") {
        return Err(bad());
    }
    let grant = it.next().filter(|g| !g.is_empty()).ok_or_else(bad)?;
    let number = |t: Option<&str>| t.and_then(crate::syntax::decimal).ok_or_else(bad);
    let token = number(it.next())?;
    let floor = number(it.next())?;
    Ok(Rec {
        grant: if grant == "-" {
            String::new()
        } else {
            grant.to_owned()
        },
        token,
        floor,
        holder: it.next().ok_or_else(bad)?.to_owned(),
    })
}

/// The namespace's record: "2 {incarnation}", with " wide" after it for a
/// namespace of the wide layout.
pub(super) fn parse_meta(key: &str, v: &[u8]) -> Result<(String, Layout), StoreError> {
    let tail = std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.strip_prefix("2 "));
    let (inc, layout) = match tail.map(|t| t.split_once(' ').unwrap_or((t, ""))) {
        Some((inc, "")) => (inc, Some(Layout::Standard)),
        Some((inc, "wide")) => (inc, Some(Layout::Wide)),
        _ => ("", None),
    };
    match layout {
        Some(layout) if !inc.is_empty() => Ok((inc.to_owned(), layout)),
        _ => Err(StoreError::refused(format!(
            "{key} is not a lease protocol 2 namespace record ({:?})",
            String::from_utf8_lossy(&v[..v.len().min(80)])
        ))),
    }
}

/// The namespace's record for `incarnation` and `layout`.
pub(super) fn meta_value(incarnation: &str, layout: Layout) -> String {
    match layout {
        Layout::Standard => format!("2 {incarnation}"),
        Layout::Wide => format!("2 {incarnation} wide"),
    }
}

/// The condition "the lease key is the one this grant created" (its creation
/// revision is the grant's token) and "the store is the one it was made in".
pub(super) fn ours(ns: &str, grant: &Grant, layout: Layout) -> Vec<Compare> {
    vec![
        Compare::create_revision(
            lease_key(ns, grant.machine_id),
            CompareOp::Equal,
            grant.token as i64,
        ),
        Compare::value(
            meta_key(ns),
            CompareOp::Equal,
            meta_value(&grant.incarnation, layout),
        ),
    ]
}

/// The etcd TTL for a lease of `ttl`: whole seconds, rounded up (a longer lease
/// in the store only makes the next holder wait longer; our deadline is ours).
pub(super) fn ttl_secs(ttl: Duration) -> i64 {
    ttl.as_millis().div_ceil(1000).max(1) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_strictly() {
        let r = parse_rec("k", b"v2 ab12 17 1700000000000 host/1/x y").unwrap();
        assert_eq!(
            r,
            Rec {
                grant: "ab12".into(),
                token: 17,
                floor: 1_700_000_000_000,
                holder: "host/1/x y".into()
            }
        );
        assert_eq!(parse_rec("k", b"v2 - 17 5 ").unwrap().grant, "");
        for bad in [
            &b""[..],
            b"17 1700000000000 host",
            b"v2",
            b"v2 g",
            b"v2 g 1",
            b"v2 g x 5 h",
            b"v2 g 1 -5 h",
            b"v2 g 1 5",
            b"v2  1 5 h",
            b"\xff\xfe",
        ] {
            let e = parse_rec("/ns/rec/3", bad).unwrap_err();
            assert!(
                e.refused && e.detail.contains("/ns/rec/3"),
                "{bad:?}: {e:?}"
            );
        }
        assert_eq!(
            parse_meta("m", b"2 abc").unwrap(),
            ("abc".into(), Layout::Standard)
        );
        assert_eq!(
            parse_meta("m", b"2 abc wide").unwrap(),
            ("abc".into(), Layout::Wide)
        );
        assert_eq!(meta_value("abc", Layout::Wide), "2 abc wide");
        for bad in [
            &b"1 abc"[..],
            b"2 ",
            b"2 abc narrow",
            b"2 abc wide x",
            b"2  wide",
        ] {
            assert!(parse_meta("m", bad).is_err(), "{bad:?}");
        }
    }
}
