//! The lease options `lease …`, `lease bench` and `gen --lease` share, and
//! their parsers: a leaf the lease commands import.

use clap::Args;
pub use nonceforge_lease::parse_duration;
use nonceforge_lease::{LeaseOptions, parse_ids};
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
    /// PostgreSQL: the schema of the lease tables, the store role's own (created when missing).
    #[arg(long, value_name = "NAME", default_value = nonceforge_lease::DEFAULT_PG_SCHEMA)]
    pg_schema: String,
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
            pg_schema: self.pg_schema.clone(),
            holder: self.holder.clone(),
            ..LeaseOptions::default()
        }
    }
}
