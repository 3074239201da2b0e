//! Members over time: thirty seconds of processes coming and going with every
//! value collected, and a three-member etcd cluster losing its leader.

use super::*;

/// 30 s of processes coming and going on each store at once — clean exits,
/// kill -9, ids reused with their floors — every nonce collected and counted.
#[test]
fn thirty_seconds_of_churn_all_distinct() {
    let _g = serial();
    let key = TempDir::new("key");
    let key_file = key.0.join("key");
    std::fs::write(
        &key_file,
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    )
    .unwrap();
    let key_file = key_file.display().to_string();
    let stores = [
        Store::Pg(Postgres::start()),
        Store::Redis(Redis::start()),
        Store::Etcd(Etcd::start(1)),
    ];
    let kinds = [
        ("counter", "64"),
        ("counter", "96"),
        ("sortable", "64"),
        ("sortable", "128"),
        ("encrypted", "64"),
        ("encrypted", "128"),
    ];
    let start = Instant::now();
    let run_for = 30 * SEC;
    let totals: Vec<(usize, usize, usize, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = stores
            .iter()
            .map(|store| {
                let url = store.url();
                let key_file = key_file.clone();
                s.spawn(move || {
                    let mut seen: HashSet<(usize, String)> = HashSet::new();
                    let (mut procs, mut killed, mut lapsed) = (0, 0, 0);
                    // (kind index, process, to be killed mid-run)
                    let mut slots: Vec<Option<(usize, Proc, bool)>> =
                        (0..4).map(|_| None).collect();
                    let collect =
                        |k: usize, lines: Vec<String>, seen: &mut HashSet<(usize, String)>| {
                            for l in lines {
                                assert!(
                                    seen.insert((k, l.clone())),
                                    "{url}: {l} ({:?}) issued twice",
                                    kinds[k]
                                );
                            }
                        };
                    while start.elapsed() < run_for || slots.iter().any(Option::is_some) {
                        for slot in slots.iter_mut() {
                            if let Some((k, mut p, kill)) = slot.take() {
                                if p.is_done() {
                                    let (code, lines, err) = p.finish(10 * SEC);
                                    // A store too slow to renew within the 2 s TTL
                                    // (a loaded machine) stops a generator: allowed,
                                    // counted, and its nonces checked all the same.
                                    if code == Some(1) && err.contains("lapsed") {
                                        lapsed += 1;
                                    } else {
                                        assert_eq!(code, Some(0), "{url}: {err}");
                                    }
                                    collect(k, lines, &mut seen);
                                } else if kill && p.count() > 1000 {
                                    p.signal(libc::SIGKILL);
                                    killed += 1;
                                    let (_, lines, _) = p.finish(10 * SEC);
                                    collect(k, lines, &mut seen);
                                } else {
                                    *slot = Some((k, p, kill));
                                    continue;
                                }
                            }
                            if start.elapsed() < run_for {
                                procs += 1;
                                let k = (procs * 5 + procs / 6) % kinds.len();
                                let (kind, bits) = kinds[k];
                                // 1 to 4 s at 3000 a second; every 7th is killed with kill -9.
                                let n = (3000 * (1 + procs % 4)).to_string();
                                let p = Proc::spawn(&[
                                    "gen",
                                    kind,
                                    "--bits",
                                    bits,
                                    "-n",
                                    &n,
                                    "--rate",
                                    "3000",
                                    "--key-file",
                                    &key_file,
                                    "--lease",
                                    &url,
                                    "--ttl",
                                    "2s",
                                    "--namespace",
                                    "churn",
                                ]);
                                *slot = Some((k, p, procs % 7 == 3));
                            }
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    (seen.len(), procs, killed, lapsed)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (n, procs, killed, lapsed) in &totals {
        assert!(
            *n > 100_000 && *procs > 10 && *killed > 0 && *lapsed * 4 <= *procs,
            "{totals:?}"
        );
    }
    eprintln!("30 s churn: (distinct nonces, processes, killed, lapsed) per store = {totals:?}");
}

/// Three etcd members; the leader is killed while four generators run: none
/// stops, and their nonces are distinct.
#[test]
fn etcd_three_members_lose_the_leader() {
    let _g = serial();
    let mut etcd = Etcd::start(3);
    let url = etcd.url();
    let gens: Vec<Proc> = (0..4)
        .map(|i| {
            let kind = ["counter", "sortable"][i % 2];
            Proc::spawn(&[
                "gen", kind, "--bits", "64", "-n", "24000", "--rate", "2000", "--lease", &url,
                "--ttl", "6s",
            ])
        })
        .collect();
    for g in &gens {
        g.wait_for("nonces", 20 * SEC, |l, _| l.len() >= 500);
    }
    let leader = etcd.leader();
    etcd.down(leader);
    let mut all = Vec::new();
    for g in gens {
        let (code, lines, err) = g.finish(60 * SEC);
        assert_eq!(
            code,
            Some(0),
            "a generator stopped when one member of three died: {err}"
        );
        assert_eq!(lines.len(), 24000);
        all.push(lines);
    }
    // Counter and sortable nonces of one size share a layout: count them apart.
    all_distinct("counter", all[0].iter().chain(&all[2]));
    all_distinct("sortable", all[1].iter().chain(&all[3]));
}
