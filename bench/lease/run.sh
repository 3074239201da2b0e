#!/usr/bin/env bash
# Lease benchmark: starts PostgreSQL 15, Redis and etcd on loopback ports in a
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
etcd --name bench --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-cluster "bench=http://127.0.0.1:$((etcd_port + 1))" >"$dir/etcd.log" 2>&1 &
pids+=($!)
for port in "$redis_port" "$etcd_port"; do
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
done
sleep 1 # etcd: elect itself

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for url in "postgres://postgres@127.0.0.1:$pg_port/postgres" "redis://127.0.0.1:$redis_port" "etcd://127.0.0.1:$etcd_port"; do
    echo
    echo "== $url"
    "$bin" lease bench --backend "$url" "$@"
done
