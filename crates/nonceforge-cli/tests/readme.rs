//! Every command line of this crate's README runs, in order, as a user would
//! type it — with the README's placeholders replaced by real things: the
//! store URLs by throwaway PostgreSQL, Redis (one server, Sentinel, a
//! cluster) and etcd servers on loopback
//! ports, `<64 hex digits>` by a key, `user_…` by the id the line before
//! printed, `db2` by this host's name, the key file of an old version by a
//! file. The benchmark lines run shorter (`--seconds`); before `lease release
//! --id 12` a holder of 12 is killed, so that its holder is gone as the line
//! says. A line that fails fails the test with what it said.
//!
//! docs/operations.md's command lines run after the README's, the same way;
//! and the container command of docs/ops/statefulset.yaml runs as written,
//! with its store and labels file replaced by a loopback one and a file.

mod support;

use std::process::Command;
use support::{Etcd, Postgres, Redis, RedisCluster, RedisFailover, TempDir};

const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
/// The key after a rotation (the README's `--key-version 1` line): KEY, which
/// made the ids above, is then kept as version 0 in the old-key file.
const NEW_KEY: &str = "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100";

fn blocks(readme: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<String>> = None;
    for line in readme.lines() {
        match (line.trim(), &mut cur) {
            ("```sh", None) => cur = Some(Vec::new()),
            ("```", Some(_)) => out.push(cur.take().unwrap()),
            (_, Some(b)) => b.push(line.to_string()),
            _ => {}
        }
    }
    out
}

