#!/usr/bin/env bash
# Packs the crates users install (cargo package: each .crate built from its own
# files against the others' .crate files, as crates.io would build it).
#   tools/package-crates.sh [--allow-dirty] CRATE...   (make lint and make dist run it)
#
# cargo package verifies each crate against the others' .crate files through a
# local registry, and extracts them under $CARGO_HOME/registry/src/-<hash of
# the checkout's path>/ once per name and version: a checkout packed before at
# the same path and version would be verified against the old sources. Those
# are dropped first, and so are the verify builds' artifacts compiled from them
# (found by their dep-info naming the extracted sources), which cargo would
# otherwise reuse: it takes registry sources as immutable.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo="${CARGO:-cargo}"
flags=()
[ "${1:-}" = --allow-dirty ] && { flags+=(--allow-dirty); shift; }
[ $# -gt 0 ] || { echo "usage: $0 [--allow-dirty] CRATE..." >&2; exit 2; }
find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -mindepth 2 -maxdepth 2 -path '*/-*/nonceforge*' -exec rm -rf {} + 2>/dev/null || true
for d in $(grep -l '/registry/src/-[^/]*/nonceforge' target/debug/deps/*.d 2>/dev/null); do
    b=$(basename "$d" .d)          # crate_name-hash (the files under deps/)
    fp="${b%-*}"                   # package-name-hash (the fingerprint's directory)
    fp="${fp//_/-}-${b##*-}"
    rm -rf target/debug/deps/*"$b"* target/debug/.fingerprint/"$fp"
done
crates=()
for c in "$@"; do crates+=(-p "$c"); done
"$cargo" package --locked "${flags[@]}" -q "${crates[@]}"
