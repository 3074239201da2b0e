#!/usr/bin/env bash
# Nonces never repeat after what DBAs do to a server. One primary (machine id 7,
# the library preloaded) is taken through: two databases, a template copy,
# DROP/CREATE EXTENSION, ALTER EXTENSION UPDATE from 0.1.0, a restart, a backend killed with SIGKILL (the
# postmaster's crash restart), an immediate stop (crash recovery), a restart
# with the clock an hour behind (refused, not repeated), a base backup restored
# after the primary issued more, a streaming standby (refuses while in
# recovery) promoted after the primary died, and a clone with its own machine
# id running beside its origin. Then the same with leased machine ids
# (nonceforge.machine_id = 'lease', a real Redis on loopback as the store): a
# clone leases its own id; a store outage stops nonces (lapsed) and a store that
# lost its data stops them for good (lost) until a restart; the lease keeper
# killed (a crash restart) leases anew; a clean stop releases the id; the
# command-line tool leases beside the server from the same store, takes the id
# the server released, and takes it again after an operator evicted it (the
# server stops); the store goes back to an older copy while the server draws
# and the tool takes its id (the server stops, nothing repeats); bad lease settings refuse. Every value of every kind, from every server and database,
# is collected and must be distinct within its kind.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
# Below the kernel's ephemeral range (32768-60999), so no free port another
# test asked the kernel for can take it while make test runs lanes side by side.
port="${NONCEFORGE_TEST_PGPORT:-25432}"
source "$here/cluster.sh"
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
# Every emitter writes a file of its own: emitters run concurrently, and
# appends of several psql processes to one file tear lines at buffer
# boundaries (a torn line once passed for a repeated value).
values_dir="$cluster_dir/values"
mkdir -p "$values_dir"
values_file() { mktemp -p "$values_dir"; }
all_values() { cat "$values_dir"/*; }
preload=(-c shared_preload_libraries=nonceforge -c nonceforge.machine_id=7)

q() { local p="$1" db="$2"; shift 2; psql -h 127.0.0.1 -p "$p" -U postgres -d "$db" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
emit() { # emit PORT DB: 3000 of every kind into a values file of its own
    q "$1" "$2" -c "SELECT k || ' ' || encode(v, 'hex') FROM (
        SELECT 'c64' k, nonce(64) v FROM generate_series(1, 3000) UNION ALL
        SELECT 'c96', nonce(96) FROM generate_series(1, 3000) UNION ALL
        SELECT 'c128', nonce(128) FROM generate_series(1, 3000) UNION ALL
        SELECT 'e64', encrypted_nonce(64) FROM generate_series(1, 3000) UNION ALL
        SELECT 'e128', encrypted_nonce(128) FROM generate_series(1, 3000) UNION ALL
        SELECT 's64', sortable_nonce(64) FROM generate_series(1, 3000) UNION ALL
        SELECT 's96', sortable_nonce(96) FROM generate_series(1, 3000) UNION ALL
        SELECT 's128', sortable_nonce(128) FROM generate_series(1, 3000)) s" > "$(values_file)"
}
start_at() { # start_at DATADIR PORT [options]
    local d="$1" p="$2"; shift 2
    as_pg "$pgbin/pg_ctl" -D "$d" -l "$d.log" -w -o "-p $p -c listen_addresses=127.0.0.1 -c unix_socket_directories=$cluster_dir $*" start >/dev/null
}
stop_at() { as_pg "$pgbin/pg_ctl" -D "$1" -m "${2:-fast}" -w stop >/dev/null; }
passed=0
check() { # check NAME: the values so far are distinct
    local bad; bad=$(all_values | awk '!(NF == 2 && $1 ~ /^[a-z0-9]+$/ && $2 ~ /^[0-9a-f]+$/ && (length($2) == 16 || length($2) == 24 || length($2) == 32)) && bad == "" { bad = $0 } END { print bad }')
    [ -z "$bad" ] || { echo "--- failed: $1: a malformed value line: $bad"; echo "scenarios: $passed passed, 1 failed"; exit 1; }
    local dups; dups=$(all_values | sort | uniq -d | awk 'NR <= 3')
    if [ -n "$dups" ]; then
        echo "--- failed: $1: repeated values: $dups"; echo "scenarios: $passed passed, 1 failed"; exit 1
    fi
    passed=$((passed + 1))
}
fail() { echo "--- failed: $1"; echo "scenarios: $passed passed, 1 failed"; exit 1; }

# Key file, as run.sh does.
mkdir -p "$cluster_dir/keys"; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$cluster_dir/keys/nonce.key"
chown -R postgres "$cluster_dir/keys"; chmod 600 "$cluster_dir/keys/nonce.key"
preload+=(-c "nonceforge.key_file=$cluster_dir/keys/nonce.key")

primary="$cluster_dir/pg"
start_cluster "$port" "${preload[@]}"
q "$port" postgres -c "CREATE EXTENSION nonceforge" -c "CREATE DATABASE db2"
q "$port" db2 -c "CREATE EXTENSION nonceforge"
emit "$port" postgres; emit "$port" db2
check "two databases of one server"

q "$port" postgres -c "CREATE DATABASE db3 TEMPLATE db2"
emit "$port" db3; emit "$port" db2
check "a template copy beside its template"

q "$port" db2 -c "DROP EXTENSION nonceforge" -c "CREATE EXTENSION nonceforge"
emit "$port" db2
check "DROP and CREATE EXTENSION"

# ALTER EXTENSION UPDATE from 0.1.0 (its install script as a fixture) while
# other backends draw nonces: values go on, all distinct, and the updated
# extension is exactly a fresh install's (every member, its attributes, its
# arguments with their defaults, its grants).
sharedir=$("$pgbin/pg_config" --sharedir)
old_script="$sharedir/extension/nonceforge--0.1.0.sql"
cp "$here/fixtures/nonceforge--0.1.0.sql" "$old_script"
trap 'rm -f "$old_script"; stop_cluster' EXIT
q "$port" postgres -c "CREATE DATABASE db4"
q "$port" db4 -c "CREATE EXTENSION nonceforge VERSION '0.1.0'"
# The README's order: the key functions granted before the update.
q "$port" postgres -c "CREATE ROLE app LOGIN" -c "CREATE ROLE app2 LOGIN"
q "$port" db4 -c "GRANT EXECUTE ON FUNCTION encrypted_nonce(integer), extid_encode(text, bigint, bigint), extid_decode(text, uuid) TO app"
emit "$port" db4 & emit "$port" db4 & emit "$port" db2 &
sleep 0.3
q "$port" db4 -c "ALTER EXTENSION nonceforge UPDATE"
wait
emit "$port" db4
# The extension's initial privileges (what pg_dump leaves out).
init_privs() {
    q "$port" "$1" -c "SELECT pg_describe_object(i.classoid, i.objoid, i.objsubid) || ' ' || i.privtype::text || ' ' || i.initprivs::text
        FROM pg_init_privs i JOIN pg_depend d ON d.classid = i.classoid AND d.objid = i.objoid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nonceforge' ORDER BY 1"
}
members() {
    q "$port" "$1" -c "SELECT pg_describe_object(d.classid, d.objid, 0) || coalesce((SELECT ' ' || p.provolatile::text
            || p.proparallel::text || p.proisstrict::text || p.prosecdef::text || ' (' || pg_get_function_arguments(p.oid)
            || ') ' || pg_get_function_result(p.oid)
            || ' ' || coalesce(p.proacl::text, 'default') FROM pg_proc p WHERE p.oid = d.objid
            AND d.classid = 'pg_proc'::regclass), '')
        FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
        WHERE e.extname = 'nonceforge' AND d.deptype = 'e' ORDER BY 1"
}
[ "$(q "$port" db4 -c "SELECT extversion FROM pg_extension WHERE extname = 'nonceforge'")" = 0.2.0 ] ||
    fail "ALTER EXTENSION UPDATE did not reach 0.2.0"
# Member by member as a fresh install, the DBA's grants to app aside.
members db4 | sed 's/,app=X\/postgres//' > "$cluster_dir/updated.txt"; members db2 > "$cluster_dir/fresh.txt"
[ "$(wc -l < "$cluster_dir/fresh.txt")" -ge 25 ] || fail "too few extension members: $(cat "$cluster_dir/fresh.txt")"
diff "$cluster_dir/updated.txt" "$cluster_dir/fresh.txt" >&2 || fail "the updated extension differs from a fresh install"
init_privs db4 > "$cluster_dir/updated.txt"; init_privs db2 > "$cluster_dir/fresh.txt"
[ "$(wc -l < "$cluster_dir/fresh.txt")" -ge 3 ] || fail "too few initial privileges: $(cat "$cluster_dir/fresh.txt")"
diff "$cluster_dir/updated.txt" "$cluster_dir/fresh.txt" >&2 || fail "the updated extension's initial privileges differ from a fresh install's"
rm -f "$old_script"
check "ALTER EXTENSION UPDATE from 0.1.0 while other backends draw nonces"

# Grants survive pg_dump and restore, whatever their order with the update:
# app's were given before it (above), app2's after; and in a fresh install.
q "$port" db4 -c "GRANT EXECUTE ON FUNCTION extid_decode(text, uuid), encrypted_nonce(integer) TO app2"
q "$port" db2 -c "GRANT EXECUTE ON FUNCTION encrypted_nonce(integer) TO app"
for db in db4 db2; do
    as_pg "$pgbin/pg_dump" -h 127.0.0.1 -p "$port" -U postgres -Fc -f "$cluster_dir/$db.dump" "$db"
    q "$port" postgres -c "CREATE DATABASE ${db}_restored"
    as_pg "$pgbin/pg_restore" -h 127.0.0.1 -p "$port" -U postgres -d "${db}_restored" "$cluster_dir/$db.dump"
done
granted() { # granted DB ROLE FUNCTION: whether ROLE may execute it
    q "$port" "$1" -c "SELECT has_function_privilege('$2', '$3', 'EXECUTE')"
}
for f in "encrypted_nonce(integer)" "extid_encode(text, bigint, bigint)" "extid_decode(text, uuid)"; do
    [ "$(granted db4_restored app "$f")" = t ] || fail "restored: app lost EXECUTE on $f (granted before the update)"
done
for f in "encrypted_nonce(integer)" "extid_decode(text, uuid)"; do
    [ "$(granted db4_restored app2 "$f")" = t ] || fail "restored: app2 lost EXECUTE on $f (granted after the update)"
done
[ "$(granted db4_restored app2 "extid_encode(text, bigint, bigint)")" = f ] || fail "restored: app2 may run extid_encode, never granted"
[ "$(granted db2_restored app "encrypted_nonce(integer)")" = t ] || fail "restored: app lost EXECUTE on a fresh install"
[ "$(granted db2_restored app "extid_encode(text, bigint, bigint)")" = f ] || fail "restored: PUBLIC may run extid_encode"
psql -h 127.0.0.1 -p "$port" -U app -d db4_restored -X -q -At -v ON_ERROR_STOP=1 -c "SELECT length(encrypted_nonce(96))" >/dev/null ||
    fail "restored: app cannot call encrypted_nonce"
passed=$((passed + 1))

backup="$cluster_dir/backup"
as_pg "$pgbin/pg_basebackup" -c fast -h 127.0.0.1 -p "$port" -U postgres -D "$backup" -X stream
emit "$port" postgres   # issued after the backup: its restore must not repeat these

restart_cluster "$port" "${preload[@]}"
emit "$port" postgres
check "a restart"

q "$port" postgres -c "SELECT pg_sleep(30)" >/dev/null 2>&1 &
sleeper=$!
sleep 1
pid=$(q "$port" postgres -c "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")
kill -9 "$pid"; wait "$sleeper" || true
for _ in $(seq 50); do q "$port" postgres -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
emit "$port" postgres
check "a backend killed with SIGKILL (the postmaster reinitializes shared memory)"

stop_at "$primary" immediate
start_at "$primary" "$port" "${preload[@]}"
emit "$port" postgres; emit "$port" db3
check "an immediate stop (crash recovery)"

# The clock an hour behind the floor: refused with a clear error, never repeated.
stop_at "$primary"
server_env=("LD_PRELOAD=$faketime_lib" "FAKETIME=-1h")
start_at "$primary" "$port" "${preload[@]}"
server_env=()
out=$(q "$port" postgres -c '\set VERBOSITY verbose' -c "SELECT nonce(64)" 2>&1 || true)
grep -q "55000" <<<"$out" && grep -q "behind the floor" <<<"$out" || fail "clock behind the floor: $out"
stop_at "$primary"
start_at "$primary" "$port" "${preload[@]}"
emit "$port" postgres
check "the clock an hour behind the floor: refused"

# A standby refuses while in recovery; the primary goes on, then dies; the
# standby is promoted and issues values above all of the primary's.
standby="$cluster_dir/standby"
as_pg "$pgbin/pg_basebackup" -c fast -h 127.0.0.1 -p "$port" -U postgres -D "$standby" -X stream -R
start_at "$standby" $((port + 1)) "${preload[@]}"
out=$(q $((port + 1)) postgres -c '\set VERBOSITY verbose' -c "SELECT nonce(96)" 2>&1 || true)
grep -q "25006" <<<"$out" && grep -q "in recovery" <<<"$out" || fail "a standby issued a nonce: $out"
out=$(q $((port + 1)) postgres -c "SELECT sortable_nonce(64)" 2>&1 || true)
grep -q "in recovery" <<<"$out" || fail "a standby issued a sortable nonce: $out"
emit "$port" postgres
stop_at "$primary" immediate
as_pg "$pgbin/pg_ctl" -D "$standby" -w promote >/dev/null
emit $((port + 1)) postgres; emit $((port + 1)) db2
check "a standby promoted after its primary died"
stop_at "$standby"

# The base backup taken earlier, restored after the primary issued more.
start_at "$backup" "$port" "${preload[@]}"
emit "$port" postgres; emit "$port" db2
check "a base backup restored after the primary issued more"

# A clone beside its origin, given its own machine id as the README says.
clone="$cluster_dir/clone"
as_pg "$pgbin/pg_basebackup" -c fast -h 127.0.0.1 -p "$port" -U postgres -D "$clone" -X stream
start_at "$clone" $((port + 1)) "${preload[@]}" -c nonceforge.machine_id=8
emit "$port" postgres & emit $((port + 1)) postgres & wait
check "a clone with its own machine id beside its origin"
stop_at "$clone"; stop_at "$backup"

# A streaming standby whose clock is 10 s behind its primary's (libfaketime).
# The primary draws for 6 s (the floor goes into the WAL as it moves), the
# standby replays it all, the primary dies, the standby is promoted: its clock
# is behind the old primary's floor by more than nonceforge.max_clock_wait, so
# it refuses (55000) instead of repeating the last 10 s of the old primary's
# values; allowed to wait, it issues values above all of them.
lagging="$cluster_dir/lagging"
start_at "$backup" "$port" "${preload[@]}"
as_pg "$pgbin/pg_basebackup" -c fast -h 127.0.0.1 -p "$port" -U postgres -D "$lagging" -X stream -R
server_env=("LD_PRELOAD=$faketime_lib" "FAKETIME=-10s" FAKETIME_DONT_FAKE_MONOTONIC=1)
start_at "$lagging" $((port + 1)) "${preload[@]}" -c nonceforge.server_order=on
server_env=()
# Server-ordered ids on the standby, in recovery: its floor moves in its own
# data directory (a standby writes no WAL).
[ "$(q $((port + 1)) postgres -c "SELECT count(DISTINCT public.uuidv7()) FROM generate_series(1, 100000)")" = 100000 ] ||
    fail "server-ordered uuidv7() on a standby"
lag=$(q $((port + 1)) postgres -c "SELECT round(extract(epoch FROM '$(date -u +%FT%T.%N)+00'::timestamptz - clock_timestamp()))")
[ "$lag" -ge 9 ] || fail "the standby's clock is not behind: $lag s"
draw_until=$((SECONDS + 6))
while [ "$SECONDS" -lt "$draw_until" ]; do
    q "$port" postgres -c "SELECT 's64 ' || encode(sortable_nonce(64), 'hex') FROM generate_series(1, 50000)" > "$(values_file)"
done
emit "$port" postgres
flushed=$(q "$port" postgres -c "SELECT pg_current_wal_flush_lsn()")
for _ in $(seq 100); do
    [ "$(q $((port + 1)) postgres -c "SELECT pg_last_wal_replay_lsn() >= '$flushed'")" = t ] && break; sleep 0.1
done
[ "$(q $((port + 1)) postgres -c "SELECT pg_last_wal_replay_lsn() >= '$flushed'")" = t ] || fail "the standby did not catch up"
stop_at "$backup" immediate
as_pg "$pgbin/pg_ctl" -D "$lagging" -w promote >/dev/null
out=$(q $((port + 1)) postgres -c '\set VERBOSITY verbose' -c "SELECT sortable_nonce(64)" 2>&1 || true)
grep -q "55000" <<<"$out" && grep -q "behind" <<<"$out" || fail "a promoted standby 10 s behind: $out"
out=$(q $((port + 1)) postgres -c '\set VERBOSITY verbose' -c "SELECT nonce(96)" 2>&1 || true)
grep -q "55000" <<<"$out" && grep -q "behind" <<<"$out" || fail "a promoted standby 10 s behind, nonce(96): $out"
q $((port + 1)) postgres -c "ALTER SYSTEM SET nonceforge.max_clock_wait = '40s'" -c "SELECT pg_reload_conf()" >/dev/null
emit $((port + 1)) postgres; emit $((port + 1)) db2
q $((port + 1)) postgres -c "SELECT 's64 ' || encode(sortable_nonce(64), 'hex') FROM generate_series(1, 50000)" > "$(values_file)"
check "a standby promoted with its clock 10 s behind its old primary's"
stop_at "$lagging"

# --- Leased machine ids: Redis on loopback is the fleet's store (TTL 2 s).
redis_port=$((port + 20))
redis_dir="$cluster_dir/redis"
mkdir -p "$redis_dir"
start_redis() {
    redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$redis_dir" \
        --daemonize yes --logfile "$redis_dir/log" --pidfile "$redis_dir/pid"
    for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && return; sleep 0.1; done
    fail "redis did not start"
}
stop_redis() { redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true; }
trap 'stop_redis; rm -f "$old_script"; stop_cluster' EXIT
start_redis
leased=(-c shared_preload_libraries=nonceforge -c "nonceforge.key_file=$cluster_dir/keys/nonce.key"
        -c nonceforge.machine_id=lease -c "nonceforge.lease_url=redis://127.0.0.1:$redis_port"
        -c nonceforge.lease_namespace=scenarios -c nonceforge.lease_ttl=2s)
status() { q "$1" postgres -c "SELECT machine_id || ' ' || source || ' ' || state FROM machine_id_status()"; }
refused() { # refused PORT PATTERN WHAT: nonce(64) fails with 55000 and PATTERN
    local out; out=$(q "$1" postgres -c '\set VERBOSITY verbose' -c "SELECT nonce(64)" 2>&1 || true)
    grep -q "55000" <<<"$out" && grep -q "$2" <<<"$out" || fail "$3: $out"
}

# metric PORT NAME [LABELS]: a series of nonceforge_metrics() now (the sum of
# those whose labels contain LABELS, jsonb).
metric() {
    q "$1" postgres -c "SELECT coalesce(sum(value), -1) FROM nonceforge_metrics() WHERE metric = '$2' AND labels @> '${3:-{\}}'"
}
# until_metric PORT NAME LABELS VALUE: polls until the series reads VALUE
# (the keeper publishes the lease's figures every 100 ms).
until_metric() {
    for _ in $(seq 50); do [ "$(metric "$1" "$2" "$3")" = "$4" ] && return; sleep 0.1; done
    fail "$2 $3: $(metric "$1" "$2" "$3"), not $4"
}

start_at "$backup" "$port" "${leased[@]}"
emit "$port" postgres
[ "$(status "$port")" = "0 lease held" ] || fail "leased id: $(status "$port")"
until_metric "$port" nonceforge_lease_state '{"state":"held"}' 1
until_metric "$port" nonceforge_lease_ready '{}' 1
[ "$(metric "$port" nonceforge_lease_machine_id)" = 0 ] || fail "lease_machine_id: $(metric "$port" nonceforge_lease_machine_id)"
[ "$(metric "$port" nonceforge_generator_enabled)" = 1 ] || fail "not enabled under a held lease"
# docs/ops/postgres_exporter.yml: every query runs (as a pg_monitor role) and
# returns rows, and the series postgres_exporter names from it (key_column) are
# the fleet's (testdata/vectors/metrics.json), every one, but the two its
# comments rename.
exporter_yml="$here/../../../../docs/ops/postgres_exporter.yml"
q "$port" postgres -c "CREATE ROLE exporter LOGIN IN ROLE pg_monitor"
# (the last renewal's round trip is there from the first renewal on)
for _ in $(seq 50); do [ "$(metric "$port" nonceforge_lease_renewal_last_seconds)" != -1 ] && break; sleep 0.1; done
while IFS=$'\t' read -r key query; do
    rows=$(psql -h 127.0.0.1 -p "$port" -U exporter -d postgres -X -q -At -v ON_ERROR_STOP=1 -c "$query" | wc -l) ||
        fail "postgres_exporter.yml: $key's query fails"
    [ "$rows" -ge 1 ] || fail "postgres_exporter.yml: $key's query returns no row"
done < <(awk '/^[a-z_]+:$/ { key = substr($0, 1, length($0) - 1) }
              /^  query: "/ { q = $0; sub(/^  query: "/, "", q); sub(/"$/, "", q); print key "\t" q }' "$exporter_yml")
made=$(awk '/^[a-z_]+:$/ { key = substr($0, 1, length($0) - 1) }
            /^    - [a-z_]+: \{usage: "(GAUGE|COUNTER)"/ { c = $2; sub(/:$/, "", c); print key "_" c }' "$exporter_yml" |
       sed 's/^nonceforge_lease_grant_/nonceforge_lease_/' | sort)
# (the generator's and the lease's families: the sanitizer's, after "sanitizer_metrics", are no server's)
fleet=$(sed '/"sanitizer_metrics"/,$d' "$here/../../../../testdata/vectors/metrics.json" |
        grep -o '"name": "nonceforge_[a-z_]*"' | cut -d'"' -f4 | sort)
[ "$made" = "$fleet" ] || fail "postgres_exporter.yml's series differ from metrics.json: $(diff <(echo "$made") <(echo "$fleet"))"
check "a leased machine id (its metrics, and postgres_exporter's queries for them)"

lclone="$cluster_dir/lclone"
as_pg "$pgbin/pg_basebackup" -c fast -h 127.0.0.1 -p "$port" -U postgres -D "$lclone" -X stream
start_at "$lclone" $((port + 1)) "${leased[@]}"
emit "$port" postgres & emit $((port + 1)) postgres & wait
[ "$(status $((port + 1)))" = "1 lease held" ] || fail "the clone's id: $(status $((port + 1)))"
check "a clone with the same settings beside its origin (leases its own id)"
stop_at "$lclone"

# The store goes away: past the deadline nonces stop (lapsed), and resume with
# the store back with its data... here it comes back empty, so the renewal finds
# the id gone: lost, stopped until a restart leases again.
stop_redis
sleep 2.5
refused "$port" "lapsed" "nonces under a lapsed lease"
[ "$(status "$port")" = "0 lease lapsed" ] || fail "lapsed status: $(status "$port")"
until_metric "$port" nonceforge_lease_state '{"state":"lapsed"}' 1
[ "$(metric "$port" nonceforge_generator_enabled)" = 0 ] || fail "enabled under a lapsed lease"
[ "$(metric "$port" nonceforge_refusals_total '{"reason":"deadline"}')" -ge 1 ] || fail "the refusal under a lapsed lease is not counted"
start_redis
for _ in $(seq 40); do [ "$(status "$port")" = "0 lease lost" ] && break; sleep 0.1; done
refused "$port" "lost" "nonces under a lost lease"
until_metric "$port" nonceforge_lease_state '{"state":"lost"}' 1
until_metric "$port" nonceforge_lease_lost '{}' 1
stop_at "$backup"
start_at "$backup" "$port" "${leased[@]}"
emit "$port" postgres
check "the store lost its data: stopped, then leased again after a restart"

# The keeper killed: the postmaster restarts everything (shared memory too),
# and the new keeper leases a new id (the old one is held until its TTL).
keeper=$(pgrep -P "$(head -1 "$backup/postmaster.pid")" -f "nonceforge lease keeper")
[ -n "$keeper" ] || fail "no lease keeper among the postmaster's children"
kill -9 "$keeper"
for _ in $(seq 100); do q "$port" postgres -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
emit "$port" postgres
grep -q " lease held$" <<<"$(status "$port")" || fail "after the keeper was killed: $(status "$port")"
check "the lease keeper killed (a crash restart leases anew)"

# A clean stop releases the id at once (its key leaves the store).
id=$(status "$port" | cut -d' ' -f1)
[ "$(redis-cli -p "$redis_port" exists "scenarios:lease:$id")" = 1 ] || fail "no lease key for id $id"
stop_at "$backup"
[ "$(redis-cli -p "$redis_port" exists "scenarios:lease:$id")" = 0 ] || fail "a clean stop left id $id leased"
passed=$((passed + 1))

# nonceforge.lease_fast_start: a value the keeper cannot read stops nonces and
# the log says why; 'declared' (the store never goes back, on the operator's
# word) starts right above the floor of the id released just above, instead of
# the TTL and margin later (docs/lease-protocol.md, "A store that goes back").
start_at "$backup" "$port" "${leased[@]}" -c nonceforge.lease_fast_start=sometimes
refused "$port" "cannot hold a machine id" "nonces under a lease_fast_start the keeper cannot read"
grep -q "nonceforge.lease_fast_start = 'sometimes'" "$backup.log" ||
    fail "the server log does not say why: $(tail -3 "$backup.log")"
stop_at "$backup"
start_at "$backup" "$port" "${leased[@]}" -c nonceforge.lease_fast_start=declared
emit "$port" postgres
for _ in $(seq 50); do grep -q "fast start: declared" "$backup.log" && break; sleep 0.1; done
grep -q "fast start: declared" "$backup.log" || fail "no fast start: $(grep nonceforge "$backup.log" | tail -3)"
stop_at "$backup"
check "lease_fast_start: refused when unreadable, declared starts above the floor at once"

# A polyglot fleet in miniature: the command-line tool (the Rust face) leases
# from the same store and namespace beside the server; then takes the id the
# server released at a clean stop, at once (above its floor); then an operator
# evicts the server's id with the tool: the server stops (lost) until a restart.
# NONCEFORGE_CLI: a CLI built beforehand (make test's lanes: a copy no other
# lane rewrites); without it, the workspace's, built now.
cli="${NONCEFORGE_CLI:-}"
[ -n "$cli" ] || { cli="$root/target/release/nonceforge"; (cd "$root" && cargo build --release --locked -q -p nonceforge-cli); }
store="redis://127.0.0.1:$redis_port"
cli_gen() { # cli_gen KIND BITS LABEL [lease options]: 3000 values into a values file of its own; the id it leased on stdout
    local kind="$1" bits="$2" label="$3" err; shift 3
    err=$(mktemp -p "$cluster_dir")
    "$cli" gen "$kind" --bits "$bits" -n 3000 --lease "$store" --namespace scenarios --ttl 2s "$@" 2>"$err" |
        sed "s/^/$label /" > "$(values_file)"
    sed -n 's/^nonceforge: lease: machine id \([0-9]*\) .*/\1/p' "$err"
}
start_at "$backup" "$port" "${leased[@]}"
emit "$port" postgres
pg_id=$(status "$port" | cut -d' ' -f1)
leases=$("$cli" lease status --backend "$store" --namespace scenarios)
grep -q "postgresql/" <<<"$leases" ||
    fail "the tool does not see the server's lease: $leases"
