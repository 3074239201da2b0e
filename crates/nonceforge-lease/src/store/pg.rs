//! PostgreSQL: one row per machine id in a lease table; acquiring takes the
//! lowest free id in one statement (`FOR UPDATE SKIP LOCKED`, so acquirers
//! running at once take different rows), and the database's clock decides expiry.

use super::{Ask, Grant, Record, Renewal, StoreError, ms};
use std::ops::RangeInclusive;
use std::time::Duration;
use tokio_postgres::{Client, Config, NoTls};

pub(crate) struct PgStore {
    client: Client,
    table: String,
    tokens: String,
}

/// The table and sequence for a namespace (checked: `[a-z][a-z0-9_]*`).
fn names(namespace: &str) -> (String, String) {
    (
        format!("{namespace}_leases"),
        format!("{namespace}_lease_tokens"),
    )
}

impl PgStore {
    pub(crate) async fn connect(config: &Config, namespace: &str) -> Result<Self, StoreError> {
        let (client, connection) = config.connect(NoTls).await.map_err(StoreError::conn)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                log::debug!("nonceforge-lease: postgres connection closed: {e}");
            }
        });
        let (table, tokens) = names(namespace);
        let exists: bool = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
            .await
            .map_err(pg_err)?
            .get(0);
        if !exists {
            // Several processes may start on an empty database at once: one
            // creates, under a lock keyed by the table's name.
            client
                .batch_execute(&format!(
                    "BEGIN;
                     SELECT pg_advisory_xact_lock(hashtext('{table}'));
                     CREATE TABLE IF NOT EXISTS {table} (
                         machine_id    smallint PRIMARY KEY CHECK (machine_id BETWEEN 0 AND 511),
                         holder        text,
                         token         bigint NOT NULL DEFAULT 0,
                         expires_at    timestamptz,
                         floor_unix_ms bigint NOT NULL DEFAULT 0
                     );
                     COMMENT ON TABLE {table} IS 'nonceforge machine-id leases: one row per id; holder/expires_at while leased; floor_unix_ms is the highest timestamp its holders may have issued';
                     CREATE SEQUENCE IF NOT EXISTS {tokens};
                     INSERT INTO {table} (machine_id) SELECT generate_series(0, 511) ON CONFLICT DO NOTHING;
                     COMMIT;"
                ))
                .await
                .map_err(pg_err)?;
        }
        Ok(PgStore {
            client,
            table,
            tokens,
        })
    }

    pub(crate) async fn acquire(
        &mut self,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap: u64,
    ) -> Result<Option<Grant>, StoreError> {
        let (table, tokens) = (&self.table, &self.tokens);
        let sql = format!(
            "WITH free AS (
                 SELECT machine_id, floor_unix_ms FROM {table}
                 WHERE machine_id BETWEEN $1::int2 AND $2::int2
                   AND (holder IS NULL OR expires_at <= clock_timestamp())
                 ORDER BY machine_id LIMIT 1
                 FOR UPDATE SKIP LOCKED)
             UPDATE {table} l
                SET holder = $3::text, token = nextval('{tokens}'),
                    expires_at = clock_timestamp() + $4::float8 * interval '1 millisecond',
                    floor_unix_ms = greatest(l.floor_unix_ms, $5::int8)
               FROM free WHERE l.machine_id = free.machine_id
             RETURNING l.machine_id, l.token, free.floor_unix_ms"
        );
        let row = self
            .client
            .query_opt(
                &sql,
                &[
                    &(*ids.start() as i16),
                    &(*ids.end() as i16),
                    &ask.holder,
                    &(ms(ask.ttl) as f64),
                    &(cap as i64),
                ],
            )
            .await
            .map_err(pg_err)?;
        Ok(row.map(|r| Grant {
            machine_id: r.get::<_, i16>(0) as u16,
            token: r.get::<_, i64>(1) as u64,
            floor_unix_ms: r.get::<_, i64>(2).max(0) as u64,
            etcd_lease: 0,
        }))
    }

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        // Ours while the token is ours: also after expiry, if nobody took it since.
        let sql = format!(
            "UPDATE {} SET expires_at = clock_timestamp() + $3::float8 * interval '1 millisecond',
                           floor_unix_ms = greatest(floor_unix_ms, $4::int8)
              WHERE machine_id = $1::int2 AND token = $2::int8 AND holder = $5::text",
            self.table
        );
        let n = self
            .client
            .execute(
                &sql,
                &[
                    &(grant.machine_id as i16),
                    &(grant.token as i64),
                    &(ms(ask.ttl) as f64),
                    &(cap as i64),
                    &ask.holder,
                ],
            )
            .await
            .map_err(pg_err)?;
        Ok(if n == 1 { Renewal::Held } else { Renewal::Lost })
    }

    pub(crate) async fn release(
        &mut self,
        ask: &Ask<'_>,
        grant: &Grant,
        floor: u64,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE {} SET holder = NULL, expires_at = NULL, floor_unix_ms = $3::int8
              WHERE machine_id = $1::int2 AND token = $2::int8 AND holder = $4::text",
            self.table
        );
        let n = self
            .client
            .execute(
                &sql,
                &[
                    &(grant.machine_id as i16),
                    &(grant.token as i64),
                    &(floor as i64),
                    &ask.holder,
                ],
            )
            .await
            .map_err(pg_err)?;
        Ok(n == 1)
    }

    pub(crate) async fn status(
        &mut self,
        _namespace: &str,
        ids: RangeInclusive<u16>,
    ) -> Result<Vec<Record>, StoreError> {
        let sql = format!(
            "SELECT machine_id, coalesce(holder, ''), token,
                    (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::float8,
                    floor_unix_ms
               FROM {} WHERE machine_id BETWEEN $1::int2 AND $2::int2 AND (holder IS NOT NULL OR token > 0)
              ORDER BY machine_id",
            self.table
        );
        let rows = self
            .client
            .query(&sql, &[&(*ids.start() as i16), &(*ids.end() as i16)])
            .await
            .map_err(pg_err)?;
        Ok(rows
            .iter()
            .map(|r| {
                let left: Option<f64> = r.get(3);
                Record {
                    machine_id: r.get::<_, i16>(0) as u16,
                    holder: r.get(1),
                    token: r.get::<_, i64>(2) as u64,
                    expires_in: left
                        .filter(|&l| l > 0.0)
                        .map(|l| Duration::from_micros((l * 1000.0) as u64)),
                    floor_unix_ms: r.get::<_, i64>(4).max(0) as u64,
                }
            })
            .collect())
    }

    pub(crate) async fn evict(
        &mut self,
        _namespace: &str,
        machine_id: u16,
        holder: Option<&str>,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE {} SET holder = NULL, expires_at = NULL
              WHERE machine_id = $1::int2 AND holder IS NOT NULL AND ($2::text IS NULL OR holder = $2)",
            self.table
        );
        let n = self
            .client
            .execute(&sql, &[&(machine_id as i16), &holder])
            .await
            .map_err(pg_err)?;
        Ok(n == 1)
    }
}

fn pg_err(e: tokio_postgres::Error) -> StoreError {
    // The server's answer, or a closed connection / an I/O error (reconnect).
    if let Some(db) = e.as_db_error() {
        return StoreError::answer(format!("{}: {}", db.code().code(), db.message()));
    }
    let io = std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>());
    if e.is_closed() || io {
        StoreError::conn(e)
    } else {
        StoreError::answer(e)
    }
}
