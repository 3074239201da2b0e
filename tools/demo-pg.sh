#!/usr/bin/env bash
# make demo's PostgreSQL part, on a private copy of the PostgreSQL
# installation: its bin, lib and share directories copied under a temporary
# directory (PostgreSQL finds its files relative to its binaries, and
# pg_config reports the copy's paths), the extension installed into the copy
# (cargo pgrx install --pg-config COPY/pg_config), a throwaway cluster of the
# copy on a Unix socket (nothing listens on the network); the extension
# created as the superuser — as a DBA does — and the functions called as an
# application role without superuser rights. The system's PostgreSQL is not
# touched, and everything is removed at the end.
#   tools/demo-pg.sh PG_CONFIG
set -euo pipefail
pg_config=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
dir=$(mktemp -d /tmp/nonceforge-demo-pg.XXXXXX)
# As root the cluster runs as postgres (initdb refuses root); otherwise as the
# caller, who needs no other rights: nothing is installed outside $dir.
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else bash -c "$*"; fi; }
trap 'as_pg "$dir/bin/pg_ctl -D $dir/data stop -m fast" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

# The copy keeps the installation's layout, so that each directory's path
# relative to bin/ is the one PostgreSQL was built with; the server headers
# (for the build's bindings) are linked, not copied.
copy="$dir/pg"
for opt in --bindir --pkglibdir --sharedir; do
    d=$(cd "$("$pg_config" "$opt")" && pwd)
    [ -e "$copy$d" ] || { mkdir -p "$copy$(dirname "$d")" && cp -a "$d" "$copy$d"; }
done
inc=$("$pg_config" --includedir-server)
mkdir -p "$copy$(dirname "$inc")" && ln -s "$inc" "$copy$inc"
copy_config="$copy$(cd "$("$pg_config" --bindir)" && pwd)/pg_config"
[ "$("$copy_config" --sharedir)" = "$copy$("$pg_config" --sharedir)" ] ||
    { echo "demo: this PostgreSQL does not find its files relative to its binaries ($copy_config)"; exit 1; }
ln -s "$("$copy_config" --bindir)" "$dir/bin"

# The extension unoptimised (the dev profile: the values it shows are the
# same; make pg-install and the packages build the release), in the
# workspace's target directory with the workspace's rustflags
# (.cargo/config.toml's build.rustflags, read here: RUSTFLAGS in the
# environment overrides the link flag cargo-pgrx gives its build alone, as
# tools/pg-test-all.sh explains), so the crates it asks for with the features
# stage 1's build asked for are not built again.
flags=$(sed -n 's/^rustflags = \[\(.*\)\]$/\1/p' "$root/.cargo/config.toml" | tr -d '",')
log="${TMPDIR:-/tmp}/nonceforge-demo-pgrx.log"
(cd "$root/crates/nonceforge-pg" && CARGO_TARGET_DIR="$root/target" RUSTFLAGS="${RUSTFLAGS-$flags}" \
    cargo pgrx install --pg-config "$copy_config" >"$log" 2>&1) || { cat "$log"; exit 1; }

[ "$(id -u)" != 0 ] || chown -R postgres "$dir"
as_pg "$dir/bin/initdb -D $dir/data -A trust -U postgres" >/dev/null
# What the README's "Install" section puts into postgresql.conf.
printf "shared_preload_libraries = 'nonceforge'\nnonceforge.machine_id = 12\n" >>"$dir/data/postgresql.conf"
as_pg "$dir/bin/pg_ctl -D $dir/data -o \"-k $dir -c listen_addresses=''\" -l $dir/log start -w" >/dev/null
psql() { as_pg "$dir/bin/psql -h $dir -d postgres -X -q $*"; }
psql -c "\"CREATE ROLE app LOGIN; CREATE EXTENSION nonceforge; GRANT CREATE ON SCHEMA public TO app;\""
psql -U app -c "\"
SELECT uuidv7() AS uuidv7, tuid6() AS tuid6, encode(nonce(96), 'hex') AS nonce_96,
       encode(sortable_nonce(64), 'hex') AS sortable_64;
SELECT machine_id, source, state FROM machine_id_status();
CREATE TABLE orders (id uuid DEFAULT uuidv7() PRIMARY KEY, nonce bytea DEFAULT nonce(96) UNIQUE);
INSERT INTO orders DEFAULT VALUES; INSERT INTO orders DEFAULT VALUES;
SELECT id, encode(nonce, 'hex') AS nonce FROM orders;\""
