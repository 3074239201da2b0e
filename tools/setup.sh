#!/usr/bin/env bash
# make setup: installs what is missing, and only that — the Debian packages
# (APT_PACKAGES), cargo-pgrx PGRX_VERSION (about 2 minutes, once), the
# PostgreSQL majors PG_VERSIONS under PG_ROOT (crates/nonceforge-pg/tools/
# fetch-postgres.sh; 15 is Debian's) — and points cargo-pgrx at each major.
# Checks that cargo, clippy and go are there. The Makefile passes every
# variable; run alone, the defaults below are the Makefile's.
set -euo pipefail
CARGO="${CARGO:-cargo}"
GO="${GO:-go}"
PGRX_VERSION="${PGRX_VERSION:?the Makefile passes PGRX_VERSION}"
PG_ROOT="${PG_ROOT:-/opt/nonceforge-pg}"
PG_VERSIONS="${PG_VERSIONS:-14 15 16 17 18}"
PG_CRATE="${PG_CRATE:-crates/nonceforge-pg}"
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
pg_bin() { if [ "$1" = 15 ]; then echo /usr/lib/postgresql/15/bin; else echo "$PG_ROOT/$1/bin"; fi; }

missing=""
for p in ${APT_PACKAGES:?the Makefile passes APT_PACKAGES}; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086 # one word per package
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi
command -v "$CARGO" >/dev/null || { echo "cargo not found: install Rust 1.89 or newer (rustup)"; exit 1; }
"$CARGO" clippy --version >/dev/null 2>&1 || { echo "clippy missing: rustup component add clippy rustfmt"; exit 1; }
command -v "$GO" >/dev/null || { echo "go not found: install Go 1.26 or newer (https://go.dev/dl)"; exit 1; }
# cargo-pgrx builds the PostgreSQL extension; only when missing. Built without
# optimisation or debug info: it drives cargo, PostgreSQL and the extension's
# own schema binary, none of which it speeds up, and builds in well under half
# the time (bench/RESULTS.md, "The measurements behind the code").
"$CARGO" pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION" || {
    echo "installing cargo-pgrx $PGRX_VERSION (about 2 minutes on two cores, once)"
    CARGO_PROFILE_DEV_DEBUG=0 "$CARGO" install cargo-pgrx --version "$PGRX_VERSION" --locked --debug
}
# shellcheck disable=SC2086 # one word per major
NONCEFORGE_PG_ROOT="$PG_ROOT" "$PG_CRATE/tools/fetch-postgres.sh" $PG_VERSIONS
cfg="${PGRX_HOME:-$HOME/.pgrx}/config.toml"
ok=1
for v in $PG_VERSIONS; do grep -qs "^pg$v = \"$(pg_bin "$v")/pg_config\"" "$cfg" || ok=0; done
if [ "$ok" = 0 ]; then
    args=()
    for v in $PG_VERSIONS; do args+=("--pg$v" "$(pg_bin "$v")/pg_config"); done
    "$CARGO" pgrx init "${args[@]}"
fi
