-- pg_tuid's names: its README's examples, the layouts, and the C extension's functions.
SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvbg');
SELECT tuid6_tz('01838576-137b-af9c-a637-be6b8d32af6e') AT TIME ZONE 'UTC';
SELECT tuid6_to_compact('01838576-137b-af9c-a637-be6b8d32af6e');
SELECT tuid6_tz(tuid6_from_tz('2001-02-03 04:05:06.789+00')) AT TIME ZONE 'UTC';
SELECT tuid6_tz(tuid6()) BETWEEN now() - interval '1 minute' AND clock_timestamp() AS recent;
SELECT stuid_tz(decode('00057e1f2d5c6b80' || repeat('00', 24), 'hex')) AT TIME ZONE 'UTC';
SELECT stuid_to_compact(decode('00057e1f2d5c6b80' || repeat('ab', 24), 'hex'));
SELECT encode(stuid_from_compact('AAV-Hy1ca4Crq6urq6urq6urq6urq6urq6urq6urq6s'), 'hex');
SELECT length(stuid()), stuid_tz(stuid()) BETWEEN now() - interval '1 minute' AND clock_timestamp() AS recent;
-- tuid_generate(): pg_tuid's uuid layout, microseconds read back; stuid_generate(): 32 bytes.
SELECT substr(id::text, 15, 1) AS version, substr(id::text, 20, 1) IN ('8', '9', 'a', 'b') AS variant,
       tuid_generate_tz(id) BETWEEN now() - interval '1 minute' AND clock_timestamp() AS recent
  FROM (SELECT tuid_generate() id) s;
SELECT tuid_generate_tz('00057e1f-2d5c-46b8-8000-000000000000') AT TIME ZONE 'UTC';
SELECT tuid_generate_tz('00057e1f-2d5c-46b8-bc00-000000000000') AT TIME ZONE 'UTC';
SELECT count(DISTINCT x) FROM (SELECT tuid_generate() x FROM generate_series(1, 10000)) s;
SELECT bool_and(x > p) AS increasing FROM (SELECT x, lag(x) OVER (ORDER BY i) p
  FROM (SELECT tuid_generate() x, i FROM generate_series(1, 10000) i) g) s WHERE p IS NOT NULL;
SELECT length(stuid_generate()), stuid_tz(stuid_generate()) BETWEEN now() - interval '1 minute' AND clock_timestamp() AS recent;
-- Errors.
SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvb');
SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTK+bg');
SELECT stuid_from_compact('short');
SELECT stuid_tz('\x010203'::bytea);
SELECT stuid_to_compact(''::bytea);
SELECT tuid6_from_tz('infinity');
SELECT tuid6_from_tz('1960-01-01');
SELECT tuid6_from_tz('294276-12-31 23:59:59+00');
SELECT stuid_tz(decode('ffffffffffffffff' || repeat('00', 24), 'hex'));
