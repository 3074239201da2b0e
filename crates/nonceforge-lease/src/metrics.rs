//! What a lease has done and where it stands, for operators: [`Lease::metrics`]
//! and [`Lease::readiness`] (docs/operations.md says what each figure means and
//! which alerts are worth setting).

use crate::keeper::FAILURE_KINDS;
use crate::{Lease, LeaseState, LostReason};
use nonceforge::nonce::series::{MetricDef, Sample, def, labelled, sample};
use std::fmt;
use std::time::{Duration, Instant};

/// The keeper's counts, read under its lock in one go.
pub(crate) struct KeeperCounts {
    pub(crate) token: u64,
    pub(crate) renewals: u64,
    pub(crate) renewal_failures: [u64; 3],
    pub(crate) lapses: u64,
    pub(crate) rtt_sum: Duration,
    pub(crate) rtt_max: Duration,
    pub(crate) rtt_last: Option<Duration>,
    pub(crate) lost: Option<LostReason>,
}

/// Renewals that failed, by kind (each was retried).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenewalFailures {
    /// The store could not be reached (a connection refused or lost).
    pub unreachable: u64,
    /// The store did not answer within the request timeout.
    pub timeout: u64,
    /// The store answered with an error.
    pub store: u64,
}

impl RenewalFailures {
    /// Every failed renewal.
    pub fn total(&self) -> u64 {
        self.unreachable + self.timeout + self.store
    }

    /// The counts with their kinds' names (`unreachable`, `timeout`, `store`),
    /// as metrics label them.
    pub fn by_kind(&self) -> [(&'static str, u64); 3] {
        [
            (FAILURE_KINDS[0], self.unreachable),
            (FAILURE_KINDS[1], self.timeout),
            (FAILURE_KINDS[2], self.store),
        ]
    }
}

/// A lease's figures at one moment ([`Lease::metrics`]): where it stands, what
/// its start cost, and how its renewals went. Counts are since it was acquired.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseMetrics {
    /// Where the lease stands now.
    pub state: LeaseState,
    /// The machine id held (or last held).
    pub machine_id: u16,
    /// The grant's fencing token: it rises with every grant of this id.
    pub token: u64,
    /// Where the generators start above (ms since 1970).
    pub floor_unix_ms: u64,
    /// How long the acquisition took (connect and grant).
    pub acquired_in: Duration,
    /// How long the first value waits after the grant: the TTL and margin on
    /// a slow start, none on a fast one.
    pub start_wait: Duration,
    /// How much of that wait is still to come.
    pub start_in: Duration,
    /// Whether the grant started right above the store's floor.
    pub started_fast: bool,
    /// Renewals that succeeded.
    pub renewals: u64,
    /// Renewals that failed, by kind.
    pub renewal_failures: RenewalFailures,
    /// The last successful renewal's round trip (send to answer).
    pub renewal_last: Option<Duration>,
    /// The longest successful renewal's round trip.
    pub renewal_max: Duration,
    /// Every successful renewal's round trip, added up (with
    /// [`renewals`](Self::renewals): the mean).
    pub renewal_total: Duration,
    /// Times the local deadline passed without a renewal (the generators
    /// stopped until a renewal found the id still theirs).
    pub lapses: u64,
    /// Why the lease was lost, if it was.
    pub lost_reason: Option<LostReason>,
}

impl LeaseMetrics {
    /// The state's short name: `held`, `lapsed`, `lost` or `released`.
    pub fn state_name(&self) -> &'static str {
        state_name(&self.state)
    }

    /// Time left until the local deadline (zero unless held).
    pub fn deadline_in(&self) -> Duration {
        match self.state {
            LeaseState::Held { deadline_in } => deadline_in,
            _ => Duration::ZERO,
        }
    }
}

/// A [`LeaseState`]'s short name, as logs, metrics and every face give it.
pub fn state_name(state: &LeaseState) -> &'static str {
    match state {
        LeaseState::Held { .. } => "held",
        LeaseState::Lapsed => "lapsed",
        LeaseState::Lost => "lost",
        LeaseState::Released => "released",
    }
}

/// The state names, in the order [`state_name`] knows them (a gauge per
/// state: 1 for the lease's, 0 for the others).
pub const STATE_NAMES: [&str; 4] = ["held", "lapsed", "lost", "released"];

