//! Lease protocol 2 against stores that misbehave, with real servers on
//! loopback ports: a Redis flushed and one restarted empty while members draw
//! nonces, an etcd prefix wiped, a malformed record, a PostgreSQL store
//! database where another role planted tables, triggers and functions, and
//! passwords in every URL form. Every value every member printed is collected:
//! none twice; every member whose grant went with the store's data reports it.
//! The generators' side of the argument (an earlier holder's last value lies
//! below a holder without history's first, whatever the clocks within the
//! stated bound) is proved with manual clocks in the lease crate's own tests
//! (crates/nonceforge-lease/tests/stores.rs).
//!
//! One test at a time (they time leases against real clocks on a small
//! machine), each on its own servers.

mod support;

use std::collections::HashSet;
use std::time::{Duration, Instant};
use support::{Etcd, Postgres, Proc, Redis, drawing, serial, stop};

const SEC: Duration = Duration::from_secs(1);

/// A wave of members at TTL 2 s.
fn wave(url: &str, ns: &str, n: usize) -> Vec<(&'static str, Proc)> {
    support::wave(url, ns, n, &["--ttl", "2s"])
}

/// Every member of `procs` stops by itself, saying the store lost its data.
fn all_report_lost(procs: &mut [(&str, Proc)], what: &str) {
    let t = Instant::now();
    for (_, p) in procs.iter_mut() {
        while !p.is_done() {
            assert!(
                t.elapsed() < 15 * SEC,
                "{what}: a member still runs: {}",
                p.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // It has exited; its last stderr line may still be on its way to
        // the reader (and come in pieces: stderr is unbuffered).
        let said = |e: &str| e.contains("the store lost its data");
        let t = Instant::now();
        while !said(&p.stderr()) && t.elapsed() < 5 * SEC {
            std::thread::sleep(Duration::from_millis(10));
        }
        let err = p.stderr();
        assert!(
            said(&err),
            "{what}: a member stopped without saying why: {err}"
        );
    }
}

/// No (kind, value) printed twice by any member; returns how many.
fn all_distinct(procs: Vec<(&'static str, Proc)>) -> usize {
    let mut seen = HashSet::new();
    for (kind, p) in procs {
        let (_, lines, err) = p.finish(30 * SEC);
        for l in lines {
            assert!(
                seen.insert((kind, l.clone())),
                "{kind} {l} issued twice ({err})"
            );
        }
    }
    seen.len()
}

/// A Redis flushed under its members, then one killed and restarted without
/// its data: every old member reports the loss at its next renewal and stops,
/// the new ones start the TTL and margin ahead, and no value repeats.
#[test]
fn redis_that_loses_its_data() {
    let _g = serial();
    let mut redis = Redis::start();
    let url = redis.url();
    let ns = "loss";
    let mut first = wave(&url, ns, 4);
    drawing(&first);
    assert_eq!(redis.cli(&["FLUSHALL"]), "OK");
    let mut second = wave(&url, ns, 4);
    for (_, p) in &second {
        p.wait_for("the warning", 20 * SEC, |_, e| e.contains("no history"));
    }
    all_report_lost(&mut first, "after FLUSHALL");
    drawing(&second);
    redis.restart_empty();
    let third = wave(&url, ns, 4);
    all_report_lost(&mut second, "after a restart without data");
    drawing(&third);
    stop(&third);
    let mut all = first;
    all.extend(second);
    all.extend(third);
    let n = all_distinct(all);
    assert!(n > 12 * 200, "{n} values");
}

/// An etcd prefix wiped under its members: the same. A malformed record is
/// an error naming it, never token 0 and floor 0.
#[test]
fn etcd_prefix_wiped_and_a_malformed_record() {
    let _g = serial();
    let etcd = Etcd::start(1);
    let url = etcd.url();
    let ns = "wiped";
    let mut first = wave(&url, ns, 4);
    drawing(&first);
    let (ok, _) = etcd.ctl(0, &["del", "--prefix", &format!("/{ns}/")]);
    assert!(ok);
    let second = wave(&url, ns, 4);
    all_report_lost(&mut first, "after the prefix was wiped");
    drawing(&second);
    stop(&second);
    let mut all = first;
    all.extend(second);
    all_distinct(all);

    for bad in ["garbage", "17 1700000000000 host", "v2 g x 5 h"] {
        let (ok, _) = etcd.ctl(0, &["put", "/bad/rec/0", bad]);
        assert!(ok);
        let (code, _, err) = Proc::spawn(&[
            "lease",
            "acquire",
            "--backend",
            &url,
            "--namespace",
            "bad",
            "--for",
            "0s",
        ])
        .finish(30 * SEC);
        assert_ne!(code, Some(0));
        assert!(
            err.contains("/bad/rec/0") && err.contains("malformed"),
            "{bad}: {err}"
        );
    }
}

/// A Redis record of the wrong shape is refused the same way.
#[test]
fn redis_malformed_records_and_protocol_1() {
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let acquire = |ns: &str| {
        Proc::spawn(&[
            "lease",
            "acquire",
            "--backend",
            &url,
            "--namespace",
            ns,
            "--for",
            "0s",
        ])
        .finish(30 * SEC)
    };
    redis.cli(&["HSET", "bad:rec:0", "floor", "x"]);
    let (code, _, err) = acquire("bad");
    assert!(
        code != Some(0) && err.contains("bad:rec:0 is malformed"),
        "{err}"
    );
    redis.cli(&["SET", "old:tokens", "7"]);
    let (code, _, err) = acquire("old");
    assert!(code != Some(0) && err.contains("lease protocol 1"), "{err}");
}

/// What a role that can create objects in the store database plants — in
/// `public` and in a schema named after the store role: tables, a sequence,
/// triggers that record who runs them, functions shadowing the ones the
/// store calls — is never run, members use their own schema, and no id is
/// given twice. A schema, a trigger, a rule or a write grant of another role
/// on the lease objects is refused by name. A protocol-1 table of the store
/// role's own is refused.
#[test]
fn postgres_store_shared_with_a_hostile_role() {
    let _g = serial();
    let pg = Postgres::start();
    let sql = |s: &str| pg.psql(s);
    sql("CREATE ROLE store LOGIN; CREATE ROLE mallory LOGIN;
         GRANT CREATE ON DATABASE postgres TO store, mallory;
         GRANT CREATE ON SCHEMA public TO mallory;
         CREATE TABLE public.ran (who text, what text);
         GRANT INSERT ON public.ran TO PUBLIC;");
    // mallory's traps, in public and in a schema named like the store role
    // (first on "$user"'s search_path).
    for schema in ["public", "store"] {
        let make = if schema == "store" {
            "CREATE SCHEMA store AUTHORIZATION mallory;"
        } else {
            ""
        };
        sql(&format!(
            "SET ROLE mallory; {make}
             CREATE FUNCTION {schema}.trap() RETURNS trigger LANGUAGE plpgsql AS
               $$BEGIN INSERT INTO public.ran VALUES (current_user, TG_TABLE_NAME); RETURN NEW; END$$;
             CREATE TABLE {schema}.nonceforge_leases (machine_id smallint PRIMARY KEY, holder text,
               token bigint NOT NULL DEFAULT 0, expires_at timestamptz, floor_unix_ms bigint NOT NULL DEFAULT 0,
               grant_id text);
             INSERT INTO {schema}.nonceforge_leases (machine_id) SELECT generate_series(0, 511);
             CREATE TABLE {schema}.nonceforge_meta (one bool PRIMARY KEY DEFAULT true, protocol int,
               incarnation text, created_at timestamptz, last_token bigint);
             CREATE SEQUENCE {schema}.nonceforge_lease_tokens;
             CREATE TRIGGER t BEFORE INSERT OR UPDATE ON {schema}.nonceforge_leases
               FOR EACH ROW EXECUTE FUNCTION {schema}.trap();
             CREATE TRIGGER t BEFORE INSERT OR UPDATE ON {schema}.nonceforge_meta
               FOR EACH ROW EXECUTE FUNCTION {schema}.trap();
             CREATE FUNCTION {schema}.clock_timestamp() RETURNS timestamptz LANGUAGE sql AS
               $$INSERT INTO public.ran VALUES (current_user, 'clock_timestamp') RETURNING '2000-01-01'::timestamptz$$;
             CREATE FUNCTION {schema}.generate_series(int, int) RETURNS SETOF int LANGUAGE sql AS
               $$INSERT INTO public.ran VALUES (current_user, 'generate_series') RETURNING 0$$;
             CREATE FUNCTION {schema}.hashtext(text) RETURNS int LANGUAGE sql AS
               $$INSERT INTO public.ran VALUES (current_user, 'hashtext') RETURNING 0$$;
             GRANT USAGE ON SCHEMA {schema} TO PUBLIC;
             GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO PUBLIC;
             GRANT ALL ON ALL SEQUENCES IN SCHEMA {schema} TO PUBLIC;"
        ));
    }
    let url = format!("postgres://store@127.0.0.1:{}/postgres", pg.port);
    let acquire = |more: &[&str]| {
        let mut args = vec!["lease", "acquire", "--backend", &url, "--for", "0s"];
        args.extend_from_slice(more);
        Proc::spawn(&args).finish(30 * SEC)
    };

    // mallory took the lease schema's name first: refused, nothing run.
    sql("SET ROLE mallory; CREATE SCHEMA nonceforge_lease;");
    let (code, _, err) = acquire(&[]);
    assert!(
        code != Some(0) && err.contains("schema nonceforge_lease is owned by role mallory"),
        "{err}"
    );
    sql("DROP SCHEMA nonceforge_lease;");

    // Members leasing and drawing as the store role.
    let mut members = Vec::new();
    for kind in ["sortable", "counter", "sortable", "counter"] {
        members.push((
            kind,
            support::member(&url, "nonceforge", kind, &["--ttl", "2s"]),
        ));
    }
    drawing(&members);
    let mut ids = HashSet::new();
    for (_, p) in &members {
        let id = p
            .stderr()
            .split("machine id ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next().map(str::to_owned))
            .expect("a machine id line");
        assert!(ids.insert(id.clone()), "machine id {id} given twice");
    }
    stop(&members);
    all_distinct(members);
    assert_eq!(
        sql("SELECT count(*) FROM public.ran"),
        "0",
        "{}",
        sql("SELECT string_agg(who || ':' || what, ', ') FROM public.ran")
    );
    assert_eq!(
        sql(
            "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'nonceforge_lease.nonceforge_leases'::regclass"
        ),
        "store"
    );
    // mallory cannot write the store's tables, nor plant a trigger on them.
    let planted = std::process::Command::new("psql")
        .args(["-h", "127.0.0.1", "-p", &pg.port.to_string(), "-U", "mallory", "-d", "postgres", "-XAtq", "-c",
               "CREATE TRIGGER t BEFORE UPDATE ON nonceforge_lease.nonceforge_leases FOR EACH ROW EXECUTE FUNCTION public.trap()"])
        .output()
        .expect("psql");
    assert!(!planted.status.success());

    // What only a superuser could do to the store's objects is refused by name.
    for (break_it, mend, needle) in [
        (
            "CREATE TRIGGER t BEFORE UPDATE ON nonceforge_lease.nonceforge_leases FOR EACH ROW EXECUTE FUNCTION public.trap()",
            "DROP TRIGGER t ON nonceforge_lease.nonceforge_leases",
            "nonceforge_lease.nonceforge_leases has a trigger",
        ),
        (
            "GRANT UPDATE ON nonceforge_lease.nonceforge_meta TO mallory",
            "REVOKE UPDATE ON nonceforge_lease.nonceforge_meta FROM mallory",
            "nonceforge_lease.nonceforge_meta grants other roles a write right (mallory UPDATE)",
        ),
        (
            "CREATE RULE r AS ON UPDATE TO nonceforge_lease.nonceforge_leases DO ALSO NOTIFY x",
            "DROP RULE r ON nonceforge_lease.nonceforge_leases",
            "has a rule",
        ),
        (
            "ALTER TABLE nonceforge_lease.nonceforge_meta OWNER TO mallory",
            "ALTER TABLE nonceforge_lease.nonceforge_meta OWNER TO store",
            "nonceforge_lease.nonceforge_meta is owned by role mallory",
        ),
    ] {
        sql(break_it);
        let (code, _, err) = acquire(&[]);
        assert!(code != Some(0) && err.contains(needle), "{break_it}: {err}");
        sql(mend);
    }
    let (code, _, err) = acquire(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(sql("SELECT count(*) FROM public.ran"), "0");

    // Rows lost behind the members' backs (a TRUNCATE, a restore): they come
    // back without history, and the start says so.
    sql("TRUNCATE nonceforge_lease.nonceforge_leases");
    let (code, out, err) = acquire(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out[0].contains("history=false") && err.contains("no history"),
        "{out:?} {err}"
    );
    sql("DELETE FROM nonceforge_lease.nonceforge_meta");
    let (code, out, err) = acquire(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out[0].contains("history=true"), "{out:?}");

    // A protocol-1 table of the store role's own: its members may still run.
    sql(
        "SET ROLE store; CREATE SCHEMA legacy; CREATE TABLE legacy.old_leases (machine_id smallint);",
    );
    let (code, _, err) = acquire(&["--namespace", "old"]);
    assert!(
        code != Some(0) && err.contains("legacy.old_leases is a lease protocol 1 table"),
        "{err}"
    );
}

/// A password, in each form the clients take, shows in no log line, error or
/// status output: a reachable store (the password accepted) and an
/// unreachable one (the error names the URL).
#[test]
fn passwords_never_show() {
    let _g = serial();
    let pg = Postgres::start();
    let redis = Redis::start();
    redis.cli(&["CONFIG", "SET", "requirepass", "s3cr3t-Pw"]);
    let secret = "s3cr3t-Pw";
    let reachable = [
        format!("redis://:{secret}@127.0.0.1:{}/0", redis.port),
        format!("redis://default:{secret}@127.0.0.1:{}/0", redis.port),
        format!(
            "postgres://postgres:{secret}@127.0.0.1:{}/postgres",
            pg.port
        ),
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres?password={secret}",
            pg.port
        ),
    ];
    for url in &reachable {
        let (code, out, err) =
            Proc::spawn(&["gen", "sortable", "-n", "1", "--lease", url, "--ttl", "1s"])
                .finish(30 * SEC);
        assert_eq!(code, Some(0), "{url}: {err}");
        assert!(err.contains("machine id") && !err.contains(secret), "{err}");
        let (code, status, err) =
            Proc::spawn(&["lease", "status", "--backend", url]).finish(30 * SEC);
        assert_eq!(code, Some(0), "{err}");
        assert!(!status.join("\n").contains(secret) && !err.contains(secret));
        assert!(!out.join("\n").contains(secret));
    }
    let unreachable = [
        format!("postgres://app:{secret}/x@127.0.0.1:1/db"),
        format!("postgres://app@127.0.0.1:1/db?sslmode=disable&password={secret}"),
        format!("postgres://app@127.0.0.1:1/db?sslpassword={secret}"),
        format!("redis://fleet:{secret}@127.0.0.1:1/0"),
        format!("etcd://root:{secret}@127.0.0.1:1"),
        format!("postgres://app:{secret}@127.0.0.1:notaport/db"),
    ];
    for url in &unreachable {
        let (code, _, err) = Proc::spawn(&[
            "gen",
            "sortable",
            "-n",
            "1",
            "--lease",
            url,
            "--connect-timeout",
            "1s",
        ])
        .finish(30 * SEC);
        assert_ne!(code, Some(0), "{url}");
        assert!(!err.contains(secret) && err.contains("***"), "{url}: {err}");
    }
}
