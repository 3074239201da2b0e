package lease

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

func badURL(shown, rule string) error {
	return &Error{Code: "bad-url", Msg: fmt.Sprintf("backend URL %q is malformed: %s", shown, rule)}
}

func unreachable(shown string, err error) error {
	return &Error{Code: "unreachable", Msg: fmt.Sprintf("cannot reach the lease store at %s: %v", shown, err), Err: err}
}

// connect parses url and connects to its store.
func connect(ctx context.Context, raw string, s *settled) (store, string, error) {
	raw = strings.TrimSpace(raw)
	shown := Redact(raw)
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, shown, badURL(shown, "expected postgres://…, redis://…, redis+sentinel://host:port[,…]/service, redis+cluster://host:port[,…] or etcd://host:port[,host:port…]")
	}
	switch scheme {
	case "postgres", "postgresql":
		return connectPostgres(ctx, raw, shown, s)
	case "redis", "rediss":
		return connectRedis(ctx, raw, rest, shown, s)
	case "redis+sentinel":
		return connectSentinel(ctx, rest, shown, s)
	case "redis+cluster":
		return connectCluster(ctx, rest, shown, s)
	case "etcd":
		return connectEtcd(ctx, rest, shown)
	}
	return nil, shown, badURL(shown, fmt.Sprintf("unknown scheme %q: use postgres://, redis://, redis+sentinel://, redis+cluster:// or etcd://", scheme))
}

// checkHostPort checks one host:port of a list (etcd's endpoints, Redis's
// sentinels), what naming it; "" when it is one, else the rule it breaks.
func checkHostPort(what, ep string) string {
	i := strings.LastIndexByte(ep, ':')
	if i <= 0 || strings.ContainsAny(ep[:i], "/@?") {
		return fmt.Sprintf("%s %q: host:port", what, ep)
	}
	if p, err := strconv.Atoi(ep[i+1:]); err != nil || p < 1 || p > 65535 {
		return fmt.Sprintf("%s %q: port must be in 1..=65535", what, ep)
	}
	return ""
}
