#!/usr/bin/env bash
# The fast tier (`make pg-check`, about a minute): PostgreSQL's own regression
# driver, pg_regress, runs sql/*.sql against a throwaway cluster it makes and
# removes (--temp-instance) with the library preloaded, machine id 7 and fixed
# test keys, and compares each file's output with expected/*.out — every
# function's results and every error's SQLSTATE-bearing text, on one major
# ($PGBIN, default Debian's 15). `make pg-test` keeps the five majors, the
# attacks and the operations scenarios.
#
#   PGBIN=/usr/lib/postgresql/15/bin crates/nonceforge-pg/tests/regress/run.sh [test...]
#
# On a difference it prints regression.diffs; to accept a change of output on
# purpose, copy the new results/*.out over expected/ and review the diff.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pgbin="${PGBIN:-/usr/lib/postgresql/15/bin}"
# Below the kernel's ephemeral range (32768-60999), so no free port another
# test asked the kernel for can take it while make test runs lanes side by side.
port="${NONCEFORGE_TEST_PGPORT:-25472}"
pg_regress="$("$pgbin/pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress"
[ -x "$pg_regress" ] || { echo "no pg_regress at $pg_regress (the server's -dev package / PGXS)"; exit 1; }
if [ -z "${NONCEFORGE_PG_PREINSTALLED:-}" ]; then
    (cd "$here/../.." && cargo pgrx install --release --pg-config "$pgbin/pg_config" >/dev/null)
fi
work="$(mktemp -d /tmp/nonceforge-regress.XXXXXX)"
keep() { [ "${1:-0}" = 0 ] || { echo "results kept in $work"; return; }; rm -rf "$work"; }
# Fixed keys (test vectors, never used elsewhere): extid results are the same on every run.
printf '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n' > "$work/nonce.key"
printf '1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100\n' > "$work/extid.key"
cat > "$work/test.conf" <<CONF
shared_preload_libraries = 'nonceforge'
nonceforge.machine_id = 7
nonceforge.key_file = '$work/nonce.key'
nonceforge.extid_key_file = '$work/extid.key'
CONF
chmod 600 "$work"/*.key
cp -r "$here/sql" "$here/expected" "$work/"
chown -R postgres "$work"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=($(cd "$here/sql" && ls *.sql | sed 's/\.sql$//'))
rc=0
runuser -u postgres -- env "LD_LIBRARY_PATH=$("$pgbin/pg_config" --libdir)" "$pg_regress" \
    --bindir="$pgbin" --inputdir="$work" --outputdir="$work" --temp-instance="$work/instance" \
    --temp-config="$work/test.conf" --port="$port" --dbname=nonceforge_regress "${tests[@]}" || rc=$?
if [ "$rc" != 0 ]; then
    [ -f "$work/regression.diffs" ] && cat "$work/regression.diffs"
    keep 1
    exit "$rc"
fi
keep 0
