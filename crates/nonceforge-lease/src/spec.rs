//! Backend URLs: `postgres://…`, `redis://…`, `etcd://host:port[,host:port…]`.

use crate::error::{LeaseError, Result};

/// A parsed backend URL.
#[derive(Clone)]
pub(crate) enum Spec {
    /// A libpq-style URL, handed to tokio-postgres as it is.
    Postgres(tokio_postgres::Config),
    /// A redis URL, handed to the redis crate.
    Redis(redis::ConnectionInfo),
    /// `http://host:port` endpoints of the etcd members.
    Etcd(Vec<String>),
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
            Spec::Redis(_) => "redis",
            Spec::Etcd(_) => "etcd",
        }
    }
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// The URL with any password replaced by `***`.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            let hidden = if userinfo.contains(':') {
                format!("{user}:***")
            } else {
                user.to_owned()
            };
            format!("{scheme}://{hidden}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

pub(crate) fn parse(url: &str) -> Result<Backend> {
    let shown = redact(url.trim());
    let bad = |rule: String| LeaseError::BadUrl {
        url: shown.clone(),
        rule,
    };
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(bad(
            "expected postgres://…, redis://… or etcd://host:port[,host:port…]".into(),
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
        "etcd" => {
            let rest = rest.trim_end_matches('/');
            if rest.is_empty() {
                return Err(bad("no endpoint: etcd://host:port[,host:port…]".into()));
            }
            let mut endpoints = Vec::new();
            for ep in rest.split(',') {
                let (host, port) = ep
                    .rsplit_once(':')
                    .ok_or_else(|| bad(format!("endpoint {ep:?} has no port: host:port")))?;
                if host.is_empty() || host.contains(['/', '@', '?']) {
                    return Err(bad(format!("endpoint {ep:?} has no valid host: host:port")));
                }
                let port: u16 =
                    port.parse().ok().filter(|&p| p != 0).ok_or_else(|| {
                        bad(format!("endpoint {ep:?}: port must be in 1..=65535"))
                    })?;
                endpoints.push(format!("http://{host}:{port}"));
            }
            Spec::Etcd(endpoints)
        }
        other => {
            return Err(bad(format!(
                "unknown scheme {other:?}: use postgres://, redis:// or etcd://"
            )));
        }
    };
    Ok(Backend { spec, shown })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redact("postgres://app:s3cret@db:5432/x?sslmode=disable"),
            "postgres://app:***@db:5432/x?sslmode=disable"
        );
        assert_eq!(
            redact("redis://:pw@127.0.0.1:6379/0"),
            "redis://:***@127.0.0.1:6379/0"
        );
        assert_eq!(redact("etcd://a:1,b:2"), "etcd://a:1,b:2");
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
        ] {
            let e = parse(url).unwrap_err().to_string();
            assert!(e.contains(needle), "{url:?}: {e}");
        }
        assert!(
            matches!(parse("etcd://127.0.0.1:2379,127.0.0.1:2381").unwrap().spec, Spec::Etcd(v) if v.len() == 2)
        );
        assert_eq!(
            parse("postgresql://u@127.0.0.1:5/d").unwrap().name(),
            "postgres"
        );
        assert_eq!(parse("redis://127.0.0.1:6379/2").unwrap().name(), "redis");
    }
}
