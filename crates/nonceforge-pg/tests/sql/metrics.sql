-- nonceforge_metrics(), as the superuser, on the unconfigured server (right
-- after unconfigured.sql's refusals): every series is one of the fleet's
-- (testdata/vectors/metrics.json, passed as :'vectors') with its type, help
-- and labels; the refusals just made are counted by reason; nothing is
-- enabled.
CREATE TEMP TABLE vectors AS SELECT :'vectors'::jsonb AS v;
CREATE TEMP TABLE m AS SELECT * FROM nonceforge_metrics();
DO $$
DECLARE
    r record;
    def jsonb;
BEGIN
    ASSERT (SELECT count(*) FROM m) = 16, 'the generator has 16 series without a lease';
    FOR r IN SELECT * FROM m LOOP
        SELECT d INTO def FROM vectors, jsonb_array_elements(v->'metrics') d WHERE d->>'name' = r.metric;
        ASSERT def IS NOT NULL, format('%s is not in metrics.json', r.metric);
        ASSERT def->>'type' = r.metric_type, format('%s: type %s', r.metric, r.metric_type);
        ASSERT def->>'help' = r.help, format('%s: help differs', r.metric);
        ASSERT (SELECT coalesce(array_agg(k ORDER BY k), '{}') FROM jsonb_object_keys(r.labels) k)
             = (SELECT coalesce(array_agg(l ORDER BY l), '{}') FROM jsonb_array_elements_text(def->'labels') l),
            format('%s: labels %s', r.metric, r.labels);
        ASSERT r.value >= 0, format('%s %s = %s', r.metric, r.labels, r.value);
    END LOOP;
    -- One series per label value the vectors list (kind × bits, every reason).
    ASSERT (SELECT count(*) FROM m WHERE metric = 'nonceforge_nonces_issued_total') = 6;
    ASSERT (SELECT count(*) FROM m WHERE metric = 'nonceforge_refusals_total') = 5;
    -- unconfigured.sql: four nonces without a machine id, one encrypted nonce without a key.
    ASSERT (SELECT value FROM m WHERE metric = 'nonceforge_refusals_total' AND labels->>'reason' = 'disabled') >= 4;
    ASSERT (SELECT value FROM m WHERE metric = 'nonceforge_refusals_total' AND labels->>'reason' = 'no_key') >= 1;
    ASSERT (SELECT value FROM m WHERE metric = 'nonceforge_generator_enabled') = 0;
    ASSERT (SELECT sum(value) FROM m WHERE metric = 'nonceforge_nonces_issued_total') = 0;
    -- The epoch (2025-01-01) ends in 2164.
    ASSERT (SELECT value FROM m WHERE metric = 'nonceforge_epoch_headroom_seconds') > 100 * 365 * 86400.0;
    -- No lease: no lease series, no deadline.
    ASSERT NOT EXISTS (SELECT FROM m WHERE metric LIKE 'nonceforge_lease_%' OR metric = 'nonceforge_deadline_headroom_seconds');
END $$;
-- Monitoring roles read it; the extension grants it to pg_monitor only.
CREATE ROLE metrics_watcher LOGIN IN ROLE pg_monitor;
SET ROLE metrics_watcher;
SELECT count(*) FROM nonceforge_metrics();
RESET ROLE;
DROP ROLE metrics_watcher;
