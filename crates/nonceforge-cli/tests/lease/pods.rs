//! Kubernetes StatefulSet pods that share an index (`gen --lease-id-from`):
//! a rolling update's old and new pod, or a pod cut off by a partition and
//! its replacement. The id comes from a downward API labels file; a lease on
//! exactly that id makes them take turns.

use super::*;

/// The old pod draws; the new one with the same index waits, saying so, and
/// issues nothing; the old one is killed (kill -9: its lease lapses after
/// the TTL) and the new one takes over; a third with the same index waits in
/// turn and takes over the moment the second stops cleanly (SIGTERM releases
/// the id). Every value is machine id 3's, none twice, each pod's first
/// above the one before's last.
#[test]
fn statefulset_pods_with_one_index_take_turns() {
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let dir = TempDir::new("podinfo");
    let labels = dir.0.join("labels");
    std::fs::write(
        &labels,
        "app=\"nonces\"\napps.kubernetes.io/pod-index=\"3\"\n",
    )
    .unwrap();
    let source = format!("file:{}", labels.display());
    // A pod: a member drawing sortable nonces, its id from the labels file.
    let pod = || {
        support::member(
            &url,
            "sts",
            "sortable",
            &["--lease-id-from", &source, "--ttl", "2s"],
        )
    };
    let drawing = |p: &Proc, what: &str| {
        let n = p.count();
        p.wait_for(what, 30 * SEC, move |l, _| l.len() > n + 200)
    };
    let waiting = |p: &Proc, what: &str| {
        p.wait_for(what, 30 * SEC, |_, e| {
            e.contains("machine id 3 (from ") && e.contains("is held by another member")
        })
    };

    let mut a = pod();
    drawing(&a, "the first pod's values");
    let b = pod();
    waiting(&b, "the second pod's wait");
    // While the first pod draws another 2000 values, the second issues none.
    let n = a.count();
    a.wait_for("more of the first pod's values", 30 * SEC, |l, _| {
        l.len() > n + 2000
    });
    assert_eq!(b.count(), 0, "two pods with one index issued at once");

    a.signal(libc::SIGKILL);
    let t = Instant::now();
    while !a.is_done() {
        assert!(t.elapsed() < 10 * SEC, "the first pod did not die");
        std::thread::sleep(Duration::from_millis(10));
    }
    drawing(
        &b,
        "the second pod's values, after the first's lease lapsed",
    );
    let c = pod();
    waiting(&c, "the third pod's wait");
    assert_eq!(c.count(), 0);
    b.signal(libc::SIGTERM);
    let (code, b_lines, b_err) = b.finish(30 * SEC);
    assert_eq!(code, Some(0), "{b_err}");
    drawing(
        &c,
        "the third pod's values, after the second released the id",
    );
    c.signal(libc::SIGTERM);
    let (code, c_lines, c_err) = c.finish(30 * SEC);
    assert_eq!(code, Some(0), "{c_err}");
    let a_lines = a.lines.lock().unwrap().clone();

    for (pod, lines) in [("a", &a_lines), ("b", &b_lines), ("c", &c_lines)] {
        assert!(!lines.is_empty(), "pod {pod} issued nothing");
        for l in lines.iter() {
            assert_eq!(parts(l).1, 3, "pod {pod}: {l} is not machine id 3's");
        }
    }
    all_distinct("pods", a_lines.iter().chain(&b_lines).chain(&c_lines));
    // Sortable values of one width compare as their hex text.
    assert!(b_lines[0] > *a_lines.last().unwrap(), "b started below a");
    assert!(c_lines[0] > *b_lines.last().unwrap(), "c started below b");
}

