-- As `app`, on a server with the library preloaded but nothing configured: no
-- machine id, no key files. Nonce and key functions refuse with a HINT, never
-- fall back to a default; the id functions that need neither work.
\ir expect_error.sql
SELECT pg_temp.expect_error($q$SELECT nonce(64)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT nonce(128)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT sortable_nonce(64)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT sortable_nonce(96)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT encrypted_nonce(64)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1, 1)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT extid_encode('user', 1)$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT extid_seq('user', '01838576-137b-8f9c-a637-be6b8d32af6e')$q$, '55000', true);
SELECT pg_temp.expect_error($q$SELECT * FROM extid_decode('user', '01838576-137b-8f9c-a637-be6b8d32af6e')$q$, '55000', true);
DO $$ BEGIN
    ASSERT uuid_extract_version(uuidv7()) = 7 AND length(stuid()) = 32 AND tuid6() IS NOT NULL;
    ASSERT current_setting('nonceforge.machine_id') = '';
END $$;
