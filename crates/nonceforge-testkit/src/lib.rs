//! Real stores for the lease tests of the lease crate and the CLI —
//! PostgreSQL 15, Redis 7 (alone, replicated under Sentinel, a cluster), etcd
//! 3.4 from Debian — each started on a free loopback port in a throwaway
//! directory, and stopped (and the directory removed) when dropped; and the
//! helpers both crates' lease tests share (one test at a time, the wall clock,
//! a generator drawn ahead on a manual clock). Not published: a dev-dependency.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
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

mod etcd;
mod postgres;
mod redis;
pub use etcd::Etcd;
pub use postgres::Postgres;
pub use redis::{Redis, RedisCluster, RedisFailover, Relay};

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
