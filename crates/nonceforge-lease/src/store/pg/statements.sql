-- nonceforge lease protocol 2, PostgreSQL: every statement the Rust crate
-- (store/pg.rs, include_str!) and the Go module (go/lease/postgres.go, which
-- holds this file byte for byte; TestPostgresStatementsAreTheRustCrates checks)
-- send. Each starts at a line "-- name: NAME" and runs to the next. The client
-- writes in {leases} and {meta} ("schema"."ns_leases", "schema"."ns_meta"),
-- {schema}, {ns} (the namespace) and {max_id} (the highest machine id of
-- either layout); everything else is a parameter. Every object is named with its schema, every operator and type
-- with pg_catalog: a role that can create objects finds nothing to shadow.

-- name: session
SET search_path = pg_catalog, pg_temp; SET synchronous_commit = on

-- name: verify
SELECT pg_catalog.pg_is_in_recovery(), pg_catalog.current_setting('synchronous_standby_names')

-- name: v1_tables
SELECT n.nspname::pg_catalog.text, c.relowner OPERATOR(pg_catalog.=) r.oid
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
  JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) CURRENT_USER
 WHERE c.relname OPERATOR(pg_catalog.=) $1::pg_catalog.text
   AND n.nspname OPERATOR(pg_catalog.<>) $2::pg_catalog.text

-- name: schema_owner
SELECT pg_catalog.pg_get_userbyid(n.nspowner)::pg_catalog.text,
       n.nspowner OPERATOR(pg_catalog.=) r.oid
  FROM pg_catalog.pg_namespace n
  JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) CURRENT_USER
 WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.text

-- name: create_schema
CREATE SCHEMA IF NOT EXISTS "{schema}"

-- name: create_lock
SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext($1::pg_catalog.text))

-- name: create_tables
CREATE TABLE IF NOT EXISTS {leases} (
    machine_id    pg_catalog.int4 PRIMARY KEY CHECK (machine_id OPERATOR(pg_catalog.>=) 0 AND machine_id OPERATOR(pg_catalog.<=) {max_id}),
    grant_id      pg_catalog.text,
    holder        pg_catalog.text,
    token         pg_catalog.int8 NOT NULL DEFAULT 0,
    expires_at    pg_catalog.timestamptz,
    floor_unix_ms pg_catalog.int8
);
COMMENT ON TABLE {leases} IS 'nonceforge machine-id leases (protocol 2): one row per id ever leased; grant_id/holder/expires_at while leased; floor_unix_ms is the highest timestamp its holders may have issued, NULL when the id has no history';
CREATE TABLE IF NOT EXISTS {meta} (
    one         pg_catalog.bool PRIMARY KEY DEFAULT true CHECK (one),
    protocol    pg_catalog.int4 NOT NULL,
    incarnation pg_catalog.text NOT NULL,
    created_at  pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    last_token  pg_catalog.int8 NOT NULL DEFAULT 0,
    layout      pg_catalog.text NOT NULL DEFAULT 'standard'
);
COMMENT ON TABLE {meta} IS 'nonceforge lease namespace (protocol 2): the incarnation changes when the store loses its data; tokens are drawn from last_token; layout is the members'' (standard or wide)'

-- name: shape
SELECT EXISTS (SELECT FROM pg_catalog.pg_attribute
                WHERE attrelid OPERATOR(pg_catalog.=) '{meta}'::pg_catalog.regclass
                  AND attname OPERATOR(pg_catalog.=) 'layout' AND NOT attisdropped),
       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_index i
          JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.indexrelid
         WHERE i.indrelid OPERATOR(pg_catalog.=) '{leases}'::pg_catalog.regclass
           AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY['{ns}_leases_free', '{ns}_leases_expiry'])) OPERATOR(pg_catalog.=) 2

-- name: add_layout
ALTER TABLE {meta} ADD COLUMN IF NOT EXISTS layout pg_catalog.text NOT NULL DEFAULT 'standard'

-- name: create_indexes
CREATE INDEX IF NOT EXISTS "{ns}_leases_free" ON {leases} (machine_id) WHERE holder IS NULL;
CREATE INDEX IF NOT EXISTS "{ns}_leases_expiry" ON {leases} (expires_at)

-- name: check_owned
SELECT c.relname::pg_catalog.text, c.relkind::pg_catalog.text,
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
   AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY[$2::pg_catalog.text, $3::pg_catalog.text])

-- name: put_back_meta
INSERT INTO {meta} (protocol, incarnation, layout) VALUES (2, $1::pg_catalog.text, $2::pg_catalog.text) ON CONFLICT DO NOTHING

-- name: lock_meta
SELECT layout, incarnation FROM {meta} WHERE protocol OPERATOR(pg_catalog.=) 2 FOR UPDATE

-- name: take
WITH expired AS (
    SELECT machine_id, floor_unix_ms FROM {leases}
     WHERE expires_at OPERATOR(pg_catalog.<=) pg_catalog.clock_timestamp()
       AND machine_id OPERATOR(pg_catalog.>=) $1::pg_catalog.int4
       AND machine_id OPERATOR(pg_catalog.<=) $2::pg_catalog.int4
     ORDER BY expires_at LIMIT 1
     FOR UPDATE SKIP LOCKED),
