#!/usr/bin/env bash
# The extension built at BEFORE and at the working tree, side by side on
# PostgreSQL 15 (work_mem 256MB: generate_series' 1M rows stay in memory, where
# at the default its tuplestore spills to a file and the disk is the noise);
# prints each row's median and the median of the rounds' after/before.
#   bench/pg/before-after.sh ROWS [BEFORE]
# ROWS (and BEFORE's default):
#   metrics  what nonceforge_metrics()'s counting costs the nonce functions
#            (issue 47; before: a5bbb72~1), each round on a throwaway cluster
#            with the library preloaded, the builds installed alternately: one
#            session drawing SELECT count(nonce(64)) and count(nonce(96)) FROM
#            generate_series(1, 1e6), and 4 clients at once (pgbench -c 4,
#            each transaction 100,000 nonce(96))
#   uuidv7   uuidv7() and uuid_generate_v7() per row (issue 50; before: HEAD)
#            beside gen_random_uuid() and the bare executor (count(1)): one
#            cluster without preload, the two builds' nonceforge.so swapped
#            before each round (a new connection loads the file afresh; the
#            SQL installed is the working tree's, the symbols are both's), so
#            a round's pair shares the machine's state; also each one's own
#            cost over count(1) and the whole query's ratio to gen_random_uuid()'s;
#            and uuidv7_series(1e6) in the select list and in FROM against the
#            per-row uuidv7()
# NONCEFORGE_BENCH_ROUNDS rounds (default 3; uuidv7: 15). Installs into the
# system's PostgreSQL 15: do not run it beside make test.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rows="${1:-}"
case "$rows" in
metrics) before="${2:-a5bbb72~1}" ;;
uuidv7) before="${2:-HEAD}" ;;
*) echo "usage: $0 metrics|uuidv7 [BEFORE]" >&2; exit 2 ;;
esac
rounds="${NONCEFORGE_BENCH_ROUNDS:-$([ "$rows" = uuidv7 ] && echo 15 || echo 3)}"
port="${NONCEFORGE_BENCH_PGPORT:-25599}"
export PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}" NONCEFORGE_PG_PREINSTALLED=1
build_env=(CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0)
# BEFORE's tree is kept in target/pg-before-REV (its build too: the next run
# at the same revision builds nothing again); a moving name (HEAD) is resolved.
rev=$(git -C "$root" rev-parse --short "$before^{commit}")
tree="$root/target/pg-before-$rev"
work="$(mktemp -d)"
cleanup() { stop_cluster || true; rm -rf "$work"; }
[ -d "$tree" ] || git -C "$root" worktree add -q --detach "$tree" "$rev"
source "$root/crates/nonceforge-pg/tests/sql/cluster.sh"
trap cleanup EXIT
install() { (cd "$1/crates/nonceforge-pg" && env "${build_env[@]}" cargo pgrx install --release --pg-config "$PGBIN/pg_config" >/dev/null); }
q() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -At -v ON_ERROR_STOP=1 "$@"; }
# ms SQL...: the last statement's run time in ms, as psql's \timing reports it
# (the statements run in one connection: those before warm it).
ms() {
    local args=(-c '\timing on') sql
    for sql; do args+=(-c "$sql"); done
    q "${args[@]}" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}
row() { echo "$1 $2 $3" >> "$work/results"; } # row BUILD NAME MS
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "SELECT count(nonce(96)) FROM generate_series(1, 100000);" > "$work/multi.sql"