/// Why a lease's generators cannot issue now ([`Lease::readiness`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotReady {
    /// Held, but the first value waits this long yet (a slow start: the
    /// store may be an older copy; docs/lease-protocol.md).
    Starting {
        /// Time left until the generators issue.
        starts_in: Duration,
    },
    /// The local deadline passed without a renewal: stopped until a renewal
    /// finds the id still ours.
    Lapsed,
    /// The id is gone for good.
    Lost(LostReason),
    /// Released.
    Released,
}

impl fmt::Display for NotReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotReady::Starting { starts_in } => write!(
                f,
                "starting: the first value in {} ms (the lease's start wait)",
                starts_in.as_millis()
            ),
            NotReady::Lapsed => {
                f.write_str("lapsed: no renewal reached the store before the deadline")
            }
            NotReady::Lost(reason) => write!(f, "lost: {reason}"),
            NotReady::Released => f.write_str("released"),
        }
    }
}

impl std::error::Error for NotReady {}

impl Lease {
    /// The lease's figures now: state, start, renewals (docs/operations.md).
    ///
    /// ```no_run
    /// # fn main() -> nonceforge_lease::Result<()> {
    /// use nonceforge_lease::{Lease, LeaseOptions};
    /// let lease = Lease::acquire("redis://127.0.0.1:6379", &LeaseOptions::default())?;
    /// let m = lease.metrics();
    /// println!("machine id {} {} (token {}), {} renewals, {} failed",
    ///     m.machine_id, m.state_name(), m.token, m.renewals, m.renewal_failures.total());
    /// # Ok(()) }
    /// ```
    pub fn metrics(&self) -> LeaseMetrics {
        let s = &self.shared;
        let c = s.counts();
        let state = s.state(Instant::now());
        let [unreachable, timeout, store] = c.renewal_failures;
        LeaseMetrics {
            state,
            machine_id: s.machine_id.get(),
            token: c.token,
            floor_unix_ms: s.floor_unix_ms,
            acquired_in: s.acquired_in,
            start_wait: s.start_wait,
            start_in: self.start_in(),
            started_fast: s.fast_start.is_ok(),
            renewals: c.renewals,
            renewal_failures: RenewalFailures {
                unreachable,
                timeout,
                store,
            },
            renewal_last: c.rtt_last,
            renewal_max: c.rtt_max,
            renewal_total: c.rtt_sum,
            lapses: c.lapses,
            lost_reason: c.lost,
        }
    }

    /// Whether the lease lets its generators issue now — what a readiness
    /// probe returns: `Ok` while held and past its start wait, otherwise why
    /// not. (A generator's own state — disabled by hand, its epoch ended —
    /// is its [`stats`](nonceforge::NonceGenerator::stats)' `enabled`.)
    pub fn readiness(&self) -> Result<(), NotReady> {
        match self.state() {
            LeaseState::Held { .. } => match self.start_in() {
                d if d.is_zero() => Ok(()),
                starts_in => Err(NotReady::Starting { starts_in }),
            },
            LeaseState::Lapsed => Err(NotReady::Lapsed),
            LeaseState::Lost => Err(NotReady::Lost(
                self.lost_reason().unwrap_or(LostReason::Taken),
            )),
            LeaseState::Released => Err(NotReady::Released),
        }
    }
}

// The lease metrics one by one (LEASE_METRICS lists them).
const STATE: MetricDef = def(
    "nonceforge_lease_state",
    "gauge",
    &["state"],
    "1 for the lease's state (held, lapsed, lost, released), 0 for the others.",
);

const READY: MetricDef = def(
    "nonceforge_lease_ready",
    "gauge",
    &[],
    "1 while the lease lets its generators issue (held, past its start wait).",
);

const MACHINE_ID: MetricDef = def(
    "nonceforge_lease_machine_id",
    "gauge",
    &[],
    "The machine id the lease holds (or last held).",
);

const TOKEN: MetricDef = def(
    "nonceforge_lease_token",
    "gauge",
    &[],
    "The grant's fencing token; it rises with every grant of the id.",
);

const FLOOR: MetricDef = def(
    "nonceforge_lease_floor_seconds",
    "gauge",
    &[],
    "Where the generators started above, in seconds since 1970.",
);

const DEADLINE: MetricDef = def(
    "nonceforge_lease_deadline_seconds",
    "gauge",
    &[],
    "Time left until the lease's local deadline (0 unless held).",
);

const ACQUIRE: MetricDef = def(
    "nonceforge_lease_acquire_seconds",
    "gauge",
    &[],
    "How long the acquisition took.",
);

