-- Who can see and touch what, run by run.sh as the administrator with the
-- variables keyfile, extidkeyfile (the key files) and keyhex, extidhex (their
-- contents). Part of it runs as `app` (\c - app): fresh sessions of the
-- application role, as the application would open them.

\ir expect_error.sql
-- The ways an administrator might try to hand a key to an application through
-- settings are refused: the prefix is reserved, and the machine id is the server's.
SELECT current_setting('server_version_num')::int >= 150000 AS reserved_prefix \gset
\if :reserved_prefix
SELECT pg_temp.expect_error(format('ALTER ROLE app SET nonceforge.extid_key = %L', :'extidhex'), '42602');
SELECT pg_temp.expect_error(format('ALTER DATABASE postgres SET nonceforge.key = %L', :'keyhex'), '42602');
\else
-- PostgreSQL 14 cannot reserve a prefix (MarkGUCPrefixReserved is 15's): such a
-- setting is stored, and warned about, but never read as a key — keys come only
-- from files. Say so here, and leave nothing behind.
SET client_min_messages = error;
ALTER ROLE app SET nonceforge.extid_key = 'not-a-key';
ALTER ROLE app RESET nonceforge.extid_key;
RESET client_min_messages;
\endif
SELECT pg_temp.expect_error(format('ALTER ROLE app SET nonceforge.extid_key_file = %L', :'extidkeyfile'), '55P02');
SELECT pg_temp.expect_error('ALTER ROLE app SET nonceforge.machine_id = 3', '55P02');
DO $$ BEGIN
    ASSERT NOT EXISTS (SELECT 1 FROM pg_db_role_setting WHERE array_to_string(setconfig, ' ') LIKE '%nonceforge%');
    -- The superuser sees the file settings (paths), never a key.
    ASSERT (SELECT count(*) FROM pg_settings WHERE name IN ('nonceforge.key_file', 'nonceforge.extid_key_file')) = 2;
END $$;

\c - app
\ir expect_error.sql
CREATE TEMP TABLE secrets (k text);
INSERT INTO secrets VALUES (:'keyhex'), (:'extidhex');
-- Settings: the key files' names are superuser-only, the keys are in none.
SELECT pg_temp.expect_error('SHOW nonceforge.key_file', '42501');
SELECT pg_temp.expect_error('SHOW nonceforge.extid_key_file', '42501');
SELECT pg_temp.expect_error($q$SELECT current_setting('nonceforge.extid_key_file')$q$, '42501');
SELECT pg_temp.expect_error('SHOW nonceforge.extid_key', '42704');
SELECT pg_temp.expect_error($q$SELECT current_setting('nonceforge.key')$q$, '42704');
SELECT pg_temp.expect_error(format('SELECT pg_read_file(%L)', :'extidkeyfile'), '42501');
SELECT pg_temp.expect_error(format('SELECT pg_read_binary_file(%L)', :'keyfile'), '42501');
DO $$ BEGIN
    ASSERT NOT EXISTS (SELECT 1 FROM pg_settings WHERE name LIKE 'nonceforge.%key%');
    ASSERT NOT EXISTS (SELECT 1 FROM pg_settings s, secrets WHERE s.setting ILIKE '%' || k || '%' OR s.reset_val ILIKE '%' || k || '%' OR s.boot_val ILIKE '%' || k || '%');
    ASSERT NOT EXISTS (SELECT 1 FROM pg_db_role_setting r, secrets WHERE array_to_string(r.setconfig, ' ') ILIKE '%' || k || '%');
    ASSERT NOT EXISTS (SELECT 1 FROM pg_proc p, secrets WHERE p.prosrc ILIKE '%' || k || '%');
    -- What app may see: the machine id (not a secret) and the functions.
    ASSERT current_setting('nonceforge.machine_id') = '7';
END $$;
-- The extension keeps no relations: its state is in shared memory, out of SQL's reach.
DO $$ BEGIN
    ASSERT NOT EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nonceforge'
                       WHERE d.deptype = 'e' AND d.classid = 'pg_class'::regclass);
    -- Nothing is SECURITY DEFINER and nothing sets its own search_path.
    ASSERT NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
                       JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nonceforge'
                       WHERE p.prosecdef OR p.proconfig IS NOT NULL);
    -- The key functions are not PUBLIC's; the others are.
    ASSERT NOT has_function_privilege('nobody', 'encrypted_nonce(integer)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'encrypted_nonce_series(integer, bigint)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'extid_encode(text, bigint, bigint)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'extid_decode(text, uuid)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'extid_encode(text, bigint)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'extid_seq(text, uuid)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'extid_inspect(text, uuid)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'extid_seq(text, uuid, integer)', 'EXECUTE');
    ASSERT NOT has_function_privilege('nobody', 'extid_inspect(text, uuid, integer)', 'EXECUTE');
    ASSERT has_function_privilege('nobody', 'nonce(integer)', 'EXECUTE');
    ASSERT has_function_privilege('nobody', 'nonce_series(integer, bigint)', 'EXECUTE');
    ASSERT has_function_privilege('app', 'encrypted_nonce(integer)', 'EXECUTE');
END $$;
-- …and yet every function works for it (nonceforge.sql ran as app too).
DO $$ BEGIN
    ASSERT length(nonce(64)) = 8 AND length(encrypted_nonce(128)) = 16 AND length(sortable_nonce(128)) = 16;
    ASSERT (SELECT seq FROM extid_decode('user', extid_encode('user', 9))) = 9;
END $$;

\c - nobody
\ir expect_error.sql
SELECT pg_temp.expect_error('SELECT encrypted_nonce(64)', '42501');
SELECT pg_temp.expect_error('SELECT encrypted_nonce_series(64, 3)', '42501');
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, 1)$q$, '42501');
SELECT pg_temp.expect_error($q$SELECT * FROM extid_decode('user', '01838576-137b-8f9c-a637-be6b8d32af6e')$q$, '42501');
DO $$ BEGIN
    ASSERT length(nonce(96)) = 12 AND length(sortable_nonce(64)) = 8;
END $$;
