#!/usr/bin/env bash
# Builds what a server of PostgreSQL MAJOR needs, as a DBA installs it without
# Rust: a Debian package postgresql-MAJOR-nonceforge (Debian's paths, its
# dependencies computed from the library's own needs) and a plain tarball with
# an install script for any other layout.
#
#   package.sh MAJOR PG_CONFIG OUT_DIR
set -euo pipefail
major="${1:?usage: package.sh MAJOR PG_CONFIG OUT_DIR}"
pg_config="${2:?usage: package.sh MAJOR PG_CONFIG OUT_DIR}"
out="${3:?usage: package.sh MAJOR PG_CONFIG OUT_DIR}"
crate="$(cd "$(dirname "$0")/.." && pwd)"
# No pipeline here stops reading before its writer ends: under pipefail the
# writer's SIGPIPE (exit 141) would fail the build at random (it did, in CI).
version=$(awk -F'"' '/^version = / { print $2; exit }' "$crate/Cargo.toml")
got=$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
[ "$got" = "$major" ] || { echo "package.sh: $pg_config is PostgreSQL $got, not $major" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== PostgreSQL $major: building nonceforge $version"
(cd "$crate" && cargo pgrx package --pg-config "$pg_config" --out-dir "$work/tree" >/dev/null)
so=$(find "$work/tree" -name nonceforge.so -type f)
ext=$(dirname "$(find "$work/tree" -name nonceforge.control -type f)")
[ -f "$so" ] && [ -f "$ext/nonceforge--$version.sql" ] || { echo "package.sh: the build left no library or install script" >&2; exit 1; }

# The Debian package, in Debian's layout for PostgreSQL MAJOR.
name="postgresql-$major-nonceforge"
stage="$work/deb"
install -D -m 0644 "$so" "$stage/usr/lib/postgresql/$major/lib/nonceforge.so"
install -d "$stage/usr/share/postgresql/$major/extension"
install -m 0644 "$ext"/nonceforge.control "$ext"/nonceforge--*.sql "$stage/usr/share/postgresql/$major/extension/"
doc="$stage/usr/share/doc/$name"
install -D -m 0644 "$crate/SECURITY.md" "$doc/SECURITY.md"
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: nonceforge
Files: *
Copyright: the nonceforge developers
License: MIT or Apache-2.0
EOF
# Dependencies: the server it plugs into, and the shared libraries the library
# links (their Debian packages), libc at the newest symbol version it uses.
glibc=$(objdump -T "$so" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
deps="postgresql-$major, libc6 (>= $glibc)"
for lib in $(objdump -p "$so" | awk '/NEEDED/ { print $2 }'); do
    case "$lib" in libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) continue ;; esac
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ && path == "" { path = $NF } END { print path }')
    pkg=$( [ -n "$path" ] && dpkg -S "$path" 2>/dev/null | awk -F: 'NR == 1 { print $1 }' || true)
    [ -n "$pkg" ] || { echo "package.sh: no Debian package provides $lib" >&2; exit 1; }
    deps="$deps, $pkg"
done
size=$(du -sk "$stage" | cut -f1)
install -d "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<EOF
Package: $name
Version: $version-1
Architecture: amd64
Maintainer: nonceforge developers <nonceforge@example.invalid>
Installed-Size: $size
Depends: $deps
Section: database
Priority: optional
Homepage: https://example.invalid/nonceforge
Description: nonceforge for PostgreSQL $major: nonces, UUIDv7, tuid6, external ids
 Counter, sortable and encrypted nonces unique across a fleet (machine ids set
 or leased), UUIDv7 with PostgreSQL 18's and pg_uuidv7's names, pg_tuid's tuid6
 and stuid, and opaque external ids. Add nonceforge to shared_preload_libraries,
 restart, then CREATE EXTENSION nonceforge; see SECURITY.md.
EOF
deb="$out/${name}_${version}-1_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"

# The tarball: the same files, and an install script that asks pg_config where.
base="nonceforge-$version-pg$major-linux-x86_64"
tdir="$work/$base"
install -D -m 0644 "$so" "$tdir/lib/nonceforge.so"
install -d "$tdir/extension"
install -m 0644 "$ext"/nonceforge.control "$ext"/nonceforge--*.sql "$tdir/extension/"
install -m 0644 "$crate/SECURITY.md" "$tdir/SECURITY.md"
cat > "$tdir/install.sh" <<EOF
#!/bin/sh
# Installs nonceforge $version into a PostgreSQL $major server:
#   ./install.sh [PG_CONFIG]      (default: pg_config on the PATH)
# then add nonceforge to shared_preload_libraries, restart, CREATE EXTENSION nonceforge.
set -eu
pg_config="\${1:-pg_config}"
here="\$(cd "\$(dirname "\$0")" && pwd)"
major="\$("\$pg_config" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')"
[ "\$major" = "$major" ] || { echo "install.sh: this build is for PostgreSQL $major; \$pg_config is \$major" >&2; exit 2; }
install -m 0755 "\$here/lib/nonceforge.so" "\$("\$pg_config" --pkglibdir)/nonceforge.so"
install -m 0644 "\$here"/extension/* "\$("\$pg_config" --sharedir)/extension/"
echo "nonceforge $version installed for PostgreSQL $major (\$("\$pg_config" --pkglibdir))"
EOF
chmod 0755 "$tdir/install.sh"
tar -C "$work" --owner=0 --group=0 -czf "$out/$base.tar.gz" "$base"
echo "$out/$base.tar.gz"
