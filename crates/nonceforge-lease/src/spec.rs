//! Backend URLs: `postgres://…` (libpq's, several hosts and
//! `target_session_attrs=read-write` included), `redis://…`,
//! `redis+sentinel://[user:password@]host:port[,host:port…]/service[/db]`,
//! `redis+cluster://[user:password@]host:port[,host:port…]`,
//! `etcd://host:port[,host:port…]`.

use crate::error::{LeaseError, Result};

/// A parsed backend URL.
#[derive(Clone)]
pub(crate) enum Spec {
    /// A libpq-style URL, handed to tokio-postgres as it is.
    Postgres(tokio_postgres::Config),
    /// A redis URL, handed to the redis crate.
    Redis(redis::ConnectionInfo),
    /// Redis through Sentinel: the sentinels, the service (master) name, and
    /// the data nodes' database and credentials. Each connection asks the
    /// sentinels for the current primary, so a failover is followed.
    RedisSentinel(Box<SentinelSpec>),
    /// A Redis Cluster: some of its nodes (the client learns the rest and
    /// the slots from them), and the credentials for every node.
    RedisCluster(Box<ClusterSpec>),
    /// `http://host:port` endpoints of the etcd members, and the user and
    /// password of etcd's authentication when the URL names them.
    Etcd(Vec<String>, Option<(String, String)>),
}

/// `redis+sentinel://…`, parsed.
#[derive(Clone)]
pub(crate) struct SentinelSpec {
    pub(crate) sentinels: Vec<redis::ConnectionInfo>,
    pub(crate) service: String,
    pub(crate) node: redis::RedisConnectionInfo,
}

/// `redis+cluster://…`, parsed.
#[derive(Clone)]
pub(crate) struct ClusterSpec {
    pub(crate) nodes: Vec<redis::ConnectionInfo>,
    pub(crate) user: Option<String>,
    pub(crate) password: Option<String>,
}

/// A parsed backend URL, with the text to show in messages (no password).
#[derive(Clone)]
pub(crate) struct Backend {
    pub(crate) spec: Spec,
    pub(crate) shown: String,
}

impl Backend {
    pub(crate) fn name(&self) -> &'static str {
        match self.spec {
            Spec::Postgres(_) => "postgres",
            Spec::Redis(_) | Spec::RedisSentinel(_) | Spec::RedisCluster(_) => "redis",
            Spec::Etcd(..) => "etcd",
        }
    }
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

pub(crate) fn parse(url: &str) -> Result<Backend> {
    let shown = crate::secrets::redact_url(url.trim());
    let bad = |rule: String| LeaseError::BadUrl {
        url: shown.clone(),
        rule,
    };
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(bad(
            "expected postgres://…, redis://…, redis+sentinel://host:port[,…]/service, redis+cluster://host:port[,…] or etcd://host:port[,host:port…]".into(),
        ));
    };
    let spec = match scheme {
        "postgres" | "postgresql" => {
            let config: tokio_postgres::Config = url.parse().map_err(|e| bad(format!("{e}")))?;
            if config.get_hosts().is_empty() {
                return Err(bad("no host: postgres://user@host:port/database".into()));
            }
            Spec::Postgres(config)
        }
        "redis" | "rediss" => {
            if rest.is_empty() || rest.starts_with('/') {
                return Err(bad("no host: redis://host:port[/db]".into()));
            }
            let info = redis::IntoConnectionInfo::into_connection_info(url)
                .map_err(|e| bad(format!("{e}")))?;
            Spec::Redis(info)
        }
        "redis+sentinel" => Spec::RedisSentinel(Box::new(sentinel(rest).map_err(bad)?)),
        "redis+cluster" => Spec::RedisCluster(Box::new(cluster(rest).map_err(bad)?)),
        "etcd" => {
            // etcd://user:password@host:port,…: the userinfo runs to the last '@'.
            let (auth, rest) = match rest.rsplit_once('@') {
                Some((userinfo, hosts)) => {
                    let (user, password) = userinfo.split_once(':').ok_or_else(|| {
                        bad("etcd credentials are user:password@ before the endpoints".into())
                    })?;
                    if user.is_empty() {
                        return Err(bad("etcd credentials need a user name".into()));
                    }
                    (Some((user.to_owned(), password.to_owned())), hosts)
                }
                None => (None, rest),
            };
            let rest = rest.trim_end_matches('/');
            if rest.is_empty() {
                return Err(bad("no endpoint: etcd://host:port[,host:port…]".into()));
            }
            let mut endpoints = Vec::new();
            for ep in rest.split(',') {
                let (host, port) = host_port("endpoint", ep).map_err(bad)?;
                endpoints.push(format!("http://{host}:{port}"));
            }
            Spec::Etcd(endpoints, auth)
        }
        other => {
            return Err(bad(format!(
                "unknown scheme {other:?}: use postgres://, redis://, redis+sentinel://, redis+cluster:// or etcd://"
            )));
        }
    };
    Ok(Backend { spec, shown })
}

