-- Generation rates, one function at a time (included by bench.sql, once as the
-- superuser and once as the application role).
WITH r AS MATERIALIZED (
    SELECT f, pg_temp.rate(format('SELECT count(%s) FROM generate_series(1, 1000000)', f), 1000000) AS per_sec
    FROM unnest(ARRAY['nextval(''s'')', 'gen_random_uuid()', 'tuid6_plpgsql()', 'tuid6()', 'uuidv7()', 'uuid_generate_v7()', 'uuidv4()', 'nonce(64)', 'sortable_nonce(64)', 'sortable_nonce(128)']) f
)
SELECT f AS function, round(per_sec) AS per_sec,
       round((per_sec / (SELECT per_sec FROM r WHERE f = 'gen_random_uuid()'))::numeric, 2) AS x_gen_random_uuid
FROM r;
