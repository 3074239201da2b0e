# Sourced by run.sh and bench/pg/run.sh: installs the extension, and gives a
# throwaway PostgreSQL 15 cluster on a loopback port, run as the postgres user,
# stopped and removed on exit.
pgbin="${PGBIN:-/usr/lib/postgresql/15/bin}"
(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && cargo pgrx install --release --pg-config "$pgbin/pg_config" >/dev/null)
cluster_dir="$(mktemp -d /tmp/nonceforge-pg.XXXXXX)"
chown postgres "$cluster_dir"
chmod 700 "$cluster_dir"
# The server's environment: RUST_BACKTRACE=1 makes std capture backtraces unless
# the extension turns that off, so a test that looks for one in an error can fail.
server_env=(RUST_BACKTRACE=1)
as_pg() { runuser -u postgres -- env "${server_env[@]}" "$@"; }
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
