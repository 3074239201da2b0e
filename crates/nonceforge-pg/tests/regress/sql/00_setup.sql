-- The extension, as an administrator installs it, and an application role.
CREATE EXTENSION nonceforge;
CREATE ROLE regress_app LOGIN;
GRANT EXECUTE ON FUNCTION encrypted_nonce(integer), encrypted_nonce_series(integer, bigint),
    extid_encode(text, bigint, bigint), extid_decode(text, uuid) TO regress_app;
-- Every function of the extension, with its attributes and grants.
SELECT p.oid::regprocedure AS function, p.provolatile AS vol, p.proparallel AS par, p.proisstrict AS strict,
       p.proretset AS set, pg_get_function_result(p.oid) AS result,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_run
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nonceforge'
 ORDER BY p.oid::regprocedure::text;
SELECT roname FROM pg_replication_origin;
SHOW nonceforge.machine_id;
SHOW nonceforge.max_clock_wait;
