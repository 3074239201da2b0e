#!/usr/bin/env bash
# Multi-client inserts (run by bench/pg/run.sh, which sets port, pgbin and
# restart_cluster): pgbench, 8 clients, 50 transactions each, every transaction
# inserting 10,000 rows whose id is the primary key's column default — as the
# superuser and as `app`, an application role with only INSERT on the tables.
# Then the server restarts with nonceforge.server_order = on and the uuidv7 and
# bigserial rows run again beside the server-ordered uuidv7. Figures are rows/s,
# the median of 3 rounds; each round runs every row once, in turn.
set -euo pipefail
rounds="${NONCEFORGE_BENCH_ROUNDS:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' RETURN
psql_su() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -v ON_ERROR_STOP=1 "$@"; }

psql_su -c "DO \$\$ BEGIN CREATE ROLE app LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$"
tables=(bigserial gen_random_uuid uuidv7 tuid6)
for t in "${tables[@]}"; do
    case $t in
        bigserial) col="id bigserial PRIMARY KEY" ;;
        *) col="id uuid DEFAULT $t() PRIMARY KEY" ;;
    esac
    psql_su -c "DROP TABLE IF EXISTS mc_$t; CREATE TABLE mc_$t ($col, n int); GRANT INSERT ON mc_$t TO app;
                GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO app"
    echo "INSERT INTO mc_$t (n) SELECT g FROM generate_series(1, 10000) g;" > "$work/$t.sql"
done

# run ROLE TABLE: rows/s of one pgbench run (the table emptied first)
run() {
    psql_su -c "TRUNCATE mc_$2" -c "CHECKPOINT"
    local tps
    tps=$("$pgbin/pgbench" -h 127.0.0.1 -p "$port" -U "$1" -n -c 8 -j 2 -t 50 -f "$work/$2.sql" postgres 2>&1 |
        sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
    awk -v t="$tps" 'BEGIN { printf "%.0f\n", t * 10000 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# rounds ROWS...: each ROW is ROLE:TABLE:LABEL; prints LABEL ROLE median
measure() {
    for ((r = 1; r <= rounds; r++)); do
        for row in "$@"; do
            IFS=: read -r role table label <<<"$row"
            echo "$label $role $(run "$role" "$table")" >> "$work/results"
        done
    done
}
: > "$work/results"
rows=()
for role in postgres app; do for t in "${tables[@]}"; do rows+=("$role:$t:$t"); done; done
measure "${rows[@]}"

restart_cluster "$port" "${cluster_options[@]}" -c nonceforge.server_order=on
rows=()
for role in postgres app; do rows+=("$role:bigserial:bigserial(restarted)" "$role:uuidv7:uuidv7(server_order)" "$role:uuidv7:uuidv7(restarted)"); done
measure "${rows[@]}"

echo
echo "== 8 clients × 50 transactions × 10,000 rows (pgbench), rows/s, median of $rounds rounds"
echo "| default | role | rows/s | × bigserial | × gen_random_uuid |"
echo "|---|---|---:|---:|---:|"
for role in postgres app; do
    base=$(awk -v r="$role" '$1 == "bigserial" && $2 == r { print $3 }' "$work/results" | median)
    base2=$(awk -v r="$role" '$1 == "bigserial(restarted)" && $2 == r { print $3 }' "$work/results" | median)
    grand=$(awk -v r="$role" '$1 == "gen_random_uuid" && $2 == r { print $3 }' "$work/results" | median)
    for label in bigserial gen_random_uuid uuidv7 tuid6 "bigserial(restarted)" "uuidv7(restarted)" "uuidv7(server_order)"; do
        m=$(awk -v l="$label" -v r="$role" '$1 == l && $2 == r { print $3 }' "$work/results" | median)
        b=$base; [[ $label == *"("* ]] && b=$base2
        awk -v l="$label" -v r="$role" -v m="$m" -v b="$b" -v g="$grand" \
            'BEGIN { printf "| %s | %s | %\047d | %.2f | %.2f |\n", l, r, m, m / b, m / g }'
    done
done
