//! The lease options `lease …`, `lease bench` and `gen --lease` share, and
//! their parsers: a leaf the lease commands import.

use clap::Args;
use nonceforge_lease::LeaseOptions;
use std::time::Duration;

/// Options of a lease, shared by `lease …` and `gen --lease`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Lease options")]
pub struct LeaseArgs {
    /// How long the store keeps a lease without renewal: 10s, 2500ms, 1m (1 s to 1 h).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    ttl: Duration,
    /// How often to renew (default TTL/3; at most (TTL - margin)/2).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    renew_every: Option<Duration>,
    /// Stop generating this long before the lease would expire (default TTL/10).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    margin: Option<Duration>,
    /// Machine ids this cluster leases: FIRST-LAST or one id.
    #[arg(long, value_name = "FIRST-LAST", default_value = "0-511", value_parser = parse_ids)]
    ids: std::ops::RangeInclusive<u16>,
    /// Lease table name prefix (PostgreSQL) or key prefix (Redis, etcd).
    #[arg(long, value_name = "NAME", default_value = "nonceforge")]
    namespace: String,
    /// This process's name in the store (default host/pid/random).
    #[arg(long, value_name = "TEXT")]
    holder: Option<String>,
    /// Give up connecting and acquiring after this long.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    connect_timeout: Duration,
}

impl LeaseArgs {
    pub fn options(&self) -> LeaseOptions {
        LeaseOptions {
            ttl: self.ttl,
            renew_every: self.renew_every,
            margin: self.margin,
            connect_timeout: self.connect_timeout,
            ids: self.ids.clone(),
            namespace: self.namespace.clone(),
            holder: self.holder.clone(),
            ..LeaseOptions::default()
        }
    }
}

/// `10s`, `250ms`, `2m`, `1h`, or a plain number of seconds (`1.5`).
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

/// `FIRST-LAST` or one id, within 0..=511.
fn parse_ids(s: &str) -> Result<std::ops::RangeInclusive<u16>, String> {
    let bad = || format!("{s:?}: use FIRST-LAST (e.g. 0-511) or one id, within 0..=511");
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    // Decimal digits only: `parse` would also take a sign ("+5").
    let num = |t: &str| {
        let t = t.trim();
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        t.parse::<u16>().map_err(|_| bad())
    };
    let (a, b) = (num(a)?, num(b)?);
    if a > b || b > 511 {
        return Err(bad());
    }
    Ok(a..=b)
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