cli_gen counter 64 c64 > "$cluster_dir/cli1.id" & cli_gen sortable 64 s64 > "$cluster_dir/cli2.id" &
emit "$port" postgres; wait
for f in cli1 cli2; do
    [ -n "$(cat "$cluster_dir/$f.id")" ] && [ "$(cat "$cluster_dir/$f.id")" != "$pg_id" ] ||
        fail "the tool leased '$(cat "$cluster_dir/$f.id")' beside the server's $pg_id"
done
check "the command-line tool beside the server, one store"
stop_at "$backup"
# Asked for that id alone (--ids): which id is the lowest free one otherwise
# depends on leases of earlier scenarios still running out their TTL.
for kind in "counter 64 c64" "counter 128 c128" "sortable 64 s64" "sortable 128 s128"; do
    got=$(cli_gen $kind --ids "$pg_id")
    [ "$got" = "$pg_id" ] || fail "the tool could not take id $pg_id at once after the server released it (got '$got')"
done
check "the tool takes the id the server released, above the server's last values"
start_at "$backup" "$port" "${leased[@]}"
emit "$port" postgres
pg_id=$(status "$port" | cut -d' ' -f1)
# Evict it and take it with the tool at once (the server re-takes an evicted id
# at its next renewal if nobody took it meanwhile: try again then).
for _ in $(seq 10); do
    "$cli" lease release --backend "$store" --namespace scenarios --id "$pg_id" >/dev/null || true
    [ "$(cli_gen counter 64 c64 --ids "$pg_id")" = "$pg_id" ] && break
