-- testdata/vectors/uuid.json (written from the layouts by make_uuid.py; the Rust
-- core, Go, Node and Elixir read it too), passed by run.sh as :'vectors': the
-- server's compact text, timestamps and uuid_extract_timestamp/version are
-- every face's. Every check raises on failure.

\ir expect_error.sql

SELECT set_config('nftest.uuid_vectors', :'vectors', false) IS NOT NULL AS loaded;

-- Times are compared as numbers (extract gives numeric since PostgreSQL 14):
-- interval arithmetic goes through float8 and rounds at year 10889.
DO $$
DECLARE
    doc jsonb := current_setting('nftest.uuid_vectors')::jsonb;
    v jsonb;
    id uuid;
    n int := 0;
BEGIN
    FOR v IN SELECT e FROM jsonb_array_elements(doc->'v7') e
             UNION ALL SELECT e FROM jsonb_array_elements(doc->'tuid6') e LOOP
        id := (v->>'uuid')::uuid;
        ASSERT tuid6_to_compact(id) = v->>'compact', v::text;
        ASSERT tuid6_from_compact(v->>'compact') = id, v::text;
        ASSERT extract(epoch FROM tuid6_tz(id)) * 1000 = (v->>'unix_ms')::numeric, v::text;
        n := n + 1;
    END LOOP;
    ASSERT n >= 8, 'too few v7 and tuid6 vectors';
    n := 0;
    FOR v IN SELECT e FROM jsonb_array_elements(doc->'stuid') e LOOP
        ASSERT stuid_to_compact(decode(v->>'hex', 'hex')) = v->>'compact', v::text;
        ASSERT stuid_from_compact(v->>'compact') = decode(v->>'hex', 'hex'), v::text;
        ASSERT extract(epoch FROM stuid_tz(decode(v->>'hex', 'hex'))) * 1000000 = (v->>'unix_us')::numeric, v::text;
        n := n + 1;
    END LOOP;
    ASSERT n >= 3, 'too few stuid vectors';
    n := 0;
    FOR v IN SELECT e FROM jsonb_array_elements(doc->'extract') e LOOP
        id := (v->>'uuid')::uuid;
        -- The extension's own (18's semantics on every major: 17's built-in
        -- reads version 1 only, and pg_catalog comes first in a search path).
        ASSERT public.uuid_extract_version(id) IS NOT DISTINCT FROM (v->>'version')::int2, v::text;
        ASSERT extract(epoch FROM public.uuid_extract_timestamp(id)) * 1000 IS NOT DISTINCT FROM
            (v->>'unix_ms')::numeric, v::text;
        n := n + 1;
    END LOOP;
    ASSERT n >= 5, 'too few extract vectors';
END $$;

SELECT pg_temp.expect_error(format('SELECT tuid6_from_compact(%L)', e->>'text'), '22P02')
  FROM jsonb_array_elements(current_setting('nftest.uuid_vectors')::jsonb->'bad_compact') e;
