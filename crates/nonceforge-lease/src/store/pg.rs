//! PostgreSQL, lease protocol 2: two tables per namespace in a schema of the
//! store role's own (default `nonceforge_lease`): `{ns}_leases`, one row per
//! machine id, and `{ns}_meta`, one row (protocol, incarnation, last token).
//! Acquiring takes the lowest free id in one statement (`FOR UPDATE SKIP
//! LOCKED`, so acquirers running at once take different rows), and the
//! database's clock decides expiry.
//!
//! The store database may be shared with roles that can create objects. So
//! every statement names its objects with the schema and every function and
//! type with `pg_catalog`, the session runs under `search_path = pg_catalog,
//! pg_temp`, and before anything is read or written the schema and both tables
//! must be owned by the store role, carry no trigger, rule or row security,
//! and grant no other role a right to write them: what another role planted is
//! refused by name, never run.
//!
//! Every session commits with `synchronous_commit = on`, whatever the role's
//! default: a lease write acknowledged is on disk, and on every synchronous
//! standby where the server names some (`synchronous_standby_names`), so a
//! crash or a failover to such a standby never takes it back. Whether the
//! server names any is what [`crate::FastStart::Verify`] checks.

use super::{Ask, Grant, LostReason, Record, Renewal, StoreError, StoreInfo, ms, random_id};
use std::ops::RangeInclusive;
use std::time::Duration;
use tokio_postgres::{Client, Config, NoTls};

pub(crate) struct PgStore {
    client: Client,
    /// `"schema"."{ns}_leases"`, `"schema"."{ns}_meta"`.
    leases: String,
    meta: String,
    /// Whether an acknowledged write survives a failover, as far as this
    /// session can tell (`FastStart::Verify`), or why not.
    durable: Result<(), String>,
}

/// The SQL text of a clock reading in Unix ms: `pg_catalog` functions only.
const NOW_MS: &str =
    "(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::pg_catalog.int8";

fn db_code(e: &tokio_postgres::Error) -> Option<&str> {
    e.as_db_error().map(|d| d.code().code())
}