done
for _ in $(seq 60); do [ "$(status "$port")" = "$pg_id lease lost" ] && break; sleep 0.1; done
refused "$port" "lost" "nonces after an operator evicted the server's id"
stop_at "$backup"
check "an operator evicts the server's id and the tool takes it: the server stops"

# The store goes back: Redis started again from a dump taken while the server
# was stopped (the copy shows the server's id released, as a replica that was
# behind or a restored backup does). The server draws all along; the tool asks
# for that id while Redis is away and takes it the moment the copy answers; the
# server's next renewal finds the store older than its grant (or the id taken)
# and stops it; the tool starts the TTL and margin after its grant, above every
# value the server issued (docs/lease-protocol.md, "A store that goes back").
redis-cli -p "$redis_port" SAVE >/dev/null
cp "$redis_dir/dump.rdb" "$cluster_dir/older.rdb"
start_at "$backup" "$port" "${leased[@]}"
emit "$port" postgres
pg_id=$(status "$port" | cut -d' ' -f1)
(end=$((SECONDS + 60)); while [ "$SECONDS" -lt "$end" ] && emit "$port" postgres 2>/dev/null; do :; done) &
drawing=$!
stop_redis
for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 || break; sleep 0.1; done
cli_gen counter 64 c64 --ids "$pg_id" --connect-timeout 20s > "$cluster_dir/back.id" &
taker=$!
cp "$cluster_dir/older.rdb" "$redis_dir/dump.rdb"
start_redis
wait "$taker" || fail "the tool could not take id $pg_id from the older copy"
wait "$drawing" || true
[ "$(cat "$cluster_dir/back.id")" = "$pg_id" ] || fail "the tool took '$(cat "$cluster_dir/back.id")', not the server's $pg_id"
for _ in $(seq 60); do [ "$(status "$port")" = "$pg_id lease lost" ] && break; sleep 0.1; done
refused "$port" "lost" "nonces after the store went back"
grep -Eq "lost: (the store went back to an older copy|another holder took the id)" "$backup.log" ||
    fail "the server log does not say why the lease was lost: $(grep nonceforge "$backup.log" | tail -3)"
