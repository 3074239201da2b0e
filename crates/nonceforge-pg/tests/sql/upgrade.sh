#!/usr/bin/env bash
# pg_upgrade OLD → NEW with the extension in use (run by `make test` for
# 15 → 18, 17 → 18 and 14 → 15):
#   upgrade.sh OLD NEW
# A cluster of OLD with the library preloaded, server order on, tables whose
# primary keys default to uuidv7(), uuid_generate_v7(), tuid6() and nonce(96),
# and external ids; pg_upgrade to NEW (the extension built for NEW installed
# first, as a DBA must); then on NEW: the defaults still call our functions and
# every new id sorts above every old one, new nonces are distinct from the old
# (the primary key would refuse a repeat), old external ids decode, and every
# name of ours is callable unqualified without an ambiguity. The floor file is
# not carried by pg_upgrade and is not copied here: the new run starts after the
# clock, above everything the old cluster issued.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
old="${1:?usage: upgrade.sh OLD NEW}" new="${2:?usage: upgrade.sh OLD NEW}"
# The PyPI builds (tools/fetch-postgres.sh) on both sides, 15 included: Debian
# 12's postgresql-15 (15.20-0+deb12u1 here) stores a non-upstream column option,
# pg_attver, on every column, which upstream 18's pg_restore refuses ("unrecognized
# parameter") — an upgrade from Debian's 15 goes to Debian's (PGDG) 18.
bin_of() { echo "${NONCEFORGE_PG_ROOT:-/opt/nonceforge-pg}/$1/bin"; }
oldbin=$(bin_of "$old") newbin=$(bin_of "$new")
# Below the kernel's ephemeral range (32768-60999), so no free port another
# test asked the kernel for can take it while make test runs lanes side by side.
port="${NONCEFORGE_TEST_PGPORT:-25432}"
[ -x "$oldbin/pg_upgrade" ] && [ -x "$newbin/pg_upgrade" ] ||
    { echo "upgrade.sh: fetch the builds first: crates/nonceforge-pg/tools/fetch-postgres.sh $old $new" >&2; exit 2; }
PGBIN="$oldbin" source "$here/cluster.sh"
(cd "$here/../.." && cargo pgrx install --release --pg-config "$newbin/pg_config" >/dev/null)
new_libdir="$("$newbin/pg_config" --libdir)"
as_new() { runuser -u postgres -- env "LD_LIBRARY_PATH=$new_libdir" "$@"; }
fail() { echo "--- failed: pg_upgrade $old → $new: $1"; exit 1; }
q() { psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -X -q -At -v ON_ERROR_STOP=1 "$@"; }

mkdir -p "$cluster_dir/keys"
for k in nonce extid; do head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$cluster_dir/keys/$k.key"; done
chown -R postgres "$cluster_dir/keys"; chmod 600 "$cluster_dir/keys/"*.key
opts=(-c shared_preload_libraries=nonceforge -c nonceforge.machine_id=7 -c nonceforge.server_order=on
      -c "nonceforge.key_file=$cluster_dir/keys/nonce.key" -c "nonceforge.extid_key_file=$cluster_dir/keys/extid.key")

start_cluster "$port" "${opts[@]}"
fill() {
    q -c "INSERT INTO t_v7 (n) SELECT g FROM generate_series(1, 10000) g" \
      -c "INSERT INTO t_gen (n) SELECT g FROM generate_series(1, 10000) g" \
      -c "INSERT INTO t_tuid (n) SELECT g FROM generate_series(1, 10000) g" \
      -c "INSERT INTO t_nonce (n) SELECT g FROM generate_series(1, 10000) g"
}
q -c "CREATE EXTENSION nonceforge" \
  -c "CREATE TABLE t_v7 (id uuid DEFAULT uuidv7() PRIMARY KEY, n int, era text DEFAULT 'old')" \
  -c "CREATE TABLE t_gen (id uuid DEFAULT uuid_generate_v7() PRIMARY KEY, n int, era text DEFAULT 'old')" \
  -c "CREATE TABLE t_tuid (id uuid DEFAULT tuid6() PRIMARY KEY, n int, era text DEFAULT 'old')" \
  -c "CREATE TABLE t_nonce (id bytea DEFAULT nonce(96) PRIMARY KEY, n int, era text DEFAULT 'old')" \
  -c "CREATE TABLE t_ext (seq bigint PRIMARY KEY, id uuid NOT NULL)"
fill
q -c "INSERT INTO t_ext SELECT g, extid_encode('user', g, g % 7) FROM generate_series(1, 10000) g"
as_pg "$oldbin/pg_ctl" -D "$cluster_dir/pg" -m fast -w stop >/dev/null

# The new cluster, as pg_upgrade needs it: same locale, and (18 turns them on
# by default) data checksums only if the old cluster had them.
checksums=$(as_pg "$oldbin/pg_controldata" -D "$cluster_dir/pg" | awk -F: '/Data page checksum version/ { gsub(/ /, "", $2); print $2 }')
init_opts=(-A trust -U postgres)
if [ "$checksums" = 0 ] && [ "$new" -ge 18 ]; then init_opts+=(--no-data-checksums); fi
as_new "$newbin/initdb" -D "$cluster_dir/new" "${init_opts[@]}" >/dev/null
( cd "$cluster_dir" && as_new "$newbin/pg_upgrade" -b "$oldbin" -B "$newbin" -d "$cluster_dir/pg" -D "$cluster_dir/new" \
    -p $((port + 2)) -P $((port + 3)) -s "$cluster_dir" -U postgres >"$cluster_dir/upgrade.log" 2>&1 ) ||
    { cat "$cluster_dir/upgrade.log"; find "$cluster_dir/new" -path '*pg_upgrade_output.d*' -name '*.log' \
        -exec sh -c 'echo "--- $1"; grep -B2 -A8 "ERROR\|FATAL" "$1" | head -40' _ {} \; ; fail "pg_upgrade failed"; }