/// One `host:port` of a list (etcd's endpoints, Redis's sentinels); `what`
/// names it in the error.
fn host_port<'a>(what: &str, ep: &'a str) -> std::result::Result<(&'a str, u16), String> {
    let (host, port) = ep
        .rsplit_once(':')
        .ok_or_else(|| format!("{what} {ep:?} has no port: host:port"))?;
    if host.is_empty() || host.contains(['/', '@', '?']) {
        return Err(format!("{what} {ep:?} has no valid host: host:port"));
    }
    let port: u16 = port
        .parse()
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| format!("{what} {ep:?}: port must be in 1..=65535"))?;
    Ok((host, port))
}

/// `[user:password@]host:port[,host:port…][/]`: a Redis Cluster has one
/// database, so the URL names none.
fn cluster(rest: &str) -> std::result::Result<ClusterSpec, String> {
    const FORM: &str = "redis+cluster://[user:password@]host:port[,host:port…]";
    let (user, password, rest) = userinfo(rest);
    let hosts = rest.strip_suffix('/').unwrap_or(rest);
    if hosts.is_empty() {
        return Err(format!("no node: {FORM}"));
    }
    if hosts.contains(['/', '?']) {
        return Err(format!(
            "a Redis Cluster has no database or options to name: {FORM}"
        ));
    }
    Ok(ClusterSpec {
        nodes: redis_nodes("node", hosts)?,
        user: user.map(str::to_owned),
        password: password.map(str::to_owned),
    })
}

/// `[user[:password]@]rest`: the user (None when empty), the password, and
/// what follows the last `@`.
fn userinfo(url_rest: &str) -> (Option<&str>, Option<&str>, &str) {
    match url_rest.rsplit_once('@') {
        Some((u, rest)) => {
            let (user, password) = match u.split_once(':') {
                Some((user, pw)) => (user, Some(pw)),
                None => (u, None),
            };
            ((!user.is_empty()).then_some(user), password, rest)
        }
        None => (None, None, url_rest),
    }
}

/// `host:port[,host:port…]` as redis connection targets; `what` names one in
/// an error.
fn redis_nodes(what: &str, hosts: &str) -> std::result::Result<Vec<redis::ConnectionInfo>, String> {
    hosts
        .split(',')
        .map(|ep| {
            let (host, port) = host_port(what, ep)?;
            redis::IntoConnectionInfo::into_connection_info(format!("redis://{host}:{port}"))
                .map_err(|e| format!("{what} {ep:?}: {e}"))
        })
        .collect()
}

