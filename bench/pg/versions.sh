#!/usr/bin/env bash
# PostgreSQL 15 and 18 side by side (`make bench-pg-versions`): per version, a
# throwaway cluster with the extension preloaded; ids a second in one session
# (SELECT count(f()) FROM generate_series(1, 1e6), median of 3), then inserts
# with 8 clients (pgbench -c 8 -j 2 -t 50, 10,000 rows a transaction, the id as
# the primary key's default; median of 3 rounds, every row once a round) for
# bigserial, gen_random_uuid(), 18's built-in uuidv7() (18 only), ours
# (public.uuidv7()), and ours with nonceforge.server_order = on (after a restart).
#   versions.sh [MAJOR...]     (default: 15 18)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds="${NONCEFORGE_BENCH_ROUNDS:-3}"
if [ "${1:-}" != --one ]; then
    results=$(mktemp)
    trap 'rm -f "$results"' EXIT
    majors=("$@"); [ ${#majors[@]} -gt 0 ] || majors=(15 18)
    for v in "${majors[@]}"; do "$0" --one "$v" "$results"; done
    median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
    echo
    echo "== ids a second, one session (median of 3), and rows/s with 8 clients (median of $rounds rounds)"
    header="| id | what |"; rule="|---|---|"
    for v in "${majors[@]}"; do header="$header PG $v | × bigserial |"; rule="$rule---:|---:|"; done
    echo "$header"; echo "$rule"
    for what in gen ins; do
        for label in bigserial gen_random_uuid builtin_uuidv7 ours_uuidv7 ours_uuidv7_server_order \
                     ours_uuidv7_series_select ours_uuidv7_series_from ours_uuidv7_series_server_order \
                     ours_nonce96 ours_nonce96_series_select; do
            line="| $label | $what |"; any=no
            for v in "${majors[@]}"; do
                m=$(awk -v v="$v" -v w="$what" -v l="$label" '$1 == v && $2 == w && $3 == l { print $4 }' "$results" | median)
                b=$(awk -v v="$v" -v w="$what" '$1 == v && $2 == w && $3 == "bigserial" { print $4 }' "$results" | median)
                if [ -z "$m" ]; then line="$line — | — |"; else
                    line="$line $(awk -v m="$m" -v b="$b" 'BEGIN { printf "%\047d | %.2f", m, m / b }') |"; any=yes; fi
            done
            [ "$any" = no ] || echo "$line"
        done
    done
    exit 0
fi

major="$2" results="$3"
if [ "$major" = 15 ]; then PGBIN=/usr/lib/postgresql/15/bin; else PGBIN="/opt/nonceforge-pg/$major/bin"; fi
export PGBIN
port="${NONCEFORGE_BENCH_PGPORT:-54339}"
source "$root/crates/nonceforge-pg/tests/sql/cluster.sh"
opts=(-c shared_preload_libraries=nonceforge -c nonceforge.machine_id=7 -c shared_buffers=1GB
      -c max_wal_size=8GB -c synchronous_commit=off -c fsync=off)
start_cluster "$port" "${opts[@]}"
q() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -At -v ON_ERROR_STOP=1 "$@"; }
echo "== PostgreSQL $(q -c "SHOW server_version")"
builtin=$([ "$major" -ge 18 ] && echo yes || echo no)
q -c "CREATE EXTENSION nonceforge" -c "CREATE SEQUENCE s" \
  -c "CREATE FUNCTION pg_temp_rate(query text, n bigint) RETURNS float8 LANGUAGE plpgsql AS \$f\$
      DECLARE t0 timestamptz; r float8[] := '{}';
      BEGIN FOR i IN 1..3 LOOP t0 := clock_timestamp(); EXECUTE query;
          r := r || (n / extract(epoch FROM clock_timestamp() - t0))::float8; END LOOP;
        RETURN (SELECT x FROM unnest(r) x ORDER BY x OFFSET 1 LIMIT 1); END \$f\$"
gen() { # gen LABEL EXPR
    local rate
    rate=$(q -v expr="$2" <<<"SELECT round(pg_temp_rate(format('SELECT count(%s) FROM generate_series(1, 1000000)', :'expr'), 1000000))")
    echo "$major gen $1 $rate" >> "$results"
}
gen bigserial "nextval('s')"
gen gen_random_uuid "gen_random_uuid()"
[ "$builtin" = no ] || gen builtin_uuidv7 "pg_catalog.uuidv7()"
gen ours_uuidv7 "public.uuidv7()"
gen ours_nonce96 "public.nonce(96)"
# The set-returning forms: in the select list (no tuplestore), and in FROM.
series() { # series LABEL QUERY(with %s for the count)
    local rate
    rate=$(q -v query="$2" <<<"SELECT round(pg_temp_rate(format(:'query', 1000000), 1000000))")
    echo "$major gen $1 $rate" >> "$results"
}
series ours_uuidv7_series_select "SELECT count(x) FROM (SELECT public.uuidv7_series(%s) x) s"
series ours_uuidv7_series_from "SELECT count(*) FROM public.uuidv7_series(%s)"
series ours_nonce96_series_select "SELECT count(x) FROM (SELECT public.nonce_series(96, %s) x) s"

work=$(mktemp -d)
tables=(bigserial gen_random_uuid ours_uuidv7)
[ "$builtin" = no ] || tables+=(builtin_uuidv7)
for t in "${tables[@]}"; do
    case $t in
        bigserial) col="id bigserial PRIMARY KEY" ;;
        gen_random_uuid) col="id uuid DEFAULT gen_random_uuid() PRIMARY KEY" ;;
        builtin_uuidv7) col="id uuid DEFAULT pg_catalog.uuidv7() PRIMARY KEY" ;;
        ours_uuidv7) col="id uuid DEFAULT public.uuidv7() PRIMARY KEY" ;;
    esac
    q -c "CREATE TABLE mc_$t ($col, n int)"
    echo "INSERT INTO mc_$t (n) SELECT g FROM generate_series(1, 10000) g;" > "$work/$t.sql"
done
ins() { # ins TABLE LABEL: one pgbench run
    q -c "TRUNCATE mc_$1" -c "CHECKPOINT"
    local tps
    tps=$("$pgbin/pgbench" -h 127.0.0.1 -p "$port" -U postgres -n -c 8 -j 2 -t 50 -f "$work/$1.sql" postgres 2>&1 |
        sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
    echo "$major ins $2 $(awk -v t="$tps" 'BEGIN { printf "%.0f", t * 10000 }')" >> "$results"
}
for ((r = 1; r <= rounds; r++)); do for t in "${tables[@]}"; do ins "$t" "$t"; done; done

# Ours with server order: restart with it on, and bigserial again beside it.
restart_cluster "$port" "${opts[@]}" -c nonceforge.server_order=on
gen ours_uuidv7_server_order "public.uuidv7()"
series ours_uuidv7_series_server_order "SELECT count(x) FROM (SELECT public.uuidv7_series(%s) x) s"
for ((r = 1; r <= rounds; r++)); do ins ours_uuidv7 ours_uuidv7_server_order; done
rm -rf "$work"