measure_metrics() { # one round of every row for the installed build
    ms "SELECT count(nonce(64)) FROM generate_series(1, 100000)" >/dev/null # warm
    row "$1" session_nonce64 "$(ms "SELECT count(nonce(64)) FROM generate_series(1, 1000000)")"
    row "$1" session_nonce96 "$(ms "SELECT count(nonce(96)) FROM generate_series(1, 1000000)")"
    local tps
    tps=$("$PGBIN/pgbench" -h 127.0.0.1 -p "$port" -U postgres -n -c 4 -j 2 -t 20 -f "$work/multi.sql" postgres 2>&1 |
        sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
    # As ms per 1e6 nonces, so that lower is better for every row.
    row "$1" clients4_nonce96 "$(awk -v t="$tps" 'BEGIN { printf "%.1f\n", 1e6 / (t * 100000) * 1000 }')"
}

measure_uuidv7() { # one round: each row in a new connection (the library loaded afresh)
    local f
    for f in "1" "gen_random_uuid()" "uuidv7()" "uuid_generate_v7()"; do
        # The first statement warms the backend (the library, the generator).
        row "$1" "count($f)" "$(ms "SELECT count($f) FROM generate_series(1, 300000)" \
            "SELECT count($f) FROM generate_series(1, 1000000)")"
    done
    # The bulk form where the README advises it (the select list: a
    # ProjectSet) and in FROM (a FunctionScan, its rows stored first).
    row "$1" "series_select_list" "$(ms "SELECT count(x) FROM (SELECT uuidv7_series(300000) x) s" \
        "SELECT count(x) FROM (SELECT uuidv7_series(1000000) x) s")"
    row "$1" "series_from" "$(ms "SELECT count(*) FROM uuidv7_series(300000)" \
        "SELECT count(*) FROM uuidv7_series(1000000)")"
}

settings=(-c shared_buffers=1GB -c work_mem=256MB -c fsync=off -c synchronous_commit=off)
if [ "$rows" = uuidv7 ]; then
    lib="$("$PGBIN/pg_config" --pkglibdir)/nonceforge.so"
    install "$tree" && cp "$lib" "$work/before.so"
    install "$root" && cp "$lib" "$work/after.so"
    put() { cp "$work/$1.so" "$lib.tmp" && mv "$lib.tmp" "$lib"; }
    start_cluster "$port" "${settings[@]}"
    q -c "CREATE EXTENSION IF NOT EXISTS nonceforge"
    for ((r = 1; r <= rounds; r++)); do
        for build in before after; do put "$build"; measure_uuidv7 "$build"; done
    done
    put after
    stop_cluster
else
    for ((r = 1; r <= rounds; r++)); do
        for build in before after; do
            if [ "$build" = before ]; then install "$tree"; else install "$root"; fi
            start_cluster "$port" -c shared_preload_libraries=nonceforge -c nonceforge.machine_id=7 "${settings[@]}"
            q -c "CREATE EXTENSION IF NOT EXISTS nonceforge"
            measure_metrics "$build"
            stop_cluster
        done
    done
fi

m() { awk -v b="$1" -v r="$2" '$1 == b && $2 == r { print $3 }' "$work/results" | median; }
# ratio NAME: the median over rounds of after/before (each round's pair).
ratio() {
    paste <(awk -v r="$1" '$1 == "before" && $2 == r { print $3 }' "$work/results") \
        <(awk -v r="$1" '$1 == "after" && $2 == r { print $3 }' "$work/results") |
        awk '{ print $2 / $1 }' | median
}
echo "| row (ms per 1e6 rows; median of $rounds rounds) | before ($before = $rev) | after (working tree) | after / before (median of the rounds' pairs) |"
echo "|---|---:|---:|---:|"
for name in $(awk '{ print $2 }' "$work/results" | awk '!seen[$0]++'); do
    awk -v r="$name" -v b="$(m before "$name")" -v a="$(m after "$name")" -v x="$(ratio "$name")" \
        'BEGIN { printf "| %s | %.1f | %.1f | %.3f |\n", r, b, a, x }'
done
if [ "$rows" = uuidv7 ]; then
    echo
    echo "| row | gen_random_uuid() / it (the whole query, as issue 50 reads it): before | after | its own cost over count(1), ns: before | after |"
    echo "|---|---:|---:|---:|---:|"
    for f in "uuidv7()" "uuid_generate_v7()"; do
        awk -v f="$f" -v e0="$(m before 'count(1)')" -v e1="$(m after 'count(1)')" \
            -v g0="$(m before 'count(gen_random_uuid())')" -v g1="$(m after 'count(gen_random_uuid())')" \
            -v u0="$(m before "count($f)")" -v u1="$(m after "count($f)")" \
            'BEGIN { printf "| %s | %.2fx | %.2fx | %.1f | %.1f |\n", f, g0 / u0, g1 / u1, u0 - e0, u1 - e1 }'
    done
    echo
    echo "| uuidv7_series(1e6) | count(uuidv7()) per row / it: before | after |"
    echo "|---|---:|---:|"
    for f in series_select_list series_from; do
        awk -v f="$f" -v u0="$(m before 'count(uuidv7())')" -v u1="$(m after 'count(uuidv7())')" \
            -v s0="$(m before "$f")" -v s1="$(m after "$f")" \
            'BEGIN { printf "| %s | %.2fx | %.2fx |\n", f, u0 / s0, u1 / s1 }'
    done
fi
