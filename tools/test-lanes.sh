#!/usr/bin/env bash
# make test's body: two lanes side by side, `make pg-test elixir-test` (the
# PostgreSQL extension on every major, then Elixir) and `make test-faces`
# (lints, the Rust workspace, Python, Go, Node). On two cores one lane's
# builds fill the other's waits. Elixir closes the PostgreSQL lane, which
# ends first (its tests mostly wait on stores, as Go's and Node's do at the
# other lane's end); `make -k` runs it when pg-test failed too.
#
# The command-line tool is built first and copied to target/test-bin/: the
# PostgreSQL lane runs that copy (NONCEFORGE_CLI), which the other lane's
# cargo cannot rewrite under it.
#
# Every line is printed as it comes, prefixed with its lane and the minutes
# since the start; each lane's whole output is also kept in
# target/test-logs/LANE.log. Both lanes always run to their end; the exit
# status is non-zero when either failed, and the last lines say which and
# repeat a failed lane's end and the lines that say what failed.
set -uo pipefail
cd "$(dirname "$0")/.."
make="${MAKE:-make}"
logs=target/test-logs
rm -rf "$logs" && mkdir -p "$logs" target/test-bin

stamp() { # stamp LANE: prefixes each line read with "[LANE mm:ss] "
    local line t
    while IFS= read -r line; do
        t=$SECONDS
        printf '[%-5s %02d:%02d] %s\n' "$1" $((t / 60)) $((t % 60)) "$line"
    done
}

lane() { # lane NAME MAKE-ARGS...: runs make, records its status and time
    local name="$1" t0=$SECONDS; shift
    { "$make" --no-print-directory "$@" 2>&1; echo $? >"$logs/$name.rc"; } |
        tee "$logs/$name.log" | stamp "$name"
    echo $((SECONDS - t0)) >"$logs/$name.secs"
}

echo "== the command-line tool, for both lanes"
cargo build --release --locked -q -p nonceforge-cli 2>&1 | stamp cli || exit 1
cp target/release/nonceforge target/test-bin/nonceforge
target/test-bin/nonceforge --version >/dev/null || exit 1

NONCEFORGE_CLI="$PWD/target/test-bin/nonceforge" lane pg -k pg-test elixir-test &
pg=$!
lane faces test-faces &
faces=$!
wait "$pg" "$faces"

failed=""
summary=""
for name in pg faces; do
    rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
    secs=$(cat "$logs/$name.secs" 2>/dev/null || echo 0)
    if [ "$rc" = 0 ]; then verdict=passed; else verdict="FAILED (exit $rc)"; failed="$failed $name"; fi
    summary="$summary; $name $verdict in $((secs / 60))m$(printf %02d $((secs % 60)))s"
done
echo "== make test:${summary#;}; $((SECONDS / 60))m$(printf %02d $((SECONDS % 60)))s in all (logs: $logs/)"
[ -z "$failed" ] && exit 0
# A failed lane's log scrolled past while the other lane ran on: its end,
# then the lines that say what failed (test names, assertions, panics, make's
# failed targets; not every line with "failed" or "error", which a store's
# client may print by the hundred), cut to a screen, so that the end of the
# output, all a CI summary may keep, names the failure.
fails='--- FAIL|_test\.go:[0-9]+:|panicked at|^FAIL|FAILED|not ok |^# fail [1-9]|[1-9][0-9]* fail(ed|ures?)\b|^ +[0-9]+\) test |^error|\*\*\* \[|Traceback|Error: |^E  '
for name in $failed; do
    echo "== the $name lane's last lines:"
    tail -n 8 "$logs/$name.log" | cut -c1-300
    echo "== the $name lane failed; its lines that say what (the last 15 of them):"
    grep -nE -e "$fails" "$logs/$name.log" | cut -c1-300 | tail -n 15
done
echo "== make test failed (whole logs: $logs/)"
exit 1
