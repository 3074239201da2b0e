#!/usr/bin/env bash
# make check-pg: the PostgreSQL extension's fast tier (pg_regress on a
# throwaway cluster of one major). The fast loop installs nothing: without the
# server, its headers or cargo-pgrx (make setup installs them) this says what
# is missing and skips. The system PostgreSQL's nonceforge files are put back
# afterwards, pass or fail.
#   PGBIN=... PGRX_VERSION=... PG_CHECK_VERSION=... tools/check-pg.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo="${CARGO:-cargo}"
: "${PGBIN:?set PGBIN to the bin directory of the major}" "${PGRX_VERSION:?}" "${PG_CHECK_VERSION:?}"
tests=crates/nonceforge-pg/tests
missing=""
[ -x "$PGBIN/postgres" ] || missing="$missing, PostgreSQL $PG_CHECK_VERSION (postgres)"
[ -f "$("$PGBIN/pg_config" --includedir-server 2>/dev/null)/postgres.h" ] || missing="$missing, its server headers"
"$cargo" pgrx --version 2>/dev/null | grep -q " $PGRX_VERSION" || missing="$missing, cargo-pgrx $PGRX_VERSION"
if [ -n "$missing" ]; then
    echo "check-pg: skipped, not installed: ${missing#, } (make setup installs them)"
    exit 0
fi
"$tests/sql/system-install.sh" save
PGBIN="$PGBIN" "$tests/regress/run.sh"
rc=$?
"$tests/sql/system-install.sh" restore && exit $rc
