#!/usr/bin/env bash
# SQL tests: installs the extension into the system PostgreSQL 15, starts a
# throwaway cluster on a loopback port as the postgres user, and walks it
# through the life an administrator gives it, testing at each stage as the
# superuser and as `app`, an application role with no rights beyond the
# defaults:
#   1. preloaded, nothing configured: nonce and key functions refuse (hints)
#   2. configured (machine id by ALTER SYSTEM, key files): the whole suite as
#      postgres and as app; the README's SQL blocks as written; leaks and permissions; 4 backends of app drawing
#      nonces; the server-order test fails without server order; restarts
#   3. nonceforge.server_order = on: the turns test; the floor's WAL record
#      ending on a WAL page boundary; the suite as app again; a restart with
#      the clock an hour behind the persisted floor
#   4. not preloaded: placeholders never become the machine id or a key
# Stops and removes the cluster whatever happens.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Below the kernel's ephemeral range (32768-60999), so no free port another
# test asked the kernel for can take it while make test runs lanes side by side.
port="${NONCEFORGE_TEST_PGPORT:-25432}"
source "$here/cluster.sh"
faketime_lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1

psql_as() { local role="$1"; shift; psql -h 127.0.0.1 -p "$port" -U "$role" -d postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
su_sql() { psql_as postgres "$@"; }
app_sql() { psql_as app "$@"; }
# Files print a row per check: only errors (and notices) are shown.
su_file() { su_sql -o /dev/null "$@"; }
app_file() { app_sql -o /dev/null "$@"; }

# refused SQLSTATE ROLE SQL: the statement fails with that SQLSTATE (for what
# cannot run in a function, such as ALTER SYSTEM).
refused() {
    local out
    out=$(psql_as "$2" -c '\set VERBOSITY sqlstate' -c "$3" 2>&1) && { echo "not refused: $3"; return 1; }
    grep -qx "ERROR:  $1" <<<"$out" || { echo "$3: expected $1, got: $out"; return 1; }
}

passed=0
step() { # step NAME COMMAND...: runs it; a failure ends the run
    local name="$1"; shift
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "--- failed: $name"; echo "--- server log"; tail -30 "$cluster_dir/log"
        echo "sql: $passed passed, 1 failed"
        exit 1
    fi
}

# 1. Preloaded, nothing configured.
preload=(-c shared_preload_libraries=nonceforge)
start_cluster "$port" "${preload[@]}"
step "setup" su_file -f "$here/setup.sql"
step "unconfigured server refuses, with hints (as app)" app_file -f "$here/unconfigured.sql"
vectors() { cat "$here/../../../../testdata/vectors/$1"; }
step "nonceforge_metrics(): the fleet's series, the refusals counted (as postgres)" \
    su_file -v "vectors=$(vectors metrics.json)" -f "$here/metrics.sql"
step "nonceforge_metrics(): not app's (pg_monitor's)" refused 42501 app "SELECT * FROM nonceforge_metrics()"

# 2. Configured as the README says: keys in files only the server's user reads,
#    the machine id with ALTER SYSTEM.
mkdir -p "$cluster_dir/keys"
keyhex=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
extidhex=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$keyhex" > "$cluster_dir/keys/nonce.key"
echo "$extidhex" > "$cluster_dir/keys/extid.key"
chown -R postgres "$cluster_dir/keys"
chmod 600 "$cluster_dir/keys/"*.key
keys=(-c "nonceforge.key_file=$cluster_dir/keys/nonce.key" -c "nonceforge.extid_key_file=$cluster_dir/keys/extid.key")
step "ALTER SYSTEM: machine id 65536 refused" refused 22023 postgres "ALTER SYSTEM SET nonceforge.machine_id = 65536"
step "ALTER SYSTEM: machine id -2 refused" refused 22023 postgres "ALTER SYSTEM SET nonceforge.machine_id = -2"
step "ALTER SYSTEM: not by app" refused 42501 app "ALTER SYSTEM SET nonceforge.machine_id = 5"
step "ALTER SYSTEM: machine id 'leases' refused" refused 22023 postgres "ALTER SYSTEM SET nonceforge.machine_id = 'leases'"
step "ALTER SYSTEM: machine id '7.0' refused" refused 22023 postgres "ALTER SYSTEM SET nonceforge.machine_id = '7.0'"
step "machine id by ALTER SYSTEM" su_sql -c "ALTER SYSTEM SET nonceforge.machine_id = 7" -c "SELECT pg_reload_conf()"
restart_cluster "$port" "${preload[@]}" "${keys[@]}"
step "suite as postgres" su_file -f "$here/nonceforge.sql"
step "suite as app" app_file -f "$here/nonceforge.sql"
# metric NAME [LABELS]: a series' value now (labels as jsonb, contained).
metric() { su_sql -At -c "SELECT value FROM nonceforge_metrics() WHERE metric = '$1' AND labels @> '${2:-{\}}'"; }
counted_as_issued() { # what a call issues is what the counts add, by kind and size
    local before after
    before=$(metric nonceforge_nonces_issued_total '{"kind":"counter","bits":"96"}')
    app_sql -c "SELECT count(nonce(96)) FROM generate_series(1, 1000)" -c "SELECT count(*) FROM encrypted_nonce_series(96, 234)" >/dev/null
    after=$(metric nonceforge_nonces_issued_total '{"kind":"counter","bits":"96"}')
    [ "$((after - before))" = 1234 ] || { echo "counter 96: $before -> $after"; return 1; }
    before=$(metric nonceforge_nonces_issued_total '{"kind":"sortable","bits":"128"}')
    app_sql -c "SELECT count(*) FROM sortable_nonce_series(128, 777)" >/dev/null
    after=$(metric nonceforge_nonces_issued_total '{"kind":"sortable","bits":"128"}')
    [ "$((after - before))" = 777 ] || { echo "sortable 128: $before -> $after"; return 1; }
    [ "$(metric nonceforge_generator_enabled)" = 1 ] || { echo "not enabled"; return 1; }
}
step "nonceforge_metrics(): what is issued is counted, by kind and size" counted_as_issued
step "the shared uuid vectors (testdata/vectors/uuid.json), as app" \
    app_file -v "vectors=$(cat "$here/../../../../testdata/vectors/uuid.json")" -f "$here/uuid_vectors.sql"
step "the shared nonce vectors (testdata/vectors/nonces.json, both layouts) through nonce_inspect(), as app" \
    app_file -v "vectors=$(vectors nonces.json)" -f "$here/nonce_vectors.sql"
# reloaded SETTING VALUE: polls (new sessions, 5 s at most) until a reload of
# ALTER SYSTEM's value has reached the backends that start now.
reloaded() {
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(app_sql -At -c "SHOW $1")" = "$2" ] && return 0
        sleep 0.05
    done
    echo "$1 is not $2 after a reload"; return 1
}
# The wide layout (docs/contracts.md): a machine id above 511 needs
# nonceforge.layout = wide, which the server's nonces then carry; 64-bit ones
# are refused; back to machine id 7 and the standard layout.
wide_layout() {
    local out
    su_sql -c "ALTER SYSTEM SET nonceforge.machine_id = 40000" -c "SELECT pg_reload_conf()" >/dev/null
    reloaded nonceforge.machine_id 40000 || return 1
    out=$(app_sql -c "SELECT nonce(96)" 2>&1) && { echo "id 40000 in the standard layout not refused"; return 1; }
    grep -q "needs nonceforge.layout = 'wide'" <<<"$out" || { echo "refusal without the setting: $out"; return 1; }
    su_sql -c "ALTER SYSTEM SET nonceforge.layout = 'wide'" -c "SELECT pg_reload_conf()" >/dev/null
    reloaded nonceforge.layout wide || return 1
    out=$(app_sql -At -c "SELECT string_agg(DISTINCT machine_id::text, ',') FROM (
            SELECT (nonce_inspect(nonce(96), 'wide')).machine_id FROM generate_series(1, 1000)
            UNION ALL SELECT (nonce_inspect(nonce(128), 'wide')).machine_id
            UNION ALL SELECT (nonce_inspect(sortable_nonce(96), 'wide')).machine_id
            UNION ALL SELECT (nonce_inspect(s, 'wide')).machine_id FROM sortable_nonce_series(128, 1000) s) t") || return 1
    [ "$out" = 40000 ] || { echo "wide nonces carry machine ids $out"; return 1; }
    out=$(su_sql -At -c "SELECT count(DISTINCT n) FROM (SELECT nonce(96) n FROM generate_series(1, 5000)
            UNION ALL SELECT n FROM nonce_series(96, 5000) n) t") || return 1
    [ "$out" = 10000 ] || { echo "10000 wide nonces, $out distinct"; return 1; }
    [ "$(su_sql -At -c "SELECT length(encrypted_nonce(96)) + length(encrypted_nonce(128))")" = 28 ] || return 1
    for f in "nonce(64)" "sortable_nonce(64)" "encrypted_nonce(64)" "count(*) FROM nonce_series(64, 3)"; do
        out=$(su_sql -c "SELECT $f" 2>&1) && { echo "$f not refused"; return 1; }
        grep -q "the wide layout has no 64-bit nonces" <<<"$out" || { echo "$f: $out"; return 1; }
    done
    su_sql -c "ALTER SYSTEM RESET nonceforge.layout" -c "ALTER SYSTEM SET nonceforge.machine_id = 7" -c "SELECT pg_reload_conf()" >/dev/null
    reloaded nonceforge.layout standard && reloaded nonceforge.machine_id 7 || return 1
    [ "$(app_sql -At -c "SELECT machine_id FROM nonce_inspect(nonce(64))")" = 7 ] || { echo "not back to 7"; return 1; }
}
step "the wide layout by reload: machine id 40000, 64 bits refused, and back" wide_layout
step "the README's SQL blocks, as written (readme.sh)" "$here/readme.sh" "$port"
# One id space across faces (docs/contracts.md): the server's external ids are
# the command-line tool's for the same key, type, sequence number and random half.
same_extids_as_cli() {
    local cli="${NONCEFORGE_CLI:-$(cd "$here/../../../.." && pwd)/target/release/nonceforge}"
    [ -x "$cli" ] || { echo "no CLI at $cli (cargo build --release -p nonceforge-cli, or NONCEFORGE_CLI=path)"; return 1; }
    local t seq rand ours theirs
    for t in "user 42 7" "order 0 0" "invoice_line 72057594037927935 4611686018427387903"; do
        set -- $t
        ours=$(app_sql -At -c "SELECT extid_encode('$1', $2, $3)") || return 1
        theirs=$(NONCEFORGE_EXTID_KEY="$extidhex" "$cli" extid encode --type "$1" --seq "$2" --rand "$3") || return 1
        [ "$ours" = "$theirs" ] || { echo "extid $t: server $ours, CLI $theirs"; return 1; }
    done
    # The call without a random half: derived the same way on both sides.
    for t in "user 42" "order 0" "invoice_line 72057594037927935"; do
        set -- $t
        ours=$(app_sql -At -c "SELECT extid_encode('$1', $2)") || return 1
        theirs=$(NONCEFORGE_EXTID_KEY="$extidhex" "$cli" extid encode --type "$1" --seq "$2") || return 1
        [ "$ours" = "$theirs" ] || { echo "extid $t (derived): server $ours, CLI $theirs"; return 1; }
    done
}
step "external ids: the same as the CLI's for the same key" same_extids_as_cli
# 'lease' by a reload: the lease keeper starts only with the server, so nonces
# refuse (never fall back to the old id or none) until a restart; back to 7.
step "machine id 'lease' by reload" su_sql -c "ALTER SYSTEM SET nonceforge.machine_id = 'lease'" -c "SELECT pg_reload_conf()"
step "nonces refused until a restart starts the lease keeper" refused 55000 app "SELECT nonce(64)"
step "machine id back to 7" su_sql -c "ALTER SYSTEM SET nonceforge.machine_id = 7" -c "SELECT pg_reload_conf()"
step "leaks and permissions" su_file -v "keyfile=$cluster_dir/keys/nonce.key" -v "extidkeyfile=$cluster_dir/keys/extid.key" \
    -v "keyhex=$keyhex" -v "extidhex=$extidhex" -f "$here/security.sql"

roles_state() {
    su_sql -At -c "SELECT string_agg(format('%s:%s%s%s%s%s', rolname, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls), ',' ORDER BY rolname)
                    FROM pg_roles WHERE rolname !~ '^pg_'" -c "SELECT count(*) FROM pg_auth_members"
}
grant_key_functions() { # grant_key_functions ROLE...
    local r; for r in "$@"; do
        su_sql -c "GRANT EXECUTE ON FUNCTION encrypted_nonce(integer), encrypted_nonce_series(integer, bigint), extid_encode(text, bigint, bigint), extid_encode(text, bigint), extid_seq(text, uuid), extid_decode(text, uuid), extid_inspect(text, uuid), extid_seq(text, uuid, integer), extid_inspect(text, uuid, integer) TO $r"
    done
}
attack_round() { # the first call of every function, in fresh backends, under each search_path
    local p
    for p in 'evil, pg_catalog, public' 'public, evil, pg_catalog' 'evil, public' '"$user", public, evil'; do
        PGAPPNAME=attack psql_as mallory -o /dev/null -c "SET search_path = $p" -f "$here/attack_calls.sql" || return 1
        PGAPPNAME=attack app_sql -o /dev/null -c "SET search_path = $p" -f "$here/attack_calls.sql" || return 1
    done
    # pg_temp first, with temporary views named like catalogs and state.
    PGAPPNAME=attack psql_as mallory -o /dev/null \
        -c "CREATE TEMP VIEW nonceforge_start AS SELECT evil.trap_row('pg_temp.nonceforge_start') AS unix_ms" \
        -c "CREATE TEMP VIEW pg_extension AS SELECT evil.trap_row('pg_temp.pg_extension') AS oid, 'nonceforge'::name AS extname" \
        -c "CREATE TEMP VIEW pg_namespace AS SELECT evil.trap_row('pg_temp.pg_namespace') AS oid" \
        -c "SET search_path = pg_temp, evil, pg_catalog, public" -f "$here/attack_calls.sql"
}
attacks() {
    # mallory owns a schema and may create in public (every database made
    # before PostgreSQL 15); it plants traps, then calls every function first
    # thing in fresh backends, as does app with the same search paths; then the
    # administrator drops and re-creates the extension with the traps in
    # public, and the calls run again. No trap may fire but the self-check's,
    # and no role may gain a right.
    su_sql -c "CREATE ROLE mallory LOGIN" -c "GRANT CREATE ON SCHEMA public TO mallory" \
        -c "GRANT CREATE ON DATABASE postgres TO mallory"
    grant_key_functions mallory
    local before; before=$(roles_state)
    psql_as mallory -o /dev/null -f "$here/attack_plant.sql" || return 1
    # The traps are live: mallory's own query under its search_path fires them.
    PGAPPNAME=selfcheck psql_as mallory -o /dev/null -c "SET search_path = evil, pg_catalog" \
        -c "SELECT 1::oid = 2::oid, now(), (SELECT count(*) FROM nonceforge_start)" 2>/dev/null || return 1
    attack_round || return 1
    PGAPPNAME=attack su_sql -o /dev/null -c "DROP EXTENSION nonceforge" -c "CREATE EXTENSION nonceforge" || return 1
    grant_key_functions app mallory
    attack_round || return 1
    local fired escalated
    fired=$(grep -c 'nonceforge-trap fired: .*app selfcheck)' "$cluster_dir/log" || true)
    escalated=$(grep 'nonceforge-trap fired' "$cluster_dir/log" | grep -v 'app selfcheck)' || true)
    [ "$fired" -ge 2 ] || { echo "the self-check fired no trap: the traps are not live ($fired)"; return 1; }
    [ -z "$escalated" ] || { echo "a trap fired: $escalated"; return 1; }
    [ "$(roles_state)" = "$before" ] || { echo "roles changed: $before -> $(roles_state)"; return 1; }
    # Clean up for the stages after (the extension stays, as re-created).
    su_sql -c "DROP SCHEMA evil CASCADE" -c "DROP OWNED BY mallory" -c "DROP ROLE mallory" >/dev/null 2>&1
}
step "attacks through search_path, pg_temp and public, as mallory and app" attacks

lru_bound() {
    # One backend encodes ids of 10^6 distinct type names: its memory stays
    # where 10^5 names left it (a codec per name would take hundreds of MB).
    local pidfile rss; pidfile=$(mktemp); rss=$(mktemp); chmod 666 "$pidfile" "$rss"
    app_sql -At -o /dev/null -c "\\o $pidfile" -c "SELECT pg_backend_pid()" -c "\\o" \
        -c "SELECT count(extid_encode('a' || translate(i::text, '0123456789', 'abcdefghij') || 'z', 1, 1)) FROM generate_series(1, 100000) i" \
        -c "\\! grep VmRSS /proc/\$(tr -dc 0-9 < $pidfile)/status | tr -dc 0-9 >> $rss; echo >> $rss" \
        -c "SELECT count(extid_encode('b' || translate(i::text, '0123456789', 'abcdefghij') || 'z', 1, 1)) FROM generate_series(1, 1000000) i" \
        -c "\\! grep VmRSS /proc/\$(tr -dc 0-9 < $pidfile)/status | tr -dc 0-9 >> $rss; echo >> $rss" || return 1
    local a b; { read -r a; read -r b; } < "$rss"; rm -f "$pidfile" "$rss"
    echo "extid codec cache: RSS after 10^5 names ${a} kB, after 10^6 more ${b} kB"
    [ -n "$a" ] && [ -n "$b" ] && [ "$b" -lt $((a + 16384)) ]
}
step "extid codecs: memory bounded over 10^6 type names" lru_bound

group_readable() {
    # A key file others can read is refused at start, and the functions say so.
    chmod 640 "$cluster_dir/keys/extid.key"
    restart_cluster "$port" "${preload[@]}" "${keys[@]}"
    local out
    out=$(app_sql -c "\\set VERBOSITY verbose" -c "SELECT extid_encode('user', 1, 1)" 2>&1 || true)
    chmod 600 "$cluster_dir/keys/extid.key"
    grep -q "55000" <<<"$out" && grep -q "could not be used at server start" <<<"$out" &&
        grep -q "nonceforge.extid_key_file.*group or others" "$cluster_dir/log" &&
        ! grep -q "$extidhex" <<<"$out" && ! grep -q "$extidhex" "$cluster_dir/log"
}
step "a group-readable key file is refused" group_readable
restart_cluster "$port" "${preload[@]}" "${keys[@]}"

rotation() {
    # A DBA rotates the external-id key: the new file as version 1, the old one
    # kept for decoding. Old ids (derived or with a stored half) still decode,
    # new ids carry version 1; without the old file, old ids are refused with
    # a hint that names the setting; a malformed list stops the functions.
    local old_id old_stored new_id got out
    old_id=$(app_sql -At -c "SELECT extid_encode('user', 41)") || return 1
    old_stored=$(app_sql -At -c "SELECT extid_encode('user', 41, 5)") || return 1
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$cluster_dir/keys/extid-1.key"
    chown postgres "$cluster_dir/keys/extid-1.key"; chmod 600 "$cluster_dir/keys/extid-1.key"
    local rotated=(-c "nonceforge.key_file=$cluster_dir/keys/nonce.key"
        -c "nonceforge.extid_key_file=$cluster_dir/keys/extid-1.key" -c "nonceforge.extid_key_version=1")
    restart_cluster "$port" "${preload[@]}" "${rotated[@]}" -c "nonceforge.extid_old_key_files=0:$cluster_dir/keys/extid.key"
    got=$(app_sql -At -c "SELECT extid_seq('user', '$old_id')") || return 1
    [ "$got" = 41 ] || { echo "old derived id: $got"; return 1; }
    got=$(app_sql -At -c "SELECT seq, rand, key_version, derived FROM extid_inspect('user', '$old_stored')") || return 1
    [ "$got" = "41|5|0|f" ] || { echo "old stored id: $got"; return 1; }
    # The checked decode reads the old derived id and refuses the stored one.
    got=$(app_sql -At -c "SELECT seq FROM extid_decode('user', '$old_id')") || return 1
    [ "$got" = 41 ] || { echo "extid_decode, old derived id: $got"; return 1; }
    refused 22023 app "SELECT * FROM extid_decode('user', '$old_stored')" || return 1
    new_id=$(app_sql -At -c "SELECT extid_encode('user', 41)") || return 1
    [ "$new_id" != "$old_id" ] || { echo "the new key made the old id"; return 1; }
    got=$(app_sql -At -c "SELECT seq, key_version, derived FROM extid_inspect('user', '$new_id')") || return 1
    [ "$got" = "41|1|t" ] || { echo "new id: $got"; return 1; }
    # Without the old key: refused, with the setting named.
    restart_cluster "$port" "${preload[@]}" "${rotated[@]}"
    out=$(app_sql -c "\\set VERBOSITY verbose" -c "SELECT extid_seq('user', '$old_id')" 2>&1 || true)
    grep -q "22023" <<<"$out" && grep -q "key version 0, which this server does not hold" <<<"$out" &&
        grep -q "nonceforge.extid_old_key_files" <<<"$out" || { echo "without the old key: $out"; return 1; }
    # A malformed list: every external-id function refuses, the log says why.
    restart_cluster "$port" "${preload[@]}" "${rotated[@]}" -c "nonceforge.extid_old_key_files=zero:$cluster_dir/keys/extid.key"
    out=$(app_sql -c "\\set VERBOSITY verbose" -c "SELECT extid_encode('user', 1)" 2>&1 || true)
    grep -q "55000" <<<"$out" && grep -q "could not be used at server start" <<<"$out" &&
        grep -q "nonceforge.extid_old_key_files: 'zero:.*' is not VERSION:PATH\|the version must be in 0..15" "$cluster_dir/log" ||
        { echo "malformed list: $out"; tail -5 "$cluster_dir/log"; return 1; }
    rm -f "$cluster_dir/keys/extid-1.key"
}
step "external ids: a key rotation, old ids still decode" rotation
out_of_band() {
    # The post's layout: no key version in the id, 60-bit sequence numbers;
    # the version is given back on decode, and a wrong one finds nothing.
    local id got old
    # An id made under key version 0, out of band, before a rotation.
    restart_cluster "$port" "${preload[@]}" "${keys[@]}" -c "nonceforge.extid_version_in_band=off"
    old=$(app_sql -At -c "SELECT extid_encode('user', 77)") || return 1
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$cluster_dir/keys/extid-1.key"
    chown postgres "$cluster_dir/keys/extid-1.key"; chmod 600 "$cluster_dir/keys/extid-1.key"
    restart_cluster "$port" "${preload[@]}" -c "nonceforge.key_file=$cluster_dir/keys/nonce.key" \
        -c "nonceforge.extid_key_file=$cluster_dir/keys/extid-1.key" -c "nonceforge.extid_key_version=1" \
        -c "nonceforge.extid_old_key_files=0:$cluster_dir/keys/extid.key" -c "nonceforge.extid_version_in_band=off"
    # After the rotation the two-argument lookups find it by trying each held
    # version (nothing in the id names it); the explicit version agrees.
    got=$(app_sql -At -c "SELECT extid_seq('user', '$old'), (extid_decode('user', '$old')).seq, extid_seq('user', '$old', 0)") || return 1
    [ "$got" = "77|77|77" ] || { echo "out of band, an id of version 0 after the rotation: $got"; return 1; }
    refused 22023 app "SELECT extid_seq('user', '$old', 1)" || return 1
    id=$(app_sql -At -c "SELECT extid_encode('user', 1152921504606846975)") || return 1
    got=$(app_sql -At -c "SELECT extid_seq('user', '$id'), extid_seq('user', '$id', 1)") || return 1
    [ "$got" = "1152921504606846975|1152921504606846975" ] || { echo "out of band: $got"; return 1; }
    got=$(app_sql -At -c "SELECT derived FROM extid_inspect('user', '$id', 0)") || return 1
    [ "$got" = f ] || { echo "under the wrong version: $got"; return 1; }
    refused 22023 app "SELECT extid_seq('user', '$id', 0)" || return 1
    refused 22023 app "SELECT extid_seq('user', '$id', 16)" || return 1
    refused 22023 app "SELECT extid_encode('user', 1152921504606846976)" || return 1
    rm -f "$cluster_dir/keys/extid-1.key"
}
step "external ids: the key version out of band" out_of_band
restart_cluster "$port" "${preload[@]}" "${keys[@]}"

concurrent() {
    # Four backends of app at once draw every kind of nonce; none may repeat.
    su_sql -c "CREATE TABLE nonces (kind text, v bytea); GRANT INSERT ON nonces TO app"
    local pids=()
    for _ in 1 2 3 4; do
        app_sql -c "INSERT INTO nonces SELECT 'c64', nonce(64) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 'c96', nonce(96) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 'c128', nonce(128) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 'e64', encrypted_nonce(64) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 'e128', encrypted_nonce(128) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 's96', sortable_nonce(96) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 's128', sortable_nonce(128) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 's64', sortable_nonce(64) FROM generate_series(1, 30000);
                    INSERT INTO nonces SELECT 'c64', nonce_series(64, 30000);
                    INSERT INTO nonces SELECT 'c128', v FROM nonce_series(128, 30000) v;
                    INSERT INTO nonces SELECT 'e96', encrypted_nonce_series(96, 30000);
                    INSERT INTO nonces SELECT 's64', sortable_nonce_series(64, 30000);
                    INSERT INTO nonces SELECT 's96', v FROM sortable_nonce_series(96, 30000) v;" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    [ "$(su_sql -At -c "SELECT count(*) = 1560000 AND count(*) = count(DISTINCT (kind, v)) FROM nonces")" = t ]
}
step "4 backends of app, all nonces distinct (one by one and in series)" concurrent

per_backend_order_fails() {
    # The turns test must fail when uuidv7()/tuid6() are only per-backend monotonic.
    local out
    if out=$(su_file -v "port=$port" -f "$here/turns.sql" 2>&1); then
        echo "the turns test passed without server order: it cannot tell"; return 1
    fi
    grep -q "is not above" <<<"$out"
}
step "the turns test fails with per-backend order" per_backend_order_fails

restarts() {
    # After a restart the shared 64-bit sortable sequence starts afresh, past
    # every nonce made before; counter nonces go on from their sequences.
    restart_cluster "$port" "${preload[@]}" "${keys[@]}" &&
    app_sql -c "INSERT INTO nonces SELECT 's64 after', sortable_nonce(64) FROM generate_series(1, 20000);
                INSERT INTO nonces SELECT 'c64 after', nonce(64) FROM generate_series(1, 20000)" &&
    [ "$(su_sql -At -c "SELECT (SELECT v FROM nonces WHERE kind = 's64 after' ORDER BY v LIMIT 1)
                          > (SELECT v FROM nonces WHERE kind = 's64' ORDER BY v DESC LIMIT 1)
                       AND (SELECT count(DISTINCT v) FROM nonces WHERE kind LIKE 's64%') = 260000
                       AND (SELECT count(DISTINCT v) FROM nonces WHERE kind LIKE 'c64%') = 260000")" = t ]
}
step "restarts" restarts

no_source_file_in_location() {
    # Verbose errors (psql's VERBOSITY verbose, log_error_verbosity = verbose)
    # name the library as the error's location, never a source file of ours.
    local out="" query
    for query in "SELECT nonce(65)" "SELECT extid_encode('User', 1, 1)" "SELECT tuid6_from_compact('x')" \
                 "SELECT * FROM uuidv7_series(-1)" "SELECT public.uuidv7('-100 years')"; do
        out+=$(app_sql -c '\set VERBOSITY verbose' -c "$query" 2>&1 || true)$'\n'
    done
    [ "$(grep -c '^LOCATION:' <<<"$out")" = 5 ] || { echo "expected 5 errors with a LOCATION: $out"; return 1; }
    ! grep '^LOCATION:' <<<"$out" | grep -Eq '\.rs|/src/|errors' || { echo "a source file in LOCATION: $out"; return 1; }
}
step "errors: LOCATION names no source file" no_source_file_in_location

big_inputs() {
    # Text of 1 GB (the most a text value holds) into every function that takes
    # text: refused for its length first, the error quoting 64 characters, the
    # backend's peak memory that of the argument itself (not copies of it), the
    # server log as small.
    local pidfile hwm out log_before log_after
    pidfile=$(mktemp); hwm=$(mktemp); chmod 666 "$pidfile" "$hwm"
    log_before=$(stat -c %s "$cluster_dir/log")
    peak() { echo "\\! grep VmHWM /proc/\$(tr -dc 0-9 < $pidfile)/status | tr -dc 0-9 >> $hwm; echo >> $hwm"; }
    # One backend for all (its peak is compared), going on after each error.
    out=$(app_sql -At -v ON_ERROR_STOP=0 -c "\o $pidfile" -c "SELECT pg_backend_pid()" -c "\o" \
        -c "SELECT length(repeat('a', 1073741000))" -c "$(peak)" \
        -c "SELECT extid_encode(repeat('a', 1073741000), 1, 1)" \
        -c "SELECT * FROM extid_decode(repeat('b', 1073741000), '01838576-137b-8f9c-a637-be6b8d32af6e')" \
        -c "SELECT tuid6_from_compact(repeat('c', 1073741000))" \
        -c "SELECT stuid_from_compact(repeat('d', 1073741000))" -c "$(peak)" 2>&1 || true)
    log_after=$(stat -c %s "$cluster_dir/log")
    local base after; { read -r base; read -r after; } < "$hwm"; rm -f "$pidfile" "$hwm"
    echo "1 GB text arguments: peak memory ${base} kB with the argument alone, ${after} kB after 4 refusals; errors $(wc -c <<<"$out") bytes; log +$((log_after - log_before)) bytes"
    [ "$(grep -c '^ERROR:' <<<"$out")" = 4 ] || { echo "expected 4 errors: $(cut -c1-300 <<<"$out")"; return 1; }
    [ "$(wc -c <<<"$out")" -lt 4000 ] || { echo "errors of $(wc -c <<<"$out") bytes"; return 1; }
    [ $((log_after - log_before)) -lt 8000 ] || { echo "the log grew by $((log_after - log_before)) bytes"; return 1; }
    [ -n "$base" ] && [ -n "$after" ] && [ "$after" -lt $((base + 65536)) ] ||
        { echo "peak memory grew from $base kB to $after kB"; return 1; }
}
step "1 GB text arguments: refused first, bounded errors and memory" big_inputs

clock_step_back() {
    # The wall clock steps an hour back while the server runs (libfaketime,
    # its offset read from a file at every call): calls that need the clock to
    # move on refuse with 55000 within nonceforge.max_clock_wait, never hang
    # until statement_timeout; the clock back, they go on, above every value.
    local off="$cluster_dir/faketime.offset" out before
    echo "+0" > "$off"; chmod 644 "$off"
    server_env=(RUST_BACKTRACE=1 "LD_PRELOAD=$faketime_lib" "FAKETIME_TIMESTAMP_FILE=$off" FAKETIME_NO_CACHE=1
                FAKETIME_DONT_FAKE_MONOTONIC=1)
    restart_cluster "$port" "${preload[@]}" "${keys[@]}"
    server_env=(RUST_BACKTRACE=1)
    before=$(app_sql -At -c "SELECT max(encode(n, 'hex')) FROM (SELECT sortable_nonce(64) n FROM generate_series(1, 20000)) s")
    [ -n "$before" ] || return 1
    echo "-1h" > "$off"
    out=$(app_sql -c "SET statement_timeout = '60s'" -c '\set VERBOSITY verbose' \
        -c "SELECT count(sortable_nonce(64)) FROM generate_series(1, 100000)" 2>&1 || true)
    grep -q "55000" <<<"$out" && grep -q "behind" <<<"$out" && grep -q "max_clock_wait" <<<"$out" ||
        { echo "a 64-bit sortable nonce with the clock stepped back: $out"; return 1; }
    out=$(app_sql -c "SET statement_timeout = '60s'" -c '\set VERBOSITY verbose' -c "SELECT sortable_nonce(96)" 2>&1 || true)
    grep -q "55000" <<<"$out" && grep -q "behind" <<<"$out" ||
        { echo "a 96-bit sortable nonce in a new backend with the clock stepped back: $out"; return 1; }
    echo "+0" > "$off"
    out=$(app_sql -At -c "SELECT min(encode(n, 'hex')) > '$before' FROM (SELECT sortable_nonce(64) n FROM generate_series(1, 20000)) s")
    restart_cluster "$port" "${preload[@]}" "${keys[@]}"
    [ "$out" = t ] || { echo "after the clock came back: $out"; return 1; }
}
step "the clock steps back while running: refused within max_clock_wait" clock_step_back

# 3. Server-wide order.
order=(-c nonceforge.server_order=on)
restart_cluster "$port" "${preload[@]}" "${keys[@]}" "${order[@]}"
step "server order: 10,000 turns of two backends" su_file -v "port=$port" -f "$here/turns.sql"
step "the floor's WAL record ending on a page boundary: flushed, and the id made" su_file -f "$here/floor-page.sql"
step "suite as app, server order" app_file -f "$here/nonceforge.sql"

clock_behind_floor() {
    # Ids made before a restart; the server comes back with its clock an hour
    # behind (libfaketime); every id after is above every id before.
    local v_before t_before out
    # Ours, qualified: from PostgreSQL 18 on, an unqualified uuidv7() is the built-in one.
    v_before=$(app_sql -At -c "SELECT max(u) FROM (SELECT public.uuidv7() u FROM generate_series(1, 5000)) s")
    t_before=$(app_sql -At -c "SELECT max(u) FROM (SELECT tuid6() u FROM generate_series(1, 5000)) s")
    server_env=(RUST_BACKTRACE=1 "LD_PRELOAD=$faketime_lib" "FAKETIME=-1h")
    restart_cluster "$port" "${preload[@]}" "${keys[@]}" "${order[@]}"
    server_env=(RUST_BACKTRACE=1)
    out=$(app_sql -At -c "SELECT clock_timestamp() < now() + interval '1 s' AND clock_timestamp() < '$(date -u +%FT%T)+00'::timestamptz - interval '50 minutes',
                                 (SELECT min(u) FROM (SELECT public.uuidv7() u FROM generate_series(1, 5000)) s) > '$v_before',
                                 (SELECT min(u) FROM (SELECT tuid6() u FROM generate_series(1, 5000)) s) > '$t_before'")
    restart_cluster "$port" "${preload[@]}" "${keys[@]}" "${order[@]}"
    [ "$out" = "t|t|t" ] || { echo "clock behind, after|uuidv7 above|tuid6 above: $out"; return 1; }
}
step "restart with the clock behind the floor" clock_behind_floor

broken_floor() {
    # A floor file this version did not write: ids are refused, not guessed.
    as_pg "$pgbin/pg_ctl" -D "$cluster_dir/pg" -m fast stop >/dev/null
    echo garbage > "$cluster_dir/pg/nonceforge_floor"
    restart_cluster "$port" "${preload[@]}" "${keys[@]}" "${order[@]}"
    local out
    out=$(app_sql -c "SELECT public.uuidv7()" 2>&1 || true)
    as_pg rm -f "$cluster_dir/pg/nonceforge_floor"
    grep -q "floor could not be read" <<<"$out" && grep -q HINT <<<"$out"
}
step "an unreadable floor refuses ids" broken_floor

# 4. Not preloaded.
restart_cluster "$port" "${keys[@]}"
step "no preload: placeholders are not machine ids or keys (as app)" app_file -f "$here/no_preload.sql"
order_without_preload() {
    restart_cluster "$port" "${order[@]}"
    local out
    out=$(app_sql -c "SELECT public.uuidv7()" 2>&1 || true)
    grep -q "server_order = on needs the library in shared_preload_libraries" <<<"$out" && grep -q HINT <<<"$out"
}
step "server order asked for without preload: refused" order_without_preload

echo "sql: $passed passed, 0 failed"
