//! The `nonceforge` binary, run as a user runs it.

use std::process::{Command, Output};

mod extid;

/// Runs the binary as a member configured with machine id 0 through the
/// environment (a test that wants no id removes it).
fn nonceforge(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nonceforge"));
    c.args(args)
        .env_remove("NONCEFORGE_KEY")
        .env("NONCEFORGE_MACHINE_ID", "0");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run nonceforge")
}

fn lines(o: &Output) -> Vec<String> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

#[test]
fn gen_every_kind_size_and_format() {
    for kind in ["counter", "sortable", "encrypted"] {
        for bits in ["64", "96", "128"] {
            let o = nonceforge(
                &[
                    "gen",
                    kind,
                    "--bits",
                    bits,
                    "-n",
                    "1000",
                    "--machine-id",
                    "5",
                ],
                &[("NONCEFORGE_KEY", KEY)],
            );
            assert!(
                o.status.success(),
                "{kind} {bits}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let l = lines(&o);
            assert_eq!(l.len(), 1000);
            let width = bits.parse::<usize>().unwrap() / 4;
            assert!(
                l.iter()
                    .all(|x| x.len() == width && x.bytes().all(|b| b.is_ascii_hexdigit()))
            );
            let mut d = l.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), 1000, "{kind} {bits}: distinct");
            if kind == "sortable" {
                assert!(l.windows(2).all(|w| w[0] < w[1]), "sortable lines increase");
            }
        }
    }
    let o = nonceforge(
        &[
            "gen",
            "counter",
            "--bits",
            "64",
            "-n",
            "3",
            "--format",
            "base64url",
        ],
        &[],
    );
    assert_eq!(lines(&o).len(), 3);
    assert!(lines(&o).iter().all(|x| x.len() == 11));
    let o = nonceforge(
        &[
            "gen", "sortable", "--bits", "64", "-n", "3", "--format", "int",
        ],
        &[],
    );
    assert!(lines(&o).iter().all(|x| x.parse::<u64>().is_ok()));
    let o = nonceforge(
        &[
            "gen", "counter", "--bits", "128", "-n", "1", "--format", "int",
        ],
        &[],
    );
    assert!(lines(&o)[0].parse::<u128>().is_ok());
    let o = nonceforge(&["gen", "counter", "-n", "0"], &[]);
    assert!(o.status.success() && o.stdout.is_empty());
}

