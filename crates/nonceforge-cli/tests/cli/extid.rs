//! `nonceforge extid`: every mode and form, rotation, bad input, refusals.

use super::*;

const EXTID_KEY: &str = "3031323334353637383930313233343536373839303132333435363738393031";

#[test]
fn extid_round_trips_in_every_mode_and_form() {
    let env = [("NONCEFORGE_EXTID_KEY", EXTID_KEY)];
    for mode in ["feistel-uuid", "aes128", "cycle-walk"] {
        for (form, extra) in [
            ("uuid", vec![]),
            ("base64url", vec![]),
            ("base32", vec!["--prefix", "--check"]),
        ] {
            let mut args = vec![
                "extid", "encode", "--type", "user", "--seq", "42", "--rand", "1234", "--mode",
                mode, "--format", form,
            ];
            args.extend(extra);
            let o = nonceforge(&args, &env);
            assert!(
                o.status.success(),
                "{mode} {form}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let id = lines(&o)[0].clone();
            // A stored half: the checked decode (the default) refuses it,
            // --unverified reads it.
            let o = nonceforge(
                &["extid", "decode", "--type", "user", "--mode", mode, &id],
                &env,
            );
            assert_eq!(
                o.status.code(),
                Some(1),
                "{mode} {form}: checked by default"
            );
            let o = nonceforge(
                &[
                    "extid",
                    "decode",
                    "--type",
                    "user",
                    "--mode",
                    mode,
                    "--unverified",
                    &id,
                ],
                &env,
            );
            assert!(
                o.status.success(),
                "{mode} {form} {id}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(
                lines(&o)[0],
                "seq=42 rand=1234 key_version=0 derived=false",
                "{mode} {form}"
            );
        }
    }
    // No --rand: the random half derived from --seq, as every face's call
    // without one: the same id twice, decoding says derived=true, and refuses
    // an id made with another random half (also with the old
    // --check-derived, now the default).
    let encode = |extra: &[&str]| {
        let mut args = vec!["extid", "encode", "--type", "user", "--seq", "7"];
        args.extend(extra);
        lines(&nonceforge(&args, &env))[0].clone()
    };
    let (a, b) = (encode(&[]), encode(&[]));
    assert_eq!(a, b, "stable");
    for extra in [&[][..], &["--check-derived"][..]] {
        let mut args = vec!["extid", "decode", "--type", "user"];
        args.extend_from_slice(extra);
        let o = nonceforge(&[&args[..], &[a.as_str()]].concat(), &env);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            lines(&o)[0].starts_with("seq=7 ")
                && lines(&o)[0].ends_with(" key_version=0 derived=true")
        );
        let given = encode(&["--rand", "5"]);
        let o = nonceforge(&[&args[..], &[given.as_str()]].concat(), &env);
        assert_eq!(o.status.code(), Some(1), "not derived: refused");
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .contains("not made by this codec's encode without a random half")
        );
    }
    // --unverified and --check-derived say opposite things: refused.
    let o = nonceforge(
        &[
            "extid",
            "decode",
            "--type",
            "user",
            "--unverified",
            "--check-derived",
            &a,
        ],
        &env,
    );
    assert_eq!(o.status.code(), Some(2));
    // --rand random: a fresh half, printed after the id to be stored.
    let (r1, r2) = (encode(&["--rand", "random"]), encode(&["--rand", "random"]));
    assert_ne!(r1, r2);
    for line in [r1, r2] {
        let (id, rand) = line.split_once(" rand=").expect("id rand=N");
        let o = nonceforge(
            &["extid", "decode", "--type", "user", "--unverified", id],
            &env,
        );
        assert_eq!(
            lines(&o)[0],
            format!("seq=7 rand={rand} key_version=0 derived=false")
        );
    }
}

