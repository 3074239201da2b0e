//! The CLI's lease tests: the stores and shared helpers from
//! nonceforge-testkit, plus a handle on a running `nonceforge` process whose
//! output is collected as it comes, and members made of it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use nonceforge_testkit::*;

// ------------------------------------------------------------------- members

/// `nonceforge gen KIND --bits 64` on a lease, 4000 a second, for a long
/// time, with the lease options `more` (`--ttl 2s`, …).
pub fn member(url: &str, ns: &str, kind: &str, more: &[&str]) -> Proc {
    let mut args = vec![
        "gen",
        kind,
        "--bits",
        "64",
        "-n",
        "100000000",
        "--rate",
        "4000",
        "--lease",
        url,
        "--namespace",
        ns,
    ];
    args.extend_from_slice(more);
    Proc::spawn(&args)
}

/// `n` members, half drawing sortable, half counter nonces.
pub fn wave(url: &str, ns: &str, n: usize, more: &[&str]) -> Vec<(&'static str, Proc)> {
    (0..n)
        .map(|i| {
            let kind = if i % 2 == 0 { "sortable" } else { "counter" };
            (kind, member(url, ns, kind, more))
        })
        .collect()
}

/// Every member has printed a few hundred nonces.
pub fn drawing(procs: &[(&str, Proc)]) {
    for (_, p) in procs {
        p.wait_for("nonces", Duration::from_secs(30), |l, _| l.len() > 200);
    }
}

/// SIGTERM to every member (each releases its lease and exits).
pub fn stop(procs: &[(&str, Proc)]) {
    for (_, p) in procs {
        p.signal(libc::SIGTERM);
    }
}

// ------------------------------------------------------------------ processes

/// A running `nonceforge`, its stdout lines and stderr collected as they come.
pub struct Proc {
    child: Child,
    pub lines: Arc<Mutex<Vec<String>>>,
    pub err: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Proc {
    pub fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nonceforge"))
            .args(args)
            .env_remove("NONCEFORGE_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn nonceforge");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(String::new()));
        let out = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let l = Arc::clone(&lines);
        let e = Arc::clone(&err);
        let readers = vec![
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    l.lock().unwrap().push(line);
                }
            }),
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    e.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }),
        ];
        Proc {
            child,
            lines,
            err,
            readers,
        }
    }

    /// Whether it has exited.
    pub fn is_done(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn count(&self) -> usize {
        self.lines.lock().unwrap().len()
    }

    pub fn stderr(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Waits until `f` holds of the output so far (or panics after `limit`).
    pub fn wait_for(&self, what: &str, limit: Duration, f: impl Fn(&[String], &str) -> bool) {
        let t = Instant::now();
        loop {
            if f(&self.lines.lock().unwrap(), &self.stderr()) {
                return;
            }
            if t.elapsed() > limit {
                panic!("waited {limit:?} for {what}; stderr: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
        unsafe {
            libc::kill(self.pid(), sig);
        }
    }

    /// Waits for it to exit (panics after `limit`): (exit code, stdout lines, stderr).
    pub fn finish(mut self, limit: Duration) -> (Option<i32>, Vec<String>, String) {
        let t = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if t.elapsed() > limit {
                let _ = self.child.kill();
                panic!("nonceforge ran past {limit:?}; stderr: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let lines = std::mem::take(&mut *self.lines.lock().unwrap());
        (status.code(), lines, self.stderr())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
