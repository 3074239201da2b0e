"""Nonces: the shared layout and cipher vectors, uniqueness under threads, bad input."""

# The bad-input tests pass wrong types on purpose: the calls the stubs refuse.
# mypy: disable-error-code="arg-type,call-arg"

from __future__ import annotations

import threading
from typing import Any

import pytest
from conftest import in_forked_child, vectors

import nonceforge as nf

NONCES = vectors("nonces.json")
DEFAULT_CIPHERS = {64: "speck64-128", 96: "speck96-144", 128: "aes256"}


def test_layout_vectors_decompose() -> None:
    g = nf.NonceGenerator(0, epoch_unix_ms=NONCES["epoch_unix_ms"])
    assert len(NONCES["layout"]) >= 9
    for v in NONCES["layout"]:
        parts = g.decompose(bytes.fromhex(v["hex"]))
        assert parts == nf.NonceParts(
            NONCES["epoch_unix_ms"] + v["timestamp_ms"], v["machine_id"], v["counter"]
        ), v
        unix_ms, machine_id, counter = parts  # unpacks as a named tuple does
        assert (unix_ms, machine_id, counter) == parts == tuple(parts)


def test_encrypted_vectors_decrypt_with_the_default_ciphers() -> None:
    gen = NONCES["generator"]
    g = nf.NonceGenerator(gen["machine_id"], key=bytes.fromhex(gen["base_key_hex"]))
    seen = 0
    for v in gen["encrypted"]:
        if v["cipher"] != DEFAULT_CIPHERS[v["bits"]]:
            continue
        assert g.decrypt(bytes.fromhex(v["hex"])).hex() == v["plain_hex"], v
        seen += 1
    assert seen >= 9


def test_wide_layout_vectors_decompose_and_decrypt() -> None:
    wide = NONCES["wide"]
    g = nf.NonceGenerator(1, epoch_unix_ms=NONCES["epoch_unix_ms"], layout="wide")
    assert g.layout == "wide"
    assert len(wide["layout"]) >= 12
    for v in wide["layout"]:
        assert g.decompose(bytes.fromhex(v["hex"])) == nf.NonceParts(
            NONCES["epoch_unix_ms"] + v["timestamp_ms"], v["machine_id"], v["counter"]
        ), v
    gen = wide["generator"]
    k = nf.NonceGenerator(gen["machine_id"], key=bytes.fromhex(gen["base_key_hex"]), layout="wide")
    seen = 0
    for v in gen["encrypted"]:
        if v["cipher"] != DEFAULT_CIPHERS[v["bits"]]:
            continue
        plain = k.decrypt(bytes.fromhex(v["hex"]))
        assert plain.hex() == v["plain_hex"], v
        assert k.decompose(plain).machine_id == 40_000
        seen += 1
    assert seen >= 6


