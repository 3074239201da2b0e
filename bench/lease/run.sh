#!/usr/bin/env bash
# Lease benchmark: starts PostgreSQL 15, Redis (one server, and a cluster of
# three primaries) and etcd on loopback ports in a
# throwaway directory, runs `nonceforge lease bench` against each (acquire time;
# nonce rates with a lease held and without, alternating rounds), and stops them.
# Usage: bench/lease/run.sh [extra `lease bench` flags, e.g. --json]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/target/release/nonceforge"
pgbin="${PGBIN:-/usr/lib/postgresql/15/bin}"
pg_port="${NONCEFORGE_BENCH_PGPORT:-55439}"
redis_port="${NONCEFORGE_BENCH_REDISPORT:-56379}"
etcd_port="${NONCEFORGE_BENCH_ETCDPORT:-52379}"
cluster_port="${NONCEFORGE_BENCH_CLUSTERPORT:-57000}" # three nodes from here, their buses 100 above
dir="$(mktemp -d /tmp/nonceforge-lease-bench.XXXXXX)"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$dir"
pids=()
cleanup() {
    as_pg "$pgbin/pg_ctl" -D "$dir/pg" -m immediate stop >/dev/null 2>&1 || true
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT

as_pg "$pgbin/initdb" -D "$dir/pg" -A trust -U postgres --no-sync >/dev/null
as_pg "$pgbin/pg_ctl" -D "$dir/pg" -l "$dir/pg.log" -w \
    -o "-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir" start >/dev/null
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" >/dev/null &
pids+=($!)
cluster_nodes=()
for i in 0 1 2; do
    p=$((cluster_port + i))
    mkdir -p "$dir/cluster$i"
    redis-server --port "$p" --cluster-port $((p + 100)) --bind 127.0.0.1 --save "" --appendonly no \
        --cluster-enabled yes --cluster-config-file nodes.conf --dir "$dir/cluster$i" >/dev/null &
    pids+=($!)
    cluster_nodes+=("127.0.0.1:$p")
done
etcd --name bench --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-cluster "bench=http://127.0.0.1:$((etcd_port + 1))" >"$dir/etcd.log" 2>&1 &
pids+=($!)
for port in "$redis_port" "$etcd_port" "$cluster_port" $((cluster_port + 1)) $((cluster_port + 2)); do
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || {
        echo "nothing listens on port $port: $(tail -3 "$dir/etcd.log" 2>/dev/null)" >&2; exit 1; }
done
sleep 1 # etcd: elect itself
redis-cli --cluster create "${cluster_nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null
for i in 0 1 2; do
    for _ in $(seq 100); do
        redis-cli -p $((cluster_port + i)) CLUSTER INFO | grep -q cluster_state:ok && break; sleep 0.1
    done
done
cluster_url="redis+cluster://$(IFS=,; echo "${cluster_nodes[*]}")"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for url in "postgres://postgres@127.0.0.1:$pg_port/postgres" "redis://127.0.0.1:$redis_port" "$cluster_url" "etcd://127.0.0.1:$etcd_port"; do
    echo
    echo "== $url"
    "$bin" lease bench --backend "$url" "$@"
done

# Before and after: NONCEFORGE_BEFORE_BIN=/path/to/an/older/nonceforge runs both
# binaries' acquire timing in alternating rounds, and times one renewal
# request of each protocol on the store side (pgbench, redis-benchmark).
before="${NONCEFORGE_BEFORE_BIN:-}"
[ -n "$before" ] || exit 0
rounds="${NONCEFORGE_BEFORE_ROUNDS:-5}"
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
acquire_ms() { "$1" lease bench --backend "$2" --json --acquires 40 --rounds 1 --seconds 0.02 --ttl 2s "${@:3}" \
    | awk -F'"median_ms":' '/"lease_acquire"/ { split($2, a, /[,}]/); print a[1] }'; }
echo
echo "| acquire, median of $rounds rounds of 40 | before | after | after ÷ before |"
echo "|---|---:|---:|---:|"
for url in "postgres://postgres@127.0.0.1:$pg_port/postgres" "redis://127.0.0.1:$redis_port" "etcd://127.0.0.1:$etcd_port"; do
    : > "$dir/b"; : > "$dir/a"
    for r in $(seq "$rounds"); do
        acquire_ms "$before" "$url" --namespace "ba_before" >> "$dir/b"
        acquire_ms "$bin" "$url" --namespace "ba_after" >> "$dir/a"
    done
    b=$(median < "$dir/b"); a=$(median < "$dir/a")
    printf '| %s | %.2f ms | %.2f ms | %.2f |\n' "${url%%://*}" "$b" "$a" "$(echo "$a / $b" | bc -l)"
done

# One renewal on the store side: protocol 1's statement or script against
# protocol 2's, on a held id, 20000 times each, alternating rounds.
"$bin" lease acquire --backend "postgres://postgres@127.0.0.1:$pg_port/postgres" --namespace ren --for 600s --ttl 1h >"$dir/held" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do grep -q machine_id "$dir/held" 2>/dev/null && break; sleep 0.1; done
psql_q() { psql -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -XAtq -c "$1"; }
grant=$(psql_q "SELECT grant_id || ' ' || (SELECT incarnation FROM nonceforge_lease.ren_meta) FROM nonceforge_lease.ren_leases WHERE grant_id IS NOT NULL LIMIT 1")
psql_q "CREATE TABLE v1_leases (machine_id smallint PRIMARY KEY, holder text, token bigint NOT NULL DEFAULT 0, expires_at timestamptz, floor_unix_ms bigint NOT NULL DEFAULT 0);
        INSERT INTO v1_leases VALUES (0, 'h', 1, now() + interval '1 hour', 0);" >/dev/null
cat > "$dir/v1.sql" <<SQL
UPDATE v1_leases SET expires_at = clock_timestamp() + 3000::float8 * interval '1 millisecond', floor_unix_ms = greatest(floor_unix_ms, 1::int8) WHERE machine_id = 0::int2 AND token = 1::int8 AND holder = 'h'::text;
SQL
cat > "$dir/v2.sql" <<SQL
WITH m AS (SELECT incarnation FROM nonceforge_lease.ren_meta), u AS (UPDATE nonceforge_lease.ren_leases SET expires_at = pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) (3000::pg_catalog.float8 OPERATOR(pg_catalog.*) '1 millisecond'::pg_catalog.interval), floor_unix_ms = greatest(coalesce(floor_unix_ms, 0), 1::pg_catalog.int8) WHERE machine_id OPERATOR(pg_catalog.=) 0::pg_catalog.int2 AND grant_id OPERATOR(pg_catalog.=) '${grant% *}'::pg_catalog.text AND (SELECT incarnation FROM m) OPERATOR(pg_catalog.=) '${grant#* }'::pg_catalog.text RETURNING 1) SELECT (SELECT pg_catalog.count(*) FROM u), (SELECT incarnation FROM m), (SELECT coalesce(grant_id, '') FROM nonceforge_lease.ren_leases WHERE machine_id OPERATOR(pg_catalog.=) 0::pg_catalog.int2);
SQL
pg_lat() { PGPASSWORD= "$pgbin/pgbench" -h 127.0.0.1 -p "$pg_port" -U postgres -n -M prepared -t 20000 -f "$1" postgres 2>/dev/null \
    | awk -F'= ' '/latency average/ { split($2, a, " "); print a[1] * 1000 }'; }
