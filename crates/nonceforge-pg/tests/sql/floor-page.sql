-- The floor's WAL record ending exactly on a WAL page boundary, run by run.sh
-- as the administrator with server order on. The record (the replication
-- origin nonceforge_floor's progress) is flushed before any id passes the
-- floor; at a page boundary the insert position is past the next page's
-- header while the record ends before it, so flushing "up to the insert
-- position" failed with "xlog flush request ... is not satisfied". Non-
-- transactional messages (pg_logical_emit_message) of a computed size put the
-- position just short of a boundary before each id, until an id moves the
-- floor there (the floor moves about every 1.5 s); every id must be made.
DO $$
DECLARE
    page constant bigint := current_setting('wal_block_size')::bigint;
    segment constant bigint := pg_size_bytes(current_setting('wal_segment_size'));
    t0 constant timestamptz := clock_timestamp();
    base bigint;       -- a message's record size less its content (content > 255 bytes)
    r bigint := 0;     -- the floor record's size
    p pg_lsn; q pg_lsn;
    pos bigint; b bigint; size bigint; header bigint; content bigint;
    tries int := 0; u uuid;
BEGIN
    -- A message of 304 bytes (a multiple of 8, over 255: the long length form),
    -- less the page header it crossed, if it crossed one (a first estimate,
    -- corrected below).
    p := pg_current_wal_insert_lsn();
    PERFORM pg_logical_emit_message(false, 'nonceforge-test', repeat('x', 304));
    q := pg_current_wal_insert_lsn();
    b := (q - '0/0')::bigint / page * page;
    base := (q - p)::bigint - 304 - CASE
        WHEN (p - '0/0')::bigint >= b THEN 0 WHEN b % segment = 0 THEN 40 ELSE 24 END;
    ASSERT base BETWEEN 40 AND 120, format('a message''s record: %s bytes besides its content', base);
    -- The floor record's size: what an id that moves the floor adds (a first
    -- estimate, corrected below).
    WHILE r = 0 LOOP
        ASSERT clock_timestamp() < t0 + interval '20 s', 'no id moved the floor in 20 s';
        p := pg_current_wal_insert_lsn();
        u := public.uuidv7();
        q := pg_current_wal_insert_lsn();
        IF q > p AND (p - '0/0')::bigint / page = (q - '0/0')::bigint / page THEN
            r := (q - p)::bigint;
        ELSE
            PERFORM pg_sleep(0.02);
        END IF;
    END LOOP;
    ASSERT r BETWEEN 24 AND 200, format('a floor record of %s bytes', r);
    -- Before every id: a message that ends r bytes short of a page boundary.
    LOOP
        ASSERT clock_timestamp() < t0 + interval '60 s',
            format('no floor record ended on a page boundary in 60 s (%s ids)', tries);
        tries := tries + 1;
        pos := (pg_current_wal_insert_lsn() - '0/0')::bigint;
        b := (pos / page + 1) * page;
        header := 0;
        IF b - r - pos < base + 304 THEN  -- too close: aim at the next page's end
            b := b + page;
            header := CASE WHEN (b - page) % segment = 0 THEN 40 ELSE 24 END;
        END IF;
        size := b - r - pos - header;  -- the message's record, a multiple of 8
        content := size - base;
        PERFORM pg_logical_emit_message(false, 'nonceforge-test', repeat('x', content::int));
        p := pg_current_wal_insert_lsn();
        IF (p - '0/0')::bigint <> b - r THEN
            -- Another backend wrote WAL meanwhile, or the estimate was off:
            -- this message's size corrects it (the next one says which).
            base := least(greatest((p - '0/0')::bigint - pos - header - content, 40), 120);
            CONTINUE;
        END IF;
        u := public.uuidv7();  -- the failure was here: an ERROR from XLogFlush
        q := pg_current_wal_insert_lsn();
        IF q = p THEN  -- the floor did not move on this id
            PERFORM pg_sleep(0.02);
            CONTINUE;
        END IF;
        IF (q - '0/0')::bigint IN (b + 24, b + 40) THEN  -- the record ended at b
            RAISE NOTICE 'a floor record ended on a page boundary after % ids, and the id was made', tries;
            EXIT;
        END IF;
        -- Short of the boundary: the first id of a session can write more
        -- than the floor record; this one's size is the record's.
        r := (q - p)::bigint;
    END LOOP;
END $$;
