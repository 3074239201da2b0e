#!/usr/bin/env bash
# The PostgreSQL benchmark: installs the extension, starts a throwaway cluster on
# a loopback port and runs bench.sql in one session (`make bench-pg`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
port="${NONCEFORGE_BENCH_PGPORT:-54339}"
source "$root/crates/nonceforge-pg/tests/sql/cluster.sh"
# Settings for a benchmark on a throwaway cluster, not for production.
start_cluster "$port" -c shared_preload_libraries=nonceforge -c shared_buffers=1GB -c max_wal_size=8GB -c synchronous_commit=off -c fsync=off
psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -f "$here/bench.sql"
