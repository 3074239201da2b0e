-- Run by run.sh as `mallory`: an application role that owns a schema and may
-- create in `public` (as every database made before PostgreSQL 15 allows
-- everyone). It plants traps wherever a name could be looked up through a
-- search_path: operators, functions that shadow pg_catalog's, and relations
-- named like the catalogs and the state an extension might keep. Each trap
-- reports itself with a WARNING (in the server log, whatever is rolled back
-- after it) naming current_user, session_user and application_name, then tries
-- to make mallory a superuser. run.sh fails if any trap fires outside the
-- self-check, or if any role gained a right.
CREATE SCHEMA evil;
GRANT USAGE ON SCHEMA evil TO PUBLIC;

CREATE FUNCTION evil.trap(label text) RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
    RAISE WARNING 'nonceforge-trap fired: % as % (session %, app %)',
        label, current_user, session_user, pg_catalog.current_setting('application_name');
    BEGIN
        EXECUTE 'ALTER ROLE mallory SUPERUSER';
    EXCEPTION WHEN others THEN NULL;
    END;
END
$f$;
GRANT EXECUTE ON FUNCTION evil.trap(text) TO PUBLIC;

-- Operators, in evil and in public: every comparison on the types a catalog
-- query or an install script compares, and arithmetic on the numeric types,
-- including pairs pg_catalog matches only through a cast (an exact match wins).
DO $plant$
DECLARE
    sch text; op text; l text; r text; ret text; fname text; n int := 0;
BEGIN
    FOREACH sch IN ARRAY ARRAY['evil', 'public'] LOOP
        FOR l, r IN VALUES ('oid', 'oid'), ('name', 'name'), ('text', 'text'), ('name', 'text'),
                           ('bigint', 'bigint'), ('integer', 'integer'), ('bigint', 'integer'),
                           ('integer', 'bigint'), ('numeric', 'integer'), ('numeric', 'numeric'),
                           ('double precision', 'integer'), ('uuid', 'uuid'), ('bytea', 'bytea'),
                           ('timestamptz', 'timestamptz'), ('regclass', 'regclass') LOOP
            FOREACH op IN ARRAY ARRAY['=', '<>', '<', '>', '<=', '>=', '*', '+', '-', '/', '%'] LOOP
                n := n + 1;
                fname := format('trap_op_%s', n);
                ret := CASE WHEN op IN ('=', '<>', '<', '>', '<=', '>=') THEN 'boolean' ELSE l END;
                IF ret <> 'boolean' AND l NOT IN ('bigint', 'integer', 'numeric', 'double precision') THEN
                    CONTINUE;
                END IF;
                EXECUTE format($f$CREATE FUNCTION %I.%I(a %s, b %s) RETURNS %s LANGUAGE plpgsql AS $b$
                    BEGIN PERFORM evil.trap(%L); RETURN a OPERATOR(pg_catalog.%s) b; END $b$$f$,
                    sch, fname, l, r, ret, format('%s.%s(%s, %s)', sch, op, l, r), op);
                EXECUTE format('CREATE OPERATOR %I.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I.%I)',
                    sch, op, l, r, sch, fname);
            END LOOP;
        END LOOP;
    END LOOP;
END
$plant$;

-- Functions that shadow pg_catalog's (found first where pg_catalog is listed
-- after the attacker's schema).
DO $plant$
DECLARE sch text; sig record;
BEGIN
    FOREACH sch IN ARRAY ARRAY['evil', 'public'] LOOP
        FOR sig IN SELECT * FROM (VALUES
            ('quote_ident', 'text', 'text', 'pg_catalog.quote_ident($1)'),
            ('now', '', 'timestamptz', 'pg_catalog.now()'),
            ('clock_timestamp', '', 'timestamptz', 'pg_catalog.clock_timestamp()'),
            ('date_part', 'text, timestamptz', 'double precision', 'pg_catalog.date_part($1, $2)'),
            ('nextval', 'regclass', 'bigint', 'pg_catalog.nextval($1)'),
            ('current_setting', 'text', 'text', 'pg_catalog.current_setting($1)'),
            ('length', 'bytea', 'integer', 'pg_catalog.length($1)'),
            ('gen_random_uuid', '', 'uuid', 'pg_catalog.gen_random_uuid()'),
            ('random', '', 'double precision', 'pg_catalog.random()'),
            ('pg_backend_pid', '', 'integer', 'pg_catalog.pg_backend_pid()'),
            ('to_timestamp', 'double precision', 'timestamptz', 'pg_catalog.to_timestamp($1)'),
            ('get_extension_schema', 'oid', 'oid', '$1')) v(name, args, ret, body) LOOP
            EXECUTE format($f$CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE plpgsql AS $b$
                BEGIN PERFORM evil.trap(%L); RETURN %s; END $b$$f$,
                sch, sig.name, sig.args, sig.ret, format('%s.%s(%s)', sch, sig.name, sig.args), sig.body);
        END LOOP;
    END LOOP;
END
$plant$;

-- Relations named like the catalogs and like state an extension could keep.
CREATE FUNCTION evil.trap_row(label text) RETURNS bigint LANGUAGE plpgsql AS $f$
BEGIN PERFORM evil.trap(label); RETURN 0; END $f$;
GRANT EXECUTE ON FUNCTION evil.trap_row(text) TO PUBLIC;
DO $plant$
DECLARE sch text; rel text;
BEGIN
    FOREACH sch IN ARRAY ARRAY['evil', 'public'] LOOP
        FOREACH rel IN ARRAY ARRAY['pg_extension', 'pg_namespace', 'pg_class', 'pg_proc', 'pg_settings',
                                   'nonceforge_start', 'nonceforge_ticks_64', 'nonceforge_state'] LOOP
            EXECUTE format('CREATE VIEW %I.%I AS SELECT evil.trap_row(%L) AS unix_ms, 0::oid AS oid, %L::name AS extname',
                sch, rel, sch || '.' || rel, 'nonceforge');
            EXECUTE format('GRANT SELECT ON %I.%I TO PUBLIC', sch, rel);
        END LOOP;
    END LOOP;
END
$plant$;
