package lease

// PostgreSQL: a 512-row table per namespace, taken with FOR UPDATE SKIP LOCKED.

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

func connectPostgres(ctx context.Context, raw, shown string, s *settled) (store, string, error) {
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, shown, badURL(shown, err.Error())
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, shown, unreachable(shown, err)
	}
	st := &pgStore{conn: conn, table: s.ns + "_leases", tokens: s.ns + "_lease_tokens"}
	if err := st.ensure(ctx); err != nil {
		conn.Close(context.Background())
		return nil, shown, wrap(ctx, shown, err)
	}
	return st, shown, nil
}

// PostgreSQL: docs/lease-protocol.md, "PostgreSQL".
type pgStore struct {
	conn          *pgx.Conn
	table, tokens string
}

func (p *pgStore) ensure(ctx context.Context) error {
	var exists bool
	if err := p.conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", p.table).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, q := range []string{
		fmt.Sprintf("SELECT pg_advisory_xact_lock(hashtext('%s'))", p.table),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			machine_id    smallint PRIMARY KEY CHECK (machine_id BETWEEN 0 AND 511),
			holder        text,
			token         bigint NOT NULL DEFAULT 0,
			expires_at    timestamptz,
			floor_unix_ms bigint NOT NULL DEFAULT 0)`, p.table),
		fmt.Sprintf("COMMENT ON TABLE %s IS 'nonceforge machine-id leases: one row per id; holder/expires_at while leased; floor_unix_ms is the highest timestamp its holders may have issued'", p.table),
		fmt.Sprintf("CREATE SEQUENCE IF NOT EXISTS %s", p.tokens),
		fmt.Sprintf("INSERT INTO %s (machine_id) SELECT generate_series(0, 511) ON CONFLICT DO NOTHING", p.table),
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

func (p *pgStore) acquire(ctx context.Context, s *settled, capMs int64) (*grant, error) {
	q := fmt.Sprintf(`WITH free AS (
		SELECT machine_id, floor_unix_ms FROM %[1]s
		 WHERE machine_id BETWEEN $1::int2 AND $2::int2
		   AND (holder IS NULL OR expires_at <= clock_timestamp())
		 ORDER BY machine_id LIMIT 1
		 FOR UPDATE SKIP LOCKED)
	UPDATE %[1]s l
	   SET holder = $3::text, token = nextval('%[2]s'),
	       expires_at = clock_timestamp() + $4::float8 * interval '1 millisecond',
	       floor_unix_ms = greatest(l.floor_unix_ms, $5::int8)
	  FROM free WHERE l.machine_id = free.machine_id
	RETURNING l.machine_id, l.token, free.floor_unix_ms`, p.table, p.tokens)
	var id int16
	var token, floor int64
	err := p.conn.QueryRow(ctx, q, s.first, s.last, s.holder, float64(s.ttl.Milliseconds()), capMs).Scan(&id, &token, &floor)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &grant{id: int(id), token: uint64(token), floor: max(floor, 0)}, nil
}

func (p *pgStore) renew(ctx context.Context, s *settled, g *grant, capMs int64) (bool, error) {
	tag, err := p.conn.Exec(ctx, fmt.Sprintf(`UPDATE %s SET expires_at = clock_timestamp() + $3::float8 * interval '1 millisecond',
		floor_unix_ms = greatest(floor_unix_ms, $4::int8)
		WHERE machine_id = $1::int2 AND token = $2::int8 AND holder = $5::text`, p.table),
		g.id, int64(g.token), float64(s.ttl.Milliseconds()), capMs, s.holder)
	return err == nil && tag.RowsAffected() == 1, err
}

func (p *pgStore) release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	tag, err := p.conn.Exec(ctx, fmt.Sprintf(`UPDATE %s SET holder = NULL, expires_at = NULL, floor_unix_ms = $3::int8
		WHERE machine_id = $1::int2 AND token = $2::int8 AND holder = $4::text`, p.table),
		g.id, int64(g.token), floor, s.holder)
	return err == nil && tag.RowsAffected() == 1, err
}

func (p *pgStore) close() { p.conn.Close(context.Background()) }
