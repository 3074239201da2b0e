#!/usr/bin/env bash
# The PostgreSQL benchmark: installs the extension, starts a throwaway cluster on
# a loopback port, runs bench.sql in one session, then multi.sh: 8 clients at
# once with pgbench, as the superuser and as an application role (`make bench-pg`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
port="${NONCEFORGE_BENCH_PGPORT:-54339}"
source "$root/crates/nonceforge-pg/tests/sql/cluster.sh"
# Settings for a benchmark on a throwaway cluster, not for production.
cluster_options=(-c shared_preload_libraries=nonceforge -c nonceforge.machine_id=7 -c shared_buffers=1GB
                 -c max_wal_size=8GB -c synchronous_commit=off -c fsync=off)
start_cluster "$port" "${cluster_options[@]}"
psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -f "$here/bench.sql"
source "$here/multi.sh"