/// The CLI's default call leaks nothing: ids of seq 1..=100 share no 4-byte
/// prefix and no pair shows the XOR of its sequence numbers in the visible L
/// half (what a constant random half gives: checked too).
#[test]
fn extid_default_call_leaks_nothing() {
    let env = [("NONCEFORGE_EXTID_KEY", EXTID_KEY)];
    let ids = |rand: Option<&str>| -> Vec<u128> {
        (1..=100)
            .map(|s: u32| {
                let seq = s.to_string();
                let mut args = vec!["extid", "encode", "--type", "user", "--seq", seq.as_str()];
                if let Some(r) = rand {
                    args.extend(["--rand", r]);
                }
                let hex = lines(&nonceforge(&args, &env))[0].replace('-', "");
                u128::from_str_radix(&hex, 16).unwrap()
            })
            .collect()
    };
    let leaks = |ids: &[u128]| {
        let prefixes: std::collections::HashSet<u32> =
            ids.iter().map(|v| (v >> 96) as u32).collect();
        let l = |v: u128| {
            let hi = (v >> 64) as u64;
            (hi >> 16) << 12 | (hi & 0xfff)
        };
        let mut xors = 0;
        for i in 0..ids.len() {
            for j in i + 1..ids.len() {
                if (l(ids[i]) ^ l(ids[j])) & 0xfff_ffff == ((i + 1) ^ (j + 1)) as u64 {
                    xors += 1;
                }
            }
        }
        (prefixes.len(), xors)
    };
    assert_eq!(leaks(&ids(None)), (100, 0));
    let (prefixes, xors) = leaks(&ids(Some("0")));
    assert!(prefixes <= 16 && xors == 100 * 99 / 2, "{prefixes} {xors}");
}

