-- Included (\ir) by the SQL test files.

-- expect_error(query, sqlstate, needs_hint): the query fails with that
-- SQLSTATE, a message that starts "nonceforge: " (or PostgreSQL's own, for
-- settings), and nothing from Rust in message, detail or hint: no backtrace,
-- panic text or source path.
CREATE FUNCTION pg_temp.expect_error(query text, code text, needs_hint boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $f$
DECLARE msg text; detail text; hint text; ok boolean := false;
BEGIN
    BEGIN
        EXECUTE query;
    EXCEPTION WHEN others THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
        IF SQLSTATE <> code THEN
            RAISE EXCEPTION 'expected SQLSTATE % from: %, got % (%)', code, query, SQLSTATE, msg;
        END IF;
        ok := true;
    END;
    IF NOT ok THEN
        RAISE EXCEPTION 'expected SQLSTATE % from: %, got no error', code, query;
    END IF;
    IF concat_ws(' | ', msg, detail, hint) ~* '(backtrace|panicked|\.rs\M|\.rs:|/src/|/\.cargo/|rust_begin_unwind|core::|std::|pgrx)' THEN
        RAISE EXCEPTION 'Rust internals in the error from %: % | % | %', query, msg, detail, hint;
    END IF;
    IF detail IS NOT NULL AND detail <> '' AND msg LIKE 'nonceforge:%' THEN
        RAISE EXCEPTION 'unexpected DETAIL in the error from %: %', query, detail;
    END IF;
    IF needs_hint AND coalesce(hint, '') = '' THEN
        RAISE EXCEPTION 'no HINT in the error from %: %', query, msg;
    END IF;
END
$f$;
