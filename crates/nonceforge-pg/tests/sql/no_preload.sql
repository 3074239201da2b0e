-- As `app`, on a server that does not preload the library (machine id 7 set
-- with ALTER SYSTEM). This session's first statement sets a placeholder before
-- the library is loaded: it must not become the machine id (no fallback, no
-- session override), and keys are never taken from a setting.
SET nonceforge.machine_id = 600;
SET nonceforge.extid_key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
SET nonceforge.key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
DO $$ BEGIN
    -- The first call loads the library: the placeholder 600 is refused (a
    -- WARNING), the server's 7 stays.
    ASSERT public.uuid_extract_version(public.uuidv7()) = 7;
    ASSERT current_setting('nonceforge.machine_id') = '7';
END $$;
\ir expect_error.sql
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, 1)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT encrypted_nonce(128)$q$, '55000', true);
-- Nonces need the server-wide state in shared memory: refused, with a hint.
SELECT pg_temp.expect_error($q$SELECT nonce(64)$q$, '0A000', true);
SELECT pg_temp.expect_error($q$SELECT nonce(128)$q$, '0A000', true);
SELECT pg_temp.expect_error($q$SELECT sortable_nonce(64)$q$, '0A000', true);
SELECT pg_temp.expect_error($q$SELECT sortable_nonce(128)$q$, '0A000', true);
-- From 15 the reserved prefix removes the placeholder; 14 keeps it (warned
-- about, never read: extid_encode() refused above all the same).
SELECT current_setting('server_version_num')::int >= 150000 AS reserved_prefix \gset
\if :reserved_prefix
SELECT pg_temp.expect_error($q$SHOW nonceforge.extid_key$q$, '42704');
\endif
SELECT pg_temp.expect_error($q$SET nonceforge.machine_id = 600$q$, '55P02');
DO $$ BEGIN
    ASSERT uuid_extract_version(uuidv7()) = 7 AND length(stuid()) = 32;
END $$;