impl PgStore {
    pub(crate) async fn connect(
        config: &Config,
        namespace: &str,
        schema: &str,
        verify: bool,
    ) -> Result<Self, StoreError> {
        let (client, connection) = config.connect(NoTls).await.map_err(StoreError::conn)?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                log::debug!("nonceforge-lease: postgres connection closed: {e}");
            }
        });
        // Nothing of another role's is found by name from here on (and every
        // name below is qualified anyway, for poolers that reset the session).
        client
            .batch_execute("SET search_path = pg_catalog, pg_temp; SET synchronous_commit = on")
            .await
            .map_err(pg_err)?;
        let durable = if verify {
            let row = client
                .query_one(
                    "SELECT pg_catalog.pg_is_in_recovery(), pg_catalog.current_setting('synchronous_standby_names')",
                    &[],
                )
                .await
                .map_err(pg_err)?;
            let (recovery, standbys): (bool, String) = (row.get(0), row.get(1));
            if recovery {
                Err("the server is a standby".into())
            } else if standbys.trim().is_empty() {
                Err("synchronous_standby_names is empty: commits wait for no standby, and a failover to an asynchronous one can lose them".into())
            } else {
                Ok(())
            }
        } else {
            Err("fast_start is not verify".into())
        };
        let mut store = PgStore {
            client,
            leases: format!("\"{schema}\".\"{namespace}_leases\""),
            meta: format!("\"{schema}\".\"{namespace}_meta\""),
            durable,
        };
        store.ensure(namespace, schema).await?;
        Ok(store)
    }

    /// Whether an acknowledged write survives a failover (checked at connect).
    pub(crate) fn durable(&self) -> Result<(), String> {
        self.durable.clone()
    }

    /// Creates the schema and tables when missing, then checks that they are
    /// the store role's own and that nothing of another role's runs on them.
    async fn ensure(&mut self, ns: &str, schema: &str) -> Result<(), StoreError> {
        let (leases, meta) = (format!("{ns}_leases"), format!("{ns}_meta"));
        self.check_v1(ns, schema).await?;
        if !self.check_owned(schema, &leases, &meta).await? {
            self.create(ns, schema).await?;
            if !self.check_owned(schema, &leases, &meta).await? {
                return Err(StoreError::refused(format!(
                    "the lease tables {schema}.{leases} and {schema}.{meta} are missing"
                )));
            }
        }
        Ok(())
    }

    /// A protocol-1 table of this namespace, owned by the store role, means
    /// protocol-1 members may still lease ids here: refuse (the two protocols
    /// cannot see each other's grants). One owned by another role is not ours
    /// to read (it could run that role's code): a warning only.
    async fn check_v1(&mut self, ns: &str, schema: &str) -> Result<(), StoreError> {
        let rows = self
            .client
            .query(
                "SELECT n.nspname::pg_catalog.text, c.relowner OPERATOR(pg_catalog.=) r.oid
                   FROM pg_catalog.pg_class c
                   JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                   JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) CURRENT_USER
                  WHERE c.relname OPERATOR(pg_catalog.=) $1::pg_catalog.text
                    AND n.nspname OPERATOR(pg_catalog.<>) $2::pg_catalog.text",
                &[&format!("{ns}_leases"), &schema],
            )
            .await
            .map_err(pg_err)?;
        for row in rows {
            let (where_, ours): (String, bool) = (row.get(0), row.get(1));
            if ours {
                return Err(StoreError::refused(format!(
                    "{where_}.{ns}_leases is a lease protocol 1 table of this role: protocol-1 members may still hold ids in it, and cannot see protocol-2 grants. Stop them, then rename or drop that table (ALTER TABLE {where_}.{ns}_leases RENAME TO {ns}_leases_v1); docs/lease-protocol.md, \"Moving from protocol 1\""
                )));
            }
            log::warn!(
                "nonceforge-lease: {where_}.{ns}_leases (lease protocol 1) belongs to another role: it is ignored; protocol-1 members running as that role would not see this fleet's grants"
            );
        }
        Ok(())
    }

    async fn create(&mut self, ns: &str, schema: &str) -> Result<(), StoreError> {
        // The schema must be ours before anything is created in it: a schema
        // another role owns lets that role drop or replace what we put there.
        let owner = self.schema_owner(schema).await?;
        if owner.is_none() {
            let made = self
                .client
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
                .await;
            if let Err(e) = made {
                if db_code(&e) == Some("42501") {
                    return Err(StoreError::refused(format!(
                        "schema {schema} does not exist and this role may not create it: have the DBA run CREATE SCHEMA {schema} AUTHORIZATION <the store role>, or GRANT CREATE ON DATABASE to it"
                    )));
                }
                // Another member created it at the same moment.
                if db_code(&e) != Some("42P06") && db_code(&e) != Some("23505") {
                    return Err(pg_err(e));
                }
            }
        }
        self.check_schema(schema).await?;
        let (leases, meta) = (&self.leases, &self.meta);
        let tx = self.client.transaction().await.map_err(pg_err)?;
        // Several processes may start on an empty database at once: one
        // creates, under a lock keyed by the tables' names.
        tx.execute(
            "SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext($1::pg_catalog.text))",
            &[&format!("nonceforge lease {schema}.{ns}")],
        )
        .await
        .map_err(pg_err)?;
        tx.batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {leases} (
                 machine_id    pg_catalog.int2 PRIMARY KEY CHECK (machine_id OPERATOR(pg_catalog.>=) 0 AND machine_id OPERATOR(pg_catalog.<=) 511),
                 grant_id      pg_catalog.text,
                 holder        pg_catalog.text,
                 token         pg_catalog.int8 NOT NULL DEFAULT 0,
                 expires_at    pg_catalog.timestamptz,
                 floor_unix_ms pg_catalog.int8
             );
             COMMENT ON TABLE {leases} IS 'nonceforge machine-id leases (protocol 2): one row per id; grant_id/holder/expires_at while leased; floor_unix_ms is the highest timestamp its holders may have issued, NULL when the id has no history';
             CREATE TABLE IF NOT EXISTS {meta} (
                 one         pg_catalog.bool PRIMARY KEY DEFAULT true CHECK (one),
                 protocol    pg_catalog.int4 NOT NULL,
                 incarnation pg_catalog.text NOT NULL,
                 created_at  pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
                 last_token  pg_catalog.int8 NOT NULL DEFAULT 0
             );
             COMMENT ON TABLE {meta} IS 'nonceforge lease namespace (protocol 2): the incarnation changes when the store loses its data; tokens are drawn from last_token';"
        ))
        .await
        .map_err(pg_err)?;
        tx.commit().await.map_err(pg_err)
    }

    async fn schema_owner(&mut self, schema: &str) -> Result<Option<(String, bool)>, StoreError> {
        let row = self
            .client
            .query_opt(
                "SELECT pg_catalog.pg_get_userbyid(n.nspowner)::pg_catalog.text,
                        n.nspowner OPERATOR(pg_catalog.=) r.oid
                   FROM pg_catalog.pg_namespace n
                   JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) CURRENT_USER
                  WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.text",
                &[&schema],
            )
            .await
            .map_err(pg_err)?;
        Ok(row.map(|r| (r.get(0), r.get(1))))
    }

    async fn check_schema(&mut self, schema: &str) -> Result<(), StoreError> {
        match self.schema_owner(schema).await? {
            Some((_, true)) => Ok(()),
            Some((owner, false)) => Err(foreign_schema(schema, &owner)),
            None => Err(StoreError::refused(format!("schema {schema} is missing"))),
        }
    }

    /// Whether the schema and both tables are there, refusing whatever of them
    /// is there and not the store role's own: plain tables owned by it, no
    /// trigger, rule or row security, no write right granted to another role.
    async fn check_owned(
        &mut self,
        schema: &str,
        leases: &str,
        meta: &str,
    ) -> Result<bool, StoreError> {
        match self.schema_owner(schema).await? {
            None => return Ok(false),
            Some((owner, false)) => return Err(foreign_schema(schema, &owner)),
            Some((_, true)) => {}
        }
        let rows = self
            .client
            .query(
                "SELECT c.relname::pg_catalog.text, c.relkind::pg_catalog.text,
                        pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text,
                        c.relowner OPERATOR(pg_catalog.=) r.oid,
                        EXISTS (SELECT FROM pg_catalog.pg_trigger t
                                 WHERE t.tgrelid OPERATOR(pg_catalog.=) c.oid AND NOT t.tgisinternal),
                        EXISTS (SELECT FROM pg_catalog.pg_rewrite w
                                 WHERE w.ev_class OPERATOR(pg_catalog.=) c.oid),
                        c.relrowsecurity,
                        (SELECT pg_catalog.string_agg(DISTINCT pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text
                                 OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) a.privilege_type, ', ')
                           FROM pg_catalog.aclexplode(c.relacl) a
                          WHERE a.grantee OPERATOR(pg_catalog.<>) c.relowner
                            AND a.privilege_type OPERATOR(pg_catalog.<>) 'SELECT')
                   FROM pg_catalog.pg_class c
                   JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                   JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) CURRENT_USER
                  WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.text
                    AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY[$2::pg_catalog.text, $3::pg_catalog.text])",
                &[&schema, &leases, &meta],
            )
            .await
            .map_err(pg_err)?;
        let both = rows.len() == 2;
        for row in rows {
            let name: String = row.get(0);
            let what = format!("{schema}.{name}");
            let kind: String = row.get(1);
            let owner: String = row.get(2);
            let refuse = |why: String| {
                Err(StoreError::refused(format!(
                    "{what} {why}: the lease store trusts only the store role's own plain tables. Drop it (the next member recreates it) or choose another schema"
                )))
            };
            if kind != "r" {
                return refuse(format!("is not a plain table (relkind {kind})"));
            }
            if !row.get::<_, bool>(3) {
                return refuse(format!("is owned by role {owner}, not by the store role"));
            }
            if row.get::<_, bool>(4) {
                return refuse("has a trigger".into());
            }
            if row.get::<_, bool>(5) {
                return refuse("has a rule".into());
            }
            if row.get::<_, bool>(6) {
                return refuse("has row security enabled".into());
            }
            if let Some(grants) = row.get::<_, Option<String>>(7) {
                return refuse(format!("grants other roles a write right ({grants})"));
            }
        }
        Ok(both)
    }

    pub(crate) async fn acquire(
        &mut self,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap: u64,
        grant_id: &str,
    ) -> Result<Option<Grant>, StoreError> {
        // One statement; only when it finds nothing are the namespace's row
        // and the range's rows put back (lost to a TRUNCATE, a DELETE, a
        // restore: they come back without history, the incarnation new) and
        // the statement tried once more.
        if let Some(grant) = self.take(ask, &ids, cap, grant_id).await? {
            return Ok(Some(grant));
        }
        // Another member may be putting them back at this moment: whatever
        // these inserts find, the statement is tried once more.
        let (leases, meta) = (&self.leases, &self.meta);
        self.client
            .execute(
                &format!(
                    "INSERT INTO {meta} (protocol, incarnation) VALUES (2, $1::pg_catalog.text) ON CONFLICT DO NOTHING"
                ),
                &[&random_id()],
            )
            .await
            .map_err(pg_err)?;
        self.client
            .execute(
                &format!(
                    "INSERT INTO {leases} (machine_id)
                         SELECT pg_catalog.generate_series($1::pg_catalog.int4, $2::pg_catalog.int4)
                         ON CONFLICT DO NOTHING"
                ),
                &[&(*ids.start() as i32), &(*ids.end() as i32)],
            )
            .await
            .map_err(pg_err)?;
        self.take(ask, &ids, cap, grant_id).await
    }

    /// The lowest free id of the range, in one statement; None when none is
    /// free (or the namespace's row is missing).
    async fn take(
        &mut self,
        ask: &Ask<'_>,
        ids: &RangeInclusive<u16>,
        cap: u64,
        grant_id: &str,
    ) -> Result<Option<Grant>, StoreError> {
        let (leases, meta) = (&self.leases, &self.meta);
        let row = self
            .client
            .query_opt(
                &format!(
                    "WITH free AS (
                         SELECT machine_id, floor_unix_ms FROM {leases}
                          WHERE machine_id OPERATOR(pg_catalog.>=) $1::pg_catalog.int2
                            AND machine_id OPERATOR(pg_catalog.<=) $2::pg_catalog.int2
                            AND (holder IS NULL OR expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp())
                          ORDER BY machine_id LIMIT 1
                          FOR UPDATE SKIP LOCKED),
                     tok AS (
                         UPDATE {meta}
                            SET last_token = greatest(last_token OPERATOR(pg_catalog.+) 1, {NOW_MS} OPERATOR(pg_catalog.*) 1000)
                          WHERE protocol OPERATOR(pg_catalog.=) 2 AND EXISTS (SELECT FROM free)
                          RETURNING last_token, incarnation)
                     UPDATE {leases} l
                        SET grant_id = $6::pg_catalog.text, holder = $3::pg_catalog.text, token = tok.last_token,
                            expires_at = pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) ($4::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval),
                            floor_unix_ms = greatest(coalesce(l.floor_unix_ms, 0), $5::pg_catalog.int8)
                       FROM free, tok WHERE l.machine_id OPERATOR(pg_catalog.=) free.machine_id
                     RETURNING l.machine_id, l.token, free.floor_unix_ms, tok.incarnation"
                ),
                &[
                    &(*ids.start() as i16),
                    &(*ids.end() as i16),
                    &ask.holder,
                    &(ms(ask.ttl) as f64),
                    &(cap as i64),
                    &grant_id,
                ],
            )
            .await
            .map_err(pg_err)?;
        let Some(r) = row else { return Ok(None) };
        let floor: Option<i64> = r.get(2);
        Ok(Some(Grant {
            machine_id: r.get::<_, i16>(0) as u16,
            token: r.get::<_, i64>(1) as u64,
            floor_unix_ms: floor.unwrap_or(0).max(0) as u64,
            history: floor.is_some(),
            grant_id: grant_id.to_owned(),
            incarnation: r.get(3),
            etcd_lease: 0,
        }))
    }

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        // Ours while the grant is ours and the store is the one it was made
        // in: also after expiry, if nobody took the id since.
        let (leases, meta) = (&self.leases, &self.meta);
        let sql = format!(
            "WITH m AS (SELECT incarnation FROM {meta}),
                  u AS (UPDATE {leases}
                           SET expires_at = pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) ($3::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval),
                               floor_unix_ms = greatest(coalesce(floor_unix_ms, 0), $4::pg_catalog.int8)
                         WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int2
                           AND grant_id OPERATOR(pg_catalog.=) $2::pg_catalog.text
                           AND (SELECT incarnation FROM m) OPERATOR(pg_catalog.=) $5::pg_catalog.text
                         RETURNING 1)
             SELECT (SELECT pg_catalog.count(*) FROM u), (SELECT incarnation FROM m),
                    (SELECT coalesce(grant_id, '') FROM {leases} WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int2),
                    (SELECT token FROM {leases} WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int2),
                    (SELECT last_token FROM {meta})"
        );
        let row = self
            .client
            .query_one(
                &sql,
                &[
                    &(grant.machine_id as i16),
                    &grant.grant_id,
                    &(ms(ask.ttl) as f64),
                    &(cap as i64),
                    &grant.incarnation,
                ],
            )
            .await;
        let row = match row {
            Ok(row) => row,
            // The schema or the tables are gone: so is the grant.
            Err(e) if matches!(db_code(&e), Some("42P01" | "3F000")) => {
                return Ok(Renewal::Lost(LostReason::StoreLostData));
            }
            Err(e) => return Err(pg_err(e)),
        };
        let (n, incarnation, now): (i64, Option<String>, Option<String>) =
            (row.get(0), row.get(1), row.get(2));
        let (token, last): (Option<i64>, Option<i64>) = (row.get(3), row.get(4));
        let older = |t: Option<i64>| t.is_some_and(|t| (t as u64) < grant.token);
        Ok(if n == 1 {
            Renewal::Held
        } else if incarnation.as_deref() != Some(&grant.incarnation) {
            Renewal::Lost(LostReason::StoreLostData)
        } else if older(last) || older(token) {
            Renewal::Lost(LostReason::StoreWentBack)
        } else if now.is_none() {
            Renewal::Lost(LostReason::StoreLostData)
        } else if now.as_deref() == Some("") {
            Renewal::Lost(LostReason::Evicted)
        } else {
            Renewal::Lost(LostReason::Taken)
        })
    }

    pub(crate) async fn release(
        &mut self,
        _ask: &Ask<'_>,
        grant: &Grant,
        floor: u64,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE {} SET grant_id = NULL, holder = NULL, expires_at = NULL, floor_unix_ms = $3::pg_catalog.int8
              WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int2
                AND grant_id OPERATOR(pg_catalog.=) $2::pg_catalog.text
                AND (SELECT incarnation FROM {}) OPERATOR(pg_catalog.=) $4::pg_catalog.text",
            self.leases, self.meta
        );
        let n = self
            .client
            .execute(
                &sql,
                &[
                    &(grant.machine_id as i16),
                    &grant.grant_id,
                    &(floor as i64),
                    &grant.incarnation,
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
    ) -> Result<(StoreInfo, Vec<Record>), StoreError> {
        let info = self
            .client
            .query_opt(
                &format!(
                    "SELECT protocol::pg_catalog.text, incarnation FROM {}",
                    self.meta
                ),
                &[],
            )
            .await
            .map_err(pg_err)?
            .map(|r| StoreInfo {
                protocol: r.get(0),
                incarnation: r.get(1),
            })
            .unwrap_or_default();
        let sql = format!(
            "SELECT machine_id, coalesce(holder, ''), token,
                    (pg_catalog.date_part('epoch', expires_at OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::pg_catalog.float8,
                    coalesce(floor_unix_ms, 0)
               FROM {} WHERE machine_id OPERATOR(pg_catalog.>=) $1::pg_catalog.int2
                AND machine_id OPERATOR(pg_catalog.<=) $2::pg_catalog.int2
                AND (holder IS NOT NULL OR floor_unix_ms IS NOT NULL)
              ORDER BY machine_id",
            self.leases
        );
        let rows = self
            .client
            .query(&sql, &[&(*ids.start() as i16), &(*ids.end() as i16)])
            .await
            .map_err(pg_err)?;
        let records = rows
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
            .collect();
        Ok((info, records))
    }

    pub(crate) async fn evict(
        &mut self,
        _namespace: &str,
        machine_id: u16,
        holder: Option<&str>,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE {} SET grant_id = NULL, holder = NULL, expires_at = NULL
              WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int2 AND holder IS NOT NULL
                AND ($2::pg_catalog.text IS NULL OR holder OPERATOR(pg_catalog.=) $2::pg_catalog.text)",
            self.leases
        );
        let n = self
            .client
            .execute(&sql, &[&(machine_id as i16), &holder])
            .await
            .map_err(pg_err)?;
        Ok(n == 1)
    }
}

/// A schema of the leases' name that another role owns.
fn foreign_schema(schema: &str, owner: &str) -> StoreError {
    StoreError::refused(format!(
        "schema {schema} is owned by role {owner}, not by the store role: its owner could change the lease tables under every member. Drop or rename it, or choose another schema for the leases"
    ))
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