as_new "$newbin/pg_ctl" -D "$cluster_dir/new" -l "$cluster_dir/new.log" -w \
    -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$cluster_dir ${opts[*]}" start >/dev/null
trap 'as_new "$newbin/pg_ctl" -D "$cluster_dir/new" -m immediate stop >/dev/null 2>&1 || true; stop_cluster' EXIT
[ "$(q -c "SELECT current_setting('server_version_num')::int / 10000")" = "$new" ] || fail "not running $new"
[ "$(q -c "SELECT extversion FROM pg_extension WHERE extname = 'nonceforge'")" = 0.2.0 ] || fail "extension version"

# The defaults still name our functions (in the extension's schema).
defaults=$(q -c "SELECT string_agg(f, ',' ORDER BY f) FROM (
    SELECT DISTINCT p.pronamespace::regnamespace::text || '.' || p.proname AS f
    FROM pg_attrdef ad JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
    JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND d.refobjid = p.oid
    WHERE ad.adrelid IN ('t_v7'::regclass, 't_gen'::regclass, 't_tuid'::regclass, 't_nonce'::regclass)) s")
[ "$defaults" = "public.nonce,public.tuid6,public.uuid_generate_v7,public.uuidv7" ] || fail "defaults: $defaults"

q -c "ALTER TABLE t_v7 ALTER era SET DEFAULT 'new'" \
  -c "ALTER TABLE t_gen ALTER era SET DEFAULT 'new'" -c "ALTER TABLE t_tuid ALTER era SET DEFAULT 'new'" \
  -c "ALTER TABLE t_nonce ALTER era SET DEFAULT 'new'"
fill   # a repeated nonce would violate t_nonce's primary key
above=$(q -c "SELECT string_agg(t || ':' || ok::text, ',' ORDER BY t) FROM (
    SELECT 't_v7' t, (SELECT min(id) FROM t_v7 WHERE era = 'new') > (SELECT max(id) FROM t_v7 WHERE era = 'old') ok
    UNION ALL SELECT 't_gen', (SELECT min(id) FROM t_gen WHERE era = 'new') > (SELECT max(id) FROM t_gen WHERE era = 'old')
    UNION ALL SELECT 't_tuid', (SELECT min(id) FROM t_tuid WHERE era = 'new') > (SELECT max(id) FROM t_tuid WHERE era = 'old')
    UNION ALL SELECT 't_nonce', (SELECT count(*) FROM t_nonce) = 20000) s")
[ "$above" = "t_gen:true,t_nonce:true,t_tuid:true,t_v7:true" ] || fail "new ids above the old: $above"

# pg_upgrade does not carry the replication origin that holds the floor in the
# WAL (it restores the extension's objects, not its script's side effects): the
# server log says so at the first floor move, and how to make it; made, the
# floor goes into it.
grep -q "pg_replication_origin_create('nonceforge_floor')" "$cluster_dir/new.log" ||
    fail "no warning that the floor origin is missing after pg_upgrade"
q -c "SELECT pg_replication_origin_create('nonceforge_floor')" >/dev/null
for _ in $(seq 60); do
    q -c "SELECT count(sortable_nonce(96)) FROM generate_series(1, 1000)" >/dev/null
    [ "$(q -c "SELECT count(*) FROM pg_replication_origin_status s JOIN pg_replication_origin o ON o.roident = s.local_id
                WHERE o.roname = 'nonceforge_floor' AND s.remote_lsn > '0/0'")" = 1 ] && break
    sleep 0.1
done
[ "$(q -c "SELECT count(*) FROM pg_replication_origin_status s JOIN pg_replication_origin o ON o.roident = s.local_id
            WHERE o.roname = 'nonceforge_floor' AND s.remote_lsn > '0/0'")" = 1 ] || fail "the floor does not reach the WAL"

decoded=$(q -c "SELECT count(*) FROM t_ext, extid_inspect('user', id) d WHERE d.seq = t_ext.seq AND d.rand = t_ext.seq % 7")
[ "$decoded" = 10000 ] || fail "external ids made on $old decode on $new: $decoded of 10000"

# Every name of ours, unqualified, as an application would call it: no
# ambiguity; from 18 on the built-ins answer (same signatures), ours by schema.
q -c "SELECT uuidv7() IS NOT NULL, uuidv7(interval '1 hour') IS NOT NULL, uuidv4() IS NOT NULL,
             uuid_extract_version(uuidv4()) = 4, uuid_extract_timestamp(uuidv7()) IS NOT NULL,
             uuid_generate_v7() IS NOT NULL, tuid6() IS NOT NULL, min(id) IS NOT NULL, max(id) IS NOT NULL
      FROM t_v7" >/dev/null || fail "unqualified calls"
resolved=$(q -c "SELECT to_regprocedure('uuidv7()')::oid::regprocedure::text || ' ' ||
                        (to_regprocedure('uuidv7()') = to_regprocedure('public.uuidv7()'))::text")
if [ "$new" -ge 18 ]; then want="uuidv7() false"; else want="uuidv7() true"; fi
[ "$resolved" = "$want" ] || fail "unqualified uuidv7() resolves to: $resolved (want $want)"
echo "pg_upgrade $old → $new: defaults, order, nonces, external ids, name resolution: passed"
