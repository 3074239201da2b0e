-- Included by run.sh after a search_path (and, for pg_temp, temporary views)
-- was set in a fresh backend: the first call of every function of the
-- extension, each in its own statement. Nothing here may fire a trap.
SELECT nonce(64), nonce(96), nonce(128);
SELECT sortable_nonce(64), sortable_nonce(96), sortable_nonce(128);
SELECT encrypted_nonce(64), encrypted_nonce(96), encrypted_nonce(128);
SELECT extid_encode('user', 1, 2);
SELECT * FROM extid_decode('user', extid_encode('user', 1));
SELECT extid_seq('user', extid_encode('user', 1));
SELECT * FROM extid_inspect('user', extid_encode('user', 1));
SELECT uuidv7(), uuidv7(interval '1 hour'), uuidv4(), uuid_generate_v7();
SELECT tuid6(), tuid6_from_tz(pg_catalog.now()), tuid6_tz(tuid6()), tuid6_to_compact(tuid6());
SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvbg');
SELECT stuid(), stuid_tz(stuid()), stuid_to_compact(stuid()), stuid_from_compact(stuid_to_compact(stuid()));
SELECT uuid_extract_timestamp(uuidv7()), uuid_extract_version(uuidv7());
SELECT uuid_v7_to_timestamptz(uuidv7()), uuid_v7_to_timestamp(uuidv7());
SELECT uuid_timestamptz_to_v7(pg_catalog.now()), uuid_timestamptz_to_v7(pg_catalog.now(), true);
SELECT uuid_timestamp_to_v7(LOCALTIMESTAMP), uuid_smaller(uuidv7(), uuidv4()), uuid_larger(uuidv7(), uuidv4());
SELECT min(u), max(u) FROM (VALUES (uuidv7()), (uuidv4())) v(u);
SELECT tuid_generate(), tuid_generate_tz(tuid_generate()), stuid_generate();
SELECT uuidv7_series(2), nonce_series(64, 2), sortable_nonce_series(96, 2), encrypted_nonce_series(128, 2);
SELECT count(*) FROM uuidv7_series(3) JOIN nonce_series(128, 3) ON true;
