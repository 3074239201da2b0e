//! Lease settings and their rules.

use crate::error::{LeaseError, Result};
use nonceforge::Layout;
use std::ops::RangeInclusive;
use std::time::Duration;

/// How a lease is taken and kept. Every member of a cluster must use the same
/// store, namespace and id range.
///
/// The defaults (TTL 10 s, a renewal every 3 s, a 1 s margin) survive one lost
/// renewal and a 5 s stall of the store; see the crate docs for choosing them.
#[derive(Debug, Clone)]
pub struct LeaseOptions {
    /// How long the store keeps a lease without a renewal (default 10 s; 1 s to 1 h).
    pub ttl: Duration,
    /// How often the lease is renewed (default TTL / 3 − ε, at most (TTL − margin) / 2,
    /// so one failed renewal can be retried before the deadline).
    pub renew_every: Option<Duration>,
    /// The generator stops this long before the lease would expire, counted from
    /// when the last successful renewal was sent (default TTL / 10, at least 50 ms).
    pub margin: Option<Duration>,
    /// The longest one request to the store may take (default: the renewal
    /// period, at most 2 s).
    pub request_timeout: Option<Duration>,
    /// The longest connecting and acquiring may take (default 5 s).
    pub connect_timeout: Duration,
    /// The machine ids this cluster leases (default 0..=511; within 0..=65535
    /// with the wide layout, [`LeaseOptions::for_layout`] takes them all).
    pub ids: RangeInclusive<u16>,
    /// Where the machine id sits in the members' nonces (default
    /// [`Layout::Standard`], 0..=511). The namespace records the layout its
    /// first member asked for, and refuses a member that asks for the other:
    /// a standard and a wide member's values can meet (docs/contracts.md,
    /// "The wide layout").
    pub layout: Layout,
    /// Name of the lease table (`{namespace}_leases`) or key prefix; lower-case
    /// letters, digits and `_`, starting with a letter, at most 40 (default `nonceforge`).
    pub namespace: String,
    /// Who holds the lease, as shown by `status` (default `host/pid/random`).
    pub holder: Option<String>,
    /// PostgreSQL: the schema that holds the lease tables (default
    /// `nonceforge_lease`). The first member creates it (it needs CREATE on the
    /// database then, or a DBA creates it with `AUTHORIZATION` the store role);
    /// every member refuses a schema or table owned by another role. Lower-case
    /// letters, digits and `_`, starting with a letter or `_`, at most 63, not
    /// `pg_…`.
    pub pg_schema: String,
    /// The longest a new generator may wait for its clock to pass the previous
    /// holder's floor; a clock further behind is an error ([`nonceforge::Error::ClockBehind`]).
    /// Default: the TTL plus twice the margin. A floor lies ahead of the clock
    /// legitimately: up to TTL − margin when the id was freed (`evict`) under a
    /// holder that is still alive (it may issue until its deadline), and up to
    /// TTL + margin when the previous holder started without history and
    /// released early (its start protected the holders before it); the rest
    /// is room for the hosts' clocks to differ.
    pub max_clock_wait: Option<Duration>,
    /// Whether a new grant may start right above the store's floor instead of
    /// the TTL and margin ahead of this host's clock (default
    /// [`FastStart::Off`]: a store that can go back to an older copy of its
    /// data — an asynchronous replica promoted, a backup restored — must not
    /// be trusted to show every live holder). Use the same setting on every
    /// member of a namespace.
    pub fast_start: FastStart,
}

/// When a new grant may skip the start-up wait (`docs/lease-protocol.md`,
/// "A store that goes back"). Every other rule holds whichever is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FastStart {
    /// Every grant starts the TTL and margin ahead of this host's clock at the
    /// acquire (11 s with the defaults): safe whatever copy of its data the
    /// store comes back with. The default.
    #[default]
    Off,
    /// Start fast only where this member can check that an acknowledged write
    /// survives a failover: PostgreSQL with `synchronous_standby_names` set
    /// (the session's commits wait for the synchronous standbys), Redis with at
    /// least one connected replica (each write waits for all of them with
    /// `WAIT`; a renewal that they do not all acknowledge fails), etcd (Raft
    /// commits on a quorum). Where the check fails, the grant starts as with
    /// `Off` and the reason is logged ([`crate::Lease::slow_start_reason`]).
    Verify,
    /// Start fast on the operator's word that the store never goes back to an
    /// older copy while members run (one server that is never restored from a
    /// backup, an etcd cluster never restored from a snapshot).
    Declared,
}

