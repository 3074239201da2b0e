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
if psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 -f "$here/nonceforge.sql" >/dev/null; then
    echo "sql: $checks passed, 0 failed"
else
    echo "--- server log"; tail -20 "$cluster_dir/log"
    echo "sql: 0 passed, 1 failed"
    exit 1
fi