def test_wide_layout_makes_16_bit_machine_ids_and_refuses_64_bits() -> None:
    g = nf.NonceGenerator(65_535, key=b"\x07" * 32, layout="wide")
    # Distinct within one kind and size: a counter and a sortable nonce of one
    # size may share a value (the crate's promise: one kind per key).
    for bits in (96, 128):
        for kind in ("counter", "sortable", "encrypted"):
            values: set[bytes] = set()
            many = g.many(kind, bits, 500)
            for i in range(500):
                one = g.next(kind, bits)
                values.update((one, many[i * bits // 8 : (i + 1) * bits // 8]))
                if kind != "encrypted":
                    assert g.decompose(one).machine_id == 65_535
            assert len(values) == 1000, (kind, bits)
    for call in (
        lambda: g.counter(64),
        lambda: g.sortable(64),
        lambda: g.encrypted(64),
        lambda: g.many("counter", 64, 3),
        lambda: g.next_int("sortable", 64),
        lambda: g.local().counter(64),
        lambda: g.decompose(bytes(8)),
    ):
        with pytest.raises(ValueError, match="the wide layout has no 64-bit nonces"):
            call()
    assert g.enabled
    with pytest.raises(ValueError, match=r'0\.\.=511, got 600 \(0\.\.=65535 with layout="wide"\)'):
        nf.NonceGenerator(600)
    with pytest.raises(ValueError, match=r"machine_id must be in 0\.\.=65535, got 65536"):
        nf.NonceGenerator(65_536, layout="wide")
    with pytest.raises(ValueError, match=r'layout "Wide" is not a layout'):
        nf.NonceGenerator(1, layout="Wide")
    with pytest.raises(TypeError):
        nf.NonceGenerator(1, layout=16)


def test_kinds_sizes_and_forms() -> None:
    g = nf.NonceGenerator(37, key=b"\x07" * 32)
    for bits in (64, 96, 128):
        for kind in ("counter", "sortable", "encrypted"):
            n = g.next(kind, bits)
            assert isinstance(n, bytes)
            assert len(n) == bits // 8
            i = g.next_int(kind, bits)
            assert 0 <= i < 1 << bits
        assert len(g.counter(bits)) == len(g.sortable(bits)) == len(g.encrypted(bits)) == bits // 8
    assert len(g.counter()) == 12
    assert len(g.sortable()) == 16
    assert len(g.encrypted()) == 16
    parts = g.decompose(g.counter(96))
    assert parts.machine_id == 37
    assert g.decompose(g.decrypt(g.encrypted(64))).machine_id == 37
    many = g.many("counter", 96, 1000)
    chunks = {many[i : i + 12] for i in range(0, len(many), 12)}
    assert len(many) == 12_000
    assert len(chunks) == 1000
    assert g.many("encrypted", 128, 0) == b""


def test_sortable_nonces_increase_and_local_handles_agree() -> None:
    g = nf.NonceGenerator(3)
    prev = b""
    for _ in range(5000):
        n = g.sortable(128)
        assert n > prev
        prev = n
    local = g.local()
    seen = {local.counter(96) for _ in range(5000)} | {g.counter(96) for _ in range(5000)}
    assert len(seen) == 10_000
    lp = b""
    for _ in range(2000):
        n = local.sortable(96)
        assert n > lp
        lp = n


def test_local_handles_are_per_thread() -> None:
    g = nf.NonceGenerator(4)
    local = g.local()
    errors: list[BaseException] = []

    def use() -> None:
        try:
            local.counter()
        except BaseException as e:  # the handle refuses another thread
            errors.append(e)

    t = threading.Thread(target=use)
    t.start()
    t.join()
    assert len(errors) == 1
    assert "thread" in str(errors[0]).lower()


def test_unique_under_threads_all_kinds() -> None:
    g = nf.NonceGenerator(511, key=bytes(range(32)))
    out: list[list[bytes]] = [[] for _ in range(8)]
    start = threading.Barrier(8)

    def work(i: int) -> None:
        start.wait()
        local = g.local()
        mine = out[i]
        for j in range(4000):
            kind = ("counter", "sortable", "encrypted")[j % 3]
            mine.append(kind.encode() + g.next(kind, 96))
            mine.append(b"L" + kind.encode() + getattr(local, kind)(96))
        mine.append(g.many("counter", 64, 500))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flat: list[bytes] = []
    for mine in out:
        for v in mine[:-1]:
            flat.append(v.removeprefix(b"L"))
        batch = mine[-1]
        flat.extend(b"counter64" + batch[k : k + 8] for k in range(0, len(batch), 8))
    assert len(flat) == len(set(flat)) == 8 * (8000 + 500)


def test_disable_and_enable() -> None:
    g = nf.NonceGenerator(1)
    g.disable()
    assert not g.enabled
    assert g.readiness() == nf.Readiness(False, "disabled")
    with pytest.raises(nf.DisabledError):
        g.counter()
    with pytest.raises(nf.DisabledError):
        g.local().counter()
    with pytest.raises(nf.DisabledError):
        g.many("counter", 96, 10)
    g.enable()
    assert g.enabled
    assert g.readiness() == nf.Readiness(True, None)
    assert len(g.counter()) == 12


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (lambda: nf.NonceGenerator(-1), ValueError, "machine_id must be in 0..=511"),
        (lambda: nf.NonceGenerator(512), ValueError, "machine_id must be in 0..=511"),
        (lambda: nf.NonceGenerator("7"), TypeError, "machine_id must be an int"),
        (lambda: nf.NonceGenerator(True), TypeError, "machine_id must be an int"),
        (lambda: nf.NonceGenerator(7.0), TypeError, "machine_id must be an int"),
        (lambda: nf.NonceGenerator(), TypeError, "machine_id"),
        (lambda: nf.NonceGenerator(1, key=b"short"), ValueError, "32"),
        (lambda: nf.NonceGenerator(1, key="k" * 32), TypeError, "key must be a bytes-like object"),
        (lambda: nf.NonceGenerator(1, epoch_unix_ms=-5), ValueError, "epoch_unix_ms"),
        (lambda: nf.NonceGenerator(1).counter(80), ValueError, "bits must be 64, 96 or 128, got 80"),
        (
            lambda: nf.NonceGenerator(1).next("random"),
            ValueError,
            "kind must be 'counter', 'sortable' or 'encrypted'",
        ),
        (lambda: nf.NonceGenerator(1).encrypted(), ValueError, "pass key="),
        (lambda: nf.NonceGenerator(1).many("counter", 96, -1), ValueError, "count must be in"),
        (lambda: nf.NonceGenerator(1).many("counter", 96, 1 << 40), ValueError, "count must be in"),
        (lambda: nf.NonceGenerator(1).decompose(b"\x00" * 5), ValueError, "nonce"),
        (lambda: nf.NonceGenerator(1).decompose(123), TypeError, "nonce must be a bytes-like object"),
        (lambda: nf.NonceGenerator(1).local().counter(100), ValueError, "bits must be 64, 96 or 128"),
    ],
)
def test_bad_input_is_a_typed_error_naming_the_argument(call: Any, exc: type[Exception], text: str) -> None:
    with pytest.raises(exc, match=None) as info:
        call()
    assert text in str(info.value), str(info.value)


def test_a_generator_has_no_default_machine_id() -> None:
    with pytest.raises(TypeError):
        nf.NonceGenerator()


def test_metrics_are_the_fleets_series(metrics_vectors: Any) -> None:
    g = nf.NonceGenerator(9)
    for _ in range(10):
        g.counter(96)
    g.many("sortable", 64, 5)
    names = {m["name"]: m for m in metrics_vectors["metrics"]}
    samples = g.metrics()
    for s in samples:
        assert s.name in names, s
        assert s.type == names[s.name]["type"]
        assert sorted(s.labels) == sorted(names[s.name]["labels"]), s
    issued = {
        (s.labels["kind"], s.labels["bits"]): s.value
        for s in samples
        if s.name == "nonceforge_nonces_issued_total"
    }
    assert issued[("counter", "96")] == 10
    assert issued[("sortable", "64")] == 5
    defs = nf.metric_defs()
    assert [d[0] for d in defs] == [
        m["name"] for m in metrics_vectors["metrics"] + metrics_vectors["sanitizer_metrics"]
    ]


def test_a_forked_child_cannot_draw_from_its_parents_generator() -> None:
    g = nf.NonceGenerator(8)
    local = g.local()
    parent_first = g.counter()

    def child() -> str:  # every call must refuse
        outcome = []
        for call in (g.counter, local.counter, lambda: g.many("counter", 96, 3), g.local):
            try:
                call()
                outcome.append("issued")
            except nf.DisabledError as e:
                outcome.append("forked" if "forked" in str(e) else "other")
        outcome.append(g.readiness().reason or "ready")
        fresh = nf.NonceGenerator(9)  # a new one, with its own machine id, works
        outcome.append(str(len(fresh.counter())))
        return ",".join(outcome)

    got = in_forked_child(child)
    assert got == "forked,forked,forked,forked,forked,12", got
    assert g.counter() > parent_first  # the parent goes on
    assert g.readiness() == nf.Readiness(True, None)


def test_generators_and_keys_cannot_be_copied_or_pickled() -> None:
    """A copy of a generator would draw the same values; a pickled key would sit in a file."""
    import copy
    import pickle

    from nonceforge.aead import AESGCM

    g = nf.NonceGenerator(1, key=bytes(32))
    for obj in (g, g.local(), nf.ExtIdCodec(bytes(32), "user"), AESGCM(bytes(16))):
        with pytest.raises(TypeError, match="cannot pickle"):
            pickle.dumps(obj)
        with pytest.raises(TypeError, match="cannot pickle"):
            copy.copy(obj)