/// `[user:password@]host:port[,host:port…]/service[/db]`: the credentials and
/// the database are the data nodes' (the sentinels are asked without them).
fn sentinel(rest: &str) -> std::result::Result<SentinelSpec, String> {
    const FORM: &str = "redis+sentinel://[user:password@]host:port[,host:port…]/service[/db]";
    let (user, password, rest) = userinfo(rest);
    let (hosts, path) = rest
        .split_once('/')
        .ok_or_else(|| format!("no service name: {FORM}"))?;
    let (service, db) = match path.split_once('/') {
        Some((s, db)) => (s, Some(db)),
        None => (path, None),
    };
    if service.is_empty() || !service.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("no service name: {FORM}"));
    }
    let mut node = redis::RedisConnectionInfo::default();
    if let Some(db) = db.filter(|d| !d.is_empty()) {
        let db: i64 = db
            .parse()
            .ok()
            .filter(|d| *d >= 0)
            .ok_or_else(|| format!("database {db:?} is not a number: {FORM}"))?;
        node = node.set_db(db);
    }
    if let Some(user) = user {
        node = node.set_username(user);
    }
    if let Some(pw) = password {
        node = node.set_password(pw);
    }
    Ok(SentinelSpec {
        sentinels: redis_nodes("sentinel", hosts)?,
        service: service.to_owned(),
        node,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        let e = parse("postgres://app:s3cret@db:notaport/x")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret") && e.contains("***"), "{e}");
    }

    #[test]
    fn urls_are_checked() {
        for (url, needle) in [
            ("", "expected postgres://"),
            ("localhost:5432", "expected postgres://"),
            ("mysql://h/db", "unknown scheme \"mysql\""),
            ("etcd://", "no endpoint"),
            ("etcd://h", "has no port"),
            ("etcd://h:0", "port must be"),
            ("etcd://h:99999", "port must be"),
            ("etcd://:2379", "no valid host"),
            ("redis://", "no host"),
            ("redis://h:notaport", "malformed"),
            ("postgres://h:notaport/db", "malformed"),
            ("redis+sentinel://h:26379", "no service name"),
            ("redis+sentinel://h:26379/", "no service name"),
            ("redis+sentinel://h/mymaster", "has no port"),
            ("redis+sentinel://h:0/mymaster", "port must be"),
            ("redis+sentinel://h:26379/mymaster/x", "not a number"),
            ("redis+cluster://", "no node"),
            ("redis+cluster:///", "no node"),
            ("redis+cluster://h", "has no port"),
            ("redis+cluster://h:7000,h", "has no port"),
            ("redis+cluster://h:7000/0", "no database"),
            ("redis+cluster://h:7000?x=1", "no database"),
        ] {
            let e = parse(url).unwrap_err().to_string();
            assert!(e.contains(needle), "{url:?}: {e}");
        }
        assert!(
            matches!(parse("etcd://127.0.0.1:2379,127.0.0.1:2381").unwrap().spec, Spec::Etcd(v, None) if v.len() == 2)
        );
        let with_user = parse("etcd://root:s3/cr@t@127.0.0.1:2379").unwrap();
        assert!(
            matches!(&with_user.spec, Spec::Etcd(v, Some((u, p))) if v.len() == 1 && u == "root" && p == "s3/cr@t")
        );
        assert_eq!(with_user.shown, "etcd://root:***@127.0.0.1:2379");
        for url in ["etcd://root@h:1", "etcd://:pw@h:1", "etcd://root:pw@h"] {
            let e = parse(url).unwrap_err().to_string();
            assert!(!e.contains("pw"), "{url}: {e}");
        }
        assert_eq!(
            parse("postgresql://u@127.0.0.1:5/d").unwrap().name(),
            "postgres"
        );
        assert_eq!(parse("redis://127.0.0.1:6379/2").unwrap().name(), "redis");
        let s =
            parse("redis+sentinel://app:pw@127.0.0.1:26379,127.0.0.1:26380/mymaster/3").unwrap();
        assert_eq!(s.name(), "redis");
        assert_eq!(
            s.shown,
            "redis+sentinel://app:***@127.0.0.1:26379,127.0.0.1:26380/mymaster/3"
        );
        assert!(matches!(&s.spec, Spec::RedisSentinel(x)
            if x.sentinels.len() == 2 && x.service == "mymaster" && x.node.db() == 3
                && x.node.password() == Some("pw") && x.node.username() == Some("app")));
        let c = parse("redis+cluster://app:pw@127.0.0.1:7000,127.0.0.1:7001/").unwrap();
        assert_eq!(c.name(), "redis");
        assert_eq!(
            c.shown,
            "redis+cluster://app:***@127.0.0.1:7000,127.0.0.1:7001/"
        );
        assert!(matches!(&c.spec, Spec::RedisCluster(x)
            if x.nodes.len() == 2 && x.user.as_deref() == Some("app")
                && x.password.as_deref() == Some("pw")));
        assert!(
            matches!(&parse("redis+cluster://127.0.0.1:7000").unwrap().spec,
            Spec::RedisCluster(x) if x.nodes.len() == 1 && x.user.is_none() && x.password.is_none())
        );
    }
}
