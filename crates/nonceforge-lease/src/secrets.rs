//! What in a store URL is a credential: the one parser every message, status
//! line and setting check of this crate (and of the faces built on it) goes
//! through before a URL is shown.
//!
//! The clients behind the stores read a password from more places than
//! `user:pass@host`: tokio-postgres and redis take the userinfo up to the
//! **last** `@` (so a password may hold `/`, `?`, `:` or `@`), and libpq-style
//! URLs take `?password=` and `?sslpassword=` among the query parameters. The
//! rules here are the conservative reading of all of them:
//!
//! 1. the userinfo is everything between `://` and the last `@` of the URL; a
//!    `:` in it starts the password, which is shown as `***` (the user name
//!    before it stays visible);
//! 2. every query parameter (after the first `?` that follows the host) whose
//!    name, percent-decoded and lower-cased, contains `pass` has its value
//!    shown as `***` (`password`, `sslpassword`, `pass`, …);
//! 3. text without `://` is treated as a URL with no scheme (the same rules).
//!
//! Where the rules and a client disagree they hide more, never less: a `@`
//! inside a query value makes the host part of the hidden text.
//! `testdata/vectors/lease-urls.json` holds the cases; the Go module's
//! `redact` passes the same file.

/// `url` with every credential replaced by `***`.
pub fn redact_url(url: &str) -> String {
    redact_parts(url).0
}

/// Whether `url` carries a credential that [`redact_url`] would hide: a
/// password in the userinfo or a `…pass…=` query parameter.
pub fn url_has_secret(url: &str) -> bool {
    redact_parts(url).1
}

fn redact_parts(url: &str) -> (String, bool) {
    let (scheme, rest) = match url.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, url),
    };
    let mut hidden = false;
    let mut out = String::with_capacity(url.len());
    if let Some(s) = scheme {
        out.push_str(s);
        out.push_str("://");
    }
    // Rule 1: the userinfo ends at the last '@'.
    let after_userinfo = match rest.rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            match userinfo.split_once(':') {
                Some((user, _password)) => {
                    out.push_str(user);
                    out.push_str(":***");
                    hidden = true;
                }
                None => out.push_str(userinfo),
            }
            out.push('@');
            &rest[at + 1..]
        }
        None => rest,
    };
    // Rule 2: query parameters named like a password.
    let (path, query) = match after_userinfo.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (after_userinfo, None),
    };
    out.push_str(path);
    if let Some(query) = query {
        out.push('?');
        let (query, fragment) = match query.split_once('#') {
            Some((q, f)) => (q, Some(f)),
            None => (query, None),
        };
        for (i, pair) in query.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match pair.split_once('=') {
                Some((key, _value)) if names_a_secret(key) => {
                    out.push_str(key);
                    out.push_str("=***");
                    hidden = true;
                }
                _ => out.push_str(pair),
            }
        }
        if let Some(f) = fragment {
            out.push('#');
            out.push_str(f);
        }
    }
    (out, hidden)
}

/// A query parameter's name that carries a secret: `pass` in it, once
/// percent-decoded and lower-cased (`password`, `sslpassword`, `Pass%77ord`).
fn names_a_secret(key: &str) -> bool {
    percent_decode(key).to_ascii_lowercase().contains("pass")
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        if b[i] == b'+' {
            out.push(b' ');
        } else {
            out.push(b[i]);
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// testdata/vectors/lease-urls.json: the same file the Go module's tests read.
    #[test]
    fn shared_vectors() {
        let Some(file) = crate::vectors::read("lease-urls.json") else {
            return;
        };
        let cases = file["cases"].as_array().expect("cases");
        assert!(cases.len() >= 20, "{} cases", cases.len());
        for c in cases {
            let url = c["url"].as_str().expect("url");
            assert_eq!(
                redact_url(url),
                c["shown"].as_str().expect("shown"),
                "{url}"
            );
            assert_eq!(
                url_has_secret(url),
                c["secret"].as_bool().expect("secret"),
                "{url}"
            );
        }
    }

    #[test]
    fn the_clients_forms() {
        for (url, needle) in [
            ("postgres://app:s3/cr?t@db:5432/x", "s3/cr"),
            ("postgres://app:a@b@db/x", "a@b"),
            ("postgres://app@db/x?password=s3cret", "s3cret"),
            (
                "postgres://app@db/x?sslmode=require&sslpassword=s3cret",
                "s3cret",
            ),
            ("redis://default:s3cret@127.0.0.1:6379/0", "s3cret"),
            ("redis://:s3cret@127.0.0.1:6379", "s3cret"),
            ("postgres://app@db/x?Pass%77ord=s3cret", "s3cret"),
        ] {
            let shown = redact_url(url);
            assert!(!shown.contains(needle), "{url} -> {shown}");
            assert!(url_has_secret(url), "{url}");
        }
        assert!(!url_has_secret("etcd://10.0.0.1:2379,10.0.0.2:2379"));
        assert!(!url_has_secret("postgres://app@db/app?sslmode=disable"));
        assert_eq!(percent_decode("a%2"), "a%2");
    }
}
