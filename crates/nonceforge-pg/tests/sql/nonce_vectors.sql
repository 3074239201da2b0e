-- testdata/vectors/nonces.json (written by make_nonces.py, an independent
-- implementation; the Rust core, the CLI, Go, Node, Python and Elixir read it
-- too), passed by run.sh as :'vectors': nonce_inspect() reads every layout row,
-- standard and wide, as the vectors say. Every check raises on failure.

SELECT set_config('nftest.nonce_vectors', :'vectors', false) IS NOT NULL AS loaded;

DO $$
DECLARE
    doc jsonb := current_setting('nftest.nonce_vectors')::jsonb;
    layout text;
    rows jsonb;
    v jsonb;
    p record;
    n int := 0;
BEGIN
    FOR layout, rows IN VALUES ('standard', doc->'layout'), ('wide', doc->'wide'->'layout') LOOP
        FOR v IN SELECT e FROM jsonb_array_elements(rows) e LOOP
            SELECT * INTO p FROM nonce_inspect(decode(v->>'hex', 'hex'), layout, 0);
            ASSERT p.unix_ms = (v->>'timestamp_ms')::bigint, layout || ' ' || v::text;
            ASSERT p.machine_id = (v->>'machine_id')::int, layout || ' ' || v::text;
            ASSERT p.counter = (v->>'counter')::numeric, layout || ' ' || v::text;
            n := n + 1;
        END LOOP;
    END LOOP;
    ASSERT n >= 27, format('only %s layout vectors', n);
    -- The wide generator's counter nonces: machine id 40000.
    FOR v IN SELECT e FROM jsonb_array_elements(doc->'wide'->'generator'->'counter') e LOOP
        SELECT * INTO p FROM nonce_inspect(decode(v->>'hex', 'hex'), 'wide');
        ASSERT p.machine_id = 40000 AND p.counter = (v->>'index')::numeric, v::text;
        ASSERT p.unix_ms = (doc->'wide'->'generator'->>'clock_unix_ms')::bigint + 1, v::text;
    END LOOP;
END $$;
