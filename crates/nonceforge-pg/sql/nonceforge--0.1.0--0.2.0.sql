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

-- The REVOKEs above ran inside an extension script, where PostgreSQL records
-- each function's whole ACL as it stands then as the extension's *initial*
-- privileges (pg_init_privs) — grants a DBA gave before the update included
-- (the order the README advises). pg_dump leaves initial privileges out, so a
-- dump would carry no GRANT for them and a restore would deny the roles. Make
-- the initial privileges exactly a fresh install's: EXECUTE for the owner only.
UPDATE pg_catalog.pg_init_privs i
   SET initprivs = ARRAY[pg_catalog.makeaclitem(p.proowner, p.proowner, 'EXECUTE', false)]
  FROM pg_catalog.pg_proc p
 WHERE i.objoid OPERATOR(pg_catalog.=) p.oid
   AND i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
   AND i.objsubid OPERATOR(pg_catalog.=) 0
   AND p.oid OPERATOR(pg_catalog.=) ANY (ARRAY[
       '@extschema@.encrypted_nonce(integer)'::pg_catalog.regprocedure,
       '@extschema@.extid_encode(text, bigint, bigint)'::pg_catalog.regprocedure,
       '@extschema@.extid_decode(text, uuid)'::pg_catalog.regprocedure]::pg_catalog.oid[]);

-- The floor's copy in the WAL, so that a promoted standby starts above this
-- server's values whatever its clock (as the install script makes it).
SELECT pg_catalog.pg_replication_origin_create('nonceforge_floor')
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_origin
                    WHERE roname OPERATOR(pg_catalog.=) 'nonceforge_floor');

-- New: pg_tuid's C extension's functions (tuid_generate, stuid_generate), and
-- the set-returning forms for bulk work (series.rs).
CREATE FUNCTION @extschema@.tuid_generate() RETURNS pg_catalog.uuid
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'tuid_generate_wrapper';
CREATE FUNCTION @extschema@.tuid_generate_tz(id pg_catalog.uuid) RETURNS pg_catalog.timestamptz
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'tuid_generate_tz_wrapper';
CREATE FUNCTION @extschema@.stuid_generate() RETURNS pg_catalog.bytea
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'stuid_generate_wrapper';
CREATE FUNCTION @extschema@.uuidv7_series(count pg_catalog.int8) RETURNS SETOF pg_catalog.uuid
STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_uuidv7_series';
CREATE FUNCTION @extschema@.nonce_series(bits pg_catalog.int4, count pg_catalog.int8) RETURNS SETOF pg_catalog.bytea
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_nonce_series';
CREATE FUNCTION @extschema@.sortable_nonce_series(bits pg_catalog.int4, count pg_catalog.int8) RETURNS SETOF pg_catalog.bytea
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_sortable_nonce_series';
CREATE FUNCTION @extschema@.encrypted_nonce_series(bits pg_catalog.int4, count pg_catalog.int8) RETURNS SETOF pg_catalog.bytea
STRICT VOLATILE PARALLEL UNSAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_encrypted_nonce_series';
REVOKE EXECUTE ON FUNCTION @extschema@.encrypted_nonce_series(integer, bigint) FROM PUBLIC;

-- New: external ids without a stored random half (derived from seq under the
-- key, every face's call without one), the lookup that refuses ids not made
-- so, and everything an id decodes to. They use the server's key: not PUBLIC's.
CREATE FUNCTION @extschema@.extid_encode(type_name pg_catalog.text, seq pg_catalog.int8) RETURNS pg_catalog.uuid
STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'extid_encode_seq_wrapper';
CREATE FUNCTION @extschema@.extid_seq(type_name pg_catalog.text, id pg_catalog.uuid) RETURNS pg_catalog.int8
STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'extid_seq_wrapper';
CREATE FUNCTION @extschema@.extid_inspect(type_name pg_catalog.text, id pg_catalog.uuid) RETURNS TABLE (
    seq pg_catalog.int8,
    rand pg_catalog.int8,
    key_version pg_catalog.int4,
    derived pg_catalog.bool
)
STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'extid_inspect_wrapper';
REVOKE EXECUTE ON FUNCTION @extschema@.extid_encode(text, bigint) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_seq(text, uuid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_inspect(text, uuid) FROM PUBLIC;
-- The same, for ids that do not carry their key version
-- (nonceforge.extid_version_in_band = off): the version is given.
CREATE FUNCTION @extschema@.extid_seq(type_name pg_catalog.text, id pg_catalog.uuid, key_version pg_catalog.int4) RETURNS pg_catalog.int8
STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'extid_seq_version_wrapper';
CREATE FUNCTION @extschema@.extid_inspect(type_name pg_catalog.text, id pg_catalog.uuid, key_version pg_catalog.int4) RETURNS TABLE (
    seq pg_catalog.int8,
    rand pg_catalog.int8,
    key_version pg_catalog.int4,
    derived pg_catalog.bool
)
STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'extid_inspect_version_wrapper';
REVOKE EXECUTE ON FUNCTION @extschema@.extid_seq(text, uuid, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_inspect(text, uuid, integer) FROM PUBLIC;

-- New: the fleet's metric series for this server (docs/operations.md), for
-- monitoring tools: pg_monitor's, not PUBLIC's.
CREATE FUNCTION @extschema@.nonceforge_metrics() RETURNS TABLE (
    metric pg_catalog.text,
    labels pg_catalog.jsonb,
    value pg_catalog.float8,
    metric_type pg_catalog.text,
    help pg_catalog.text
)
STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonceforge_metrics_wrapper';
REVOKE EXECUTE ON FUNCTION @extschema@.nonceforge_metrics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.nonceforge_metrics() TO pg_monitor;

-- New: the parts of a plain nonce in either layout (standard or wide, which
-- the bytes do not say). Reads no server state: any role may call it.
CREATE FUNCTION @extschema@.nonce_inspect(nonce pg_catalog.bytea, layout pg_catalog.text DEFAULT 'standard', epoch_unix_ms pg_catalog.int8 DEFAULT 1735689600000) RETURNS TABLE (
    unix_ms pg_catalog.int8,
    machine_id pg_catalog.int4,
    counter pg_catalog.numeric
)
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'nonce_inspect_wrapper';
