#!/usr/bin/env bash
# The Rust workspace's tests: what `cargo test --workspace --release --locked`
# runs, built once by it, but with the test binaries named in RUST_TESTS_APART
# (PACKAGE:TARGET …) run beside the rest instead of after them. cargo runs a
# workspace's test binaries one after another, and the CLI's lease tests mostly
# wait on the stores (TTLs running out, stores stopped and brought back): the
# two longest of them all (bench/RESULTS.md, "make test: the build profile and
# the lanes").
#
# The binaries are the ones `cargo test --no-run` reports (so a test file
# added later runs too), each run as cargo test runs it: from its package's
# directory, no arguments. The doc tests follow (`cargo test --doc`, the same
# package set: nothing is rebuilt). Each apart binary's output is kept in
# target/test-logs/rust-TARGET.log and printed whole when it ends; the exit
# status is non-zero when any binary failed.
#   RUST_TESTS_APART="" tools/rust-tests.sh   # plain `cargo test --workspace`
set -uo pipefail
cd "$(dirname "$0")/.."
cargo="${CARGO:-cargo}"
apart="${RUST_TESTS_APART-nonceforge-cli:lease_rollback nonceforge-cli:lease}"
flags=(--workspace --release --locked)
logs=target/test-logs
mkdir -p "$logs"

if [ -z "$apart" ]; then
    exec "$cargo" test "${flags[@]}"
fi

# One line per test binary: PACKAGE-DIR PACKAGE:TARGET KIND EXECUTABLE.
list=$(mktemp) || exit 1
pids=() names=() # the apart binaries' runs, killed if this script exits early
trap 'rm -f "$list"; kill "${pids[@]}" 2>/dev/null' EXIT
"$cargo" test "${flags[@]}" --no-run --message-format=json-render-diagnostics |
    CARGO="$cargo" python3 -c '
import json, os, subprocess, sys
meta = json.loads(subprocess.run([os.environ["CARGO"], "metadata", "--no-deps", "--format-version", "1", "--locked"],
                                 check=True, capture_output=True).stdout)
names = {p["manifest_path"]: p["name"] for p in meta["packages"]}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
        continue
    t = m["target"]
    print(os.path.dirname(m["manifest_path"]), names[m["manifest_path"]] + ":" + t["name"], "/".join(t["kind"]), m["executable"])
' >"$list" || exit 1

for a in $apart; do
    grep -q " $a test " "$list" ||
        { echo "RUST_TESTS_APART: $a is no integration-test binary of the workspace" >&2; exit 1; }
done

run() { # run DIR EXECUTABLE: as cargo test runs a test binary
    (cd "$1" && "$2")
}

for a in $apart; do
    read -r dir _ _ exe < <(grep " $a test " "$list")
    echo "== $a, apart (its output when it ends; $logs/rust-${a#*:}.log)"
    run "$dir" "$exe" >"$logs/rust-${a#*:}.log" 2>&1 &
    pids+=($!) names+=("$a")
done

failed=""
while read -r dir name kind exe; do
    case " $apart " in *" $name "*) continue ;; esac
    echo "== $name ($kind): ${exe#"$PWD"/}"
    run "$dir" "$exe" </dev/null || failed="$failed $name"
done <"$list"
"$cargo" test "${flags[@]}" --doc || failed="$failed doc-tests"

for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then verdict=passed; else verdict=FAILED; failed="$failed ${names[$i]}"; fi
    echo "== ${names[$i]} (apart): $verdict; its output:"
    cat "$logs/rust-${names[$i]#*:}.log"
done
pids=()
if [ -n "$failed" ]; then
    echo "== the Rust tests that FAILED:$failed"
    exit 1
fi
