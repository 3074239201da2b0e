package lease

// PostgreSQL, lease protocol 2: two tables per namespace in a schema of the
// store role's own, every name qualified, the session under
// search_path = pg_catalog, pg_temp, and nothing trusted that another role
// owns, triggers, rules or may write. The statements are the Rust crate's
// (crates/nonceforge-lease/src/store/pg/statements.sql, held below byte for
// byte; TestPostgresStatementsAreTheRustCrates checks).

import (
	"github.com/nonceforge/nonceforge/go/nonce"

	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const pgStatementsSQL = `-- nonceforge lease protocol 2, PostgreSQL: every statement the Rust crate
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
`

// pgStatements are pgStatementsSQL's statements by name.
var pgStatements = func() map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split(pgStatementsSQL, "\n-- name: ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		m[strings.TrimSpace(name)] = strings.TrimSpace(body)
	}
	return m
}()

// stmt is the statement name with the namespace's tables and name and the
// highest machine id of either layout written in.
func (p *pgStore) stmt(name string) string {
	return strings.NewReplacer("{leases}", p.leases, "{meta}", p.meta, "{ns}", p.ns, "{max_id}", strconv.Itoa(nonce.Wide.MaxMachineID())).Replace(pgStatements[name])
}

func connectPostgres(ctx context.Context, raw, shown string, s *settled) (store, string, error) {
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, shown, badURL(shown, Redact(err.Error()))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, shown, unreachable(shown, err)
	}
	st := &pgStore{
		conn:   conn,
		ns:     s.ns,
		leases: fmt.Sprintf(`"%s"."%s_leases"`, s.schema, s.ns),
		meta:   fmt.Sprintf(`"%s"."%s_meta"`, s.schema, s.ns),
	}
	if err := st.ensure(ctx, s); err != nil {
		conn.Close(context.Background())
		return nil, shown, wrap(ctx, shown, err)
	}
	st.sync = errors.New("FastStart is not verify")
	if s.fast == FastVerify {
		var recovery bool
		var standbys string
		err := conn.QueryRow(ctx, pgStatements["verify"]).Scan(&recovery, &standbys)
		switch {
		case err != nil:
			conn.Close(context.Background())
			return nil, shown, wrap(ctx, shown, err)
		case recovery:
			st.sync = errors.New("the server is a standby")
		case strings.TrimSpace(standbys) == "":
			st.sync = errors.New("synchronous_standby_names is empty: commits wait for no standby, and a failover to an asynchronous one can lose them")
		default:
			st.sync = nil
		}
	}
	return st, shown, nil
}

type pgStore struct {
	conn             *pgx.Conn
	ns, leases, meta string
	sync             error // nil: commits wait for synchronous standbys (FastVerify)
}

func (p *pgStore) durable() error { return p.sync }

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func (p *pgStore) ensure(ctx context.Context, s *settled) error {
	// Every lease write acknowledged is on disk, and on the synchronous
	// standbys where the server names some, whatever the role's default.
	if _, err := p.conn.Exec(ctx, pgStatements["session"]); err != nil {
		return err
	}
	leases, meta := s.ns+"_leases", s.ns+"_meta"
	rows, err := p.conn.Query(ctx, pgStatements["v1_tables"], leases, s.schema)
	if err != nil {
		return err
	}
	type v1 struct {
		where string
		ours  bool
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (v1, error) {
		var x v1
		return x, r.Scan(&x.where, &x.ours)
	})
	if err != nil {
		return err
	}
	for _, t := range found {
		if t.ours {
			return refused(fmt.Sprintf("%s.%s is a lease protocol 1 table of this role: protocol-1 members may still hold ids in it, and cannot see protocol-2 grants. Stop them, then rename or drop that table (ALTER TABLE %s.%s RENAME TO %s_leases_v1); docs/lease-protocol.md, \"Moving from protocol 1\"", t.where, leases, t.where, leases, s.ns))
		}
		s.log.Warn("nonceforge lease: a lease protocol 1 table of another role is ignored", "table", t.where+"."+leases)
	}
	// Missing tables are created; tables of an earlier version (no layout
	// column, no indexes) are brought up to date, only after the checks
	// found them the role's own.
	both, err := p.checkOwned(ctx, s.schema, leases, meta)
	if err != nil {
		return err
	}
	if both {
		var hasLayout, hasIndexes bool
		if err := p.conn.QueryRow(ctx, p.stmt("shape")).Scan(&hasLayout, &hasIndexes); err != nil || hasLayout && hasIndexes {
			return err
		}
	}
	if err := p.create(ctx, s); err != nil {
		return err
	}
	if both, err := p.checkOwned(ctx, s.schema, leases, meta); err != nil || both {
		return err
	}
	return refused(fmt.Sprintf("the lease tables %s.%s and %s.%s are missing", s.schema, leases, s.schema, meta))
}

