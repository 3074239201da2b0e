-- External ids with the fixed test key: the same ids on every run and every
-- face (the CLI gives these for NONCEFORGE_EXTID_KEY = the test key).
SELECT extid_encode('user', 42, 7);
SELECT extid_encode('order', 42, 7);
SELECT extid_encode('invoice_line', 72057594037927935, 4611686018427387903);
SELECT * FROM extid_inspect('user', extid_encode('user', 42, 7));
SELECT uuid_extract_version(extid_encode('user', 0, 0));
-- Without a random half: derived from seq under the key (every face's call
-- without one gives these same ids); extid_seq is the lookup that refuses ids
-- not made so, extid_inspect tells everything an id decodes to.
SELECT extid_encode('user', 42);
SELECT extid_encode('user', 72057594037927935);
SELECT extid_seq('user', extid_encode('user', 42));
SELECT * FROM extid_decode('user', extid_encode('user', 42));
SELECT * FROM extid_inspect('user', extid_encode('user', 42));
SELECT * FROM extid_inspect('user', extid_encode('user', 42, 7));
SELECT extid_seq('user', extid_encode('user', 42, 7));
-- The obvious decode is the checked one: a stored random half is refused, as
-- extid_seq refuses it (extid_inspect, above, reads such ids unverified).
SELECT * FROM extid_decode('user', extid_encode('user', 42, 7));
SELECT extid_seq('order', extid_encode('user', 42));
-- The key version given (for ids that do not carry theirs): here they do,
-- and a different one is refused rather than read under the wrong key.
SELECT extid_seq('user', extid_encode('user', 42), 0);
SELECT * FROM extid_inspect('user', extid_encode('user', 42, 7), 0);
SELECT extid_seq('user', extid_encode('user', 42), 1);
SELECT extid_seq('user', extid_encode('user', 42), 16);
SELECT extid_encode('user', -1);
SELECT extid_encode('user', 72057594037927936);
-- Errors: the type name's rule, checked (its length first) before anything else.
SELECT extid_encode('User', 1, 1);
SELECT extid_encode('', 1, 1);
SELECT extid_encode('user_', 1, 1);
SELECT extid_encode(repeat('a', 64), 1, 1);
SELECT extid_encode(repeat('ab', 100000), 1, 1);
SELECT * FROM extid_decode(repeat('é', 100), '01838576-137b-8f9c-a637-be6b8d32af6e');
SELECT extid_encode('user', -1, 1);
SELECT extid_encode('user', 1, -1);
SELECT extid_encode('user', 1, 4611686018427387904);
SELECT extid_encode('user', 72057594037927936, 1);
SELECT * FROM extid_decode('user', '01838576-137b-af9c-a637-be6b8d32af6e');
SELECT * FROM extid_decode('order', extid_encode('user', 42, 7));