/// The pod index sources refuse what is not an index, naming the source.
#[test]
fn pod_index_sources_refuse_by_name() {
    let dir = TempDir::new("podinfo-bad");
    let labels = dir.0.join("labels");
    std::fs::write(&labels, "app=\"nonces\"\n").unwrap();
    let file = format!("file:{}", labels.display());
    for (source, want) in [
        (file.as_str(), "no apps.kubernetes.io/pod-index line"),
        ("file:/nonexistent/labels", "cannot be read"),
        (
            "env:NONCEFORGE_TEST_NO_SUCH_VAR",
            "NONCEFORGE_TEST_NO_SUCH_VAR",
        ),
        ("pod", "use env:VAR, file:PATH"),
    ] {
        let (code, _, err) = run(&[
            "gen",
            "counter",
            "--lease",
            "redis://127.0.0.1:1",
            "--lease-id-from",
            source,
        ]);
        assert_ne!(code, Some(0), "{source}");
        assert!(err.contains(want), "{source}: {err}");
    }
}

/// A StatefulSet of more than 512 pods: pod 40000 of a wide namespace
/// (`--layout wide`) leases exactly id 40000, and its values carry it; in the
/// standard layout the same index is refused, naming the range.
#[test]
fn wide_statefulset_pod_index() {
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let dir = TempDir::new("podinfo-wide");
    let labels = dir.0.join("labels");
    std::fs::write(&labels, "apps.kubernetes.io/pod-index=\"40000\"\n").unwrap();
    let source = format!("file:{}", labels.display());
    let args = |layout: &'static str| {
        [
            "gen",
            "counter",
            "-n",
            "3",
            "--lease",
            &url,
            "--lease-id-from",
            &source,
            "--namespace",
            "widepods",
            "--ttl",
            "1s",
            "--layout",
            layout,
        ]
        .map(str::to_owned)
    };
    let (code, _, err) = run(&args("standard").each_ref().map(String::as_str));
    assert_ne!(code, Some(0));
    assert!(err.contains("511"), "{err}");
    let (code, lines, err) = run(&args("wide").each_ref().map(String::as_str));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines.len(), 3);
    for l in &lines {
        let (code, out, err) = run(&["decompose", "--layout", "wide", l]);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.iter().any(|o| o.contains("40000")), "{out:?}");
    }
}

/// `gen --lease … --stats` and `lease acquire --json`: the generator's and
/// the lease's figures as JSON (docs/operations.md).
#[test]
fn leased_figures_as_json() {
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let (code, lines, err) = run(&[
        "gen",
        "sortable",
        "--bits",
        "64",
        "-n",
        "500",
        "--lease",
        &url,
        "--namespace",
        "json",
        "--ttl",
        "2s",
        "--stats",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines.len(), 500);
    let last = err.lines().last().unwrap();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(v["generator"]["nonces_issued"]["sortable"]["64"], 500);
    assert_eq!(v["generator"]["enabled"], true);
    let l = &v["lease"];
    assert_eq!(
        (l["state"].as_str(), l["ready"].as_bool()),
        (Some("held"), Some(true))
    );
    assert_eq!(l["machine_id"], v["generator"]["machine_id"]);
    assert_eq!(l["started_fast"], false);
    assert!(l["start_wait_ms"].as_f64().unwrap() >= 2000.0, "{l}");
    assert_eq!(l["lost_reason"], serde_json::Value::Null);

    let holder = Proc::spawn(&[
        "lease",
        "acquire",
        "--backend",
        &url,
        "--namespace",
        "json",
        "--ttl",
        "2s",
        "--json",
        "--for",
        "1500ms",
    ]);
    let (code, lines, err) = holder.finish(30 * SEC);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    let grant: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let end: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(end["lease"]["token"], grant["token"]);
    assert_eq!(end["lease"]["state"], "held");
    assert!(end["lease"]["renewals"].as_u64().unwrap() >= 1, "{end}");
    let (_, status, _) = run(&[
        "lease",
        "status",
        "--backend",
        &url,
        "--namespace",
        "json",
        "--json",
    ]);
    let rec: serde_json::Value = serde_json::from_str(&status[0]).unwrap();
    assert_eq!(rec["state"], "free");
}