func (p *pgStore) schemaOwner(ctx context.Context, schema string) (owner string, ours, found bool, err error) {
	err = p.conn.QueryRow(ctx, pgStatements["schema_owner"], schema).Scan(&owner, &ours)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, false, nil
	}
	return owner, ours, err == nil, err
}

func (p *pgStore) checkSchema(ctx context.Context, schema string) error {
	owner, ours, found, err := p.schemaOwner(ctx, schema)
	switch {
	case err != nil:
		return err
	case !found:
		return refused(fmt.Sprintf("schema %s is missing", schema))
	case !ours:
		return foreignSchema(schema, owner)
	}
	return nil
}

// foreignSchema: a schema of the leases' name that another role owns.
func foreignSchema(schema, owner string) error {
	return refused(fmt.Sprintf("schema %s is owned by role %s, not by the store role: its owner could change the lease tables under every member. Drop or rename it, or choose another schema for the leases", schema, owner))
}

func (p *pgStore) create(ctx context.Context, s *settled) error {
	if _, _, found, err := p.schemaOwner(ctx, s.schema); err != nil {
		return err
	} else if !found {
		if _, err := p.conn.Exec(ctx, strings.ReplaceAll(pgStatements["create_schema"], "{schema}", s.schema)); err != nil {
			switch pgCode(err) {
			case "42501":
				return refused(fmt.Sprintf("schema %s does not exist and this role may not create it: have the DBA run CREATE SCHEMA %s AUTHORIZATION <the store role>, or GRANT CREATE ON DATABASE to it", s.schema, s.schema))
			case "42P06", "23505": // another member created it at the same moment
			default:
				return err
			}
		}
	}
	if err := p.checkSchema(ctx, s.schema); err != nil {
		return err
	}
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	lockKey := fmt.Sprintf("nonceforge lease %s.%s", s.schema, s.ns)
	if _, err := tx.Exec(ctx, pgStatements["create_lock"], lockKey); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, p.stmt("create_tables")); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	// Tables of an earlier version: the column, then the indexes, each in a
	// transaction of its own that locks one table (a live fleet's statements
	// lock the two in either order), and only where still missing once the
	// lock is held (the members starting at once leave it to the first).
	for i, step := range []string{"add_layout", "create_indexes"} {
		if err := p.upgrade(ctx, lockKey, i, step); err != nil {
			return err
		}
	}
	return nil
}

func (p *pgStore) upgrade(ctx context.Context, lockKey string, missing int, step string) error {
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, pgStatements["create_lock"], lockKey); err != nil {
		return err
	}
	var shape [2]bool
	if err := tx.QueryRow(ctx, p.stmt("shape")).Scan(&shape[0], &shape[1]); err != nil {
		return err
	}
	if !shape[missing] {
		if _, err := tx.Exec(ctx, p.stmt(step)); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// checkOwned reports whether the schema and both tables are there, refusing
// whatever of them is there and not the store role's own.
func (p *pgStore) checkOwned(ctx context.Context, schema, leases, meta string) (bool, error) {
	switch owner, ours, found, err := p.schemaOwner(ctx, schema); {
	case err != nil:
		return false, err
	case !found:
		return false, nil
	case !ours:
		return false, foreignSchema(schema, owner)
	}
	rows, err := p.conn.Query(ctx, pgStatements["check_owned"], schema, leases, meta)
	if err != nil {
		return false, err
	}
	type rel struct {
		name, kind, owner                string
		ours, trigger, rule, rowSecurity bool
		grants                           *string
	}
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rel, error) {
		var x rel
		return x, r.Scan(&x.name, &x.kind, &x.owner, &x.ours, &x.trigger, &x.rule, &x.rowSecurity, &x.grants)
	})
	if err != nil {
		return false, err
	}
	for _, x := range rels {
		why := ""
		switch {
		case x.kind != "r":
			why = "is not a plain table (relkind " + x.kind + ")"
		case !x.ours:
			why = "is owned by role " + x.owner + ", not by the store role"
		case x.trigger:
			why = "has a trigger"
		case x.rule:
			why = "has a rule"
		case x.rowSecurity:
			why = "has row security enabled"
		case x.grants != nil:
			why = "grants other roles a write right (" + *x.grants + ")"
		}
		if why != "" {
			return false, refused(fmt.Sprintf("%s.%s %s: the lease store trusts only the store role's own plain tables. Drop it (the next member recreates it) or choose another schema", schema, x.name, why))
		}
	}
	return len(rels) == 2, nil
}