const START_WAIT: MetricDef = def(
    "nonceforge_lease_start_wait_seconds",
    "gauge",
    &[],
    "How long the first value waited after the grant (the TTL and margin on a slow start).",
);

const STARTED_FAST: MetricDef = def(
    "nonceforge_lease_started_fast",
    "gauge",
    &[],
    "1 when the grant started right above the store's floor.",
);

const RENEWALS: MetricDef = def(
    "nonceforge_lease_renewals_total",
    "counter",
    &[],
    "Renewals that succeeded.",
);

const RENEWAL_FAILURES: MetricDef = def(
    "nonceforge_lease_renewal_failures_total",
    "counter",
    &["failure"],
    "Renewals that failed (and were retried), by kind: unreachable, timeout, store.",
);

const RENEWAL_MICROS: MetricDef = def(
    "nonceforge_lease_renewal_microseconds_total",
    "counter",
    &[],
    "The successful renewals' round trips added up, in microseconds (with the renewals: the mean).",
);

const RENEWAL_LAST: MetricDef = def(
    "nonceforge_lease_renewal_last_seconds",
    "gauge",
    &[],
    "The last successful renewal's round trip.",
);

const RENEWAL_MAX: MetricDef = def(
    "nonceforge_lease_renewal_max_seconds",
    "gauge",
    &[],
    "The longest successful renewal's round trip.",
);

const LAPSES: MetricDef = def(
    "nonceforge_lease_lapses_total",
    "counter",
    &[],
    "Times the local deadline passed without a renewal (the generators stopped until one came).",
);

const LOST: MetricDef = def(
    "nonceforge_lease_lost",
    "gauge",
    &["lost_reason"],
    "1 under the reason the lease was lost (taken, evicted, store, rollback), 0 under the others.",
);

/// Every lease metric, in the order of `testdata/vectors/metrics.json`.
pub const LEASE_METRICS: [MetricDef; 16] = [
    STATE,
    READY,
    MACHINE_ID,
    TOKEN,
    FLOOR,
    DEADLINE,
    ACQUIRE,
    START_WAIT,
    STARTED_FAST,
    RENEWALS,
    RENEWAL_FAILURES,
    RENEWAL_MICROS,
    RENEWAL_LAST,
    RENEWAL_MAX,
    LAPSES,
    LOST,
];

/// The reasons a lease is lost, as the `lost_reason` label gives them.
pub const LOST_REASONS: [LostReason; 4] = [
    LostReason::Taken,
    LostReason::Evicted,
    LostReason::StoreLostData,
    LostReason::StoreWentBack,
];

impl LeaseMetrics {
    /// These figures as samples of the fleet's series ([`LEASE_METRICS`]);
    /// `ready` is [`Lease::readiness`]'s answer. The last renewal's round
    /// trip is absent before the first renewal.
    pub fn samples(&self, ready: bool) -> Vec<Sample> {
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let mut out = Vec::with_capacity(24);
        for s in STATE_NAMES {
            out.push(labelled(STATE, "state", s, flag(self.state_name() == s)));
        }
        out.push(sample(READY, flag(ready)));
        out.push(sample(MACHINE_ID, f64::from(self.machine_id)));
        out.push(sample(TOKEN, self.token as f64));
        out.push(sample(FLOOR, self.floor_unix_ms as f64 / 1000.0));
        out.push(sample(DEADLINE, self.deadline_in().as_secs_f64()));
        out.push(sample(ACQUIRE, self.acquired_in.as_secs_f64()));
        out.push(sample(START_WAIT, self.start_wait.as_secs_f64()));
        out.push(sample(STARTED_FAST, flag(self.started_fast)));
        out.push(sample(RENEWALS, self.renewals as f64));
        for (kind, n) in self.renewal_failures.by_kind() {
            out.push(labelled(RENEWAL_FAILURES, "failure", kind, n as f64));
        }
        out.push(sample(
            RENEWAL_MICROS,
            self.renewal_total.as_micros() as f64,
        ));
        if let Some(last) = self.renewal_last {
            out.push(sample(RENEWAL_LAST, last.as_secs_f64()));
        }
        out.push(sample(RENEWAL_MAX, self.renewal_max.as_secs_f64()));
        out.push(sample(LAPSES, self.lapses as f64));
        for r in LOST_REASONS {
            out.push(labelled(
                LOST,
                "lost_reason",
                r.as_str(),
                flag(self.lost_reason == Some(r)),
            ));
        }
        out
    }
}
