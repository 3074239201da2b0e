# Sourced by run.sh, scenarios.sh and bench/pg/run.sh: installs the extension, and gives a
# throwaway PostgreSQL cluster ($PGBIN, default Debian's 15) on a loopback port, run as the postgres user,
# stopped and removed on exit.
pgbin="${PGBIN:-/usr/lib/postgresql/15/bin}"
# NONCEFORGE_PG_PREINSTALLED=1: the extension is already installed (from a package;
# tests/sql/package.sh runs the suite that way, without cargo on the PATH).
if [ -z "${NONCEFORGE_PG_PREINSTALLED:-}" ]; then
    (cd "$(dirname "${BASH_SOURCE[0]}")/../.." && cargo pgrx install --release --pg-config "$pgbin/pg_config" >/dev/null)
fi
cluster_dir="$(mktemp -d /tmp/nonceforge-pg.XXXXXX)"
chown postgres "$cluster_dir"
chmod 700 "$cluster_dir"
# The server's environment: RUST_BACKTRACE=1 makes std capture backtraces unless
# the extension turns that off, so a test that looks for one in an error can fail.
server_env=(RUST_BACKTRACE=1)
# A PostgreSQL other than Debian's (tools/fetch-postgres.sh) brings its own libpq
# (dblink needs its version's): its lib directory goes first.
pg_libdir="$("$pgbin/pg_config" --libdir)"
as_pg() { runuser -u postgres -- env "LD_LIBRARY_PATH=$pg_libdir" "${server_env[@]}" "$@"; }
stop_cluster() {
    local pid
    for pid in "$cluster_dir"/*/postmaster.pid; do
        [ -f "$pid" ] && as_pg "$pgbin/pg_ctl" -D "$(dirname "$pid")" -m immediate stop >/dev/null 2>&1 || true
    done
    rm -rf "$cluster_dir"
}
trap stop_cluster EXIT
# start_cluster PORT [postgres -c options...]
start_cluster() {
    as_pg "$pgbin/initdb" -D "$cluster_dir/pg" -A trust -U postgres >/dev/null
    restart_cluster "$@"
}
# restart_cluster PORT [postgres -c options...]: (re)starts it with these options
# (and with $server_env as its environment).
restart_cluster() {
    local port="$1"
    shift
    as_pg "$pgbin/pg_ctl" -D "$cluster_dir/pg" -m fast stop >/dev/null 2>&1 || true
    as_pg "$pgbin/pg_ctl" -D "$cluster_dir/pg" -l "$cluster_dir/log" -w \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$cluster_dir $*" start >/dev/null
}
