-- nonceforge 0.1.0 → 0.2.0: ALTER EXTENSION nonceforge UPDATE;
--
-- Order for a live server: install the 0.2.0 package, restart the server (the
-- library is preloaded: backends of a running server keep the library they
-- started with, and 0.2.0 keeps its nonce state in shared memory), grant the
-- key functions to the roles that use them (below), then update each database
-- that has the extension. Between the restart and the update the 0.1.0 objects
-- call the 0.2.0 library (the same symbols) and nonces come from shared memory
-- already; the update only removes what 0.2.0 no longer uses and tightens the
-- grants. Nothing cached in a backend depends on these objects.
--
-- Like the install script, every name below is schema-qualified, so the script
-- is safe to run where others may create objects.
\echo Use "ALTER EXTENSION nonceforge UPDATE" to load this file. \quit

-- Refuse in a session that still runs the 0.1.0 library (the server was not
-- restarted): its machine-id setting was an integer, 0.2.0's is text.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_settings
               WHERE name OPERATOR(pg_catalog.=) 'nonceforge.machine_id'
                 AND vartype OPERATOR(pg_catalog.=) 'integer') THEN
        RAISE EXCEPTION 'nonceforge: this session runs the 0.1.0 library; restart the server with the 0.2.0 library before ALTER EXTENSION nonceforge UPDATE'
            USING ERRCODE = '55000',
                  HINT = 'Install the 0.2.0 package, restart the server, then update.';
    END IF;
END
$$;

-- 0.1.0 counted nonces in per-database sequences from a start time in a table,
-- read through SPI as the extension's owner (the escalation of issue 23).
-- 0.2.0 counts in shared memory: they are dropped.
DROP TABLE @extschema@.nonceforge_start;
DROP SEQUENCE @extschema@.nonceforge_ticks_64, @extschema@.nonceforge_ticks_96,
    @extschema@.nonceforge_ticks_128, @extschema@.nonceforge_sortable_slots;

-- The functions that use a server key are no longer PUBLIC's: GRANT EXECUTE on
-- them to the roles that need them (before the update, to avoid a gap).
REVOKE EXECUTE ON FUNCTION @extschema@.encrypted_nonce(integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_encode(text, bigint, bigint) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_decode(text, uuid) FROM PUBLIC;

-- New: where this server's machine id comes from (a setting, or a lease).
CREATE FUNCTION @extschema@.machine_id_status() RETURNS TABLE (
    machine_id pg_catalog.int4,
    source pg_catalog.text,
    state pg_catalog.text,
    valid_until pg_catalog.timestamptz
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'machine_id_status_wrapper';
