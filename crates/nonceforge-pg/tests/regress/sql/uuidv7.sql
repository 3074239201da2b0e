-- PostgreSQL 18's names (ours here, by schema), and min/max over uuid.
SELECT uuid_extract_version(public.uuidv7()), uuid_extract_version(public.uuidv4());
SELECT public.uuid_extract_timestamp(public.uuidv7()) BETWEEN now() - interval '1 minute' AND clock_timestamp() AS recent;
SELECT public.uuid_extract_timestamp('c232ab00-9414-11ec-b3c8-9f6bdeced846') AT TIME ZONE 'UTC';
SELECT public.uuid_extract_version('00000000-0000-0000-0000-000000000000');
SELECT bool_and(x > p) AS monotonic FROM (SELECT x, lag(x) OVER (ORDER BY i) p
  FROM (SELECT public.uuidv7() x, i FROM generate_series(1, 20000) i) g) s WHERE p IS NOT NULL;
-- Shifts: calendar-aware, past 292 years, and 18's errors for the rest.
SELECT s AS shift, abs(extract(epoch FROM public.uuid_extract_timestamp(public.uuidv7(s)) - (now() + s))) < 60 AS "now() + shift"
  FROM unnest(ARRAY['1 day', '300 years', '1000 years', '8000 years', '-50 years', '1 mon 3 days 04:05:06']::interval[]) s;
SELECT public.uuidv7('9000 years');
SELECT public.uuidv7('-100 years');
SELECT public.uuidv7('300000 years');
SELECT min(u), max(u) FROM (VALUES ('00000000-0000-0000-0000-000000000001'::uuid),
  ('ffffffff-0000-0000-0000-000000000000'), (NULL), ('12345678-0000-0000-0000-000000000000')) v(u);
SELECT uuid_smaller('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001'),
       uuid_larger('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001');
