-- SQL tests for the nonceforge extension, run by run.sh with psql twice: as the
-- postgres superuser and as `app`, a role with no rights beyond the defaults
-- (EXECUTE on functions, TEMP on the database). The server is set up as an
-- administrator would: the library preloaded, nonceforge.machine_id = 7, keys
-- in files named by nonceforge.key_file / nonceforge.extid_key_file.
-- Every check raises on failure.

\ir expect_error.sql

-- pg_tuid's documented examples.
DO $$ BEGIN
    ASSERT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvbg') = '01838576-137b-af9c-a637-be6b8d32af6e';
    ASSERT tuid6_tz(tuid6_from_compact('AYOFdhN7r5ymN75rjTKvbg')) = '2022-09-28 18:57:31.515+00';
    ASSERT tuid6_to_compact('01838576-137b-af9c-a637-be6b8d32af6e') = 'AYOFdhN7r5ymN75rjTKvbg';
END $$;

-- tuid6: time first, random after; from a given time.
DO $$ DECLARE a uuid := tuid6(); BEGIN
    ASSERT tuid6_tz(a) BETWEEN now() - interval '1 minute' AND clock_timestamp();
    ASSERT tuid6_from_compact(tuid6_to_compact(a)) = a;
    ASSERT tuid6_tz(tuid6_from_tz('2001-02-03 04:05:06.789+00')) = '2001-02-03 04:05:06.789+00';
    ASSERT (SELECT count(DISTINCT tuid6()) FROM generate_series(1, 100000)) = 100000;
END $$;

-- stuid: 32 bytes, microseconds first.
DO $$ DECLARE s bytea := stuid(); BEGIN
    ASSERT length(s) = 32;
    ASSERT length(stuid_to_compact(s)) = 43;
    ASSERT stuid_from_compact(stuid_to_compact(s)) = s;
    ASSERT stuid_tz(s) BETWEEN now() - interval '1 minute' AND clock_timestamp();
END $$;

-- uuidv7 like PostgreSQL 18: monotonic within a backend, shift, extraction.
-- Ours, by schema: from 17 on, pg_catalog has uuid_extract_* (and from 18
-- uuidv7/uuidv4), which an unqualified call finds first.
DO $$ BEGIN
    ASSERT (SELECT bool_and(id > prev) FROM (
        SELECT id, lag(id) OVER (ORDER BY n) AS prev
        FROM (SELECT public.uuidv7() AS id, n FROM generate_series(1, 100000) n) g) s
        WHERE prev IS NOT NULL);
    ASSERT public.uuid_extract_version(public.uuidv7()) = 7 AND public.uuid_extract_version(public.uuidv4()) = 4;
    ASSERT public.uuid_extract_version('00000000-0000-0000-0000-000000000000') IS NULL;
    ASSERT public.uuid_extract_timestamp(public.uuidv7()) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '1 second';
    ASSERT public.uuid_extract_timestamp(public.uuidv7('-1 day')) < now() - interval '23 hours';
    ASSERT public.uuid_extract_timestamp(public.uuidv4()) IS NULL;
    ASSERT public.uuid_extract_timestamp('c232ab00-9414-11ec-b3c8-9f6bdeced846') = '2022-02-22 19:22:22+00';
END $$;
-- Unqualified, as an application calls them, per version: 14-16 ours; 17's
-- built-in uuid_extract_timestamp() reads version 1 only (a UUIDv7 gives NULL:
-- call ours by schema, or uuid_v7_to_timestamptz()); 18's reads both.
DO $$ DECLARE v int := current_setting('server_version_num')::int / 10000; BEGIN
    ASSERT uuid_extract_version(uuidv7()) = 7 AND uuid_extract_version(uuidv4()) = 4;
    ASSERT uuid_extract_timestamp('c232ab00-9414-11ec-b3c8-9f6bdeced846') = '2022-02-22 19:22:22+00';
    IF v = 17 THEN
        ASSERT uuid_extract_timestamp(uuidv7()) IS NULL, '17: the built-in reads version 1 only';
    ELSE
        ASSERT uuid_extract_timestamp(uuidv7()) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '1 second';
    END IF;
    ASSERT (to_regprocedure('uuid_extract_timestamp(uuid)')::oid = to_regprocedure('public.uuid_extract_timestamp(uuid)')::oid) = (v < 17);
    ASSERT (to_regprocedure('uuidv7()')::oid = to_regprocedure('public.uuidv7()')::oid) = (v < 18);
