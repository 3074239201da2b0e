-- pg_uuidv7's names and semantics.
SELECT uuid_v7_to_timestamptz('018570bb-4a7d-7c7e-8df4-6d47afd8c8fc') AT TIME ZONE 'UTC';
SELECT uuid_v7_to_timestamp('018570bb-4a7d-7c7e-8df4-6d47afd8c8fc');
SELECT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00', true);
SELECT uuid_timestamp_to_v7('2023-01-02 04:26:40.637', true);
SELECT uuid_extract_version(uuid_generate_v7());
SELECT uuid_v7_to_timestamptz(uuid_timestamptz_to_v7('10889-08-02 05:31:50.655+00', true)) AT TIME ZONE 'UTC';
SELECT uuid_v7_to_timestamptz('ffffffff-ffff-7fff-bfff-ffffffffffff') AT TIME ZONE 'UTC';
SELECT uuid_timestamptz_to_v7('infinity');
SELECT uuid_timestamptz_to_v7('1969-12-31 23:59:59+00');
SELECT uuid_timestamp_to_v7('-infinity');
SELECT uuid_timestamp_to_v7('12000-01-01');
SELECT uuid_timestamptz_to_v7('10889-08-02 05:31:50.656+00');