stop_at "$backup"
check "the store went back to an older copy: the server stops, the tool's values lie above its own"

# Bad lease settings: nonces refuse with a hint, the log says why; the password
# never reaches the log — in each form a client reads one from (userinfo with a
# '/', a password= parameter).
for url in "redis://u:s3cret-pw@127.0.0.1:$redis_port" "redis://u:s3/cret-pw@127.0.0.1:$redis_port" \
           "redis://127.0.0.1:$redis_port/0?password=s3cret-pw"; do
    start_at "$backup" "$port" "${leased[@]}" -c "nonceforge.lease_url=$url"
    refused "$port" "cannot hold" "a URL with a password ($url)"
    grep -q "lease_url_file" "$backup.log" || fail "the log does not point to nonceforge.lease_url_file"
    ! grep -Eq "s3cret-pw|s3/cret-pw" "$backup.log" || fail "the password reached the server log ($url)"
    shown=$(q "$port" postgres -c "SHOW nonceforge.lease_url" -c "SELECT setting FROM pg_settings WHERE name = 'nonceforge.lease_url'" 2>&1)
    grep -q '\*\*\*' <<<"$shown" && ! grep -Eq "s3cret-pw|s3/cret-pw" <<<"$shown" || fail "SHOW showed the password ($url): $shown"
    stop_at "$backup"
