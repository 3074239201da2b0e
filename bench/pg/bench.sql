-- nonceforge in PostgreSQL, side by side with the built-ins, in one session.
-- Rates are rows (or ids) per second; each figure is the median of 3 runs.
\set ON_ERROR_STOP 1
CREATE EXTENSION nonceforge;
CREATE SEQUENCE s;
-- An application role: EXECUTE on functions (the default) and the sequence.
CREATE ROLE app LOGIN;
GRANT USAGE ON SEQUENCE s TO app;

-- A plpgsql tuid6 (48-bit ms + 80 random bits), written here as the
-- plpgsql reference point: one gen_random_bytes-free draw per id.
CREATE FUNCTION tuid6_plpgsql() RETURNS uuid LANGUAGE plpgsql VOLATILE AS $f$
DECLARE
    ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
    r bytea := substring(uuid_send(gen_random_uuid()) FROM 7 FOR 10);
BEGIN
    RETURN encode(substring(int8send(ms) FROM 3 FOR 6) || r, 'hex')::uuid;
END
$f$;

CREATE FUNCTION pg_temp.rate(query text, n bigint) RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz; r float8[] := '{}';
BEGIN
    FOR i IN 1..3 LOOP
        t0 := clock_timestamp();
        EXECUTE query;
        r := r || (n / extract(epoch FROM clock_timestamp() - t0))::float8;
    END LOOP;
    RETURN (SELECT x FROM unnest(r) x ORDER BY x OFFSET 1 LIMIT 1);
END
$f$;

\echo '== generation: SELECT count(f()) FROM generate_series(1, 1e6)'
\ir generation.sql

\echo '== generation, as the application role app (SET ROLE app)'
SET ROLE app;
\ir generation.sql
RESET ROLE;

\echo '== insert 1e6 rows, the id as column default (primary key)'
CREATE TABLE ins_bigserial (id bigserial PRIMARY KEY, n int);
CREATE TABLE ins_gen_random_uuid (id uuid DEFAULT gen_random_uuid() PRIMARY KEY, n int);
CREATE TABLE ins_tuid6_plpgsql (id uuid DEFAULT tuid6_plpgsql() PRIMARY KEY, n int);
CREATE TABLE ins_tuid6 (id uuid DEFAULT tuid6() PRIMARY KEY, n int);
CREATE TABLE ins_uuidv7 (id uuid DEFAULT uuidv7() PRIMARY KEY, n int);
WITH r AS MATERIALIZED (
    SELECT t, pg_temp.rate(format('TRUNCATE %1$s; INSERT INTO %1$s (n) SELECT g FROM generate_series(1, 1000000) g', t), 1000000) AS per_sec
    FROM unnest(ARRAY['ins_bigserial', 'ins_gen_random_uuid', 'ins_tuid6_plpgsql', 'ins_tuid6', 'ins_uuidv7']) t
)
SELECT t AS table_default, round(per_sec) AS rows_per_sec,
       round((per_sec / (SELECT per_sec FROM r WHERE t = 'ins_bigserial'))::numeric, 2) AS x_bigserial,
       round((per_sec / (SELECT per_sec FROM r WHERE t = 'ins_gen_random_uuid'))::numeric, 2) AS x_gen_random_uuid
FROM r;

\echo '== insert 1e7 rows (one run each), and the primary key index size after'
CREATE FUNCTION pg_temp.once(query text, n bigint) RETURNS float8 LANGUAGE plpgsql AS $f$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN EXECUTE query; RETURN n / extract(epoch FROM clock_timestamp() - t0); END
$f$;
WITH r AS MATERIALIZED (
    SELECT t, pg_temp.once(format('TRUNCATE %1$s; INSERT INTO %1$s (n) SELECT g FROM generate_series(1, 10000000) g', t), 10000000) AS per_sec
    FROM unnest(ARRAY['ins_bigserial', 'ins_gen_random_uuid', 'ins_uuidv7', 'ins_tuid6']) t
)
SELECT t AS table_default, round(per_sec) AS rows_per_sec,
       round((per_sec / (SELECT per_sec FROM r WHERE t = 'ins_gen_random_uuid'))::numeric, 2) AS x_gen_random_uuid,
       pg_size_pretty(pg_relation_size(t || '_pkey')) AS pkey_size
FROM r;
