#!/usr/bin/env bash
# make pg-test's body (the system PostgreSQL's files saved and put back around
# it by the Makefile): the regression tier on 15; on every major the pgrx
# tests (where PG_PGRX_TEST_VERSIONS names it) and the SQL suite; the
# operations scenarios on 15 and 18; pg_upgrade with data; the packages
# installed without cargo. Each stage is announced with the time.
#   PG_VERSIONS="14 15 16 17 18" PG_PGRX_TEST_VERSIONS=18 PG_ROOT=/opt/nonceforge-pg tools/pg-test-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo="${CARGO:-cargo}"
: "${PG_VERSIONS:?}" "${PG_PGRX_TEST_VERSIONS:?}" "${PG_ROOT:?}"
crate=crates/nonceforge-pg
sql=$crate/tests/sql
pg_bin() { if [ "$1" = 15 ]; then echo /usr/lib/postgresql/15/bin; else echo "$PG_ROOT/$1/bin"; fi; }
stage() { echo "== $* ($(date -u +%T))"; }

stage "PostgreSQL 15: the regression tier (pg_regress, tests/regress)"
PGBIN=$(pg_bin 15) "$crate/tests/regress/run.sh"
for v in $PG_VERSIONS; do
    if [[ " $PG_PGRX_TEST_VERSIONS " == *" $v "* ]]; then
        stage "PostgreSQL $v: pgrx tests on a throwaway cluster"
        pgdata=$(mktemp -d /tmp/nonceforge-pgrx.XXXXXX)
        chown postgres "$pgdata"
        rc=0
        # The test binary and the extension it installs share their
        # dependencies' builds (4.5 min against 6.5 from nothing on two cores:
        # bench/RESULTS.md) when both see the same flags and profile. RUSTFLAGS
        # set (empty unless the caller set it) overrides the link flag
        # cargo-pgrx gives the extension's build alone (`--no-gc-sections`,
        # for the schema section on aarch64; x86-64 keeps the section without
        # it, and a lost one fails schema generation loudly). Without debug
        # info, the crates `cargo test` builds once for the build scripts and
        # the tests alike match the build-override ones the extension's build
        # gives its build scripts.
        (cd "$crate" && RUSTFLAGS="${RUSTFLAGS:-}" CARGO_PROFILE_DEV_DEBUG=0 \
            "$cargo" pgrx test "pg$v" --runas postgres --pgdata "$pgdata") || rc=$?
        rm -rf "$pgdata"
        [ "$rc" = 0 ] || exit "$rc"
    fi
    stage "PostgreSQL $v: the SQL suite on a throwaway cluster"
    PGBIN=$(pg_bin "$v") "$sql/run.sh"
done
stage "the operations scenarios on PostgreSQL 15 and 18"
PGBIN=$(pg_bin 15) "$sql/scenarios.sh"
PGBIN=$(pg_bin 18) "$sql/scenarios.sh"
stage "pg_upgrade with data"
"$sql/upgrade.sh" 15 18
"$sql/upgrade.sh" 17 18
"$sql/upgrade.sh" 14 15
stage "the packages, installed without cargo"
"$sql/package.sh"
