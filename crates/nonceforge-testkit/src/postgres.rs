//! PostgreSQL: a primary, its copies (standbys, base backups), crashes and promotions.

use crate::{TempDir, free_port, is_root, need};
use std::process::Command;
use std::time::{Duration, Instant};

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
