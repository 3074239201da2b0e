-- Server-wide order, run by run.sh as the administrator with the variable
-- port. Two backends of `app` (over dblink) take turns: each makes a uuidv7()
-- and a tuid6() only after it has been handed the other's last ones, 10,000
-- turns; every id must be greater than the one before it. Backend a first makes
-- a burst of ids, so that a per-backend clock would run ahead of the other's.
-- With per-backend monotonicity alone this fails (run.sh checks that too).
SELECT dblink_connect('a', format('host=127.0.0.1 port=%s dbname=postgres user=app', :'port')) IS NOT NULL AS a,
       dblink_connect('b', format('host=127.0.0.1 port=%s dbname=postgres user=app', :'port')) IS NOT NULL AS b;
SELECT * FROM dblink('a', 'SELECT count(public.uuidv7()) + count(tuid6()) FROM generate_series(1, 1000000)') AS t(n bigint);
DO $$
DECLARE
    zero constant uuid := '00000000-0000-0000-0000-000000000000';
    last_v uuid := zero; last_t uuid := zero; v uuid; t uuid; who text;
    t0 timestamptz := clock_timestamp(); ms float8;
BEGIN
    FOR i IN 1..10000 LOOP
        who := CASE i % 2 WHEN 0 THEN 'a' ELSE 'b' END;
        SELECT x.v, x.t INTO v, t FROM dblink(who, format(
            'SELECT public.uuidv7(), tuid6() WHERE %L::uuid IS NOT NULL AND %L::uuid IS NOT NULL', last_v, last_t)) AS x(v uuid, t uuid);
        IF v <= last_v THEN
            RAISE EXCEPTION 'turn %: uuidv7() % from backend % is not above % from the other', i, v, who, last_v;
        END IF;
        IF t <= last_t THEN
            RAISE EXCEPTION 'turn %: tuid6() % from backend % is not above % from the other', i, t, who, last_t;
        END IF;
        last_v := v; last_t := t;
    END LOOP;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    RAISE NOTICE 'server order: 20,000 ids in 10,000 turns, % ids a millisecond', round((20000 / ms)::numeric, 1);
    ASSERT 20000 / ms > 1, 'the turns were too slow to put several ids in a millisecond';
END $$;
SELECT dblink_disconnect('a'), dblink_disconnect('b');
