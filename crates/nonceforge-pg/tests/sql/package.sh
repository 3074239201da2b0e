#!/usr/bin/env bash
# The packages as a DBA installs them (run by `make test`): builds the Debian
# package and the tarball for 15 and 18 (tools/package.sh), then, with cargo
# off the PATH, installs the .deb on Debian's PostgreSQL 15 with dpkg and the
# tarball into the PostgreSQL 18 build with its install.sh, and runs the whole
# SQL suite (run.sh, every stage) against each; removes the .deb after (and
# skips that stage where the user has the package installed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
crate="$(cd "$here/../.." && pwd)"
out=$(mktemp -d /tmp/nonceforge-packages.XXXXXX)
trap 'dpkg -r postgresql-15-nonceforge >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
"$crate/tools/package.sh" 15 /usr/lib/postgresql/15/bin/pg_config "$out" >/dev/null
"$crate/tools/package.sh" 18 /opt/nonceforge-pg/18/bin/pg_config "$out" >/dev/null
version=$(awk -F'"' '/^version = / { print $2; exit }' "$crate/Cargo.toml")
deb="$out/postgresql-15-nonceforge_${version}-1_amd64.deb"
tarball="$out/nonceforge-$version-pg18-linux-x86_64.tar.gz"
info=$(dpkg-deb --info "$deb"); contents=$(dpkg-deb --contents "$deb")
grep -q "Depends: postgresql-15, libc6 (>= " <<<"$info" || { echo "--- failed: the .deb's dependencies"; echo "$info"; exit 1; }
[ "$(awk '{ print $6 }' <<<"$contents" | grep -c '\.so$\|\.control$\|\.sql$')" -ge 4 ] ||
    { echo "--- failed: the .deb's contents"; echo "$contents"; exit 1; }
echo "$info" | sed -n 's/^ Depends: /the .deb depends on: /p'

nocargo=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
env PATH="$nocargo" bash -c '! command -v cargo' || { echo "--- failed: cargo is on $nocargo"; exit 1; }

echo "== the Debian package on PostgreSQL 15 (dpkg -i), the SQL suite without cargo"
if dpkg -s postgresql-15-nonceforge >/dev/null 2>&1; then
    # The user's own package: installing ours over it and removing it would
    # take theirs away (make pg-test restores files, not dpkg's records).
    echo "postgresql-15-nonceforge is installed on this machine: the .deb stage is skipped (remove it to run it)"
    trap 'rm -rf "$out"' EXIT
else
# Remove what cargo pgrx install put there, so only the package's files serve
# (make pg-test puts back what was there before the tests: system-install.sh).
rm -f /usr/lib/postgresql/15/lib/nonceforge.so /usr/share/postgresql/15/extension/nonceforge*
dpkg -i "$deb" >/dev/null
grep -qx /usr/lib/postgresql/15/lib/nonceforge.so <<<"$(dpkg -L postgresql-15-nonceforge)"
env PATH="$nocargo" NONCEFORGE_PG_PREINSTALLED=1 PGBIN=/usr/lib/postgresql/15/bin "$here/run.sh"
dpkg -r postgresql-15-nonceforge >/dev/null
[ ! -e /usr/lib/postgresql/15/lib/nonceforge.so ] || { echo "--- failed: dpkg -r left the library"; exit 1; }
fi

echo "== the tarball on PostgreSQL 18 (its install.sh), the SQL suite without cargo"
rm -f /opt/nonceforge-pg/18/lib/nonceforge.so /opt/nonceforge-pg/18/share/extension/nonceforge*
tar -C "$out" -xzf "$tarball"
env PATH="$nocargo" "$out/nonceforge-$version-pg18-linux-x86_64/install.sh" /opt/nonceforge-pg/18/bin/pg_config
env PATH="$nocargo" NONCEFORGE_PG_PREINSTALLED=1 PGBIN=/opt/nonceforge-pg/18/bin "$here/run.sh"
echo "packages: the .deb (15) and the tarball (18) installed without cargo, the SQL suite passed on both"