impl FastStart {
    /// Its text form: `off`, `verify` or `declared`.
    pub fn as_str(self) -> &'static str {
        match self {
            FastStart::Off => "off",
            FastStart::Verify => "verify",
            FastStart::Declared => "declared",
        }
    }
}

impl std::str::FromStr for FastStart {
    type Err = LeaseError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "off" => Ok(FastStart::Off),
            "verify" => Ok(FastStart::Verify),
            "declared" => Ok(FastStart::Declared),
            _ => Err(bad("fast_start", s, "must be off, verify or declared")),
        }
    }
}

impl std::fmt::Display for FastStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Default for LeaseOptions {
    fn default() -> Self {
        LeaseOptions {
            ttl: Duration::from_secs(10),
            renew_every: None,
            margin: None,
            request_timeout: None,
            connect_timeout: Duration::from_secs(5),
            ids: 0..=Layout::Standard.max_machine_id(),
            layout: Layout::Standard,
            namespace: "nonceforge".into(),
            holder: None,
            pg_schema: DEFAULT_PG_SCHEMA.into(),
            max_clock_wait: None,
            fast_start: FastStart::Off,
        }
    }
}

/// The lease options as the bindings pass them (the Node addon, the Elixir
/// NIF): milliseconds and texts, each `None` for its default. One conversion
/// for every binding, and every default stated once, in
/// [`LeaseOptions::default`].
#[derive(Debug, Clone, Default)]
pub struct MillisOptions {
    /// [`LeaseOptions::ttl`], in ms.
    pub ttl_ms: Option<u64>,
    /// [`LeaseOptions::renew_every`], in ms.
    pub renew_every_ms: Option<u64>,
    /// [`LeaseOptions::margin`], in ms.
    pub margin_ms: Option<u64>,
    /// [`LeaseOptions::connect_timeout`], in ms.
    pub connect_timeout_ms: Option<u64>,
    /// [`LeaseOptions::ids`]: the first and last id (default: every id of the layout).
    pub ids: Option<(u16, u16)>,
    /// [`LeaseOptions::layout`].
    pub layout: Option<Layout>,
    /// [`LeaseOptions::namespace`].
    pub namespace: Option<String>,
    /// [`LeaseOptions::holder`].
    pub holder: Option<String>,
    /// [`LeaseOptions::pg_schema`].
    pub pg_schema: Option<String>,
    /// [`LeaseOptions::fast_start`].
    pub fast_start: Option<FastStart>,
}

impl From<MillisOptions> for LeaseOptions {
    fn from(o: MillisOptions) -> LeaseOptions {
        let d = LeaseOptions::for_layout(o.layout.unwrap_or_default());
        let ms = Duration::from_millis;
        LeaseOptions {
            ttl: o.ttl_ms.map_or(d.ttl, ms),
            renew_every: o.renew_every_ms.map(ms),
            margin: o.margin_ms.map(ms),
            connect_timeout: o.connect_timeout_ms.map_or(d.connect_timeout, ms),
            ids: o.ids.map_or(d.ids, |(first, last)| first..=last),
            namespace: o.namespace.unwrap_or(d.namespace),
            holder: o.holder,
            pg_schema: o.pg_schema.unwrap_or(d.pg_schema),
            fast_start: o.fast_start.unwrap_or(d.fast_start),
            ..d
        }
    }
}

/// The options with defaults filled in and every rule checked.
#[derive(Debug, Clone)]
pub(crate) struct Settled {
    pub(crate) ttl: Duration,
    pub(crate) renew_every: Duration,
    pub(crate) margin: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) ids: RangeInclusive<u16>,
    pub(crate) layout: Layout,
    pub(crate) namespace: String,
    pub(crate) holder: String,
    pub(crate) pg_schema: String,
    pub(crate) max_clock_wait: Duration,
    pub(crate) fast_start: FastStart,
}

/// The PostgreSQL schema of the lease tables when none is given.
pub const DEFAULT_PG_SCHEMA: &str = "nonceforge_lease";

/// Checks a PostgreSQL schema name: `[a-z_][a-z0-9_]{0,62}`, not `pg_…`.
pub(crate) fn check_pg_schema(schema: &str) -> Result<()> {
    let ok = (1..=63).contains(&schema.len())
        && !schema.starts_with("pg_")
        && (schema.as_bytes()[0].is_ascii_lowercase() || schema.as_bytes()[0] == b'_')
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(bad(
            "pg_schema",
            schema,
            "must be 1 to 63 lower-case letters, digits or '_', starting with a letter or '_', not pg_…",
        ))
    }
}

