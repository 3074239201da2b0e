#!/usr/bin/env bash
# SQL tests: installs the extension into the system PostgreSQL 15, starts a
# throwaway cluster on a loopback port as the postgres user, runs nonceforge.sql
# with psql, and stops and removes the cluster whatever happens.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port="${NONCEFORGE_TEST_PGPORT:-54329}"
source "$here/cluster.sh"
preload="-c shared_preload_libraries=nonceforge"
start_cluster "$port" $preload

checks=$(grep -cE '^(DO|SELECT pg_temp.expect_error)' "$here/nonceforge.sql")
sql() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
concurrent() {
    # Four backends at once draw every kind of nonce; none may repeat.
    sql -c "CREATE TABLE nonces (kind text, v bytea)"
    local pids=()
    for _ in 1 2 3 4; do
        sql -c "SET nonceforge.key = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
                INSERT INTO nonces SELECT 'c64', nonce(64) FROM generate_series(1, 30000);
                INSERT INTO nonces SELECT 'c96', nonce(96) FROM generate_series(1, 30000);
                INSERT INTO nonces SELECT 'c128', nonce(128) FROM generate_series(1, 30000);
                INSERT INTO nonces SELECT 'e64', encrypted_nonce(64) FROM generate_series(1, 30000);
                INSERT INTO nonces SELECT 'e128', encrypted_nonce(128) FROM generate_series(1, 30000);
                INSERT INTO nonces SELECT 's96', sortable_nonce(96) FROM generate_series(1, 30000);
                INSERT INTO nonces SELECT 's128', sortable_nonce(128) FROM generate_series(1, 30000);
                INSERT INTO nonces SELECT 's64', sortable_nonce(64) FROM generate_series(1, 30000);" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    [ "$(sql -At -c "SELECT count(*) = 960000 AND count(*) = count(DISTINCT (kind, v)) FROM nonces")" = t ]
}
restarts() {
    # After a restart the shared 64-bit sortable sequence starts afresh, past
    # every nonce made before; counter nonces go on from their sequences.
    restart_cluster "$port" $preload &&
    sql -c "INSERT INTO nonces SELECT 's64 after', sortable_nonce(64) FROM generate_series(1, 20000);
            INSERT INTO nonces SELECT 'c64 after', nonce(64) FROM generate_series(1, 20000)" &&
    [ "$(sql -At -c "SELECT (SELECT v FROM nonces WHERE kind = 's64 after' ORDER BY v LIMIT 1)
                          > (SELECT v FROM nonces WHERE kind = 's64' ORDER BY v DESC LIMIT 1)
                       AND (SELECT count(DISTINCT v) FROM nonces WHERE kind LIKE 's64%') = 140000
                       AND (SELECT count(DISTINCT v) FROM nonces WHERE kind LIKE 'c64%') = 140000")" = t ] &&
    # Without the library preloaded, sortable_nonce(64) is refused with a hint.
    restart_cluster "$port" &&
    [ "$(sql -At -c "DO \$\$ BEGIN PERFORM sortable_nonce(64); RAISE 'no error';
                     EXCEPTION WHEN feature_not_supported THEN RAISE NOTICE 'refused'; END \$\$" 2>&1)" = "NOTICE:  refused" ]
}
checks=$((checks + 3))
if sql -f "$here/nonceforge.sql" >/dev/null && concurrent && restarts; then
    echo "sql: $checks passed, 0 failed"
else
    echo "--- server log"; tail -20 "$cluster_dir/log"
    echo "sql: 0 passed, 1 failed"
    exit 1
fi