#[test]
fn no_default_machine_id() {
    // Nothing names an id: refused, with the ways to name one.
    let o = Command::new(env!("CARGO_BIN_EXE_nonceforge"))
        .args(["gen", "counter", "--bits", "64"])
        .env_remove("NONCEFORGE_MACHINE_ID")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    for way in [
        "--machine-id",
        "--machine-id-env",
        "--hosts",
        "--lease",
        "NONCEFORGE_MACHINE_ID",
    ] {
        assert!(err.contains(way), "{way}: {err}");
    }
    // The environment names it; a flag wins over it; a bad value is refused.
    let id_of = |o: &Output| (u64::from_str_radix(&lines(o)[0], 16).unwrap() >> 13) & 0x1ff;
    let o = nonceforge(
        &["gen", "counter", "--bits", "64"],
        &[("NONCEFORGE_MACHINE_ID", "37")],
    );
    assert_eq!(id_of(&o), 37);
    let o = nonceforge(
        &["gen", "counter", "--bits", "64", "--machine-id", "5"],
        &[("NONCEFORGE_MACHINE_ID", "37")],
    );
    assert_eq!(id_of(&o), 5);
    let o = nonceforge(&["gen", "counter"], &[("NONCEFORGE_MACHINE_ID", "512")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("NONCEFORGE_MACHINE_ID=\"512\""));
    // Ids that need no machine id do not ask for one.
    let o = Command::new(env!("CARGO_BIN_EXE_nonceforge"))
        .args(["gen", "uuidv7"])
        .env_remove("NONCEFORGE_MACHINE_ID")
        .output()
        .unwrap();
    assert!(o.status.success());
}

#[test]
fn machine_id_sources() {
    let o = nonceforge(
        &["gen", "counter", "--bits", "64", "--machine-id-env", "POD"],
        &[("POD", "web-300")],
    );
    assert!(o.status.success());
    let v = u64::from_str_radix(&lines(&o)[0], 16).unwrap();
    assert_eq!((v >> 13) & 0x1ff, 300);
    let o = nonceforge(
        &[
            "gen", "counter", "--bits", "64", "--hosts", "a,b,c", "--host", "c",
        ],
        &[],
    );
    let v = u64::from_str_radix(&lines(&o)[0], 16).unwrap();
    assert_eq!((v >> 13) & 0x1ff, 2);
}

/// Arguments, environment, and a text the error message must contain.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    let cases: &[Case] = &[
        (&["gen", "counter", "--bits", "65"], &[], "64, 96 or 128"),
        (&["gen", "counter", "--bits", "x"], &[], "not a number"),
        (&["gen", "counter", "--machine-id", "512"], &[], "0..=511"),
        (&["gen", "counter", "--format", "yaml"], &[], "yaml"),
        (&["gen", "counter", "-n", "-1"], &[], "-1"),
        (&["gen", "nonsense"], &[], "nonsense"),
        (&["gen", "encrypted"], &[], "NONCEFORGE_KEY"),
        (
            &["gen", "encrypted"],
            &[("NONCEFORGE_KEY", "abcd")],
            "at least 32",
        ),
        (
            &["gen", "encrypted"],
            &[("NONCEFORGE_KEY", "not hex!")],
            "hex or base64",
        ),
        (
            &["gen", "encrypted", "--key-file", "/nonexistent/key"],
            &[],
            "cannot read",
        ),
        (
            &["gen", "counter", "--machine-id-env", "NO_SUCH_VAR_X"],
            &[],
            "NO_SUCH_VAR_X",
        ),
        (
            &["gen", "counter", "--machine-id-env", "POD"],
            &[("POD", "web")],
            "decimal number",
        ),
        (
            &["gen", "counter", "--hosts", "a,b", "--host", "z"],
            &[],
            "not in the host list",
        ),
        (
            &["gen", "counter", "--hosts", "a,,b", "--host", "a"],
            &[],
            "empty",
        ),
        (
            &["gen", "counter", "--cipher64", "rot13"],
            &[],
            "speck64-128",
        ),
        (
            &["gen", "counter", "--epoch", "99999999999999"],
            &[],
            "before the epoch",
        ),
        (&["bench", "--threads", "0"], &[], "1..=256"),
        (&["bench", "--threads", "1,x"], &[], "thread count"),
        (&["bench", "--seconds", "0"], &[], "0.05..=600"),
        (&["bench", "--runs", "0"], &[], "1..=99"),
    ];
    for (args, env, needle) in cases {
        assert_fails(args, env, needle);
    }
}

#[test]
fn key_is_never_printed() {
    let o = nonceforge(&["gen", "encrypted", "-n", "5"], &[("NONCEFORGE_KEY", KEY)]);
    assert!(o.status.success());
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!all.contains(KEY) && !all.contains(&KEY[..16]));
    let path = std::env::temp_dir().join(format!("nf-key-{}", std::process::id()));
    std::fs::write(&path, format!("{KEY}\n")).unwrap();
    let o = nonceforge(
        &["gen", "encrypted", "--key-file", path.to_str().unwrap()],
        &[],
    );
    std::fs::remove_file(&path).ok();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bench_json_schema() {
    let o = nonceforge(
        &[
            "bench",
            "--json",
            "--threads",
            "1",
            "--seconds",
            "0.05",
            "--filter",
            "counter/128",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = lines(&o)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"counter") && names.contains(&"os_random"),
        "{names:?}"
    );
    for r in &rows {
        assert!(r["bits"].as_u64().is_some() && r["threads"].as_u64() == Some(1));
        assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0);
        assert!(r["ns_per_op"].as_f64().unwrap() > 0.0);
    }
    let o = nonceforge(
        &[
            "bench",
            "--threads",
            "1",
            "--seconds",
            "0.05",
            "--filter",
            "sortable/96",
        ],
        &[],
    );
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("ops/s") && table.contains("sortable"),
        "{table}"
    );
}

