-- Nonces: sizes, uniqueness, the machine id (7) in counter and sortable ones.
SELECT length(nonce(64)), length(nonce(96)), length(nonce(128));
SELECT length(sortable_nonce(64)), length(sortable_nonce(96)), length(sortable_nonce(128));
SELECT length(encrypted_nonce(64)), length(encrypted_nonce(96)), length(encrypted_nonce(128));
SELECT count(DISTINCT nonce(64)) FROM generate_series(1, 20000);
SELECT count(DISTINCT encrypted_nonce(128)) FROM generate_series(1, 20000);
SELECT (('x' || encode(nonce(64), 'hex'))::bit(64)::bigint >> 13) & 511 AS machine_id;
SELECT (('x' || encode(sortable_nonce(64), 'hex'))::bit(64)::bigint >> 13) & 511 AS machine_id;
SELECT bool_and(n > p) AS increasing FROM (SELECT n, lag(n) OVER (ORDER BY i) p
  FROM (SELECT sortable_nonce(96) n, i FROM generate_series(1, 20000) i) g) s WHERE p IS NOT NULL;
SELECT machine_id, source, state FROM machine_id_status();
-- nonce_inspect(): the parts of a plain nonce, in the layout named (the bytes
-- do not say which); any role may call it.
SELECT * FROM nonce_inspect('\x0000000000402005'::bytea);
SELECT * FROM nonce_inspect('\x000000000070d4000000002a'::bytea, 'wide');
SELECT * FROM nonce_inspect('\x000000000070d4000000002a'::bytea);
SELECT * FROM nonce_inspect('\xffffffffffffffc0ffffffffffffffff'::bytea, 'wide', 0);
SELECT machine_id FROM nonce_inspect(nonce(96));
SELECT machine_id, unix_ms > 1735689600000 AS after_epoch FROM nonce_inspect(sortable_nonce(128));
SELECT * FROM nonce_inspect('\x0000000000000001'::bytea, 'wide');
SELECT * FROM nonce_inspect('\x00000000000000'::bytea);
SELECT * FROM nonce_inspect('\x0000000000402005'::bytea, 'Wide');
SELECT * FROM nonce_inspect('\x0000000000000001ffffffffffffffff'::bytea, 'wide');
SHOW nonceforge.layout;
SET nonceforge.layout = 'wide';
SET ROLE regress_app;
SELECT machine_id FROM nonce_inspect('\x000000000070d4000000002a'::bytea, 'wide');
RESET ROLE;
-- Errors.
SELECT nonce(65);
SELECT nonce(-64);
SELECT encrypted_nonce(0);
SELECT sortable_nonce(0);
SET nonceforge.machine_id = 3;
SET nonceforge.server_order = on;
SET nonceforge.key_file = '/tmp/k';
SET nonceforge.extid_key = '00';
SET nonceforge.max_clock_wait = '10s';
-- The key functions are not PUBLIC's.
SET ROLE regress_app;
SELECT length(encrypted_nonce(64));
RESET ROLE;
CREATE ROLE regress_nobody;
SET ROLE regress_nobody;
SELECT encrypted_nonce(64);
SELECT encrypted_nonce_series(64, 2);
SELECT extid_encode('user', 1, 1);
SELECT length(nonce(64));
RESET ROLE;
DROP ROLE regress_nobody;
-- nonceforge_metrics(): what is issued is counted, by kind and size (the
-- other series: tests/sql/metrics.sql); pg_monitor's, not PUBLIC's.
CREATE TEMP TABLE m0 AS SELECT metric, labels, value FROM nonceforge_metrics();
SELECT count(nonce(64)) FROM generate_series(1, 100);
SELECT count(*) FROM encrypted_nonce_series(128, 20);
SELECT count(*) FROM sortable_nonce_series(96, 50);
SELECT m.labels->>'kind' AS kind, m.labels->>'bits' AS bits, m.value - m0.value AS added
  FROM nonceforge_metrics() m JOIN m0 USING (metric, labels)
 WHERE metric = 'nonceforge_nonces_issued_total' ORDER BY 1, 2::int;
SELECT metric, value FROM nonceforge_metrics() WHERE metric = 'nonceforge_generator_enabled';
SET ROLE regress_app;
SELECT count(*) FROM nonceforge_metrics();
RESET ROLE;
