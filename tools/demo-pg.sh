#!/usr/bin/env bash
# make demo's PostgreSQL part: installs the extension into the system
# PostgreSQL (cargo pgrx install), starts a throwaway cluster on a Unix socket
# in a temporary directory (nothing listens on the network), creates the
# extension as the superuser — as a DBA does — and calls the functions as an
# application role without superuser rights; stops and removes the cluster.
#   tools/demo-pg.sh PG_CONFIG
set -euo pipefail
pg_config=$1
bin=$("$pg_config" --bindir)
root="$(cd "$(dirname "$0")/.." && pwd)"
# Built in the workspace's target directory with the workspace's rustflags
# (.cargo/config.toml's build.rustflags, read here: RUSTFLAGS in the
# environment overrides the link flag cargo-pgrx's build alone is given, as
# tools/pg-test-all.sh explains): the crates it asks for with the features
# the command-line tool built in stage 2 asked for are not built again (about
# a third of them; the rest, pgrx's and those above a crate whose features
# differ, are).
flags=$(sed -n 's/^rustflags = \[\(.*\)\]$/\1/p' "$root/.cargo/config.toml" | tr -d '",')
(cd "$root/crates/nonceforge-pg" && CARGO_TARGET_DIR="$root/target" RUSTFLAGS="${RUSTFLAGS-$flags}" \
    cargo pgrx install --release --pg-config "$pg_config" >"${TMPDIR:-/tmp}/nonceforge-demo-pgrx.log" 2>&1) ||
    { cat "${TMPDIR:-/tmp}/nonceforge-demo-pgrx.log"; exit 1; }
dir=$(mktemp -d /tmp/nonceforge-demo-pg.XXXXXX)
chown postgres "$dir"
as_pg() { su postgres -c "$*"; }
trap 'as_pg "$bin/pg_ctl -D $dir/data stop -m fast" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
as_pg "$bin/initdb -D $dir/data -A trust -U postgres" >/dev/null
# What the README's "Install" section puts into postgresql.conf.
printf "shared_preload_libraries = 'nonceforge'\nnonceforge.machine_id = 12\n" >>"$dir/data/postgresql.conf"
as_pg "$bin/pg_ctl -D $dir/data -o \"-k $dir -c listen_addresses=''\" -l $dir/log start -w" >/dev/null
psql() { as_pg "$bin/psql -h $dir -d postgres -X -q $*"; }
psql -c "\"CREATE ROLE app LOGIN; CREATE EXTENSION nonceforge; GRANT CREATE ON SCHEMA public TO app;\""
psql -U app -c "\"
SELECT uuidv7() AS uuidv7, tuid6() AS tuid6, encode(nonce(96), 'hex') AS nonce_96,
       encode(sortable_nonce(64), 'hex') AS sortable_64;
SELECT machine_id, source, state FROM machine_id_status();
CREATE TABLE orders (id uuid DEFAULT uuidv7() PRIMARY KEY, nonce bytea DEFAULT nonce(96) UNIQUE);
INSERT INTO orders DEFAULT VALUES; INSERT INTO orders DEFAULT VALUES;
SELECT id, encode(nonce, 'hex') AS nonce FROM orders;\""
