//! How acquiring a lease grows with the number of ids held, on each store:
//! PostgreSQL, Redis and etcd, each started on a loopback port (the test
//! kit's), a wide namespace (ids 0..=65535) filled with N ids held by other
//! members (records with an hour to live, written straight into the store
//! in the protocol's format), then acquire-and-release cycles timed.
//!
//! ```text
//! cargo run --release -p nonceforge-lease --example acquire_scale -- 0,1000,10000,60000 40
//! ```
//!
//! Prints one line per store and N: acquire p50/p99 (connect included, as
//! `Lease::acquired_in` counts it), a renewal round trip p99 of a lease held
//! meanwhile, and the store's size per held id. Figures, not assertions:
//! bench/RESULTS.md keeps them with the machine.

use nonceforge::Layout;
use nonceforge_lease::{Lease, LeaseOptions};
use nonceforge_testkit::{Etcd, Postgres, Redis};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<u32> = args
        .get(1)
        .map_or("0,1000,10000,60000", String::as_str)
        .split(',')
        .map(|s| s.parse().expect("held counts: N,N,…"))
        .collect();
    let cycles: usize = args.get(2).map_or(40, |s| s.parse().expect("cycles"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("store     held   acquire_p50_ms  acquire_p99_ms  renew_p99_ms  bytes_per_held");
    {
        let pg = Postgres::start();
        run("postgres", &pg.url(), &sizes, cycles, |from, to| {
            if to > from {
                pg.psql(&format!(
                    "INSERT INTO nonceforge_lease.scale_leases (machine_id, grant_id, holder, token, expires_at, floor_unix_ms) \
                     SELECT g, 'filler' || g, 'filler', 1, now() + interval '1 hour', 0 FROM generate_series({from}, {}) g \
                     ON CONFLICT (machine_id) DO UPDATE SET grant_id = excluded.grant_id, holder = excluded.holder, expires_at = excluded.expires_at",
                    to - 1
                ));
            }
            let size = pg.psql("SELECT pg_total_relation_size('nonceforge_lease.scale_leases')");
            size.trim().parse().unwrap_or(0)
        });
    }
    {
        let redis = Redis::start();
        let url = redis.url();
        run("redis", &url, &sizes, cycles, |from, to| {
            rt.block_on(async {
                let client = redis::Client::open(url.as_str()).unwrap();
                let mut c = client.get_multiplexed_async_connection().await.unwrap();
                for chunk in (from..to).collect::<Vec<_>>().chunks(1000) {
                    let mut p = redis::pipe();
                    for id in chunk {
                        p.hset_multiple(
                            format!("scale:lease:{id}"),
                            &[("grant", "filler"), ("holder", "filler"), ("token", "1")],
                        )
                        .ignore()
                        .pexpire(format!("scale:lease:{id}"), 3_600_000)
                        .ignore()
                        .hset_multiple(
                            format!("scale:rec:{id}"),
                            &[
                                ("grant", "filler"),
                                ("holder", "filler"),
                                ("token", "1"),
                                ("floor", "0"),
                            ],
                        )
                        .ignore();
                    }
                    let () = p.query_async(&mut c).await.unwrap();
                }
                let info: String = redis::cmd("INFO")
                    .arg("memory")
                    .query_async(&mut c)
                    .await
                    .unwrap();
                info.lines()
                    .find_map(|l| l.strip_prefix("used_memory:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0)
            })
        });
    }
    {
        let etcd = Etcd::start(1);
        let url = etcd.url();
        let endpoint = url.trim_start_matches("etcd://").to_owned();
        run("etcd", &url, &sizes, cycles, |from, to| {
            rt.block_on(async {
                let mut c = etcd_client::Client::connect([endpoint.as_str()], None)
                    .await
                    .unwrap();
                let lease = c.lease_grant(3600, None).await.unwrap().id();
                for chunk in (from..to).collect::<Vec<_>>().chunks(60) {
                    let ops: Vec<etcd_client::TxnOp> = chunk
                        .iter()
                        .flat_map(|id| {
                            [
                                etcd_client::TxnOp::put(
                                    format!("/scale/lease/{id}"),
                                    "filler filler",
                                    Some(etcd_client::PutOptions::new().with_lease(lease)),
                                ),
                                etcd_client::TxnOp::put(
                                    format!("/scale/rec/{id}"),
                                    "v2 filler 1 0 filler",
                                    None,
                                ),
                            ]
                        })
                        .collect();
                    c.txn(etcd_client::Txn::new().and_then(ops)).await.unwrap();
                }
                let status = c.status().await.unwrap();
                status.db_size() as u64
            })
        });
    }
}

/// Fills the namespace from `held` ids to each size in turn (`fill(from, to)`
/// answers the store's size in bytes), and times acquiring at each.
fn run(
    store: &str,
    url: &str,
    sizes: &[u32],
    cycles: usize,
    mut fill: impl FnMut(u32, u32) -> u64,
) {
    let opts = LeaseOptions {
        ttl: Duration::from_secs(2),
        namespace: "scale".into(),
        connect_timeout: Duration::from_secs(60),
        ..LeaseOptions::for_layout(Layout::Wide)
    };
    // The namespace's record and tables, made by a first member.
    Lease::acquire(url, &opts).unwrap().release().unwrap();
    let base = fill(0, 0);
    let mut held = 0;
    for &n in sizes {
        let bytes = fill(held, n);
        held = held.max(n);
        let kept = Lease::acquire(url, &opts).unwrap();
        let mut took: Vec<Duration> = (0..cycles)
            .map(|_| {
                let t = Instant::now();
                let l = Lease::acquire(url, &opts).unwrap();
                let d = t.elapsed();
                l.release().unwrap();
                d
            })
            .collect();
        took.sort_unstable();
        let t = Instant::now();
        while kept.renewals().0 < 4 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut rtts = kept.renewal_round_trips();
        rtts.sort_unstable();
        kept.release().unwrap();
        let pct = |v: &[Duration], p: f64| {
            v.get(((v.len() as f64 - 1.0) * p).round() as usize)
                .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
        };
        let per = if held > 0 {
            (bytes.saturating_sub(base)) as f64 / held as f64
        } else {
            0.0
        };
        println!(
            "{store:<8} {held:>6}   {:>14.2}  {:>14.2}  {:>12.2}  {per:>14.0}",
            pct(&took, 0.5),
            pct(&took, 0.99),
            pct(&rtts, 0.99),
        );
    }
}