done
echo "redis://127.0.0.1:$redis_port" > "$cluster_dir/keys/lease.url"
chown postgres "$cluster_dir/keys/lease.url"; chmod 644 "$cluster_dir/keys/lease.url"
start_at "$backup" "$port" "${leased[@]}" -c nonceforge.lease_url= -c "nonceforge.lease_url_file=$cluster_dir/keys/lease.url"
refused "$port" "cannot hold" "a URL file others can read"
stop_at "$backup"
chmod 600 "$cluster_dir/keys/lease.url"
start_at "$backup" "$port" "${leased[@]}" -c nonceforge.lease_url= -c "nonceforge.lease_url_file=$cluster_dir/keys/lease.url"
emit "$port" postgres
check "bad lease settings refused; the URL from a file (mode 0600)"
stop_at "$backup"

# A wide namespace: the keeper leases in the nonceforge.layout of its start,
# the namespace records it (a standard member is refused), values carry the
# leased id in the wide layout, and a reload to the other layout stops nonces
# (55000) until the setting is back.
echo "nonceforge.layout = 'wide'" >> "$backup/postgresql.auto.conf"
start_at "$backup" "$port" "${leased[@]}" -c nonceforge.lease_url= -c "nonceforge.lease_url_file=$cluster_dir/keys/lease.url" \
    -c nonceforge.lease_namespace=scenwide
