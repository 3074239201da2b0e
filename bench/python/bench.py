"""The Python face beside its peers, one process, one run (issue 48's targets):

    target/py-venv/bin/python bench/python/bench.py [--rounds 7] [--n 200000]

Rows, each the median ns per call over --rounds rounds (the rows of a group
alternate within each round, so they share the machine's state):

- uuid7: nonceforge.uuid7() (a uuid.UUID), uuid_utils.compat.uuid7() (a
  uuid.UUID), uuid_utils.uuid7() (its own class, its fastest form),
  nonceforge.uuid7_bytes(), the standard library's uuid.uuid4();
- nonces: a 96-bit counter nonce (NonceGenerator.counter, LocalNonces.counter)
  beside an empty Python call (the per-call floor), and a batch of 1,000
  (NonceGenerator.many) as nonces per second;
- the sanitizer: nonceforge.aead.AESGCM.encrypt beside cryptography's AESGCM,
  64 B and 8 KiB, a fresh nonce each call;
- external ids: ExtIdCodec.encode and the checked decode beside sqids' encode.

Prints a Markdown table with the ratios the issue names.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial

import nonceforge as nf
import uuid_utils
import uuid_utils.compat
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as RefAESGCM
from nonceforge.aead import AESGCM
from sqids import Sqids


def per_call(fn: Callable[[], object], n: int) -> float:
    """ns per call of fn, n calls in an unrolled loop (10 a turn)."""
    turns = n // 10
    t0 = time.perf_counter_ns()
    for _ in range(turns):
        fn()
        fn()
        fn()
        fn()
        fn()
        fn()
        fn()
        fn()
        fn()
        fn()
    return (time.perf_counter_ns() - t0) / (turns * 10)


def group(rows: dict[str, Callable[[int], float]], rounds: int, n: int) -> dict[str, float]:
    got: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(rounds):
        for k, run in rows.items():
            got[k].append(run(n))
    return {k: statistics.median(v) for k, v in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--n", type=int, default=200_000)
    a = ap.parse_args()
    rounds, n = a.rounds, a.n

    def empty() -> None:
        pass

    gen = nf.NonceGenerator(1)
    local = gen.local()
    # The wide layout (16-bit machine ids) beside the standard one: it should cost nothing a value.
    wide = nf.NonceGenerator(40_000, layout="wide")
    uuids = group(
        {
            "nonceforge.uuid7() → uuid.UUID": lambda n: per_call(nf.uuid7, n),
            "uuid_utils.compat.uuid7() → uuid.UUID": lambda n: per_call(uuid_utils.compat.uuid7, n),
            "uuid_utils.uuid7() → its own UUID": lambda n: per_call(uuid_utils.uuid7, n),
            "nonceforge.uuid7_bytes() → bytes": lambda n: per_call(nf.uuid7_bytes, n),
            "uuid.uuid4() (standard library)": lambda n: per_call(__import__("uuid").uuid4, n // 4),
        },
        rounds,
        n,
    )
    nonces = group(
        {
            "an empty Python call (the floor)": lambda n: per_call(empty, n),
            "NonceGenerator.counter() (96 bits)": lambda n: per_call(gen.counter, n),
            "NonceGenerator.counter() (96 bits, wide layout)": lambda n: per_call(wide.counter, n),
            "NonceGenerator.sortable(96)": lambda n: per_call(lambda: gen.sortable(96), n),
            "NonceGenerator.sortable(96), wide layout": lambda n: per_call(lambda: wide.sortable(96), n),
            "LocalNonces.counter() (96 bits)": lambda n: per_call(local.counter, n),
        },
        rounds,
        n,
    )

    def batch(n: int) -> float:
        calls = max(1, n // 1000)
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            gen.many("counter", 96, 1000)
        return (time.perf_counter_ns() - t0) / (calls * 1000)

    batch_ns = statistics.median(batch(n * 5) for _ in range(rounds))

    seal: dict[str, float] = {}
    for size in (64, 8192):
        msg = os.urandom(size)
        m = n // 10 if size == 64 else n // 100

        def run(make: Callable[[bytes], object], m: int = m, msg: bytes = msg) -> float:
            key = os.urandom(32)
            a = make(key)
            enc = a.encrypt  # type: ignore[attr-defined]
            ns = [i.to_bytes(12, "big") for i in range(m)]
            t0 = time.perf_counter_ns()
            for x in ns:
                enc(x, msg, None)
            return (time.perf_counter_ns() - t0) / m

        both = group(
            {
                f"cryptography AESGCM.encrypt, {size} B": lambda _n: run(RefAESGCM),
                f"nonceforge.aead.AESGCM.encrypt, {size} B": lambda _n: run(AESGCM),
            },
            rounds,
            m,
        )
        seal.update(both)

    codec = nf.ExtIdCodec(bytes(range(32)), "user")
    sqids = Sqids()
    made = codec.encode(123_456)
    text = str(made)
    # functools.partial: a C-level call, no Python frame of the harness's own.
    ext = group(
        {
            "sqids.encode([seq])": lambda n: per_call(partial(sqids.encode, [123_456]), n // 10),
            "ExtIdCodec.encode(seq) → uuid.UUID": lambda n: per_call(partial(codec.encode, 123_456), n),
            "ExtIdCodec.encode_text(seq) → str": lambda n: per_call(partial(codec.encode_text, 123_456), n),
            "ExtIdCodec.decode(uuid.UUID) (checked)": lambda n: per_call(partial(codec.decode, made), n),
            "ExtIdCodec.decode_seq(str) (checked)": lambda n: per_call(partial(codec.decode_seq, text), n),
        },
        rounds,
        n,
    )

    print(
        f"Python {platform.python_version()} ({sys.implementation.name}), {platform.machine()}, "
        f"{os.cpu_count()} CPUs; nonceforge {nf.__version__}; median of {rounds} rounds\n"
    )
    print("| row | ns per call |\n|---|---|")
    for table in (uuids, nonces, seal, ext):
        for k, v in table.items():
            print(f"| {k} | {v:.1f} |")
    print(
        f"| NonceGenerator.many('counter', 96, 1000), per nonce | {batch_ns:.2f} ({1e3 / batch_ns:.0f} M/s) |"
    )
    print("\nRatios (the issue's targets):\n")
    u = uuids
    print(
        f"- uuid7 → uuid.UUID vs uuid_utils.compat: {u['uuid_utils.compat.uuid7() → uuid.UUID'] / u['nonceforge.uuid7() → uuid.UUID']:.2f}× (≥ 1.5)"
    )
    print(
        f"- fastest forms, uuid7_bytes vs uuid_utils.uuid7: {u['uuid_utils.uuid7() → its own UUID'] / u['nonceforge.uuid7_bytes() → bytes']:.2f}× (≥ 1)"
    )
    print(
        f"- uuid7() (uuid.UUID) vs uuid_utils.uuid7 (its class): {u['uuid_utils.uuid7() → its own UUID'] / u['nonceforge.uuid7() → uuid.UUID']:.2f}×"
    )
    fl = nonces["an empty Python call (the floor)"]
    print(
        f"- counter nonce / empty call: {nonces['NonceGenerator.counter() (96 bits)'] / fl:.2f}× (≤ 2); local: {nonces['LocalNonces.counter() (96 bits)'] / fl:.2f}×"
    )
    print(f"- batch of 1,000: {1e3 / batch_ns:.0f} M nonces/s (≥ 50)")
    for size in (64, 8192):
        r = seal[f"nonceforge.aead.AESGCM.encrypt, {size} B"] / seal[f"cryptography AESGCM.encrypt, {size} B"]
        print(f"- sanitizer seal / cryptography, {size} B: {r:.3f}× (≤ {'1.10' if size == 64 else '1.02'})")
    sq = ext["sqids.encode([seq])"]
    print(
        f"- extid encode vs sqids encode: {sq / ext['ExtIdCodec.encode(seq) → uuid.UUID']:.1f}× (→ str: {sq / ext['ExtIdCodec.encode_text(seq) → str']:.1f}×); checked decode vs sqids encode: {sq / ext['ExtIdCodec.decode(uuid.UUID) (checked)']:.1f}× (from a str: {sq / ext['ExtIdCodec.decode_seq(str) (checked)']:.1f}×) (≥ 20)"
    )


if __name__ == "__main__":
    main()
