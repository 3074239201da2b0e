//! PostgreSQL, lease protocol 2: two tables per namespace in a schema of the
//! store role's own (default `nonceforge_lease`): `{ns}_leases`, one row per
//! machine id ever leased, and `{ns}_meta`, one row (protocol, incarnation,
//! last token, layout). Acquiring takes the longest-expired id, else the
//! lowest released one (one statement on two indexes, `FOR UPDATE SKIP
//! LOCKED`, so acquirers running at once take different rows), else the
//! lowest id never leased (under the namespace's row lock); the database's
//! clock decides expiry.
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
use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::LazyLock;
use std::time::Duration;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls};

pub(crate) struct PgStore {
    client: Client,
    /// The namespace.
    ns: String,
    /// `"schema"."{ns}_leases"`, `"schema"."{ns}_meta"`.
    leases: String,
    meta: String,
    /// Whether an acknowledged write survives a failover, as far as this
    /// session can tell (`FastStart::Verify`), or why not.
    durable: Result<(), String>,
}

/// Every statement sent, by name (pg/statements.sql, which Go's module holds
/// byte for byte).
pub(crate) const STATEMENTS_SQL: &str = include_str!("pg/statements.sql");

static STATEMENTS: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    STATEMENTS_SQL
        .split("\n-- name: ")
        .skip(1)
        .filter_map(|s| s.split_once('\n'))
        .map(|(name, body)| (name.trim(), body.trim()))
        .collect()
});