for _ in $(seq 100); do [ "$(status "$port" | cut -d' ' -f3)" = held ] && break; sleep 0.1; done
wide_id=$(status "$port" | cut -d' ' -f1)
got=$(q "$port" postgres -c "SELECT DISTINCT (nonce_inspect(n, 'wide')).machine_id FROM (SELECT nonce(96) n FROM generate_series(1, 1000) UNION ALL SELECT sortable_nonce(128) FROM generate_series(1, 1000)) v")
[ "$got" = "$wide_id" ] || fail "wide values carry id '$got', not the leased $wide_id"
out=$("$cli" gen counter --bits 96 -n 1 --lease "$store" --namespace scenwide --ttl 2s 2>&1) &&
    fail "a standard member of the server's wide namespace: $out"
grep -q "holds members of the wide layout; this member asks for the standard layout" <<<"$out" ||
    fail "the standard member's refusal: $out"
q "$port" postgres -c "ALTER SYSTEM SET nonceforge.layout = 'standard'" -c "SELECT pg_reload_conf()" >/dev/null
for _ in $(seq 50); do [ "$(q "$port" postgres -c "SHOW nonceforge.layout")" = standard ] && break; sleep 0.1; done
refused "$port" "differs from the layout the lease keeper leased" "a reload to the other layout"
q "$port" postgres -c "ALTER SYSTEM RESET nonceforge.layout" -c "SELECT pg_reload_conf()" >/dev/null
stop_at "$backup"
check "a wide lease namespace: the keeper's layout recorded, the other refused"

echo "$(all_values | wc -l) values, none repeated within its kind"
echo "scenarios: $passed passed, 0 failed"
