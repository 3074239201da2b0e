#!/usr/bin/env bash
# What nonceforge_metrics()'s counting costs the nonce functions (issue 47):
# the extension built at BEFORE (a revision without it) and at the working
# tree, side by side on PostgreSQL 15, alternating, each on a throwaway cluster
# with the library preloaded. Per build and round: one session drawing
# SELECT count(nonce(64)) and count(nonce(96)) FROM generate_series(1, 1e6),
# and 4 clients at once (pgbench -c 4, each transaction 100,000 nonce(96)).
# Prints the medians and AFTER/BEFORE ratios.
#   bench/pg/metrics-cost.sh [BEFORE]      (default: the commit before nonceforge_metrics)
# Installs into the system's PostgreSQL 15: do not run it beside make test.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
before="${1:-a5bbb72~1}"
rounds="${NONCEFORGE_BENCH_ROUNDS:-3}"
port="${NONCEFORGE_BENCH_PGPORT:-25599}"
export PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}" NONCEFORGE_PG_PREINSTALLED=1
build_env=(CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0)
tree="$(mktemp -d /tmp/nonceforge-before.XXXXXX)"
work="$(mktemp -d)"
cleanup() { stop_cluster || true; git -C "$root" worktree remove --force "$tree" 2>/dev/null || true; rm -rf "$work"; }
git -C "$root" worktree add -q --detach "$tree" "$before"
source "$root/crates/nonceforge-pg/tests/sql/cluster.sh"
trap cleanup EXIT
install() { (cd "$1/crates/nonceforge-pg" && env "${build_env[@]}" cargo pgrx install --release --pg-config "$PGBIN/pg_config" >/dev/null); }
q() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -At -v ON_ERROR_STOP=1 "$@"; }
# ms SQL: the statement's run time in ms, as psql's \timing reports it.
ms() { q -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'; }
echo "SELECT count(nonce(96)) FROM generate_series(1, 100000);" > "$work/multi.sql"
measure() { # measure LABEL: one round of every row for the installed build
    start_cluster "$port" -c shared_preload_libraries=nonceforge -c nonceforge.machine_id=7
    q -c "CREATE EXTENSION IF NOT EXISTS nonceforge"
    ms "SELECT count(nonce(64)) FROM generate_series(1, 100000)" >/dev/null # warm
    echo "$1 session_nonce64 $(ms "SELECT count(nonce(64)) FROM generate_series(1, 1000000)")" >> "$work/results"
    echo "$1 session_nonce96 $(ms "SELECT count(nonce(96)) FROM generate_series(1, 1000000)")" >> "$work/results"
    local tps
    tps=$("$PGBIN/pgbench" -h 127.0.0.1 -p "$port" -U postgres -n -c 4 -j 2 -t 20 -f "$work/multi.sql" postgres 2>&1 |
        sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
    # As ms per 1e6 nonces, so that lower is better for every row.
    echo "$1 clients4_nonce96 $(awk -v t="$tps" 'BEGIN { printf "%.1f\n", 1e6 / (t * 100000) * 1000 }')" >> "$work/results"
    stop_cluster
}
for ((r = 1; r <= rounds; r++)); do
    install "$tree"; measure before
    install "$root"; measure after
done
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "| row (ms per 1e6 nonces; median of $rounds) | before ($before) | after (working tree) | after / before |"
echo "|---|---:|---:|---:|"
for row in session_nonce64 session_nonce96 clients4_nonce96; do
    b=$(awk -v r="$row" '$1 == "before" && $2 == r { print $3 }' "$work/results" | median)
    a=$(awk -v r="$row" '$1 == "after" && $2 == r { print $3 }' "$work/results" | median)
    awk -v r="$row" -v b="$b" -v a="$a" 'BEGIN { printf "| %s | %.1f | %.1f | %.3f |\n", r, b, a, a / b }'
done
