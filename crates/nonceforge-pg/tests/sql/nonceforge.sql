-- SQL tests for the nonceforge extension, run by run.sh with psql against a
-- throwaway cluster. Every check is a DO block that raises on failure.

CREATE EXTENSION nonceforge;

CREATE FUNCTION pg_temp.expect_error(query text, code text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE query;
    RAISE EXCEPTION 'expected SQLSTATE % from: %', code, query;
EXCEPTION WHEN others THEN
    IF SQLSTATE <> code THEN
        RAISE EXCEPTION 'expected SQLSTATE % from: %, got % (%)', code, query, SQLSTATE, SQLERRM;
    END IF;
END
$f$;

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
DO $$ BEGIN
    ASSERT (SELECT bool_and(id > prev) FROM (
        SELECT id, lag(id) OVER (ORDER BY n) AS prev
        FROM (SELECT uuidv7() AS id, n FROM generate_series(1, 100000) n) g) s
        WHERE prev IS NOT NULL);
    ASSERT uuid_extract_version(uuidv7()) = 7 AND uuid_extract_version(uuidv4()) = 4;
    ASSERT uuid_extract_version('00000000-0000-0000-0000-000000000000') IS NULL;
    ASSERT uuid_extract_timestamp(uuidv7()) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '1 second';
    ASSERT uuid_extract_timestamp(uuidv7('-1 day')) < now() - interval '23 hours';
    ASSERT uuid_extract_timestamp(uuidv4()) IS NULL;
    ASSERT uuid_extract_timestamp('c232ab00-9414-11ec-b3c8-9f6bdeced846') = '2022-02-22 19:22:22+00';
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
    WHERE (proname IN ('tuid6', 'stuid', 'uuidv4') AND (provolatile, proparallel) <> ('v', 's'))
       OR (proname = 'uuidv7' AND (provolatile, proparallel) <> ('v', 's'))
       OR (proname IN ('tuid6_tz', 'tuid6_to_compact', 'tuid6_from_compact', 'stuid_to_compact',
                       'stuid_from_compact', 'stuid_tz', 'uuid_extract_timestamp', 'uuid_extract_version',
                       'uuid_smaller', 'uuid_larger')
           AND (provolatile, proisstrict, proparallel) <> ('i', true, 's'))
       OR (proname IN ('extid_encode', 'extid_decode') AND (provolatile, proisstrict) <> ('s', true));
    ASSERT bad IS NULL, 'wrong volatility: ' || bad;
END $$;

-- Converters work in index expressions (IMMUTABLE).
CREATE TEMP TABLE t (id uuid DEFAULT uuidv7(), tid uuid DEFAULT tuid6());
CREATE INDEX ON t (tuid6_tz(tid));
CREATE INDEX ON t (uuid_extract_timestamp(id));
INSERT INTO t SELECT FROM generate_series(1, 1000);
DO $$ BEGIN
    ASSERT (SELECT count(*) FROM t WHERE tuid6_tz(tid) > now() - interval '1 hour') = 1000;
END $$;

-- External ids.
SET nonceforge.extid_key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
DO $$ BEGIN
    ASSERT (SELECT (seq, rand) = (42::bigint, 7::bigint) FROM extid_decode('user', extid_encode('user', 42, 7)));
    ASSERT uuid_extract_version(extid_encode('user', 42, 7)) = 8;
    ASSERT extid_encode('user', 42, 7) <> extid_encode('order', 42, 7);
END $$;

-- Bad input: an ERROR with a 22xxx SQLSTATE, and the backend lives on.
SELECT pg_temp.expect_error($q$SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvb')$q$, '22P02');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTK+bg')$q$, '22P02');
SELECT pg_temp.expect_error($q$SELECT stuid_from_compact('short')$q$, '22P02');
SELECT pg_temp.expect_error($q$SELECT stuid_tz('\x010203'::bytea)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT stuid_to_compact(''::bytea)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_tz('infinity')$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT tuid6_from_tz('1960-01-01')$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT * FROM extid_decode('user', '01838576-137b-af9c-a637-be6b8d32af6e')$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('User', 1, 1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', -1, 1)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, 4611686018427387904)$q$, '22023');
RESET nonceforge.extid_key;
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, 1)$q$, '22023');
SET nonceforge.extid_key = 'abcd';
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, 1)$q$, '22023');
RESET nonceforge.extid_key;

-- The key setting: superuser-only, never in SHOW ALL.
DO $$ BEGIN
    ASSERT NOT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'nonceforge.extid_key');
END $$;
CREATE ROLE nonceforge_tester;
SET ROLE nonceforge_tester;
SELECT pg_temp.expect_error($q$SET nonceforge.extid_key = '00'$q$, '42501');
RESET ROLE;
DROP ROLE nonceforge_tester;

-- Nonces: counter, encrypted and sortable, from ticks and slots shared by all backends.
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
END $$;
SET nonceforge.machine_id = 300;
DO $$ BEGIN
    ASSERT ((('x' || encode(nonce(64), 'hex'))::bit(64)::bigint >> 13) & 511) = 300;
END $$;
RESET nonceforge.machine_id;
SELECT pg_temp.expect_error($q$SELECT encrypted_nonce(128)$q$, '22023');
SET nonceforge.key = '0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a090807060504030201000';
DO $$ BEGIN
    ASSERT length(encrypted_nonce(96)) = 12;
    ASSERT (SELECT count(DISTINCT encrypted_nonce(64)) FROM generate_series(1, 20000)) = 20000;
END $$;
RESET nonceforge.key;
SELECT pg_temp.expect_error($q$SELECT nonce(65)$q$, '22023');
SELECT pg_temp.expect_error($q$SELECT sortable_nonce(0)$q$, '22023');
SELECT pg_temp.expect_error($q$SET nonceforge.machine_id = 512$q$, '22023');
CREATE ROLE nonceforge_keyless;
SET ROLE nonceforge_keyless;
SELECT pg_temp.expect_error($q$SET nonceforge.key = '00'$q$, '42501');
RESET ROLE;
DROP ROLE nonceforge_keyless;
DO $$ BEGIN
    ASSERT NOT EXISTS (SELECT 1 FROM pg_settings WHERE name = 'nonceforge.key');
    ASSERT (SELECT (provolatile, proparallel) = ('v', 'u') FROM pg_proc WHERE proname = 'nonce');
END $$;

DO $$ BEGIN ASSERT (SELECT 1) = 1; END $$;