released AS (
    SELECT machine_id, floor_unix_ms FROM {leases}
     WHERE NOT EXISTS (SELECT FROM expired)
       AND holder IS NULL
       AND machine_id OPERATOR(pg_catalog.>=) $1::pg_catalog.int4
       AND machine_id OPERATOR(pg_catalog.<=) $2::pg_catalog.int4
     ORDER BY machine_id LIMIT 1
     FOR UPDATE SKIP LOCKED),
free AS (SELECT * FROM expired UNION ALL SELECT * FROM released),
tok AS (
    UPDATE {meta}
       SET last_token = greatest(last_token OPERATOR(pg_catalog.+) 1,
           (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::pg_catalog.int8 OPERATOR(pg_catalog.*) 1000)
     WHERE protocol OPERATOR(pg_catalog.=) 2 AND layout OPERATOR(pg_catalog.=) $7::pg_catalog.text
       AND EXISTS (SELECT FROM free)
     RETURNING last_token, incarnation)
UPDATE {leases} l
   SET grant_id = $6::pg_catalog.text, holder = $3::pg_catalog.text, token = tok.last_token,
       expires_at = pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) ($4::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval),
       floor_unix_ms = greatest(coalesce(l.floor_unix_ms, 0), $5::pg_catalog.int8)
  FROM free, tok WHERE l.machine_id OPERATOR(pg_catalog.=) free.machine_id
RETURNING l.machine_id::pg_catalog.int4, l.token, free.floor_unix_ms, tok.incarnation

-- name: take_new
WITH top AS (
    SELECT pg_catalog.max(machine_id)::pg_catalog.int4 AS id FROM {leases}
     WHERE machine_id OPERATOR(pg_catalog.>=) $1::pg_catalog.int4
       AND machine_id OPERATOR(pg_catalog.<=) $2::pg_catalog.int4),
next AS (
    SELECT CASE WHEN top.id IS NULL THEN $1::pg_catalog.int4
                WHEN top.id OPERATOR(pg_catalog.<) $2::pg_catalog.int4 THEN top.id OPERATOR(pg_catalog.+) 1
                ELSE (SELECT pg_catalog.min(g) FROM pg_catalog.generate_series($1::pg_catalog.int4, $2::pg_catalog.int4) g
                       WHERE NOT EXISTS (SELECT FROM {leases} WHERE machine_id OPERATOR(pg_catalog.=) g))
           END AS id FROM top),
tok AS (
    UPDATE {meta}
       SET last_token = greatest(last_token OPERATOR(pg_catalog.+) 1,
           (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::pg_catalog.int8 OPERATOR(pg_catalog.*) 1000)
     WHERE protocol OPERATOR(pg_catalog.=) 2 AND layout OPERATOR(pg_catalog.=) $7::pg_catalog.text
       AND (SELECT id FROM next) IS NOT NULL
     RETURNING last_token, incarnation)
INSERT INTO {leases} AS l (machine_id, grant_id, holder, token, expires_at, floor_unix_ms)
SELECT next.id, $6::pg_catalog.text, $3::pg_catalog.text, tok.last_token,
       pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) ($4::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval),
       $5::pg_catalog.int8
  FROM next, tok
ON CONFLICT DO NOTHING
RETURNING l.machine_id::pg_catalog.int4, l.token, NULL::pg_catalog.int8, (SELECT incarnation FROM tok)

-- name: renew
WITH m AS (SELECT incarnation FROM {meta}),
     u AS (UPDATE {leases}
              SET expires_at = pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) ($3::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval),
                  floor_unix_ms = greatest(coalesce(floor_unix_ms, 0), $4::pg_catalog.int8)
            WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int4
              AND grant_id OPERATOR(pg_catalog.=) $2::pg_catalog.text
              AND (SELECT incarnation FROM m) OPERATOR(pg_catalog.=) $5::pg_catalog.text
            RETURNING 1)
SELECT (SELECT pg_catalog.count(*) FROM u), (SELECT incarnation FROM m),
       (SELECT coalesce(grant_id, '') FROM {leases} WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int4),
       (SELECT token FROM {leases} WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int4),
       (SELECT last_token FROM {meta})

-- name: release
UPDATE {leases} SET grant_id = NULL, holder = NULL, expires_at = NULL, floor_unix_ms = $3::pg_catalog.int8
 WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int4
   AND grant_id OPERATOR(pg_catalog.=) $2::pg_catalog.text
   AND (SELECT incarnation FROM {meta}) OPERATOR(pg_catalog.=) $4::pg_catalog.text

-- name: status_meta
SELECT protocol::pg_catalog.text, incarnation, layout FROM {meta}

-- name: status
SELECT machine_id::pg_catalog.int4, coalesce(holder, ''), token,
       (pg_catalog.date_part('epoch', expires_at OPERATOR(pg_catalog.-) pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::pg_catalog.float8,
       coalesce(floor_unix_ms, 0)
  FROM {leases} WHERE machine_id OPERATOR(pg_catalog.>=) $1::pg_catalog.int4
   AND machine_id OPERATOR(pg_catalog.<=) $2::pg_catalog.int4
   AND (holder IS NOT NULL OR floor_unix_ms IS NOT NULL)
 ORDER BY machine_id

-- name: evict
UPDATE {leases} SET grant_id = NULL, holder = NULL, expires_at = NULL
 WHERE machine_id OPERATOR(pg_catalog.=) $1::pg_catalog.int4 AND holder IS NOT NULL
   AND ($2::pg_catalog.text IS NULL OR holder OPERATOR(pg_catalog.=) $2::pg_catalog.text)
