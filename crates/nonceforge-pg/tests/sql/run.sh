#!/usr/bin/env bash
# SQL tests: installs the extension into the system PostgreSQL 15, starts a
# throwaway cluster on a loopback port as the postgres user, runs nonceforge.sql
# with psql, and stops and removes the cluster whatever happens.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port="${NONCEFORGE_TEST_PGPORT:-54329}"
source "$here/cluster.sh"
start_cluster "$port"

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
                INSERT INTO nonces SELECT 's128', sortable_nonce(128) FROM generate_series(1, 30000);" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    [ "$(sql -At -c "SELECT count(*) = 840000 AND count(*) = count(DISTINCT (kind, v)) FROM nonces")" = t ]
}
checks=$((checks + 1))
if sql -f "$here/nonceforge.sql" >/dev/null && concurrent; then
    echo "sql: $checks passed, 0 failed"
else
    echo "--- server log"; tail -20 "$cluster_dir/log"
    echo "sql: 0 passed, 1 failed"
    exit 1
fi
