-- The set-returning forms: counts, kinds, order, and their errors.
SELECT count(*) FROM uuidv7_series(100000);
SELECT count(DISTINCT x) FROM (SELECT uuidv7_series(100000) x) s;
SELECT bool_and(x > p) AS increasing FROM (SELECT x, lag(x) OVER (ORDER BY i) p
  FROM uuidv7_series(20000) WITH ORDINALITY AS g(x, i)) s WHERE p IS NOT NULL;
SELECT bool_and(uuid_extract_version(x) = 7) FROM uuidv7_series(1000) x;
SELECT count(*) FROM uuidv7_series(0);
SELECT count(DISTINCT x), min(length(x)), max(length(x)) FROM nonce_series(64, 20000) x;
SELECT count(DISTINCT x), min(length(x)), max(length(x)) FROM (SELECT nonce_series(96, 20000) x) s;
SELECT count(DISTINCT x), min(length(x)), max(length(x)) FROM nonce_series(128, 20000) x;
SELECT count(DISTINCT x), min(length(x)) FROM encrypted_nonce_series(96, 20000) x;
SELECT bool_and(x > p) AS increasing FROM (SELECT x, lag(x) OVER (ORDER BY i) p
  FROM sortable_nonce_series(128, 20000) WITH ORDINALITY AS g(x, i)) s WHERE p IS NOT NULL;
SELECT bool_and(((('x' || encode(x, 'hex'))::bit(64)::bigint >> 13) & 511) = 7) FROM sortable_nonce_series(64, 1000) x;
SELECT * FROM uuidv7_series(-1);
SELECT nonce_series(65, 10);
SELECT * FROM sortable_nonce_series(0, 10);
SELECT * FROM encrypted_nonce_series(64, -5);
