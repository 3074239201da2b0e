-- As the administrator (postgres): the extension, and an application role with
-- no rights beyond the defaults. dblink lets the server-order test drive two
-- backends from one script.
CREATE EXTENSION nonceforge;
CREATE EXTENSION dblink;
CREATE ROLE app LOGIN;
-- The functions that use the server's key are not executable by PUBLIC: the
-- administrator grants them, as the README shows.
GRANT EXECUTE ON FUNCTION encrypted_nonce(integer), encrypted_nonce_series(integer, bigint),
    extid_encode(text, bigint, bigint), extid_encode(text, bigint), extid_seq(text, uuid),
    extid_decode(text, uuid), extid_inspect(text, uuid), extid_seq(text, uuid, integer),
    extid_inspect(text, uuid, integer) TO app;
-- A role with no grant at all, for the least-privilege checks.
CREATE ROLE nobody LOGIN;
