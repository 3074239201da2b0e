//! etcd: one member or a cluster, snapshots and restores.

use crate::{TempDir, free_port, need, wait_port};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