func (p *pgStore) acquire(ctx context.Context, s *settled, capMs int64, grantID string) (*grant, error) {
	// An id released or expired: one statement, O(log n) on the table's two
	// indexes (docs/lease-protocol.md, "PostgreSQL").
	layout := s.layout.String()
	args := []any{s.first, s.last, s.holder, float64(s.ttl.Milliseconds()), capMs, grantID, layout}
	if g, err := pgGrant(p.conn.QueryRow(ctx, p.stmt("take"), args...), grantID); g != nil || err != nil {
		return g, err
	}
	// None: an id never leased in the range, with the namespace's row locked
	// so that concurrent members take different ones (the row is put back
	// first when missing: lost to a TRUNCATE, a DELETE, a restore; the
	// incarnation new).
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	var recorded, inc string
	err = tx.QueryRow(ctx, p.stmt("lock_meta")).Scan(&recorded, &inc)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := tx.Exec(ctx, p.stmt("put_back_meta"), randomID(), layout); err != nil {
			return nil, err
		}
		err = tx.QueryRow(ctx, p.stmt("lock_meta")).Scan(&recorded, &inc)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, refused(p.meta + " has no protocol 2 row")
		}
	}
	if err != nil {
		return nil, err
	}
	if recorded != layout {
		return nil, layoutRefusal(s.ns, recorded, s.layout)
	}
	// With the row locked (and put back): a released or expired id first —
	// one may have been behind a namespace row that was missing — then one
	// never leased.
	g, err := pgGrant(tx.QueryRow(ctx, p.stmt("take"), args...), grantID)
	if g == nil && err == nil {
		g, err = pgGrant(tx.QueryRow(ctx, p.stmt("take_new"), args...), grantID)
	}
	if err != nil {
		return nil, err
	}
	return g, tx.Commit(ctx)
}

// pgGrant reads take's or take_new's row (id, token, floor before it, NULL:
// no history, incarnation); nil when there is none.
func pgGrant(row pgx.Row, grantID string) (*grant, error) {
	var id int32
	var token int64
	var floor *int64
	var inc string
	err := row.Scan(&id, &token, &floor, &inc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	g := &grant{id: int(id), token: uint64(token), history: floor != nil, grantID: grantID, incarnation: inc}
	if floor != nil {
		g.floor = max(*floor, 0)
	}
	return g, nil
}

func (p *pgStore) renew(ctx context.Context, s *settled, g *grant, capMs int64) (LostReason, error) {
	q := p.stmt("renew")
	var n int64
	var inc, now *string
	var token, last *int64
	err := p.conn.QueryRow(ctx, q, g.id, g.grantID, float64(s.ttl.Milliseconds()), capMs, g.incarnation).Scan(&n, &inc, &now, &token, &last)
	older := func(t *int64) bool { return t != nil && uint64(*t) < g.token }
	switch {
	case pgCode(err) == "42P01" || pgCode(err) == "3F000": // the tables or the schema are gone: so is the grant
		return LostStoreData, nil
	case err != nil:
		return notLost, err
	case n == 1:
		return notLost, nil
	case inc == nil || *inc != g.incarnation:
		return LostStoreData, nil
	case older(last) || older(token):
		return LostStoreBack, nil
	case now == nil:
		return LostStoreData, nil
	case *now == "":
		return LostEvicted, nil
	}
	return LostTaken, nil
}

func (p *pgStore) release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	tag, err := p.conn.Exec(ctx, p.stmt("release"),
		g.id, g.grantID, floor, g.incarnation)
	return err == nil && tag.RowsAffected() == 1, err
}

func (p *pgStore) close() { p.conn.Close(context.Background()) }
