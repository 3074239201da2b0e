//! The lease options `lease …`, `lease bench` and `gen --lease` share, and
//! their parsers: a leaf the lease commands import.

use clap::Args;
use nonceforge::Layout;
pub use nonceforge_lease::parse_duration;
use nonceforge_lease::{FastStart, LeaseOptions, parse_ids_in};
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
    /// Machine ids this cluster leases: FIRST-LAST or one id [default: every
    /// id of the layout, 0-511, or 0-65535 with --layout wide].
    #[arg(long, value_name = "FIRST-LAST")]
    ids: Option<String>,
    /// Lease table name prefix (PostgreSQL) or key prefix (Redis, etcd).
    #[arg(long, value_name = "NAME", default_value = "nonceforge")]
    namespace: String,
    /// PostgreSQL: the schema of the lease tables, the store role's own (created when missing).
    #[arg(long, value_name = "NAME", default_value = nonceforge_lease::DEFAULT_PG_SCHEMA)]
    pg_schema: String,
    /// This process's name in the store (default host/pid/random).
    #[arg(long, value_name = "TEXT")]
    holder: Option<String>,
    /// When a new grant may start right above the store's floor instead of
    /// the TTL and margin ahead of this clock (11 s by default): off (safe on
    /// any store, even one that fails over to a replica that was behind or is
    /// restored from a backup), verify (where this member can check that
    /// acknowledged writes survive a failover: PostgreSQL with synchronous
    /// standbys, Redis with replicas acknowledging each write, etcd), or
    /// declared (the operator says the store never goes back). Use the same
    /// on every member.
    #[arg(long, value_name = "off|verify|declared", default_value = "off")]
    fast_start: FastStart,
    /// Give up connecting and acquiring after this long.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    connect_timeout: Duration,
}

/// `--layout` of the `lease` commands (`gen` has its own): the members'
/// layout, which the namespace records.
#[derive(Debug, Args, Clone)]
pub struct LayoutArg {
    /// The members' layout, which the namespace records (a member of the other
    /// one is refused): standard (machine ids 0..511) or wide (0..65535,
    /// 96- and 128-bit nonces).
    #[arg(long, default_value = "standard", value_parser = crate::gen_cmd::parse_layout)]
    pub layout: Layout,
}

impl LeaseArgs {
    /// The lease options for members of `layout` (`--ids` is read in it).
    pub fn options(&self, layout: Layout) -> Result<LeaseOptions, crate::CliError> {
        let defaults = LeaseOptions::for_layout(layout);
        let ids = match &self.ids {
            Some(text) => parse_ids_in(text, layout)
                .map_err(|e| crate::CliError::Usage(format!("--ids {e}")))?,
            None => defaults.ids.clone(),
        };
        Ok(LeaseOptions {
            ttl: self.ttl,
            renew_every: self.renew_every,
            margin: self.margin,
            connect_timeout: self.connect_timeout,
            ids,
            namespace: self.namespace.clone(),
            pg_schema: self.pg_schema.clone(),
            holder: self.holder.clone(),
            fast_start: self.fast_start,
            ..defaults
        })
    }
}