#[test]
fn every_readme_line_runs() {
    let read =
        |p: &str| std::fs::read_to_string(format!("{}/{p}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let readme = read("README.md") + "\n" + &read("../../docs/operations.md");
    let pg = Postgres::start();
    let redis = Redis::start();
    let etcd = Etcd::start(1);
    let sentinel = RedisFailover::start(1000);
    let cluster = RedisCluster::start();
    let dir = TempDir::new("readme");
    let old_key = dir.0.join("extid-0");
    std::fs::write(&old_key, KEY).unwrap();
    let host = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_nonceforge"))
        .parent()
        .unwrap()
        .display()
        .to_string();

    let mut ran = 0;
    let mut last_id = String::new();
    // Lines that take a lease wait out a fresh store's TTL (a start without
    // history): they run in the background, beside the lines after them,
    // until a line reads the leases (`lease status`, `lease release`).
    let mut pending: Vec<(String, String, std::process::Child)> = Vec::new();
    let wait_all = |pending: &mut Vec<(String, String, std::process::Child)>| {
        for (raw, cmd, child) in pending.drain(..) {
            let out = child.wait_with_output().expect("wait");
            assert!(
                out.status.success(),
                "README line failed: {raw}\n ran: {cmd}\n stdout: {}\n stderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    let mut env: Vec<(String, String)> = vec![("POD_NAME".into(), "web-3".into())];
    for block in blocks(&readme) {
        for raw in block {
            // The command, without its trailing comment.
            let line = match raw.find("  #") {
                Some(i) => raw[..i].trim_end().to_string(),
                None => raw.trim().to_string(),
            };
            if line.is_empty() || line.starts_with('#') || line.starts_with("cargo install") {
                continue;
            }
            if let Some(assign) = line.strip_prefix("export ") {
                let (k, v) = assign.split_once('=').expect("export VAR=value");
                let v = if v.starts_with('<') {
                    KEY.to_string()
                } else {
                    v.to_string()
                };
                env.push((k.to_string(), v));
                continue;
            }
            let cmd = line
                .replace("postgres://app@db/app", &pg.url())
                .replace(
                    "etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379",
                    &etcd.url(),
                )
                .replace("redis://127.0.0.1:6379", &redis.url())
                .replace(
                    "redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster",
                    &sentinel.url(),
                )
                .replace(
                    "redis+cluster://10.0.0.1:7000,10.0.0.2:7000",
                    &cluster.url(),
                )
                // The first host is down: libpq's rule takes the next.
                .replace(
                    "postgres://app@db1:5432,db2:5432/app",
                    &format!(
                        "postgres://postgres@127.0.0.1:1,127.0.0.1:{}/postgres",
                        pg.port
                    ),
                )
                .replace("<64 hex digits>", KEY)
                .replace("/etc/keys/extid-0", &old_key.display().to_string())
                .replace("user_…", &last_id)
                .replace("db1,db2,db3", &format!("db1,{},db3", host.trim()))
                .replace("--seconds 2", "--seconds 0.05")
                .replace("> ids", &format!("> {}", dir.0.join("ids").display()));
            let cmd = if cmd.starts_with("nonceforge bench") && !cmd.contains("--seconds") {
                format!("{cmd} --seconds 0.05 --threads 1")
            } else if cmd.contains("--old-key") {
                // After the rotation the current key is a new one; the ids
                // made above decode (checked) under the old one, version 0.
                format!("NONCEFORGE_EXTID_KEY={NEW_KEY} {cmd}")
            } else {
                cmd
            };
            let mut bash = Command::new("bash");
            bash.args(["-c", &cmd])
                .env("PATH", format!("{bin}:{}", std::env::var("PATH").unwrap()))
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            if cmd.contains("--lease ") || cmd.contains("lease acquire") {
                pending.push((raw.clone(), cmd.clone(), bash.spawn().expect("bash")));
                ran += 1;
                continue;
            }
            if cmd.contains("lease status") || cmd.contains("lease release") {
                wait_all(&mut pending);
            }
            if cmd.contains("lease release") && cmd.contains("--id 12") {
                // "an id whose holder is gone": a holder of 12, killed (SIGKILL).
                let mut holder = Command::new(env!("CARGO_BIN_EXE_nonceforge"))
                    .args([
                        "lease",
                        "acquire",
                        "--backend",
                        &pg.url(),
                        "--ids",
                        "12",
                        "--for",
                        "60s",
                    ])
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .expect("holder");
                let mut first = String::new();
                std::io::BufRead::read_line(
                    &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
                    &mut first,
                )
                .unwrap();
                assert!(first.contains("machine_id=12"), "the holder said: {first}");
                holder.kill().unwrap();
                holder.wait().unwrap();
            }
            let out = bash.output().expect("bash");
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            assert!(
                out.status.success(),
                "README line failed: {raw}\n ran: {cmd}\n stdout: {stdout}\n stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if cmd.contains("extid encode") && cmd.contains("--prefix") {
                last_id = stdout.trim().to_string();
            }
            if cmd.contains("extid decode") && !cmd.contains("--key-version") {
                assert!(
                    stdout.contains("seq=42") && stdout.contains("derived=true"),
                    "{stdout}"
                );
            }
            ran += 1;
        }
    }
    wait_all(&mut pending);
    assert!(ran >= 20, "only {ran} README and operations.md lines ran");
}

/// The StatefulSet manifest's container command, as written: the index from
/// a downward API labels file, the lease from a Sentinel-managed Redis.
#[test]
fn statefulset_manifest_command_runs() {
    let manifest = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/ops/statefulset.yaml"
    ))
    .unwrap();
    let mut args = Vec::new();
    let mut in_args = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t == "args:" {
            in_args = true;
        } else if in_args {
            match t.strip_prefix("- \"").and_then(|a| a.strip_suffix('"')) {
                Some(a) => args.push(a.to_owned()),
                None => break,
            }
        }
    }
    assert!(args.len() > 8, "no args in the manifest: {args:?}");
    assert!(manifest.contains("command: [\"nonceforge\"]"));
    let sentinel = RedisFailover::start(1000);
    let dir = TempDir::new("podinfo");
    let labels = dir.0.join("labels");
    std::fs::write(
        &labels,
        "app=\"nonces\"\napps.kubernetes.io/pod-index=\"2\"\n",
    )
    .unwrap();
    let args: Vec<String> = args
        .into_iter()
        .map(|a| match a.as_str() {
            "redis+sentinel://redis-sentinel:26379/mymaster" => sentinel.url(),
            "file:/etc/podinfo/labels" => format!("file:{}", labels.display()),
            // A pod runs for good; this one makes three.
            "1000000000" => "3".into(),
            _ => a,
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_nonceforge"))
        .args(&args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    let values: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(values.len(), 3, "{values:?}");
    assert!(stderr.contains("machine id 2 "), "{stderr}");
}
