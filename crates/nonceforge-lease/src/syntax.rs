//! The lease vocabulary's text forms, parsed here once for every face: the
//! CLI's options, the Node package's and the Elixir package's lease options
//! and the PostgreSQL extension's settings reach them through this crate, and
//! the Go module's `parseIDs` passes the same id cases
//! (`testdata/vectors/lease-syntax.json`; Go takes durations as `time.Duration`).

use std::time::Duration;

/// A duration: `10s`, `250ms`, `2m`, `1h`, or a plain number of seconds
/// (`1.5`); not negative, at most a year.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("{s:?} is not a duration: use 10s, 250ms, 2m or 1h"))?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?}: use ms, s, m or h")),
    };
    if secs > 86_400.0 * 365.0 {
        return Err(format!("{s:?} is longer than a year"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A range of machine ids: `FIRST-LAST` or one id, decimal digits only
/// (spaces around each number allowed), `FIRST <= LAST <= 511`.
pub fn parse_ids(s: &str) -> Result<std::ops::RangeInclusive<u16>, String> {
    parse_ids_in(s, nonceforge::Layout::Standard)
}

/// [`parse_ids`] for members of `layout`: `LAST <= 65535` for the wide one.
pub fn parse_ids_in(
    s: &str,
    layout: nonceforge::Layout,
) -> Result<std::ops::RangeInclusive<u16>, String> {
    let max = layout.max_machine_id();
    let bad = || match layout {
        nonceforge::Layout::Standard => {
            format!("{s:?}: use FIRST-LAST (e.g. 0-{max}) or one id, within 0..={max}")
        }
        nonceforge::Layout::Wide => format!(
            "{s:?}: use FIRST-LAST (e.g. 0-{max}) or one id, within 0..={max} (the wide layout)"
        ),
    };
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let num = |t: &str| {
        decimal(t.trim())
            .and_then(|n| u16::try_from(n).ok())
            .ok_or_else(bad)
    };
    let (a, b) = (num(a)?, num(b)?);
    if a > b || b > max {
        return Err(bad());
    }
    Ok(a..=b)
}

/// A number in decimal digits only — no sign, space, prefix or separator
/// (`parse` alone would take "+5"): what the lease vocabulary and the stores'
/// records call a number.
pub(crate) fn decimal(t: &str) -> Option<u64> {
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        for bad in ["", "x", "-1s", "10 parsecs", "NaN", "1e30"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    /// testdata/vectors/lease-syntax.json: the same file the Go module's tests read.
    #[test]
    fn shared_vectors() {
        let Some(file) = crate::vectors::read("lease-syntax.json") else {
            return;
        };
        for c in file["ids"].as_array().expect("ids") {
            let text = c["text"].as_str().expect("text");
            let want = c["first"]
                .as_u64()
                .map(|f| f as u16..=c["last"].as_u64().expect("last") as u16);
            let layout = nonceforge::Layout::parse(c["layout"].as_str().unwrap_or("standard"))
                .expect("layout");
            assert_eq!(parse_ids_in(text, layout).ok(), want, "{text:?} {layout}");
        }
        for c in file["durations"].as_array().expect("durations") {
            let text = c["text"].as_str().expect("text");
            let want = c["ms"].as_u64().map(Duration::from_millis);
            assert_eq!(parse_duration(text).ok(), want, "{text:?}");
        }
    }

    #[test]
    fn id_ranges() {
        assert_eq!(parse_ids("0-511").unwrap(), 0..=511);
        assert_eq!(parse_ids("7").unwrap(), 7..=7);
        assert_eq!(parse_ids(" 3 - 9 ").unwrap(), 3..=9);
        // What the Go and Node faces refuse too.
        for bad in [
            "",
            "5-4",
            "0-512",
            "a-b",
            "-3",
            "+5",
            "0x10-0x1f",
            "1_0",
            "0-5 junk",
            "1-2-3",
            "99999999999",
        ] {
            assert!(parse_ids(bad).is_err(), "{bad}");
        }
    }
}