fn bad(option: &'static str, value: impl std::fmt::Debug, rule: &'static str) -> LeaseError {
    LeaseError::BadOption {
        option,
        value: format!("{value:?}"),
        rule,
    }
}

/// Checks a namespace: `[a-z][a-z0-9_]{0,39}`.
pub(crate) fn check_namespace(ns: &str) -> Result<()> {
    let ok = (1..=40).contains(&ns.len())
        && ns.as_bytes()[0].is_ascii_lowercase()
        && ns
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(bad(
            "namespace",
            ns,
            "must be 1 to 40 lower-case letters, digits or '_', starting with a letter",
        ))
    }
}

pub(crate) fn check_ids(ids: &RangeInclusive<u16>, layout: Layout) -> Result<()> {
    // The rules' texts name the bounds; this fails to compile if they part.
    const _: () = assert!(Layout::Standard.max_machine_id() == 511);
    const _: () = assert!(Layout::Wide.max_machine_id() == 65_535);
    if ids.start() > ids.end() || *ids.end() > layout.max_machine_id() {
        let rule = match layout {
            Layout::Standard => {
                "must be a non-empty range within 0..=511 (0..=65535 with the wide layout)"
            }
            Layout::Wide => "must be a non-empty range within 0..=65535",
        };
        return Err(bad("ids", ids, rule));
    }
    Ok(())
}

impl LeaseOptions {
    /// The defaults for members of `layout`: every id of it (0..=511, or
    /// 0..=65535 for [`Layout::Wide`]).
    ///
    /// ```
    /// use nonceforge_lease::LeaseOptions;
    /// let o = LeaseOptions::for_layout(nonceforge::Layout::Wide);
    /// assert_eq!(o.ids, 0..=65535);
    /// ```
    pub fn for_layout(layout: Layout) -> LeaseOptions {
        LeaseOptions {
            ids: 0..=layout.max_machine_id(),
            layout,
            ..LeaseOptions::default()
        }
    }

    /// How long after acquiring a grant that does not start fast waits for
    /// its first value: the TTL plus the margin (docs/lease-protocol.md,
    /// rule 3), with these options' defaults filled in. For callers that
    /// wait on a lease from elsewhere (the PostgreSQL extension's backends).
    pub fn start_delay(&self) -> Result<Duration> {
        let s = self.settle()?;
        Ok(s.ttl + s.margin)
    }

    pub(crate) fn settle(&self) -> Result<Settled> {
        let ttl = self.ttl;
        if ttl < Duration::from_secs(1) || ttl > Duration::from_secs(3600) {
            return Err(bad("ttl", ttl, "must be between 1 s and 1 h"));
        }
        let margin = self
            .margin
            .unwrap_or((ttl / 10).max(Duration::from_millis(50)));
        if margin < Duration::from_millis(10) || margin >= ttl / 2 {
            return Err(bad(
                "margin",
                margin,
                "must be at least 10 ms and less than half the TTL",
            ));
        }
        let room = ttl - margin;
        let renew_every = self.renew_every.unwrap_or((ttl / 3).min(room / 2));
        if renew_every < Duration::from_millis(10) || renew_every > room / 2 {
            return Err(bad(
                "renew_every",
                renew_every,
                "must be at least 10 ms and at most (TTL - margin) / 2, so a failed renewal is retried before the deadline",
            ));
        }
        let request_timeout = self
            .request_timeout
            .unwrap_or(renew_every.min(Duration::from_secs(2)));
        if request_timeout.is_zero() || request_timeout > room {
            return Err(bad(
                "request_timeout",
                request_timeout,
                "must be more than 0 and at most TTL - margin",
            ));
        }
        if self.connect_timeout.is_zero() {
            return Err(bad(
                "connect_timeout",
                self.connect_timeout,
                "must be more than 0",
            ));
        }
        check_ids(&self.ids, self.layout)?;
        check_namespace(&self.namespace)?;
        check_pg_schema(&self.pg_schema)?;
        let holder = match &self.holder {
            Some(h) => {
                if h.is_empty() || h.len() > 200 || h.chars().any(char::is_control) {
                    return Err(bad(
                        "holder",
                        h,
                        "must be 1 to 200 bytes without control characters",
                    ));
                }
                h.clone()
            }
            None => default_holder(),
        };
        Ok(Settled {
            ttl,
            renew_every,
            margin,
            request_timeout,
            connect_timeout: self.connect_timeout,
            ids: self.ids.clone(),
            layout: self.layout,
            namespace: self.namespace.clone(),
            holder,
            pg_schema: self.pg_schema.clone(),
            max_clock_wait: self.max_clock_wait.unwrap_or(ttl + 2 * margin),
            fast_start: self.fast_start,
        })
    }
}

