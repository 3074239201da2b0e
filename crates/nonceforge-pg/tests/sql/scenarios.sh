#!/usr/bin/env bash
# Nonces never repeat after what DBAs do to a server. One primary (machine id 7,
# the library preloaded) is taken through: two databases, a template copy,
# DROP/CREATE EXTENSION, a restart, a backend killed with SIGKILL (the
# postmaster's crash restart), an immediate stop (crash recovery), a restart
# with the clock an hour behind (refused, not repeated), a base backup restored
# after the primary issued more, a streaming standby (refuses while in
# recovery) promoted after the primary died, and a clone with its own machine
# id running beside its origin. Every value of every kind, from every server
# and database, is collected and must be distinct within its kind.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port="${NONCEFORGE_TEST_PGPORT:-54329}"
source "$here/cluster.sh"
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
values="$cluster_dir/values.txt"
: > "$values"
preload=(-c shared_preload_libraries=nonceforge -c nonceforge.machine_id=7)

q() { local p="$1" db="$2"; shift 2; psql -h 127.0.0.1 -p "$p" -U postgres -d "$db" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
emit() { # emit PORT DB: 3000 of every kind into $values
    q "$1" "$2" -c "SELECT k || ' ' || encode(v, 'hex') FROM (
        SELECT 'c64' k, nonce(64) v FROM generate_series(1, 3000) UNION ALL
        SELECT 'c96', nonce(96) FROM generate_series(1, 3000) UNION ALL
        SELECT 'c128', nonce(128) FROM generate_series(1, 3000) UNION ALL
        SELECT 'e64', encrypted_nonce(64) FROM generate_series(1, 3000) UNION ALL
        SELECT 'e128', encrypted_nonce(128) FROM generate_series(1, 3000) UNION ALL
        SELECT 's64', sortable_nonce(64) FROM generate_series(1, 3000) UNION ALL
        SELECT 's96', sortable_nonce(96) FROM generate_series(1, 3000) UNION ALL
        SELECT 's128', sortable_nonce(128) FROM generate_series(1, 3000)) s" >> "$values"
}
start_at() { # start_at DATADIR PORT [options]
    local d="$1" p="$2"; shift 2
    as_pg "$pgbin/pg_ctl" -D "$d" -l "$d.log" -w -o "-p $p -c listen_addresses=127.0.0.1 -c unix_socket_directories=$cluster_dir $*" start >/dev/null
}
stop_at() { as_pg "$pgbin/pg_ctl" -D "$1" -m "${2:-fast}" -w stop >/dev/null; }
passed=0
check() { # check NAME: the values so far are distinct
    local dups; dups=$(sort "$values" | uniq -d | head -3)
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

echo "$(wc -l < "$values") values, none repeated within its kind"
echo "scenarios: $passed passed, 0 failed"