END $$;

-- PostgreSQL 18's names: exactly its signatures (name, argument types, result,
-- volatility, no defaults), so that after an upgrade to 18 an unqualified call
-- finds the built-in in pg_catalog first and is never ambiguous.
DO $$ DECLARE bad text; BEGIN
    WITH pg18(proname, args, result, volatility) AS (VALUES
        ('uuidv4', '', 'uuid', 'v'),
        ('uuidv7', '', 'uuid', 'v'),
        ('uuidv7', 'interval', 'uuid', 'v'),
        ('uuid_extract_timestamp', 'uuid', 'timestamp with time zone', 'i'),
        ('uuid_extract_version', 'uuid', 'smallint', 'i')),
    ours AS (
        SELECT p.proname::text, pg_get_function_identity_arguments(p.oid) AS idargs,
               coalesce(string_agg(format_type(t, NULL), ', ' ORDER BY o), '') AS args,
               format_type(p.prorettype, NULL) AS result, p.provolatile::text AS volatility, p.pronargdefaults
        FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nonceforge'
        LEFT JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, o) ON true
        WHERE p.proname IN (SELECT proname FROM pg18)
        GROUP BY p.oid)
    SELECT string_agg(format('%s(%s)', proname, args), ', ') INTO bad FROM ours
    WHERE pronargdefaults <> 0 OR (proname, args, result, volatility) NOT IN (SELECT * FROM pg18);
    ASSERT bad IS NULL, 'not PostgreSQL 18''s signature: ' || bad;
    ASSERT (SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
            JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nonceforge'
            WHERE p.proname IN ('uuidv4', 'uuidv7', 'uuid_extract_timestamp', 'uuid_extract_version')) = 5;
END $$;

