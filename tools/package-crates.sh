#!/usr/bin/env bash
# Packs the crates users install and builds each from its .crate's own files,
# against the others' .crate files, as a user's build would.
#   tools/package-crates.sh [--allow-dirty] [--check] CRATE...
# make dist: `cargo package` with its verify build (each crate compiled with
# its dependencies in the dev profile). make lint (--check): `cargo package
# --no-verify`, then the .crate files unpacked into target/package-check/ as a
# workspace whose [patch.crates-io] points the crates at each other's unpacked
# copies, and `cargo check` over its libraries and binaries in this checkout's
# target directory, the workspace's Cargo.lock kept: a file a package lacks
# fails the same way, at check speed (the verify build compiled every
# dependency again, ~10 minutes of make test's two cores).
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
check=0
while [ $# -gt 0 ]; do
    case "$1" in
    --allow-dirty) flags+=(--allow-dirty) ;;
    --check) check=1 ;;
    *) break ;;
    esac
    shift
done
[ $# -gt 0 ] || { echo "usage: $0 [--allow-dirty] [--check] CRATE..." >&2; exit 2; }
crates=()
for c in "$@"; do crates+=(-p "$c"); done

if [ "$check" = 1 ]; then
    "$cargo" package --locked --no-verify "${flags[@]}" -q "${crates[@]}"
    version=$(awk -F'"' '/^version = / { print $2; exit }' Cargo.toml)
    ws=target/package-check
    rm -rf "$ws" && mkdir -p "$ws"
    members="" patches=""
    for c in "$@"; do
        tar -xzf "target/package/$c-$version.crate" -C "$ws"
        members="$members\"$c-$version\", "
        patches="$patches$c = { path = \"$c-$version\" }"$'\n'
    done
    printf '[workspace]\nresolver = "3"\nmembers = [%s]\n\n[patch.crates-io]\n%s' "${members%, }" "$patches" >"$ws/Cargo.toml"
    cp Cargo.lock "$ws/"
    CARGO_TARGET_DIR="$PWD/target" "$cargo" check --manifest-path "$ws/Cargo.toml" --workspace --offline -q
    exit
fi

find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -mindepth 2 -maxdepth 2 -path '*/-*/nonceforge*' -exec rm -rf {} + 2>/dev/null || true
for d in $(grep -l '/registry/src/-[^/]*/nonceforge' target/debug/deps/*.d 2>/dev/null); do
    b=$(basename "$d" .d)          # crate_name-hash (the files under deps/)
    fp="${b%-*}"                   # package-name-hash (the fingerprint's directory)
    fp="${fp//_/-}-${b##*-}"
    rm -rf target/debug/deps/*"$b"* target/debug/.fingerprint/"$fp"
done
"$cargo" package --locked "${flags[@]}" -q "${crates[@]}"
