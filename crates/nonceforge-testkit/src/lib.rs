//! Real stores for the lease tests of the lease crate and the CLI —
//! PostgreSQL 15, Redis 7 (alone, replicated under Sentinel, a cluster), etcd
//! 3.4 from Debian — each started on a free loopback port in a throwaway
//! directory, and stopped (and the directory removed) when dropped; and the
//! helpers both crates' lease tests share (one test at a time, the wall clock,
//! a generator drawn ahead on a manual clock). Not published: a dev-dependency.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1 (asked of the kernel, then let go).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a loopback port")
        .port()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A directory under /tmp, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "nonceforge-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create a temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn need(program: &str) -> String {
    for dir in [
        "/usr/lib/postgresql/15/bin",
        "/usr/bin",
        "/usr/local/bin",
        "/usr/sbin",
    ] {
        let p = Path::new(dir).join(program);
        if p.exists() {
            return p.display().to_string();
        }
    }
    panic!(
        "{program} not found: run `make setup` (it installs postgresql-15, redis-server and etcd-server)"
    );
}

fn wait_port(port: u16, what: &str) {
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{what} did not open port {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------- PostgreSQL

/// A throwaway PostgreSQL 15 cluster (as the postgres user when run as root).
pub struct Postgres {
    dir: TempDir,
    pub port: u16,
}

impl Postgres {
    /// A cluster not made yet: its directory (the postgres user's) and a port.
    fn unmade(tag: &str) -> Self {
        let dir = TempDir::new(tag);
        if is_root() {
            let ok = Command::new("chown")
                .args(["postgres", &dir.0.display().to_string()])
                .status()
                .expect("chown");
            assert!(ok.success());
        }
        Postgres {
            dir,
            port: free_port(),
        }
    }

    pub fn start() -> Self {
        let pg = Postgres::unmade("pg");
        let out = pg
            .as_pg(&need("initdb"))
            .args([
                "-D",
                &pg.data(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ])
            .output()
            .expect("initdb");
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.up();
        pg
    }

    fn data(&self) -> String {
        self.dir.0.join("data").display().to_string()
    }

    fn as_pg(&self, program: &str) -> Command {
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", program]);
            c
        } else {
            Command::new(program)
        }
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts (again) and waits until it takes connections.
    pub fn up(&self) {
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off -c max_connections=200",
            self.port,
            self.dir.0.display()
        );
        let log = self.dir.0.join("log").display().to_string();
        let out = self
            .as_pg(&need("pg_ctl"))
            .args(["-D", &self.data(), "-l", &log, "-w", "-o", &opts, "start"])
            .output()
            .expect("pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Stops it (fast: open connections are closed).
    pub fn down(&self) {
        let _ = self
            .as_pg(&need("pg_ctl"))
            .args(["-D", &self.data(), "-m", "fast", "-w", "stop"])
            .output();
    }

    /// Stops it as a crash would (`-m immediate`: no shutdown checkpoint),
    /// and waits until nothing answers on its port.
    pub fn kill(&self) {
        let out = self
            .as_pg(&need("pg_ctl"))
            .args(["-D", &self.data(), "-m", "immediate", "-w", "stop"])
            .output()
            .expect("pg_ctl stop");
        assert!(
            out.status.success(),
            "pg_ctl stop: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "port {} still answers",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A copy of this cluster as of now (`pg_basebackup`, WAL streamed), on
    /// a port of its own: a standby of this one with `standby`, else a
    /// backup that starts as a primary when started. Not started.
    pub fn copy(&self, standby: bool) -> Postgres {
        let copy = Postgres::unmade("pg-copy");
        let port = self.port.to_string();
        let data = copy.data();
        let mut args = vec![
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "-D",
            &data,
            "-X",
            "stream",
            "-c",
            "fast",
            "--no-sync",
        ];
        if standby {
            args.push("-R");
        }
        let out = self
            .as_pg(&need("pg_basebackup"))
            .args(&args)
            .output()
            .expect("pg_basebackup");
        assert!(
            out.status.success(),
            "pg_basebackup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        copy
    }

    /// Crashes this cluster and starts `copy`'s data in its place (same
    /// port): a backup restored over the primary.
    pub fn restore_from(&self, copy: Postgres) {
        self.restore_from_then(copy, || {});
    }

    /// [`restore_from`](Self::restore_from), running `between` while no
    /// server is up.
    pub fn restore_from_then(&self, copy: Postgres, between: impl FnOnce()) {
        self.kill();
        between();
        std::fs::remove_dir_all(self.data()).expect("remove the old data");
        let from = copy.data();
        let ok = Command::new("mv")
            .args([&from, &self.data()])
            .status()
            .expect("mv");
        assert!(ok.success());
        // The copy's own Drop finds no data directory to stop.
        self.up();
    }

    /// Cuts a running standby off from its primary (`primary_conninfo`
    /// cleared and reloaded) and waits until its WAL receiver is gone: it
    /// stays up, in recovery, at the position it had, and falls behind from
    /// now on, as an asynchronous replica does when its link fails.
    pub fn detach(&self) {
        self.psql("ALTER SYSTEM SET primary_conninfo = ''");
        self.psql("SELECT pg_reload_conf()");
        let t = Instant::now();
        while self.psql("SELECT count(*) FROM pg_stat_wal_receiver") != "0" {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the standby on port {} still receives WAL",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Promotes a standby (waits until it takes writes).
    pub fn promote(&self) {
        let out = self
            .as_pg(&need("pg_ctl"))
            .args(["-D", &self.data(), "-w", "promote"])
            .output()
            .expect("pg_ctl promote");
        assert!(
            out.status.success(),
            "pg_ctl promote: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs SQL with psql.
    pub fn psql(&self, sql: &str) -> String {
        let out = Command::new(need("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-XAtq",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ])
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "psql: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .as_pg(&need("pg_ctl"))
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
    }
}

// ---------------------------------------------------------------------- Redis

/// A Redis server with an append-only file (so a restart keeps the leases).
pub struct Redis {
    dir: TempDir,
    pub port: u16,
    child: Option<Child>,
}

impl Redis {
    pub fn start() -> Self {
        let mut r = Redis {
            dir: TempDir::new("redis"),
            port: free_port(),
            child: None,
        };
        r.up();
        r
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    pub fn up(&mut self) {
        self.up_with(&[]);
    }

    /// Starts it with more options (later ones win).
    pub fn up_with(&mut self, more: &[&str]) {
        let child = Command::new(need("redis-server"))
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--dir",
                &self.dir.0.display().to_string(),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--protected-mode",
                "no",
            ])
            .args(more)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        wait_port(self.port, "redis-server");
    }

    /// Kills it (SIGKILL: no goodbye to clients; the AOF has every write).
    pub fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Kills it and removes its data: the server comes back empty, as one
    /// without persistence does after a restart.
    pub fn restart_empty(&mut self) {
        self.down();
        for entry in std::fs::read_dir(&self.dir.0).expect("redis dir").flatten() {
            let p = entry.path();
            let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
        }
        self.up();
    }

    /// A copy of its data as of now (`SAVE`), in a file of the test's.
    pub fn snapshot(&self, to: &Path) {
        assert_eq!(self.cli(&["SAVE"]), "OK");
        std::fs::copy(self.dir.0.join("dump.rdb"), to).expect("copy dump.rdb");
    }

    /// Kills it and starts it from `dump` alone (an older copy of its data:
    /// a restore from a backup), still with an append-only file from then on.
    pub fn restore(&mut self, dump: &Path) {
        self.restore_then(dump, || {});
    }

    /// [`restore`](Self::restore), running `between` while the server is down.
    pub fn restore_then(&mut self, dump: &Path, between: impl FnOnce()) {
        self.down();
        between();
        for entry in std::fs::read_dir(&self.dir.0).expect("redis dir").flatten() {
            let p = entry.path();
            let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
        }
        std::fs::copy(dump, self.dir.0.join("dump.rdb")).expect("put the dump back");
        // Redis 7 loads the RDB when the append-only file is off; turned on
        // again at once, it writes the loaded data as its new base.
        self.up_with(&["--appendonly", "no"]);
        assert_eq!(self.cli(&["CONFIG", "SET", "appendonly", "yes"]), "OK");
    }

    /// A Redis replicating `primary_port` (through whatever listens there).
    pub fn replica_of(primary_port: u16) -> Self {
        let mut r = Redis {
            dir: TempDir::new("redis-replica"),
            port: free_port(),
            child: None,
        };
        r.up_with(&["--replicaof", "127.0.0.1", &primary_port.to_string()]);
        r
    }

    /// The path of a file in its directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.0.join(name)
    }

    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new(need("redis-cli"))
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.down();
    }
}

/// A TCP relay on a loopback port to a Redis primary, which everyone reaches
/// it through (the sentinel, the replica, the clients): `cut` stops
/// replication — it closes every connection that has spoken `REPLCONF` or
/// `PSYNC` and every such connection after — and leaves the rest alone, so
/// the replica falls behind while the primary takes writes and the sentinel
/// sees it healthy (a replica that is slow or partitioned from its primary).
/// The sentinel never "fixes" the replica's configuration: the replica names
/// the same primary address as the sentinel.
pub struct Relay {
    pub port: u16,
    cut: Arc<std::sync::atomic::AtomicBool>,
    replication: Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    pub fn to(target: u16) -> Self {
        use std::io::Write;
        use std::sync::atomic::AtomicBool;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let port = listener.local_addr().expect("relay address").port();
        let cut = Arc::new(AtomicBool::new(false));
        let replication: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let (c, r) = (Arc::clone(&cut), Arc::clone(&replication));
        std::thread::spawn(move || {
            for inbound in listener.incoming().flatten() {
                let Ok(outbound) = std::net::TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                // Replies: primary to client, as they come.
                let (mut from, mut to) =
                    (outbound.try_clone().unwrap(), inbound.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Both);
                });
                // Requests: client to primary, watched for replication.
                let (c, r) = (Arc::clone(&c), Arc::clone(&r));
                std::thread::spawn(move || {
                    let (mut from, mut to) = (inbound, outbound);
                    let mut buf = [0u8; 16 * 1024];
                    let mut replica = false;
                    loop {
                        let n = match from.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let text = &buf[..n];
                        if !replica
                            && (text.windows(8).any(|w| w.eq_ignore_ascii_case(b"REPLCONF"))
                                || text.windows(5).any(|w| w.eq_ignore_ascii_case(b"PSYNC")))
                        {
                            replica = true;
                            r.lock().unwrap().push(from.try_clone().unwrap());
                            r.lock().unwrap().push(to.try_clone().unwrap());
                        }
                        if replica && c.load(Ordering::SeqCst) {
                            break;
                        }
                        if to.write_all(text).is_err() {
                            break;
                        }
                    }
                    let _ = from.shutdown(std::net::Shutdown::Both);
                    let _ = to.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        Relay {
            port,
            cut,
            replication,
        }
    }

    /// Closes every replication connection, and every one after.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for s in self.replication.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// A Redis Cluster of three primaries on loopback (each its own slots, an
/// append-only file and its `nodes.conf`, so a restart comes back as the
/// same cluster), made with `redis-cli --cluster create`.
pub struct RedisCluster {
    pub nodes: Vec<Redis>,
    bus: Vec<u16>,
    formed: bool,
}

impl RedisCluster {
    pub fn start() -> Self {
        let mut c = RedisCluster {
            nodes: (0..3)
                .map(|_| Redis {
                    dir: TempDir::new("redis-cluster"),
                    port: free_port(),
                    child: None,
                })
                .collect(),
            bus: (0..3).map(|_| free_port()).collect(),
            formed: false,
        };
        c.up();
        let addrs: Vec<String> = c
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new(need("redis-cli"))
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli --cluster create");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        c.formed = true;
        c.wait_ok();
        c
    }

    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// Starts every node (again).
    pub fn up(&mut self) {
        for (n, bus) in self.nodes.iter_mut().zip(&self.bus) {
            n.up_with(&[
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "2000",
                "--cluster-port",
                &bus.to_string(),
            ]);
        }
        if self.formed {
            self.wait_ok();
        }
    }

    /// Kills every node (SIGKILL; the append-only files keep every write).
    pub fn down(&mut self) {
        for n in &mut self.nodes {
            n.down();
        }
    }

    /// Waits until every node says the cluster is up (every slot served).
    pub fn wait_ok(&self) {
        let t = Instant::now();
        while !self
            .nodes
            .iter()
            .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the cluster is not ok"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The node serving `key`'s slot.
    pub fn node_of(&self, key: &str) -> &Redis {
        let slot: u16 = self.nodes[0]
            .cli(&["CLUSTER", "KEYSLOT", key])
            .parse()
            .expect("CLUSTER KEYSLOT");
        let shards = self.nodes[0].cli(&["CLUSTER", "SLOTS"]);
        let lines: Vec<&str> = shards.lines().collect();
        // Each shard: start, end, then ip, port, id of its primary.
        for w in lines.windows(4) {
            if let (Ok(a), Ok(b), Ok(port)) = (
                w[0].parse::<u16>(),
                w[1].parse::<u16>(),
                w[3].parse::<u16>(),
            ) && (a..=b).contains(&slot)
                && let Some(n) = self.nodes.iter().find(|n| n.port == port)
            {
                return n;
            }
        }
        panic!("no node serves slot {slot}: {shards}");
    }
}

/// A Redis primary behind a [`Relay`], a replica of it, and one Sentinel
/// (quorum 1) watching them as `nonceforge`: clients that connect through
/// the sentinel follow a failover to the replica.
pub struct RedisFailover {
    pub primary: Redis,
    pub replica: Redis,
    pub relay: Relay,
    pub sentinel_port: u16,
    sentinel: Option<Child>,
    /// Held, not read: the sentinel's directory, removed when this drops.
    #[allow(dead_code)]
    dir: TempDir,
}

impl RedisFailover {
    /// A primary, a replica linked through a relay, one sentinel that calls
    /// the primary down after `down_after_ms` without an answer.
    pub fn start(down_after_ms: u32) -> Self {
        let primary = Redis::start();
        let relay = Relay::to(primary.port);
        let replica = Redis::replica_of(relay.port);
        let dir = TempDir::new("sentinel");
        let sentinel_port = free_port();
        let conf = dir.0.join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {sentinel_port}\nbind 127.0.0.1\nprotected-mode no\ndir {}\n\
                 sentinel monitor nonceforge 127.0.0.1 {} 1\n\
                 sentinel down-after-milliseconds nonceforge {down_after_ms}\n\
                 sentinel failover-timeout nonceforge 10000\n",
                dir.0.display(),
                relay.port
            ),
        )
        .expect("write sentinel.conf");
        let sentinel = Command::new(need("redis-server"))
            .arg(&conf)
            .arg("--sentinel")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server --sentinel");
        wait_port(sentinel_port, "redis sentinel");
        let f = RedisFailover {
            primary,
            replica,
            relay,
            sentinel_port,
            sentinel: Some(sentinel),
            dir,
        };
        // The sentinel knows the replica, and the replica is in sync.
        let t = Instant::now();
        loop {
            let replicas = f.sentinel_cli(&["SENTINEL", "REPLICAS", "nonceforge"]);
            let linked = f.replica.cli(&["INFO", "replication"]);
            if replicas.contains(&f.replica.port.to_string())
                && linked.contains("master_link_status:up")
            {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "no replica in sync: {linked}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        f
    }

    pub fn url(&self) -> String {
        format!(
            "redis+sentinel://127.0.0.1:{}/nonceforge",
            self.sentinel_port
        )
    }

    pub fn sentinel_cli(&self, args: &[&str]) -> String {
        let out = Command::new(need("redis-cli"))
            .args(["-p", &self.sentinel_port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Waits until the sentinel names the replica as the primary.
    pub fn wait_failover(&self) {
        let t = Instant::now();
        let want = self.replica.port.to_string();
        while !self
            .sentinel_cli(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", "nonceforge"])
            .contains(&want)
            || !self.replica.cli(&["ROLE"]).starts_with("master")
        {
            assert!(t.elapsed() < Duration::from_secs(60), "no failover");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for RedisFailover {
    fn drop(&mut self) {
        if let Some(mut c) = self.sentinel.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

// ----------------------------------------------------------------------- etcd

struct Member {
    name: String,
    client: u16,
    peer: u16,
    child: Option<Child>,
}

/// An etcd cluster of one or three members on loopback.
pub struct Etcd {
    dir: TempDir,
    members: Vec<Member>,
}

impl Etcd {
    pub fn start(n: usize) -> Self {
        let mut e = Etcd {
            dir: TempDir::new("etcd"),
            members: (0..n)
                .map(|i| Member {
                    name: format!("m{i}"),
                    client: free_port(),
                    peer: free_port(),
                    child: None,
                })
                .collect(),
        };
        for i in 0..n {
            e.up(i);
        }
        for m in &e.members {
            wait_port(m.client, "etcd");
        }
        // Wait for a leader: a write goes through.
        let t = Instant::now();
        while !e.ctl(0, &["put", "/nonceforge-test/ready", "1"]).0 {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "etcd elected no leader"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        e
    }

    pub fn url(&self) -> String {
        let eps: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client))
            .collect();
        format!("etcd://{}", eps.join(","))
    }

    /// (Re)starts member `i` with its data directory.
    pub fn up(&mut self, i: usize) {
        let cluster: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer))
            .collect();
        let m = &self.members[i];
        let data = self.dir.0.join(&m.name).display().to_string();
        let child = Command::new(need("etcd"))
            .args([
                "--name",
                &m.name,
                "--data-dir",
                &data,
                "--listen-client-urls",
                &format!("http://127.0.0.1:{}", m.client),
                "--advertise-client-urls",
                &format!("http://127.0.0.1:{}", m.client),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{}", m.peer),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{}", m.peer),
                "--initial-cluster",
                &cluster.join(","),
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                "nonceforge-test",
                "--heartbeat-interval",
                "100",
                "--election-timeout",
                "1000",
                "--unsafe-no-fsync",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start etcd");
        self.members[i].child = Some(child);
    }

    /// Kills member `i` (SIGKILL).
    pub fn down(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn wait_up(&self, i: usize) {
        wait_port(self.members[i].client, "etcd");
    }

    /// The index of the current leader.
    pub fn leader(&self) -> usize {
        for i in 0..self.members.len() {
            let (ok, out) = self.ctl(i, &["endpoint", "status", "-w", "json"]);
            // On the leader, its own member_id (in the header) is the leader's.
            let grab = |k: &str| {
                out.split(k)
                    .nth(1)
                    .and_then(|s| s.split([',', '}']).next())
                    .map(str::to_owned)
            };
            if ok && grab("\"leader\":").is_some() && grab("\"member_id\":") == grab("\"leader\":")
            {
                return i;
            }
        }
        panic!("no etcd member says it leads");
    }

    /// A snapshot of member `i`'s data as of now, in `to`.
    pub fn snapshot(&self, i: usize, to: &Path) {
        let (ok, out) = self.ctl(i, &["snapshot", "save", &to.display().to_string()]);
        assert!(ok, "etcdctl snapshot save: {out}");
    }

    /// A one-member cluster: kills it and starts it from `snapshot` (an
    /// older copy of its data), as `etcdctl snapshot restore` does.
    pub fn restore(&mut self, snapshot: &Path, between: impl FnOnce()) {
        assert_eq!(self.members.len(), 1, "restore is for one member");
        self.down(0);
        between();
        let m = &self.members[0];
        let data = self.dir.0.join(&m.name);
        let _ = std::fs::remove_dir_all(&data);
        let out = Command::new(need("etcdctl"))
            .env("ETCDCTL_API", "3")
            .args([
                "snapshot",
                "restore",
                &snapshot.display().to_string(),
                "--name",
                &m.name,
                "--data-dir",
                &data.display().to_string(),
                "--initial-cluster",
                &format!("{}=http://127.0.0.1:{}", m.name, m.peer),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{}", m.peer),
                "--initial-cluster-token",
                "nonceforge-test",
            ])
            .output()
            .expect("etcdctl snapshot restore");
        assert!(
            out.status.success(),
            "etcdctl snapshot restore: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.up(0);
        self.wait_up(0);
    }

    /// etcdctl against member `i`: (success, stdout).
    pub fn ctl(&self, i: usize, args: &[&str]) -> (bool, String) {
        let out = Command::new(need("etcdctl"))
            .env("ETCDCTL_API", "3")
            .args([
                "--endpoints",
                &format!("http://127.0.0.1:{}", self.members[i].client),
                "--dial-timeout",
                "2s",
                "--command-timeout",
                "3s",
            ])
            .args(args)
            .output()
            .expect("etcdctl");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.down(i);
        }
    }
}

// ------------------------------------------------------------- shared helpers

/// One lease test at a time in a test binary: they time leases against real
/// clocks on a small machine.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// This host's wall clock in Unix ms.
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Draws sortable nonces from `generator` for `how_long`, moving its manual
/// `clock` a millisecond a value, so it issues as far ahead as its lease's
/// cap allows (its host's clock plus the hold); returns the highest
/// timestamp it issued.
pub fn draw_ahead(
    generator: &nonceforge::NonceGenerator<nonceforge::ManualClock>,
    clock: &nonceforge::ManualClock,
    how_long: Duration,
) -> u64 {
    let mut top = 0;
    let t = Instant::now();
    while t.elapsed() < how_long {
        match generator.sortable_64() {
            Ok(n) => top = top.max(generator.decompose(&n).unwrap().unix_ms),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
        clock.advance(Duration::from_millis(1));
    }
    top
}