/// The statement `name` of pg/statements.sql, its placeholders as they are
/// (every name below is one the file has: `statements_are_all_there`).
fn sql(name: &str) -> &'static str {
    STATEMENTS.get(name).copied().unwrap_or_default()
}

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
        client.batch_execute(sql("session")).await.map_err(pg_err)?;
        let durable = if verify {
            let row = client.query_one(sql("verify"), &[]).await.map_err(pg_err)?;
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
            ns: namespace.to_owned(),
            leases: format!("\"{schema}\".\"{namespace}_leases\""),
            meta: format!("\"{schema}\".\"{namespace}_meta\""),
            durable,
        };
        store.ensure(namespace, schema).await?;
        Ok(store)
    }

    /// `statement` with the namespace's tables and name and the highest
    /// machine id of either layout written in.
    fn fill(&self, statement: &str) -> String {
        statement
            .replace("{leases}", &self.leases)
            .replace("{meta}", &self.meta)
            .replace("{ns}", &self.ns)
            .replace("{max_id}", &nonceforge::MachineId::MAX_WIDE.to_string())
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
        // Missing tables are created; tables of an earlier version (no
        // layout column, no indexes) are brought up to date, both under the
        // creation lock, only after the checks found them the role's own.
        let owned = self.check_owned(schema, &leases, &meta).await?;
        if !owned || self.shape().await? != (true, true) {
            self.create(ns, schema).await?;
            if !self.check_owned(schema, &leases, &meta).await? {
                return Err(StoreError::refused(format!(
                    "the lease tables {schema}.{leases} and {schema}.{meta} are missing"
                )));
            }
        }
        Ok(())
    }

    /// Whether the tables have this version's layout column, and indexes.
    async fn shape(&mut self) -> Result<(bool, bool), StoreError> {
        let row = self
            .client
            .query_one(&self.fill(sql("shape")), &[])
            .await
            .map_err(pg_err)?;
        Ok((row.get(0), row.get(1)))
    }

    /// A protocol-1 table of this namespace, owned by the store role, means
    /// protocol-1 members may still lease ids here: refuse (the two protocols
    /// cannot see each other's grants). One owned by another role is not ours
    /// to read (it could run that role's code): a warning only.
    async fn check_v1(&mut self, ns: &str, schema: &str) -> Result<(), StoreError> {
        let rows = self
            .client
            .query(sql("v1_tables"), &[&format!("{ns}_leases"), &schema])
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
                .batch_execute(&sql("create_schema").replace("{schema}", schema))
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
        let create = self.fill(sql("create_tables"));
        let tx = self.client.transaction().await.map_err(pg_err)?;
        // Several processes may start on an empty database at once: one
        // creates, under a lock keyed by the tables' names.
        tx.execute(
            sql("create_lock"),
            &[&format!("nonceforge lease {schema}.{ns}")],
        )
        .await
        .map_err(pg_err)?;
        tx.batch_execute(&create).await.map_err(pg_err)?;
        tx.commit().await.map_err(pg_err)?;
        // Tables of an earlier version: the column, then the indexes, each
        // in a transaction of its own that locks one table (a live fleet's
        // statements lock the two in either order), and only where still
        // missing once the lock is held (the members starting at once
        // leave it to the first).
        let lock_key = format!("nonceforge lease {schema}.{ns}");
        for (missing, step) in [(0, "add_layout"), (1, "create_indexes")] {
            let (shape, ddl) = (self.fill(sql("shape")), self.fill(sql(step)));
            let tx = self.client.transaction().await.map_err(pg_err)?;
            tx.execute(sql("create_lock"), &[&lock_key])
                .await
                .map_err(pg_err)?;
            let row = tx.query_one(&shape, &[]).await.map_err(pg_err)?;
            if !row.get::<_, bool>(missing) {
                tx.batch_execute(&ddl).await.map_err(pg_err)?;
            }
            tx.commit().await.map_err(pg_err)?;
        }
        Ok(())
    }

    async fn schema_owner(&mut self, schema: &str) -> Result<Option<(String, bool)>, StoreError> {
        let row = self
            .client
            .query_opt(sql("schema_owner"), &[&schema])
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
            .query(sql("check_owned"), &[&schema, &leases, &meta])
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
        // An id released or expired: one statement, O(log n) on the
        // table's two indexes (docs/lease-protocol.md, "PostgreSQL").
        let layout = ask.layout.name();
        let (first, last) = (i32::from(*ids.start()), i32::from(*ids.end()));
        let (ttl_ms, cap) = (ms(ask.ttl) as f64, cap as i64);
        let p: [&(dyn ToSql + Sync); 7] = [
            &first,
            &last,
            &ask.holder,
            &ttl_ms,
            &cap,
            &grant_id,
            &layout,
        ];
        let take = self.fill(sql("take"));
        if let Some(r) = self.client.query_opt(&take, &p).await.map_err(pg_err)? {
            return Ok(Some(grant(&r, grant_id)));
        }
        // None: an id never leased in the range, with the namespace's row
        // locked so that concurrent members take different ones (the row is
        // put back first when missing: lost to a TRUNCATE, a DELETE, a
        // restore; the incarnation new).
        let (lock, put_back, take_new) = (
            self.fill(sql("lock_meta")),
            self.fill(sql("put_back_meta")),
            self.fill(sql("take_new")),
        );
        let meta = self.meta.clone();
        let tx = self.client.transaction().await.map_err(pg_err)?;
        let mut row = tx.query_opt(&lock, &[]).await.map_err(pg_err)?;
        if row.is_none() {
            tx.execute(&put_back, &[&random_id(), &layout])
                .await
                .map_err(pg_err)?;
            row = tx.query_opt(&lock, &[]).await.map_err(pg_err)?;
        }
        let Some(row) = row else {
            return Err(StoreError::refused(format!("{meta} has no protocol 2 row")));
        };
        let recorded: String = row.get(0);
        if recorded != layout {
            return Err(super::layout_refusal(&self.ns, &recorded, ask.layout));
        }
        // With the row locked (and put back): a released or expired id
        // first — one may have been behind a namespace row that was missing
        // — then one never leased.
        let mut got = tx.query_opt(&take, &p).await.map_err(pg_err)?;
        if got.is_none() {
            got = tx.query_opt(&take_new, &p).await.map_err(pg_err)?;
        }
        tx.commit().await.map_err(pg_err)?;
        Ok(got.map(|r| grant(&r, grant_id)))
    }

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        // Ours while the grant is ours and the store is the one it was made
        // in: also after expiry, if nobody took the id since.
        let statement = self.fill(sql("renew"));
        let row = self
            .client
            .query_one(
                &statement,
                &[
                    &i32::from(grant.machine_id),
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
        let statement = self.fill(sql("release"));
        let n = self
            .client
            .execute(
                &statement,
                &[
                    &i32::from(grant.machine_id),
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
            .query_opt(&self.fill(sql("status_meta")), &[])
            .await
            .map_err(pg_err)?
            .map(|r| StoreInfo {
                protocol: r.get(0),
                incarnation: r.get(1),
                layout: r.get(2),
            })
            .unwrap_or_default();
        let statement = self.fill(sql("status"));
        let rows = self
            .client
            .query(
                &statement,
                &[&i32::from(*ids.start()), &i32::from(*ids.end())],
            )
            .await
            .map_err(pg_err)?;
        let records = rows
            .iter()
            .map(|r| {
                let left: Option<f64> = r.get(3);
                Record {
                    machine_id: r.get::<_, i32>(0) as u16,
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
        let statement = self.fill(sql("evict"));
        let n = self
            .client
            .execute(&statement, &[&i32::from(machine_id), &holder])
            .await
            .map_err(pg_err)?;
        Ok(n == 1)
    }
}

/// A grant from `take`'s or `take_new`'s row: id, token, floor before it
/// (NULL: no history), incarnation.
fn grant(r: &tokio_postgres::Row, grant_id: &str) -> Grant {
    let floor: Option<i64> = r.get(2);
    Grant {
        machine_id: r.get::<_, i32>(0) as u16,
        token: r.get::<_, i64>(1) as u64,
        floor_unix_ms: floor.unwrap_or(0).max(0) as u64,
        history: floor.is_some(),
        grant_id: grant_id.to_owned(),
        incarnation: r.get(3),
        etcd_lease: 0,
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

#[cfg(test)]
mod tests {
    use super::{STATEMENTS, sql};

    /// Every statement the store sends is in pg/statements.sql, none empty,
    /// and none names a table but through {leases} and {meta}.
    #[test]
    fn statements_are_all_there() {
        let used = [
            "session",
            "verify",
            "v1_tables",
            "schema_owner",
            "create_schema",
            "create_lock",
            "create_tables",
            "check_owned",
            "shape",
            "add_layout",
            "create_indexes",
            "put_back_meta",
            "lock_meta",
            "take",
            "take_new",
            "renew",
            "release",
            "status_meta",
            "status",
            "evict",
        ];
        for name in used {
            assert!(!sql(name).is_empty(), "{name} is not in pg/statements.sql");
            assert!(!sql(name).contains("-- name:"), "{name}");
        }
        assert_eq!(STATEMENTS.len(), used.len(), "a statement nothing sends");
        assert!(sql("take").contains("UPDATE {leases} l") && sql("take").contains("UPDATE {meta}"));
        assert!(sql("create_tables").contains("{max_id}"));
    }
}