#[test]
fn extid_keys_rotate() {
    let old = std::env::temp_dir().join(format!("nonceforge-extid-0-{}", std::process::id()));
    std::fs::write(&old, EXTID_KEY).unwrap();
    let new_key = "4142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60";
    let before = nonceforge(
        &["extid", "encode", "--type", "user", "--seq", "41"],
        &[("NONCEFORGE_EXTID_KEY", EXTID_KEY)],
    );
    let old_id = lines(&before)[0].clone();
    let env = [("NONCEFORGE_EXTID_KEY", new_key)];
    let old_arg = format!("0={}", old.display());
    let rotated = |args: &[&str]| {
        let mut v = args.to_vec();
        v.extend(["--key-version", "1", "--old-key", &old_arg]);
        nonceforge(&v, &env)
    };
    // Made before the rotation: still decodes, under version 0.
    let o = rotated(&[
        "extid",
        "decode",
        "--type",
        "user",
        "--check-derived",
        &old_id,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        lines(&o)[0].starts_with("seq=41 ") && lines(&o)[0].ends_with("key_version=0 derived=true")
    );
    // New ids carry version 1.
    let new_id = lines(&rotated(&[
        "extid", "encode", "--type", "user", "--seq", "41",
    ]))[0]
        .clone();
    assert_ne!(new_id, old_id);
    let o = rotated(&["extid", "decode", "--type", "user", &new_id]);
    assert!(
        lines(&o)[0].ends_with("key_version=1 derived=true"),
        "{:?}",
        lines(&o)
    );
    // Without the old key, an old id names the version it needs.
    let o = nonceforge(
        &[
            "extid",
            "decode",
            "--type",
            "user",
            "--key-version",
            "1",
            &old_id,
        ],
        &env,
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("key version 0"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Bad --old-key values, in clap's words.
    for bad in ["0", "16=/x", "0="] {
        let o = rotated(&[
            "extid",
            "decode",
            "--type",
            "user",
            "--old-key",
            bad,
            &old_id,
        ]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("--old-key"),
            "{bad}"
        );
    }
    std::fs::remove_file(&old).unwrap();
}

#[test]
fn extid_bad_input() {
    let env = [("NONCEFORGE_EXTID_KEY", EXTID_KEY)];
    let good = lines(&nonceforge(
        &[
            "extid", "encode", "--type", "user", "--seq", "5", "--rand", "1",
        ],
        &env,
    ))[0]
        .clone();
    #[allow(clippy::type_complexity)]
    let cases: Vec<(Vec<&str>, Vec<(&str, &str)>, &str)> = vec![
        (
            vec!["extid", "encode", "--type", "user", "--seq", "1"],
            vec![],
            "NONCEFORGE_EXTID_KEY",
        ),
        (
            vec!["extid", "encode", "--type", "User", "--seq", "1"],
            env.to_vec(),
            "a-z",
        ),
        (
            vec![
                "extid",
                "encode",
                "--type",
                "user",
                "--seq",
                "72057594037927936",
            ],
            env.to_vec(),
            "seq",
        ),
        (
            vec![
                "extid",
                "encode",
                "--type",
                "user",
                "--seq",
                "1",
                "--rand",
                "4611686018427387904",
            ],
            env.to_vec(),
            "rand",
        ),
        (
            vec![
                "extid", "encode", "--type", "user", "--seq", "1", "--mode", "des",
            ],
            env.to_vec(),
            "feistel-uuid",
        ),
        (
            vec![
                "extid", "encode", "--type", "user", "--seq", "1", "--rounds", "3",
            ],
            env.to_vec(),
            "2 or 4",
        ),
        (
            vec![
                "extid", "encode", "--type", "user", "--seq", "1", "--format", "hex",
            ],
            env.to_vec(),
            "base32",
        ),
        (
            vec!["extid", "encode", "--type", "user", "--seq", "1", "--check"],
            env.to_vec(),
            "--format base32",
        ),
        (
            vec![
                "extid",
                "encode",
                "--type",
                "user",
                "--seq",
                "1",
                "--key-version",
                "16",
            ],
            env.to_vec(),
            "16",
        ),
        (
            vec!["extid", "decode", "--type", "user", "not-an-id"],
            env.to_vec(),
            "36 characters",
        ),
        (
            vec!["extid", "decode", "--type", "user", "notanid"],
            env.to_vec(),
            "base32",
        ),
        (
            vec![
                "extid",
                "decode",
                "--type",
                "user",
                "0191f3a8-6b2c-8d1e-a7f0-3c5e9b1d2f4",
            ],
            env.to_vec(),
            "36",
        ),
        (
            vec![
                "extid",
                "decode",
                "--type",
                "user",
                "0191f3a8-6b2c-7d1e-a7f0-3c5e9b1d2f4a",
            ],
            env.to_vec(),
            "version 8",
        ),
        (
            vec![
                "extid",
                "decode",
                "--type",
                "user",
                "--max-issued",
                "4",
                "--unverified",
                &good,
            ],
            env.to_vec(),
            "never handed out",
        ),
        (
            vec![
                "extid",
                "decode",
                "--type",
                "user",
                "--key-version",
                "3",
                &good,
            ],
            env.to_vec(),
            "key version 0",
        ),
        (
            vec!["extid", "decode", "--type", "user"],
            env.to_vec(),
            "<ID>",
        ),
    ];
    for (args, env, needle) in &cases {
        assert_fails(args, env, needle);
    }
}

/// `extid decode` refusals name neither the sequence number the id decodes to
/// (the true one: the id was made with a stored random half), nor the highest
/// issued, nor the random half.
#[test]
fn extid_refusals_name_no_hidden_number() {
    let env = [("NONCEFORGE_EXTID_KEY", EXTID_KEY)];
    let (seq, rand, max) = ("271828182", "314159265358", "161803398");
    let id = lines(&nonceforge(
        &[
            "extid", "encode", "--type", "user", "--seq", seq, "--rand", rand,
        ],
        &env,
    ))[0]
        .clone();
    let decode = |more: &[&str], needle: &str| {
        let mut args = vec!["extid", "decode", "--type", "user"];
        args.extend_from_slice(more);
        args.push(&id);
        let o = nonceforge(&args, &env);
        assert!(!o.status.success(), "{args:?} must fail");
        let err = String::from_utf8_lossy(&o.stderr).replace(&id, "");
        assert!(err.contains(needle), "{err}");
        for n in [seq, rand, max] {
            let hex = format!("{:x}", n.parse::<u64>().unwrap());
            assert!(!err.contains(n) && !err.contains(&hex), "{err} shows {n}");
        }
    };
    decode(&["--unverified", "--max-issued", max], "never handed out");
    decode(&[], "not made by this codec");
    decode(&["--check-derived"], "not made by this codec");
}