# Redis: protocol 1's renew script and protocol 2's, on a held id.
r1=$(cat <<'LUA'
local key, rec = ARGV[1] .. ':lease:' .. ARGV[2], ARGV[1] .. ':rec:' .. ARGV[2]
local cur = redis.call('GET', key)
if cur == ARGV[3] then
  redis.call('PEXPIRE', key, ARGV[4])
elseif cur == false and redis.call('HGET', rec, 'token') == ARGV[3] then
  redis.call('SET', key, ARGV[3], 'PX', ARGV[4])
else
  return 0
end
if tonumber(ARGV[5]) > tonumber(redis.call('HGET', rec, 'floor') or '0') then
  redis.call('HSET', rec, 'floor', ARGV[5])
end
return 1
LUA
)
rc() { redis-cli -p "$redis_port" "$@"; }
rc SET v1:lease:0 7 PX 3600000 >/dev/null; rc HSET v1:rec:0 holder h token 7 floor 1 >/dev/null
"$bin" lease acquire --backend "redis://127.0.0.1:$redis_port" --namespace ren --for 600s --ttl 1h >"$dir/rheld" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do grep -q machine_id "$dir/rheld" 2>/dev/null && break; sleep 0.1; done
rgrant=$(rc HGET ren:rec:0 grant); rinc=$(rc HGET ren:tokens incarnation); rtoken=$(rc HGET ren:rec:0 token)
r2=$(cat "$root/crates/nonceforge-lease/src/store/redis/renew.lua")
# The script's text is the CSV's first field (lines and all): count from the end.
redis_lat() { redis-benchmark -p "$redis_port" -n 20000 -c 1 --csv "$@" 2>/dev/null | awk -F'","' 'END { print $(NF - 5) * 1000 }'; }
: > "$dir/p1"; : > "$dir/p2"; : > "$dir/r1"; : > "$dir/r2"
for r in $(seq "$rounds"); do
    pg_lat "$dir/v1.sql" >> "$dir/p1"; pg_lat "$dir/v2.sql" >> "$dir/p2"
    redis_lat EVAL "$r1" 0 v1 0 7 3000 1 >> "$dir/r1"
    redis_lat EVAL "$r2" 0 ren 0 "$rgrant" 3000 1 "$rinc" h "$rtoken" >> "$dir/r2"
done
echo
echo "| one renewal request, store side, median of $rounds rounds of 20000 | protocol 1 | protocol 2 | 2 ÷ 1 |"
echo "|---|---:|---:|---:|"
p1=$(median < "$dir/p1"); p2=$(median < "$dir/p2"); q1=$(median < "$dir/r1"); q2=$(median < "$dir/r2")
printf '| postgres (pgbench, prepared, 1 client) | %.1f µs | %.1f µs | %.2f |\n' "$p1" "$p2" "$(echo "$p2 / $p1" | bc -l)"
printf '| redis (redis-benchmark EVAL, 1 client) | %.1f µs | %.1f µs | %.2f |\n' "$q1" "$q2" "$(echo "$q2 / $q1" | bc -l)"