#[test]
fn gen_time_prefixed_ids() {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    for kind in ["uuidv7", "tuid6", "uuidv4"] {
        let o = nonceforge(&["gen", kind, "-n", "500"], &[]);
        assert!(o.status.success(), "{kind}");
        let l = lines(&o);
        let ids: Vec<uuid::Uuid> = l
            .iter()
            .map(|x| uuid::Uuid::parse_str(x).unwrap())
            .collect();
        let mut d = l.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), 500, "{kind}: distinct");
        match kind {
            "uuidv7" => {
                assert!(ids.iter().all(|u| u.get_version_num() == 7));
                assert!(l.windows(2).all(|w| w[0] < w[1]), "uuidv7 is monotonic");
                let (s, n) = ids[0].get_timestamp().unwrap().to_unix();
                assert!((s * 1000 + n as u64 / 1_000_000).abs_diff(now_ms) < 60_000);
            }
            "uuidv4" => assert!(ids.iter().all(|u| u.get_version_num() == 4)),
            _ => {
                let ms = u64::from_str_radix(&l[0].replace('-', "")[..12], 16).unwrap();
                assert!(ms.abs_diff(now_ms) < 60_000, "tuid6 starts with Unix ms");
            }
        }
    }
    let o = nonceforge(&["gen", "stuid", "-n", "3"], &[]);
    assert!(lines(&o).iter().all(|x| x.len() == 64));
    let o = nonceforge(&["gen", "stuid", "--format", "base64url"], &[]);
    assert_eq!(lines(&o)[0].len(), 43);
    let o = nonceforge(&["gen", "tuid6", "--format", "base64url"], &[]);
    assert_eq!(lines(&o)[0].len(), 22);
    assert_fails(&["gen", "uuidv7", "--bits", "64"], &[], "--bits");
    assert_fails(&["gen", "stuid", "--format", "uuid"], &[], "32 bytes");
    assert_fails(&["gen", "stuid", "--format", "int"], &[], "256 bits");
    assert_fails(
        &["gen", "counter", "--bits", "64", "--format", "uuid"],
        &[],
        "128 bits",
    );
}

/// The command fails, prints nothing on stdout, and its message names `needle`.
fn assert_fails(args: &[&str], env: &[(&str, &str)], needle: &str) {
    let o = nonceforge(args, env);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} must fail");
    assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
    assert!(
        err.contains(needle),
        "{args:?}: {err:?} should mention {needle:?}"
    );
}

