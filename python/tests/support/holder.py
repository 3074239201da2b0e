"""A leased Python member of a mixed fleet, for go/lease's fleet tests and tests/test_lease.py:

    python holder.py URL IDS TTL_MS

Leases a machine id, prints ``id <machine_id> <floor_unix_ms>``, then counter-96
nonces in hex, one a line, until its stdin closes; a refusal prints ``e <error>``,
and a lost lease ``lost <reason>`` once (the lease's own report, from its
on_event callback). Then it releases (``released``, or ``release-error <error>``).
"""

from __future__ import annotations

import sys
import threading

import nonceforge as nf


def main() -> int:
    url, ids, ttl_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
    out = sys.stdout
    said = threading.Lock()
    lost: list[str] = []

    def on_event(name: str, lease: nf.Lease) -> None:
        if name == "lost":
            with said:
                lost.append(f"lost {lease.lost_reason}")

    try:
        lease = nf.Lease.acquire(url, ids=ids, ttl=ttl_ms / 1000, connect_timeout=5, on_event=on_event)
        gen = lease.generator(key=bytes([7]) * 32)
    except Exception as e:
        print(f"fail {type(e).__name__} {e}", flush=True)
        return 2
    print(f"id {lease.machine_id} {lease.floor_unix_ms}", flush=True)
    closed = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()
        closed.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    reported = 0
    while not closed.is_set():
        lines = []
        try:
            for _ in range(20):
                lines.append(gen.counter(96).hex())
        except nf.NonceforgeError as e:
            lines.append(f"e {type(e).__name__} {e}")
        with said:
            lines.extend(lost[reported:])
            reported = len(lost)
        out.write("\n".join(lines) + "\n")
        out.flush()
        closed.wait(0.001)
    try:
        lease.release()
    except nf.NonceforgeError as e:
        print(f"release-error {type(e).__name__} {e}", flush=True)
        return 1
    print("released", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