/// `host/pid/8 hex digits`: unique enough to tell holders apart in `status`.
fn default_holder() -> String {
    let host = nonceforge::MachineId::this_host().unwrap_or_else(|| "unknown-host".into());
    let mut r = [0u8; 4];
    let _ = getrandom::fill(&mut r);
    format!(
        "{host}/{}/{:08x}",
        std::process::id(),
        u32::from_be_bytes(r)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_settle() {
        let s = LeaseOptions::default().settle().unwrap();
        assert_eq!(s.margin, Duration::from_secs(1));
        assert!(s.renew_every * 2 + s.margin <= s.ttl);
        assert!(s.holder.contains(&format!("/{}/", std::process::id())));
    }

    #[test]
    fn start_delay_is_ttl_and_margin() {
        assert_eq!(
            LeaseOptions::default().start_delay().unwrap(),
            Duration::from_secs(11)
        );
        let o = LeaseOptions {
            ttl: Duration::from_secs(2),
            margin: Some(Duration::from_millis(300)),
            ..Default::default()
        };
        assert_eq!(o.start_delay().unwrap(), Duration::from_millis(2300));
    }

    #[test]
    fn fast_start_text() {
        for f in [FastStart::Off, FastStart::Verify, FastStart::Declared] {
            assert_eq!(f.as_str().parse::<FastStart>().unwrap(), f);
        }
        let e = "on".parse::<FastStart>().unwrap_err().to_string();
        assert!(
            e.starts_with("fast_start = ") && e.contains("off, verify or declared"),
            "{e}"
        );
        assert_eq!(LeaseOptions::default().fast_start, FastStart::Off);
    }

    /// testdata/vectors/lease-options.json: the defaults, the values derived
    /// from the TTL and every refusal — the same file go/lease's
    /// TestOptionVectors reads, so the Go port's restated rules stay these.
    #[test]
    fn the_shared_option_vectors() {
        let Some(v) = crate::vectors::read("lease-options.json") else {
            return; // outside the repository (a packaged crate)
        };
        let ms = |d: Duration| d.as_millis() as u64;
        let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap();
        let d = &v["defaults"];
        let s = LeaseOptions::default().settle().unwrap();
        assert_eq!(
            [
                ms(s.ttl),
                ms(s.margin),
                ms(s.renew_every),
                ms(s.request_timeout)
            ],
            [
                n(d, "ttl_ms"),
                n(d, "margin_ms"),
                n(d, "renew_every_ms"),
                n(d, "request_timeout_ms")
            ]
        );
        assert_eq!(
            [ms(s.connect_timeout), ms(s.max_clock_wait)],
            [n(d, "connect_timeout_ms"), n(d, "max_clock_wait_ms")]
        );
        assert_eq!(
            (*s.ids.start() as u64, *s.ids.end() as u64),
            (d["ids"][0].as_u64().unwrap(), d["ids"][1].as_u64().unwrap())
        );
        assert_eq!(s.namespace, d["namespace"].as_str().unwrap());
        assert_eq!(s.pg_schema, d["pg_schema"].as_str().unwrap());
        for row in v["derived"].as_array().unwrap() {
            let s = LeaseOptions {
                ttl: Duration::from_millis(n(row, "ttl_ms")),
                ..Default::default()
            }
            .settle()
            .unwrap();
            assert_eq!(
                [
                    ms(s.margin),
                    ms(s.renew_every),
                    ms(s.request_timeout),
                    ms(s.max_clock_wait)
                ],
                [
                    n(row, "margin_ms"),
                    n(row, "renew_every_ms"),
                    n(row, "request_timeout_ms"),
                    n(row, "max_clock_wait_ms")
                ],
                "{row}"
            );
        }
        let refusals = v["refusals"].as_array().unwrap();
        assert!(refusals.len() >= 15);
        for r in refusals {
            let (option, rule) = (r["option"].as_str().unwrap(), r["rule"].as_str().unwrap());
            let mut o = LeaseOptions::default();
            let mut parse_error = None;
            for (k, val) in r["input"].as_object().unwrap() {
                let d = || Duration::from_millis(val.as_u64().unwrap());
                let text = || val.as_str().unwrap().to_owned();
                match k.as_str() {
                    "ttl_ms" => o.ttl = d(),
                    "margin_ms" => o.margin = Some(d()),
                    "renew_every_ms" => o.renew_every = Some(d()),
                    "request_timeout_ms" => o.request_timeout = Some(d()),
                    // Text ids reach the options through the lease vocabulary's parser.
                    "ids" => match crate::syntax::parse_ids(&text()) {
                        Ok(ids) => o.ids = ids,
                        Err(e) => parse_error = Some(e),
                    },
                    "namespace" => o.namespace = text(),
                    "pg_schema" => o.pg_schema = text(),
                    "holder" => o.holder = Some(text()),
                    other => {
                        panic!("lease-options.json: an input this test does not know: {other}")
                    }
                }
            }
            let e = match parse_error {
                Some(e) => e,
                None => o.settle().expect_err(option).to_string(),
            };
            assert!(e.ends_with(&format!(": {rule}")), "{r}: {e}");
            assert!(
                e.starts_with(&format!("{option} = ")) || option == "ids",
                "{r}: {e}"
            );
        }
    }

    #[test]
    fn bad_options_name_the_option() {
        let cases: Vec<(LeaseOptions, &str)> = vec![
            (
                LeaseOptions {
                    ttl: Duration::from_millis(500),
                    ..Default::default()
                },
                "ttl",
            ),
            (
                LeaseOptions {
                    ttl: Duration::from_secs(7200),
                    ..Default::default()
                },
                "ttl",
            ),
            (
                LeaseOptions {
                    margin: Some(Duration::from_secs(5)),
                    ..Default::default()
                },
                "margin",
            ),
            (
                LeaseOptions {
                    margin: Some(Duration::ZERO),
                    ..Default::default()
                },
                "margin",
            ),
            (
                LeaseOptions {
                    renew_every: Some(Duration::from_secs(6)),
                    ..Default::default()
                },
                "renew_every",
            ),
            (
                LeaseOptions {
                    renew_every: Some(Duration::ZERO),
                    ..Default::default()
                },
                "renew_every",
            ),
            (
                LeaseOptions {
                    request_timeout: Some(Duration::ZERO),
                    ..Default::default()
                },
                "request_timeout",
            ),
            (
                LeaseOptions {
                    connect_timeout: Duration::ZERO,
                    ..Default::default()
                },
                "connect_timeout",
            ),
            (
                LeaseOptions {
                    ids: std::ops::RangeInclusive::new(5, 4),
                    ..Default::default()
                },
                "ids",
            ),
            (
                LeaseOptions {
                    ids: 0..=512,
                    ..Default::default()
                },
                "ids",
            ),
            (
                LeaseOptions {
                    namespace: "".into(),
                    ..Default::default()
                },
                "namespace",
            ),
            (
                LeaseOptions {
                    namespace: "1abc".into(),
                    ..Default::default()
                },
                "namespace",
            ),
            (
                LeaseOptions {
                    namespace: "a; DROP TABLE x".into(),
                    ..Default::default()
                },
                "namespace",
            ),
            (
                LeaseOptions {
                    namespace: "a".repeat(41),
                    ..Default::default()
                },
                "namespace",
            ),
            (
                LeaseOptions {
                    pg_schema: "pg_catalog".into(),
                    ..Default::default()
                },
                "pg_schema",
            ),
            (
                LeaseOptions {
                    pg_schema: "Public; DROP".into(),
                    ..Default::default()
                },
                "pg_schema",
            ),
            (
                LeaseOptions {
                    holder: Some(String::new()),
                    ..Default::default()
                },
                "holder",
            ),
            (
                LeaseOptions {
                    holder: Some("a\nb".into()),
                    ..Default::default()
                },
                "holder",
            ),
            // C1 controls too (NEL), as Go's port (unicode.IsControl).
            (
                LeaseOptions {
                    holder: Some("a\u{85}b".into()),
                    ..Default::default()
                },
                "holder",
            ),
        ];
        for (o, name) in cases {
            let e = o.settle().unwrap_err().to_string();
            assert!(e.starts_with(&format!("{name} = ")), "{e}");
        }
    }
}
