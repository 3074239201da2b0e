package lease

// What in a store URL is a credential: the Rust crate's rules
// (crates/nonceforge-lease/src/secrets.rs), checked against the same cases
// (testdata/vectors/lease-urls.json). The userinfo runs to the last '@' of
// the URL and a ':' in it starts the password; a query parameter whose name,
// percent-decoded and lower-cased, contains "pass" is a secret. Where the
// rules and a client disagree they hide more, never less.

import (
	"net/url"
	"strings"
)

// Redact returns url with every credential replaced by "***".
func Redact(raw string) string {
	shown, _ := redactParts(raw)
	return shown
}

// HasSecret reports whether url carries a credential Redact would hide.
func HasSecret(raw string) bool {
	_, hidden := redactParts(raw)
	return hidden
}

func redactParts(raw string) (string, bool) {
	var b strings.Builder
	rest := raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		b.WriteString(scheme + "://")
		rest = r
	}
	hidden := false
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		userinfo := rest[:at]
		if user, _, ok := strings.Cut(userinfo, ":"); ok {
			b.WriteString(user + ":***")
			hidden = true
		} else {
			b.WriteString(userinfo)
		}
		b.WriteByte('@')
		rest = rest[at+1:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		query, fragment, hasFragment := strings.Cut(query, "#")
		for i, pair := range strings.Split(query, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			key, _, ok := strings.Cut(pair, "=")
			if ok && namesASecret(key) {
				b.WriteString(key + "=***")
				hidden = true
			} else {
				b.WriteString(pair)
			}
		}
		if hasFragment {
			b.WriteString("#" + fragment)
		}
	}
	return b.String(), hidden
}

func namesASecret(key string) bool {
	if k, err := url.QueryUnescape(key); err == nil {
		key = k
	}
	return strings.Contains(strings.ToLower(key), "pass")
}
