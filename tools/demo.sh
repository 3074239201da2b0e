#!/usr/bin/env bash
# make demo: values first, then each face. On a fresh machine the first values
# come from the core crate alone (a minute or two: nothing to install but a C
# toolchain), then each stage says what it installs and builds, and each step
# is stamped with the minutes since the demo started, so the wait is visible
# and measured.
#   tools/demo.sh        (make demo runs it; CARGO, PG_CONFIG, PGRX_VERSION from the Makefile)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
CARGO=${CARGO:-cargo}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGRX_VERSION=${PGRX_VERSION:-0.18.1}
BIN=target/release/nonceforge
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
start=$SECONDS
say() { printf '[%d:%02d] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

# apt_need PACKAGE...: installs the Debian packages that are missing, saying which.
apt_need() {
    local missing=() p
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    [ ${#missing[@]} = 0 ] && return 0
    say "installing ${missing[*]}"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

command -v "$CARGO" >/dev/null || { echo "cargo not found: install Rust 1.89 or newer (rustup)"; exit 1; }
# The demo's builds: opt-level 3 as the shipped profile, without its link-time
# pass (minutes on two cores, and no value shown changes); `make build` and
# `make dist` build the shipped profile.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0
# Its unoptimised builds (the first values, the PostgreSQL extension, which
# share their common crates) carry no debug info: panics still name their line.
export CARGO_PROFILE_DEV_DEBUG=0

say "== 1. first values, from the core crate (building it: about a minute on two cores)"
apt_need build-essential pkg-config ca-certificates
"$CARGO" build -q --locked -p nonceforge --example first_values
"target/debug/examples/first_values"

# cargo-pgrx, which stage 5 needs, is built in the background from here on
# where it is missing (a few minutes, once per machine), at a lower priority:
# it fills the cores the foreground builds leave idle (a crate that waits on
# one other, the links) and never delays their values.
pgrx_pid=""
pgrx_log=${TMPDIR:-/tmp}/nonceforge-demo-cargo-pgrx.log
if ! "$CARGO" pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION"; then
    say "building cargo-pgrx $PGRX_VERSION in the background, for stage 5 (once per machine; its log: $pgrx_log)"
    # Unoptimised, as make setup builds it (tools/setup.sh says why).
    # (No debug info: CARGO_PROFILE_DEV_DEBUG=0 is exported above.)
    nice -n 10 "$CARGO" install -q cargo-pgrx --version "$PGRX_VERSION" --locked --debug >"$pgrx_log" 2>&1 &
    pgrx_pid=$!
    trap '[ -z "$pgrx_pid" ] || kill "$pgrx_pid" 2>/dev/null || true' EXIT
fi

say "== 2. the command-line tool (building it and its lease clients: about 4 minutes on two cores)"
# protoc: the etcd client compiles etcd's .proto files; Redis: the lease below.
apt_need protobuf-compiler libprotobuf-dev redis-server
# Built alone: the Node addon and the Elixir NIF ask the shared crates for the
# CLI's features exactly (the workspace Cargo.toml's "build sharing"), so
# stages 3 and 4 build little, and the PostgreSQL extension for most of them
# (stage 5 reuses a third of its crates): bench/RESULTS.md, "make demo".
"$CARGO" build -q --release --locked -p nonceforge-cli
say "== sortable nonces, as integers"
"$BIN" gen sortable --bits 64 -n 3 --format int --machine-id 7
say "== encrypted nonces (Speck64/128, Speck96/144, AES-256), base64url"
NONCEFORGE_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NONCEFORGE_KEY
for b in 64 96 128; do "$BIN" gen encrypted --bits "$b" -n 2 --format base64url --machine-id 7; done
say "== external ids: user 42 as a UUIDv8, as TypeID-like base32, and back"
NONCEFORGE_EXTID_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NONCEFORGE_EXTID_KEY
"$BIN" extid encode --type user --seq 42
id=$("$BIN" extid encode --type user --seq 42 --format base32 --prefix --check)
echo "$id"
"$BIN" extid decode --type user "$id"
say "== a machine id leased from Redis (a throwaway server on a loopback port), then released"
say "   (the first value waits the lease's TTL and margin: the store may be an older copy, docs/lease-protocol.md;"
say "    a TTL of 3 s here, 3.3 s of wait, where the default 10 s waits 11)"
port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes --logfile /dev/null
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
rc=0
"$BIN" gen sortable --bits 64 -n 3 --lease "redis://127.0.0.1:$port" --ttl 3s || rc=$?
"$BIN" lease status --backend "redis://127.0.0.1:$port" || rc=$?
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
[ "$rc" = 0 ] || exit "$rc"
say "== 10 million 96-bit counter nonces to /dev/null"
time "$BIN" gen counter --bits 96 -n 10000000 --machine-id 1 >/dev/null

say "== 3. Node: the npm package's addon (building it: about a minute), a generator and an external id"
command -v node >/dev/null || { echo "node not found: install Node.js 20"; exit 1; }
(cd node && npm run --silent build >/dev/null 2>&1 && node ../tools/demo-node.js)

say "== 4. Elixir: Nonceforge (the NoNoncense drop-in) on the same core, machine id 7 (its NIF: about a minute)"
apt_need elixir erlang-dev
(cd elixir && mix run --no-start ../tools/demo-elixir.exs)

say "== 5. PostgreSQL 15: the extension on a throwaway cluster, as its application role"
apt_need postgresql-15 postgresql-server-dev-15 clang libclang-dev
if [ -n "$pgrx_pid" ]; then
    say "waiting for cargo-pgrx's build (started before stage 2)"
    wait "$pgrx_pid" || { cat "$pgrx_log"; echo "cargo-pgrx $PGRX_VERSION did not build (its log above)"; exit 1; }
    pgrx_pid=""
    say "cargo-pgrx $PGRX_VERSION built"
fi
cfg=${PGRX_HOME:-$HOME/.pgrx}/config.toml
grep -qs "^pg15 = \"$PG_CONFIG\"" "$cfg" || "$CARGO" pgrx init --pg15 "$PG_CONFIG" >/dev/null
say "building the extension, unoptimised, into a private copy of PostgreSQL 15 (about 3 minutes; the system's is not touched)"
tools/demo-pg.sh "$PG_CONFIG"

say "== 6. the benchmark table (threads 1,2; baselines measured in the same run; a quarter second a row)"
"$BIN" bench --threads 1,2 --seconds 0.25
say "demo done"
