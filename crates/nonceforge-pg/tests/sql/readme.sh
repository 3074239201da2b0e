#!/usr/bin/env bash
# Every SQL block of the extension's README (and the top README's), as
# written, on the configured cluster run.sh set up: each in a database of its
# own — a block that creates the extension runs as the administrator (it is
# the administrator's); any other runs as `app` after the administrator
# created the extension there and granted the key functions, as the README
# says to. A statement with a parameter ($1, as an application sends it) is
# PREPAREd and EXECUTEd with the value the README's `<!-- $1 = … -->` gives.
# A block after `<!-- not run: why -->` is skipped.
#   readme.sh PORT            (sourced helpers: none; needs psql on the PATH)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port=$1
work=$(mktemp -d /tmp/nonceforge-readme-sql.XXXXXX)
trap 'rm -rf "$work"' EXIT
sql() { local role=$1 db=$2; shift 2; psql -h 127.0.0.1 -p "$port" -U "$role" -d "$db" -X -q -v ON_ERROR_STOP=1 "$@"; }

n=0
for readme in "$here/../../README.md" "$here/../../../../README.md"; do
    # Blocks into files: N.sql, and N.param (the $1 value) or N.skip.
    awk -v dir="$work" -v n="$n" '
        /^<!-- not run: .* -->$/ { skip = 1; next }
        /^<!-- \$1 = .* -->$/ { param = $0; sub(/^<!-- \$1 = /, "", param); sub(/ -->$/, "", param); next }
        /^```sql$/ { n++; f = dir "/" n ".sql"; inblock = 1; printf "" > f;
                     if (skip) print "" > (dir "/" n ".skip");
                     if (param != "") print param > (dir "/" n ".param"); next }
        /^```$/ && inblock { inblock = 0; skip = 0; param = ""; close(f); next }
        inblock { print > f; next }
        /[^ \t]/ { skip = 0; param = "" }
        END { print n > (dir "/count") }' "$readme"
    n=$(cat "$work/count")
done

ran=0
for f in $(ls "$work"/*.sql | sort -V); do
    i=$(basename "$f" .sql)
    [ -e "$work/$i.skip" ] && continue
    db="readme_$i"
    sql postgres postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
    if grep -q "CREATE EXTENSION" "$f"; then
        role=postgres
    else
        role=app
        sql postgres "$db" -c "CREATE EXTENSION nonceforge" -c "GRANT CREATE ON SCHEMA public TO app" \
            -c "GRANT EXECUTE ON FUNCTION encrypted_nonce(integer), encrypted_nonce_series(integer, bigint), extid_encode(text, bigint), extid_seq(text, uuid), extid_encode(text, bigint, bigint), extid_decode(text, uuid), extid_inspect(text, uuid) TO app"
    fi
    # Statements (up to a ';' ending a line, comments aside); those with $1 prepared.
    param=$(cat "$work/$i.param" 2>/dev/null || true)
    awk -v param="$param" '
        { stmt = stmt $0 "\n"; line = $0; sub(/--.*$/, "", line) }
        line ~ /;[ \t]*$/ {
            if (stmt ~ /\$1/) {
                if (param == "") { print "\\echo the block uses $1 without <!-- $1 = … -->"; print "\\q 3" }
                s = stmt; sub(/;[ \t]*(--[^\n]*)?\n$/, "", s)
                print "PREPARE readme_stmt AS " s ";"; print "EXECUTE readme_stmt(" param ");"; print "DEALLOCATE readme_stmt;"
            } else printf "%s", stmt
            stmt = ""
        }
        END { printf "%s", stmt }' "$f" >"$work/$i.run"
    if ! out=$(sql "$role" "$db" -o /dev/null -f "$work/$i.run" 2>&1) || [ -n "$out" ]; then
        echo "--- failed: README SQL block $i (as $role):"; cat "$f"; echo "--- ran:"; cat "$work/$i.run"; echo "--- said:"; echo "$out"
        exit 1
    fi
    sql postgres postgres -c "DROP DATABASE $db"
    ran=$((ran + 1))
done
[ "$ran" -ge 6 ] || { echo "--- failed: only $ran README SQL blocks ran"; exit 1; }
echo "README SQL: $ran blocks ran as written"