#[test]
fn inspect_takes_nonces_apart() {
    for bits in ["64", "96", "128"] {
        let o = nonceforge(
            &[
                "gen",
                "sortable",
                "--bits",
                bits,
                "-n",
                "3",
                "--machine-id",
                "301",
            ],
            &[],
        );
        let nonces = lines(&o);
        let mut args = vec!["decompose", "--json"];
        args.extend(nonces.iter().map(String::as_str));
        let o = nonceforge(&args, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = lines(&o);
        assert_eq!(out.len(), 3);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        for l in &out {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["machine_id"], 301, "{l}");
            assert_eq!(v["bits"].as_u64().unwrap().to_string(), bits);
            assert!(v["unix_ms"].as_u64().unwrap().abs_diff(now) < 60_000, "{l}");
        }
    }
    // A 128-bit value whose 13 reserved bits are set is not a plain nonce; bad hex is a usage error.
    let o = nonceforge(&["inspect", "000000000000ffff0000000000000000"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let o = nonceforge(&["inspect", "xyz"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("hex"));
}

/// The wide layout (16-bit machine ids): the vector file's wide rows read back
/// by `decompose --layout wide`, nonces of every kind made and read at a
/// machine id above 9 bits, and what it refuses.
#[test]
fn wide_layout_makes_and_reads_16_bit_machine_ids() {
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../../../../testdata/vectors/nonces.json")).unwrap();
    let rows = doc["wide"]["layout"].as_array().unwrap();
    let mut args = vec!["decompose", "--layout", "wide", "--json", "--epoch", "0"];
    args.extend(rows.iter().map(|r| r["hex"].as_str().unwrap()));
    let o = nonceforge(&args, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = lines(&o);
    assert_eq!(out.len(), rows.len());
    for (l, r) in out.iter().zip(rows) {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        for field in ["bits", "timestamp_ms", "machine_id", "counter"] {
            assert_eq!(v[field], r[field], "{field}: {l} against {r}");
        }
    }
    let key = "40".repeat(32);
    for kind in ["counter", "sortable", "encrypted"] {
        for bits in ["96", "128"] {
            let o = nonceforge(
                &[
                    "gen",
                    kind,
                    "--bits",
                    bits,
                    "-n",
                    "3",
                    "--layout",
                    "wide",
                    "--machine-id",
                    "40000",
                ],
                &[("NONCEFORGE_KEY", &key)],
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let nonces = lines(&o);
            assert_eq!(nonces.len(), 3);
            if kind == "encrypted" {
                continue; // opaque: the core's vectors decrypt them
            }
            let mut args = vec!["decompose", "--layout", "wide", "--json"];
            args.extend(nonces.iter().map(String::as_str));
            let o = nonceforge(&args, &[]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            for l in lines(&o) {
                let v: serde_json::Value = serde_json::from_str(&l).unwrap();
                assert_eq!(v["machine_id"], 40000, "{l}");
            }
        }
    }
    let wide = ["gen", "counter", "--layout", "wide", "--machine-id", "7"];
    assert_fails(
        &[&wide[..], &["--bits", "64"]].concat(),
        &[],
        "no 64-bit nonces",
    );
    assert_fails(
        &["gen", "counter", "--machine-id", "600"],
        &[],
        "needs the wide layout",
    );
    assert_fails(&["gen", "counter", "--machine-id", "600"], &[], "0..=511");
    assert_fails(
        &[
            "gen",
            "counter",
            "--layout",
            "wide",
            "--machine-id",
            "65536",
        ],
        &[],
        "0..=65535",
    );
    assert_fails(
        &["gen", "counter", "--layout", "16", "--machine-id", "1"],
        &[],
        "\"standard\"",
    );
    assert_fails(
        &[
            "gen",
            "counter",
            "--layout",
            "wide",
            "--lease",
            "redis://127.0.0.1:1",
            "--ids",
            "0-65536",
        ],
        &[],
        "--ids \"0-65536\": use FIRST-LAST (e.g. 0-65535) or one id, within 0..=65535 (the wide layout)",
    );
    assert_fails(
        &[
            "lease",
            "status",
            "--backend",
            "redis://127.0.0.1:1",
            "--ids",
            "0-600",
        ],
        &[],
        "within 0..=511",
    );
    assert_fails(
        &["decompose", "--layout", "wide", "0000000000000001"],
        &[],
        "no 64-bit nonces",
    );
    // NONCEFORGE_MACHINE_ID above 511 takes the wide layout too.
    let o = nonceforge(
        &["gen", "counter", "--layout", "wide", "--bits", "96"],
        &[("NONCEFORGE_MACHINE_ID", "65535")],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = nonceforge(
        &["decompose", "--layout", "wide", "--json", &lines(&o)[0]],
        &[],
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"machine_id\":65535"));
}

/// `gen --stats`: the generator's figures as one JSON object on stderr, the
/// counts exact.
#[test]
fn gen_stats_reports_the_generators_figures() {
    let o = nonceforge(
        &["gen", "counter", "--bits", "96", "-n", "5000", "--stats"],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(lines(&o).len(), 5000);
    let err = String::from_utf8(o.stderr).unwrap();
    let v: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
    let g = &v["generator"];
    assert_eq!(g["machine_id"], 0);
    assert_eq!(g["nonces_issued"]["counter"]["96"], 5000);
    assert_eq!(g["nonces_issued"]["sortable"]["64"], 0);
    assert_eq!(g["refusals"]["deadline"], 0);
    assert_eq!(g["enabled"], true);
    assert_eq!(g["deadline_headroom_ms"], serde_json::Value::Null);
    assert!(g["epoch_headroom_s"].as_u64().unwrap() > 100 * 365 * 86_400);
    assert!(v.get("lease").is_none());
}