-- pg_uuidv7's names: its README's examples and its tests.
\set uuidv7 '018570bb-4a7d-7000-8000-000000000000'
\set uuidtz '2023-01-02 04:26:40.637+00'
\set uuidts '2023-01-02 04:26:40.637'
DO $$ BEGIN
    ASSERT uuid_v7_to_timestamptz('018570bb-4a7d-7c7e-8df4-6d47afd8c8fc') = '2023-01-02 04:26:40.637+00';
    ASSERT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00', true) = '018570bb-4a7d-7000-8000-000000000000';
    ASSERT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00')::text LIKE '018570bb-4a7d-7%';
    ASSERT uuid_extract_version(uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00')) = 7;
    ASSERT uuid_generate_v7() > '018570bb-4a7d-7000-8000-000000000000';
    ASSERT uuid_extract_version(uuid_generate_v7()) = 7;
    ASSERT uuid_v7_to_timestamptz(uuid_generate_v7()) BETWEEN now() - interval '1 minute' AND clock_timestamp();
    -- its random bits are random, its zeros zero
    ASSERT (SELECT count(DISTINCT uuid_timestamptz_to_v7(now())) FROM generate_series(1, 1000)) = 1000;
    ASSERT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637999+00', true) = '018570bb-4a7d-7000-8000-000000000000';
END $$;
SELECT uuid_generate_v7() > :'uuidv7' AS ok \gset
\if :ok
\else
\echo 'pg_uuidv7 002 failed' \\ SELECT 1/0;
\endif
SELECT uuid_v7_to_timestamptz(:'uuidv7') = :'uuidtz' AS ok \gset
\if :ok
\else
\echo 'pg_uuidv7 003 failed' \\ SELECT 1/0;
\endif
SELECT uuid_timestamptz_to_v7(:'uuidtz') > :'uuidv7' AND uuid_timestamptz_to_v7(:'uuidtz', true) = :'uuidv7' AS ok \gset
\if :ok
\else
\echo 'pg_uuidv7 004 failed' \\ SELECT 1/0;
\endif
SELECT uuid_v7_to_timestamp(:'uuidv7') = :'uuidts' AS ok \gset
\if :ok
\else
\echo 'pg_uuidv7 005 failed' \\ SELECT 1/0;
\endif
SELECT uuid_timestamp_to_v7(:'uuidts') > :'uuidv7' AND uuid_timestamp_to_v7(:'uuidts', true) = :'uuidv7' AS ok \gset
\if :ok
\else
\echo 'pg_uuidv7 006 failed' \\ SELECT 1/0;
\endif
-- A range query's bound is computed once (STABLE), so an index serves it.
CREATE TEMP TABLE v7 (id uuid PRIMARY KEY DEFAULT uuid_generate_v7());
INSERT INTO v7 SELECT FROM generate_series(1, 2000);
ANALYZE v7;
DO $$ DECLARE plan text; BEGIN
    EXECUTE 'EXPLAIN SELECT * FROM v7 WHERE id >= uuid_timestamptz_to_v7(now() + interval ''1 hour'', true)' INTO plan;
    ASSERT plan LIKE '%Index%', plan;
    ASSERT (SELECT count(*) FROM v7 WHERE id >= uuid_timestamptz_to_v7(now() - interval '1 hour', true)) = 2000;
END $$;

-- min and max over uuid (PostgreSQL 15 has neither), NULLs skipped, parallel-safe.
DO $$ BEGIN
    ASSERT (SELECT min(u) FROM (VALUES ('ff000000-0000-0000-0000-000000000000'::uuid), (NULL), ('00ff0000-0000-0000-0000-000000000000')) v(u))
        = '00ff0000-0000-0000-0000-000000000000';
    ASSERT (SELECT max(u) FROM (VALUES ('ff000000-0000-0000-0000-000000000000'::uuid), (NULL), ('00ff0000-0000-0000-0000-000000000000')) v(u))
        = 'ff000000-0000-0000-0000-000000000000';
    ASSERT (SELECT min(u) FROM (SELECT NULL::uuid u) v) IS NULL;
END $$;

-- Volatility, strictness and parallel safety as declared.
DO $$ DECLARE bad text; BEGIN
    SELECT string_agg(format('%s:%s%s%s', proname, provolatile, proisstrict, proparallel), ', ') INTO bad
    FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nonceforge'
    WHERE (proname IN ('tuid6', 'stuid', 'uuidv4', 'uuidv7', 'uuid_generate_v7') AND (provolatile, proparallel) <> ('v', 's'))
       OR (proname IN ('tuid6_tz', 'tuid6_to_compact', 'tuid6_from_compact', 'stuid_to_compact',
                       'stuid_from_compact', 'stuid_tz', 'uuid_extract_timestamp', 'uuid_extract_version',
                       'uuid_smaller', 'uuid_larger', 'uuid_v7_to_timestamptz', 'uuid_v7_to_timestamp')
           AND (provolatile, proisstrict, proparallel) <> ('i', true, 's'))
       OR (proname IN ('extid_encode', 'extid_decode', 'extid_seq', 'extid_inspect', 'uuid_timestamptz_to_v7', 'uuid_timestamp_to_v7')
           AND (provolatile, proisstrict) <> ('s', true))
       OR (proname IN ('nonce', 'sortable_nonce', 'encrypted_nonce') AND (provolatile, proparallel) <> ('v', 'u'))
       OR prosecdef;
    ASSERT bad IS NULL, 'wrong volatility: ' || bad;
END $$;

-- Converters work in index expressions (IMMUTABLE).
CREATE TEMP TABLE t (id uuid DEFAULT uuidv7(), tid uuid DEFAULT tuid6());
CREATE INDEX ON t (tuid6_tz(tid));
CREATE INDEX ON t (uuid_extract_timestamp(id));
CREATE INDEX ON t (uuid_v7_to_timestamptz(id));
INSERT INTO t SELECT FROM generate_series(1, 1000);
DO $$ BEGIN
    ASSERT (SELECT count(*) FROM t WHERE tuid6_tz(tid) > now() - interval '1 hour') = 1000;
END $$;
-- Maintenance runs them under a restricted search path from 17 on
-- (pg_catalog, pg_temp): the expressions hold our functions by OID and our
-- functions look nothing up by name, so REINDEX and ANALYZE work.
REINDEX TABLE t;
ANALYZE t;

-- External ids, with the key from nonceforge.extid_key_file.
DO $$ BEGIN
    ASSERT (SELECT (seq, rand) = (42::bigint, 7::bigint) FROM extid_inspect('user', extid_encode('user', 42, 7)));
    ASSERT (SELECT seq = 42 FROM extid_decode('user', extid_encode('user', 42)));
    ASSERT uuid_extract_version(extid_encode('user', 42, 7)) = 8;
    ASSERT extid_encode('user', 42, 7) <> extid_encode('order', 42, 7);
    -- Without a random half: derived from seq, stable, and the lookup refuses
    -- every id it did not make (a stored half, another type, a made-up one).
    ASSERT extid_encode('user', 42) = extid_encode('user', 42);
    ASSERT extid_seq('user', extid_encode('user', 42)) = 42;
    ASSERT (SELECT (seq, key_version, derived) = (42::bigint, 0, true) FROM extid_inspect('user', extid_encode('user', 42)));
    ASSERT (SELECT NOT derived FROM extid_inspect('user', extid_encode('user', 42, 7)));
    -- 1000 ids of the default call: no shared 4-byte prefix.
    ASSERT (SELECT count(DISTINCT substr(extid_encode('user', s)::text, 1, 8)) FROM generate_series(1, 1000) s) = 1000;
END $$;
SELECT pg_temp.expect_error($q$SELECT extid_seq('user', extid_encode('user', 42, 7))$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_seq('order', extid_encode('user', 42))$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', -1)$q$, '22023');

-- Nonces: counter, encrypted and sortable, from ticks and slots shared by all
-- backends, with this server's machine id (7).
DO $$ BEGIN
    ASSERT length(nonce(64)) = 8 AND length(nonce(96)) = 12 AND length(nonce(128)) = 16;
    ASSERT (SELECT count(DISTINCT nonce(64)) FROM generate_series(1, 50000)) = 50000;
    ASSERT (SELECT count(DISTINCT nonce(128)) FROM generate_series(1, 50000)) = 50000;
    ASSERT (SELECT bool_and(n > p) FROM (SELECT n, lag(n) OVER (ORDER BY i) p
            FROM (SELECT sortable_nonce(96) n, i FROM generate_series(1, 20000) i) g) s WHERE p IS NOT NULL);
    -- 64-bit sortable nonces from shared memory: 40,000 span at least 4 ms (8192 a ms).
    ASSERT (SELECT bool_and(n > p) FROM (SELECT n, lag(n) OVER (ORDER BY i) p
            FROM (SELECT sortable_nonce(64) n, i FROM generate_series(1, 40000) i) g) s WHERE p IS NOT NULL);
    ASSERT length(sortable_nonce(64)) = 8;
    ASSERT ((('x' || encode(nonce(64), 'hex'))::bit(64)::bigint >> 13) & 511) = 7;
    ASSERT ((('x' || encode(sortable_nonce(64), 'hex'))::bit(64)::bigint >> 13) & 511) = 7;
    ASSERT length(encrypted_nonce(96)) = 12 AND length(encrypted_nonce(128)) = 16;
    ASSERT (SELECT count(DISTINCT encrypted_nonce(64)) FROM generate_series(1, 20000)) = 20000;
END $$;

-- pg_tuid's C extension: tuid_generate() (a uuid: 64 bits of Unix microseconds
-- around the UUIDv4 version and variant bits, an 8-bit sequence, random bits)
-- and stuid_generate() (8 bytes of microseconds, 24 random bytes), beside tuid6.
DO $$ DECLARE a uuid := tuid_generate(); b uuid; t6 uuid; s bytea; us bigint; BEGIN
    ASSERT substr(a::text, 15, 1) = '4', 'version nibble';
    ASSERT substr(a::text, 20, 1) IN ('8', '9', 'a', 'b'), 'variant';
    ASSERT tuid_generate_tz(a) BETWEEN now() - interval '1 minute' AND clock_timestamp();
    -- pg_tuid's layout: the first 48 bits are the microseconds' bits 63..16,
    -- the 12 bits after the version nibble their bits 15..4.
    us := (extract(epoch FROM tuid_generate_tz(a)) * 1000000)::bigint;
    ASSERT ('x' || substr(replace(a::text, '-', ''), 1, 12))::bit(48)::bigint = us >> 16;
    ASSERT ('x' || substr(replace(a::text, '-', ''), 14, 3))::bit(12)::int = (us >> 4) & 4095;
    ASSERT (SELECT count(DISTINCT tuid_generate()) FROM generate_series(1, 100000)) = 100000;
    -- Strictly increasing, in uuid order, across the server (one shared word).
    ASSERT (SELECT bool_and(x > p) FROM (SELECT x, lag(x) OVER (ORDER BY i) p
            FROM (SELECT tuid_generate() x, i FROM generate_series(1, 50000) i) g) s WHERE p IS NOT NULL);
    -- Beside tuid6: both carry the time they were made, tuid6 to the millisecond.
    t6 := tuid6(); PERFORM pg_sleep(0.002); b := tuid_generate();
    ASSERT tuid6_tz(t6) <= tuid_generate_tz(b) AND b > a;
    ASSERT tuid_generate_tz(b) - tuid6_tz(t6) < interval '1 minute';
    s := stuid_generate();
    ASSERT length(s) = 32;
    ASSERT stuid_tz(s) BETWEEN now() - interval '1 minute' AND clock_timestamp();
    ASSERT stuid_generate() > s;
    ASSERT (SELECT count(DISTINCT substr(stuid_generate(), 9)) FROM generate_series(1, 10000)) = 10000;
END $$;

-- The README's examples for pg_tuid's C functions and the bulk forms, as written
-- (temporary tables: app may create those).
CREATE TEMP TABLE sessions (id uuid DEFAULT tuid_generate() PRIMARY KEY, token bytea DEFAULT stuid_generate());
INSERT INTO sessions DEFAULT VALUES;
CREATE TEMP TABLE orders (id uuid DEFAULT uuidv7() PRIMARY KEY);
CREATE TEMP TABLE tokens (nonce bytea);
INSERT INTO orders (id) SELECT uuidv7_series(1000000);
INSERT INTO tokens (nonce) SELECT nonce_series(96, 500000);
DO $$ BEGIN
    ASSERT (SELECT count(*) FROM orders) = 1000000 AND (SELECT count(DISTINCT nonce) FROM tokens) = 500000;
    ASSERT (SELECT length(token) FROM sessions) = 32;
END $$;
DROP TABLE sessions, orders, tokens;

-- The set-returning forms: as many values as asked, each the same kind of value
-- as the one-value function makes, in its order, never one it made.
DO $$ DECLARE before uuid := public.uuidv7(); after uuid; BEGIN
    ASSERT (SELECT count(*) FROM uuidv7_series(100000)) = 100000;
    ASSERT (SELECT count(DISTINCT x) FROM (SELECT uuidv7_series(100000) x) s) = 100000;
    ASSERT (SELECT bool_and(x > p) FROM (SELECT x, lag(x) OVER (ORDER BY i) p
            FROM uuidv7_series(20000) WITH ORDINALITY AS g(x, i)) s WHERE p IS NOT NULL);
    ASSERT (SELECT min(x) FROM uuidv7_series(1000) x) > before;
    after := public.uuidv7();
    ASSERT (SELECT max(x) FROM uuidv7_series(10) x) > after;
    ASSERT (SELECT bool_and(public.uuid_extract_version(x) = 7) FROM uuidv7_series(1000) x);
    ASSERT (SELECT count(*) FROM uuidv7_series(0)) = 0;
    ASSERT (SELECT count(*) FROM nonce_series(64, 0)) = 0;
    ASSERT (SELECT count(DISTINCT x) = 30000 AND min(length(x)) = 8 AND max(length(x)) = 8
            FROM (SELECT nonce(64) x FROM generate_series(1, 10000)
                  UNION ALL SELECT nonce_series(64, 10000) UNION ALL SELECT * FROM nonce_series(64, 10000)) s);
    ASSERT (SELECT count(DISTINCT x) = 20000 AND bool_and(length(x) = 12) FROM (SELECT nonce_series(96, 20000) x) s);
    ASSERT (SELECT count(DISTINCT x) = 20000 AND bool_and(length(x) = 16) FROM nonce_series(128, 20000) x);
    ASSERT (SELECT count(DISTINCT x) = 20000 AND bool_and(length(x) = 16) FROM encrypted_nonce_series(128, 20000) x);
    ASSERT (SELECT bool_and(x > p) FROM (SELECT x, lag(x) OVER (ORDER BY i) p
            FROM sortable_nonce_series(96, 20000) WITH ORDINALITY AS g(x, i)) s WHERE p IS NOT NULL);
    ASSERT (SELECT bool_and(x > p) FROM (SELECT x, lag(x) OVER (ORDER BY i) p
            FROM sortable_nonce_series(64, 20000) WITH ORDINALITY AS g(x, i)) s WHERE p IS NOT NULL);
    ASSERT (SELECT bool_and(((('x' || encode(x, 'hex'))::bit(64)::bigint >> 13) & 511) = 7) FROM nonce_series(64, 1000) x);
END $$;
SELECT pg_temp.expect_error($q$SELECT * FROM uuidv7_series(-1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT nonce_series(65, 10)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT * FROM sortable_nonce_series(0, 10)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT * FROM encrypted_nonce_series(64, -5)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT uuidv7_series(1)::text || uuidv7_series(2)::text FROM (VALUES (uuidv7_series(3))) v$q$, '0A000');

-- uuidv7(shift) is PostgreSQL 18's, to the result and the error: a shift past
-- 292 years (the end of 64-bit nanoseconds) is where it was asked to be.
DO $$ DECLARE y int := extract(year FROM now() AT TIME ZONE 'UTC'); BEGIN
    ASSERT extract(year FROM public.uuid_extract_timestamp(public.uuidv7('300 years')) AT TIME ZONE 'UTC') BETWEEN y + 300 AND y + 301;
    ASSERT extract(year FROM public.uuid_extract_timestamp(public.uuidv7('1000 years')) AT TIME ZONE 'UTC') BETWEEN y + 1000 AND y + 1001;
    ASSERT extract(year FROM public.uuid_extract_timestamp(public.uuidv7('8000 years')) AT TIME ZONE 'UTC') BETWEEN y + 8000 AND y + 8001;
    ASSERT extract(year FROM public.uuid_extract_timestamp(public.uuidv7('-56 years')) AT TIME ZONE 'UTC') BETWEEN y - 56 AND y - 55;
END $$;

-- Every error path: the SQLSTATE, a clean message, a HINT where the server
-- must be set up differently.
SELECT pg_temp.expect_error($q$SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvb')$q$, '22P02');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTK+bg')$q$, '22P02');
SELECT pg_temp.expect_error($q$SELECT stuid_from_compact('short')$q$, '22P02');
SELECT pg_temp.expect_error($q$SELECT stuid_tz('\x010203'::bytea)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT stuid_to_compact(''::bytea)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_tz('infinity')$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_tz('1960-01-01')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT * FROM extid_decode('user', '01838576-137b-af9c-a637-be6b8d32af6e')$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('User', 1, 1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('', 1, 1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', -1, 1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, -1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, 4611686018427387904)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 72057594037927936, 1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT nonce(65)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT nonce(-64)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT encrypted_nonce(0)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT sortable_nonce(0)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT uuidv7('-100 years')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT uuidv7('10000 years')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT uuid_timestamptz_to_v7('infinity')$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT uuid_timestamptz_to_v7('1969-12-31 23:59:59+00')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT uuid_timestamp_to_v7('-infinity')$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT uuid_timestamp_to_v7('1900-01-01', true)$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT uuid_timestamp_to_v7('12000-01-01')$q$, '22008');
-- The ends of every range: 22008, never a wrapped value.
SELECT pg_temp.expect_error($q$SELECT uuid_timestamptz_to_v7('294276-12-31 23:59:59+00')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT uuid_timestamp_to_v7('294276-12-31 23:59:59')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_tz('294276-12-31 23:59:59+00')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_tz('4713-11-24 00:00:00+00 BC')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT uuid_timestamptz_to_v7('10889-08-02 05:31:50.656+00')$q$, '22008');
SELECT pg_temp.expect_error($q$SELECT stuid_tz(decode('ffffffffffffffff' || repeat('00', 24), 'hex'))$q$, '22008');
DO $$ BEGIN
    -- The last millisecond a UUIDv7 holds is still accepted, and read back.
    ASSERT uuid_v7_to_timestamptz(uuid_timestamptz_to_v7('10889-08-02 05:31:50.655+00', true)) = '10889-08-02 05:31:50.655+00';
    ASSERT uuid_v7_to_timestamptz('ffffffff-ffff-7fff-bfff-ffffffffffff') = '10889-08-02 05:31:50.655+00';
    ASSERT tuid6_tz(tuid6_from_tz('1970-01-01 00:00:00+00')) = '1970-01-01 00:00:00+00';
    -- 2^63 - 1 µs since 1970 lies in the year 294247, inside timestamptz's range.
    ASSERT stuid_tz(decode('7fffffffffffffff' || repeat('00', 24), 'hex')) > '294247-01-01 00:00:00+00';
END $$;
-- Settings: the machine id is the server's, out-of-range values are refused.
SELECT pg_temp.expect_error($q$SET nonceforge.machine_id = 600$q$, '55P02');
SELECT pg_temp.expect_error($q$SET nonceforge.machine_id = 3$q$, '55P02');
SELECT pg_temp.expect_error($q$SET nonceforge.server_order = on$q$, '55P02');
SELECT pg_temp.expect_error($q$SET nonceforge.key_file = '/tmp/k'$q$, '55P02');
-- The old key settings are gone, and nothing else can be parked under the prefix.
-- (PostgreSQL 14 cannot reserve a prefix: there such a SET is a placeholder,
-- never read as a key; see security.sql.)
SELECT current_setting('server_version_num')::int >= 150000 AS reserved_prefix \gset
\if :reserved_prefix
SELECT pg_temp.expect_error($q$SET nonceforge.extid_key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'$q$, '42602');
SELECT pg_temp.expect_error($q$SET nonceforge.key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'$q$, '42602');
\endif

DO $$ BEGIN ASSERT (SELECT 1) = 1; END $$;

-- Side by side with PostgreSQL 18's own uuidv7(interval) (18.6 and later reject
-- infinite and out-of-range shifts): the same time for every shift it accepts,
-- the same SQLSTATE, message and detail for every one it refuses.
SELECT current_setting('server_version_num')::int >= 180000 AS has_builtin_uuidv7 \gset
\if :has_builtin_uuidv7
DO $$
DECLARE
    shift interval;
    ours timestamptz; theirs timestamptz;
    o text; t text;
    o_state text; t_state text; o_msg text; t_msg text; o_detail text; t_detail text;
BEGIN
    FOREACH shift IN ARRAY ARRAY['0', '1 day', '-1 day', '300 years', '1000 years', '8000 years',
                                  '-56 years', '8862 years', '1 mon 3 days 04:05:06.789']::interval[] LOOP
        ours := public.uuid_extract_timestamp(public.uuidv7(shift));
        theirs := pg_catalog.uuid_extract_timestamp(pg_catalog.uuidv7(shift));
        ASSERT abs(extract(epoch FROM ours - theirs)) < 5, format('%s: ours %s, 18''s %s', shift, ours, theirs);
    END LOOP;
    FOREACH shift IN ARRAY ARRAY['infinity', '-infinity', '9000 years', '-100 years', '-57 years',
                                  '200000 years', '300000 years', '-300000 years']::interval[] LOOP
        o_state := NULL; t_state := NULL;
        BEGIN PERFORM public.uuidv7(shift);
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS o_state = RETURNED_SQLSTATE, o_msg = MESSAGE_TEXT, o_detail = PG_EXCEPTION_DETAIL;
        END;
        BEGIN PERFORM pg_catalog.uuidv7(shift);
        EXCEPTION WHEN others THEN
            GET STACKED DIAGNOSTICS t_state = RETURNED_SQLSTATE, t_msg = MESSAGE_TEXT, t_detail = PG_EXCEPTION_DETAIL;
        END;
        ASSERT t_state IS NOT NULL, format('18 accepted %s', shift);
        ASSERT (o_state, o_msg, o_detail) IS NOT DISTINCT FROM (t_state, t_msg, t_detail),
            format('%s: ours (%s, %s, %s), 18''s (%s, %s, %s)', shift, o_state, o_msg, o_detail, t_state, t_msg, t_detail);
    END LOOP;
END $$;
\endif
