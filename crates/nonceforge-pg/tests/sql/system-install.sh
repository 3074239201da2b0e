#!/usr/bin/env bash
# The tests install their build of the extension into the system PostgreSQL
# (Debian's 15: its library and extension directories are the only place it
# loads from), and package.sh installs and removes the .deb there. So that
# `make test` leaves the machine as it found it — a `make pg-install` or a
# package of the user's still in place afterwards — `save` keeps the
# nonceforge files found there before the tests, and `restore` puts exactly
# those back (removing what the tests left), then checks that it did.
#   system-install.sh save|restore      (PG_CONFIG_SYSTEM: another pg_config)
set -euo pipefail
pg_config=${PG_CONFIG_SYSTEM:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$pg_config" ] || exit 0
lib=$("$pg_config" --pkglibdir)
ext=$("$pg_config" --sharedir)/extension
keep=${NONCEFORGE_KEEP_DIR:-/tmp/nonceforge-system-install}
ours() { (cd / && find "${lib#/}" "${ext#/}" -maxdepth 1 -name 'nonceforge*' -type f | sort); }
case "${1:-}" in
save)
    rm -rf "$keep" && mkdir -p "$keep"
    ours >"$keep/list"
    tar -C / -cf "$keep/files.tar" -T "$keep/list"
    echo "system PostgreSQL: $(wc -l <"$keep/list") nonceforge file(s) kept, to put back after the tests"
    ;;
restore)
    [ -f "$keep/files.tar" ] || { echo "system-install.sh: nothing saved"; exit 0; }
    rm -f "$lib"/nonceforge* "$ext"/nonceforge*
    tar -C / -xpf "$keep/files.tar"
    [ "$(ours)" = "$(cat "$keep/list")" ] && tar -C / -df "$keep/files.tar" ||
        { echo "--- failed: the system PostgreSQL's nonceforge files are not as before the tests"; exit 1; }
    echo "system PostgreSQL: its nonceforge files are back as before the tests ($(wc -l <"$keep/list"))"
    rm -rf "$keep"
    ;;
*) echo "usage: $0 save|restore" >&2; exit 2 ;;
esac
