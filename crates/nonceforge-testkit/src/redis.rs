//! Redis: one server, a relay that cuts replication, a cluster, a primary and
//! replica under Sentinel.

use crate::{TempDir, free_port, need, wait_port};
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
