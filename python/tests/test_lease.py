"""Leases on a real Redis: the id, the generator held to the lease, asyncio,
callbacks, the store losing its data under a member, bad options."""

# The bad-input tests pass wrong types on purpose: the calls the stubs refuse.
# mypy: disable-error-code="arg-type,call-arg"

from __future__ import annotations

import asyncio
import datetime
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from conftest import Redis, in_forked_child, poll, vectors

import nonceforge as nf
from nonceforge import _native


def test_acquire_generate_release(redis: Redis) -> None:
    events: list[str] = []
    with nf.Lease.acquire(
        redis.url, ids=(5, 9), ttl=2, namespace="py", on_event=lambda e, _l: events.append(e)
    ) as lease:
        assert 5 <= lease.machine_id <= 9
        assert lease.state == "held"
        assert lease.deadline_in > 0
        assert lease.readiness() == nf.Readiness(True, None)
        assert "redis" in lease.backend
        assert lease.token >= 1
        gen = lease.generator()
        values = {gen.counter(96) for _ in range(1000)}
        assert len(values) == 1000
        assert gen.decompose(gen.counter(96)).machine_id == lease.machine_id
        assert gen.readiness() == nf.Readiness(True, None)
        names = {s.name for s in gen.metrics()}
        assert "nonceforge_lease_held" in names or any(n.startswith("nonceforge_lease") for n in names)
        other = nf.Lease.acquire(redis.url, ids=(5, 9), ttl=2, namespace="py")
        assert other.machine_id != lease.machine_id
        other.release()
        poll(lambda: lease.renewals().ok >= 1, "a renewal")
    assert lease.state == "released"
    with pytest.raises(nf.DisabledError):
        gen.counter()
    assert gen.readiness().ready is False
    poll(lambda: "released" in events, "the released event")
    lease.release()  # twice: nothing


def test_a_wide_namespace_records_its_layout(redis: Redis) -> None:
    wide = [nf.Lease.acquire(redis.url, layout="wide", ttl=2, namespace="pywide") for _ in range(3)]
    try:
        assert len({lease.machine_id for lease in wide}) == 3
        for lease in wide:
            gen = lease.generator()
            assert gen.layout == "wide"
            assert gen.decompose(gen.counter(96)).machine_id == lease.machine_id
        with pytest.raises(nf.LeaseError) as info:
            nf.Lease.acquire(redis.url, ttl=2, namespace="pywide")
        assert "holds members of the wide layout; this member asks for the standard layout" in str(info.value)
        top = nf.Lease.acquire(redis.url, layout="wide", ids="65535", ttl=2, namespace="pywide")
        assert top.machine_id == 65535
        top.release()
    finally:
        for lease in wide:
            lease.release()


def test_a_pool_holds_many_leases_on_a_few_connections(redis: Redis) -> None:
    pool = nf.LeasePool(redis.url, conns=2, ids=(0, 19), ttl=2, namespace="pypool", layout="wide")
    assert pool.conns == 2
    # Acquired at once (each new id waits out the TTL and margin before it starts).
    with ThreadPoolExecutor(20) as ex:
        leases = list(ex.map(lambda _: pool.acquire(), range(20)))
    try:
        assert sorted(lease.machine_id for lease in leases) == list(range(20))
        with pytest.raises(nf.LeaseAllTakenError):
            pool.acquire()
        gens = [lease.generator() for lease in leases[:3]]
        values = {g.counter(96) for g in gens for _ in range(500)}
        assert len(values) == 1500
        assert {g.layout for g in gens} == {"wide"}
        # Every lease renews on its own over the two connections.
        poll(lambda: all(lease.renewals().ok >= 2 for lease in leases), "two renewals of each")
        assert {lease.state for lease in leases} == {"held"}
        freed = leases.pop(7)
        freed.release()
        again = pool.acquire()
        assert again.machine_id == freed.machine_id
        leases.append(again)
    finally:
        for lease in leases:
            lease.release()
    # Released: another pool takes all 20.
    other = nf.LeasePool(redis.url, conns=1, ids=(0, 19), ttl=2, namespace="pypool", layout="wide")
    with ThreadPoolExecutor(20) as ex:
        taken = list(ex.map(lambda _: other.acquire(), range(20)))
    assert sorted(lease.machine_id for lease in taken) == list(range(20))
    for lease in taken:
        lease.release()
    with pytest.raises(ValueError, match="conns = 257"):
        nf.LeasePool(redis.url, conns=257)
    with pytest.raises(ValueError, match="conns"):
        nf.LeasePool(redis.url, conns=-1)
    with pytest.raises(TypeError, match="conns"):
        nf.LeasePool(redis.url, conns="2")
    with pytest.raises(nf.LeaseUnreachableError):
        nf.LeasePool("redis://127.0.0.1:1/0", connect_timeout=0.3)


def test_asyncio_does_not_block_the_loop(redis: Redis) -> None:
    async def main() -> tuple[int, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        t = asyncio.ensure_future(ticker())
        async with await nf.Lease.acquire_async(
            redis.url, namespace="aio", ttl=datetime.timedelta(seconds=2)
        ) as lease:
            mid = lease.machine_id
            lease.generator().counter()
        t.cancel()
        return mid, ticks

    mid, ticks = asyncio.run(main())
    assert 0 <= mid <= nf.MAX_MACHINE_ID
    assert ticks >= 1


def test_a_store_that_loses_its_data_stops_the_member(redis: Redis) -> None:
    lost = threading.Event()

    def on_event(name: str, _lease: nf.Lease) -> None:
        if name == "lost":
            lost.set()

    lease = nf.Lease.acquire(redis.url, namespace="loss", ttl="2s", on_event=on_event)
    gen = lease.generator()
    gen.counter()
    assert redis.cli("FLUSHALL") == "OK"
    poll(lost.is_set, "the lost event", timeout=20)
    assert lease.state == "lost"
    assert lease.lost_reason == "store"
    with pytest.raises(nf.DisabledError):
        gen.counter()
    assert gen.readiness().ready is False
    with pytest.raises(nf.LeaseError):
        lease.release()


def test_unreachable_store() -> None:
    with pytest.raises(nf.LeaseUnreachableError) as info:
        nf.Lease.acquire("redis://127.0.0.1:1/0", connect_timeout=0.5)
    assert isinstance(info.value, ConnectionError)


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        ({"url": 5}, TypeError, "url must be a str"),
        ({"url": "ftp://x"}, ValueError, "ftp://x"),
        ({"ttl": -1}, ValueError, "ttl must be a finite duration"),
        ({"ttl": True}, TypeError, "ttl must be seconds"),
        ({"ttl": "ten"}, ValueError, "duration"),
        ({"ids": (3, 600)}, ValueError, "ids"),
        ({"ids": [1, 2]}, TypeError, "ids must be a (first, last) tuple"),
        ({"namespace": 7}, TypeError, "namespace must be a str"),
        ({"fast_start": "sometimes"}, ValueError, "fast_start"),
        ({"id_from": "env:NONCEFORGE_PY_TEST_UNSET"}, ValueError, "id_from"),
        ({"on_event": "print"}, TypeError, "on_event must be callable"),
        ({"layout": "narrow"}, ValueError, "layout"),
        ({"layout": 16}, TypeError, "layout must be a str"),
        ({"layout": "wide", "ids": (0, 65536)}, ValueError, "ids"),
    ],
)
def test_bad_options(kwargs: dict[str, Any], exc: type[Exception], text: str) -> None:
    args = {"url": "redis://127.0.0.1:1/0", **kwargs}
    with pytest.raises(exc) as info:
        nf.Lease.acquire(**args)
    assert text in str(info.value), str(info.value)


def test_the_lease_syntax_vectors() -> None:
    doc = vectors("lease-syntax.json")
    for v in doc["ids"]:
        if v.get("first") is None:
            with pytest.raises(ValueError):  # noqa: PT011
                nf.parse_ids(v["text"], v.get("layout", "standard"))
        else:
            assert nf.parse_ids(v["text"], v.get("layout", "standard")) == (v["first"], v["last"]), v
    for v in doc["durations"]:
        if v.get("ms") is None:
            with pytest.raises(ValueError):  # noqa: PT011
                nf.parse_duration(v["text"])
        else:
            assert round(nf.parse_duration(v["text"]) * 1000) == v["ms"], v


def test_two_pods_of_one_index(
    redis: Redis, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A StatefulSet's rolling update: the new pod says it waits, does not get the
    id while the old one holds it, gets it once released; no value repeats."""
    monkeypatch.setenv("NONCEFORGE_PY_POD", "web-3")
    first = nf.Lease.acquire(redis.url, namespace="pods", ttl=2, id_from="env:NONCEFORGE_PY_POD")
    assert first.machine_id == 3
    g1 = first.generator()
    before = [g1.counter(96) for _ in range(500)]
    got: list[nf.Lease] = []
    errors: list[BaseException] = []

    def second() -> None:
        try:
            got.append(
                nf.Lease.acquire(
                    redis.url, namespace="pods", ttl=2, id_from="env:NONCEFORGE_PY_POD", id_wait=20
                )
            )
        except BaseException as e:
            errors.append(e)

    caplog.set_level("WARNING", logger="nonceforge")
    t = threading.Thread(target=second)
    t.start()
    poll(lambda: "is held by another member" in caplog.text, "the waiting warning")
    assert not got
    assert not errors
    before += [g1.counter(96) for _ in range(500)]
    first.release()
    t.join(timeout=30)
    assert not errors, errors
    (lease,) = got
    assert lease.machine_id == 3
    g2 = lease.generator()
    after = [g2.counter(96) for _ in range(500)]
    assert len(set(before + after)) == 1500
    assert g2.decompose(after[0]).unix_ms > g1.decompose(before[-1]).unix_ms
    lease.release()
    holder = nf.Lease.acquire(redis.url, namespace="pods", ttl=2, id_from="env:NONCEFORGE_PY_POD")
    try:
        with pytest.raises(nf.LeaseAllTakenError):
            nf.Lease.acquire(redis.url, namespace="pods", ttl=2, id_from="env:NONCEFORGE_PY_POD", id_wait=0)
    finally:
        holder.release()


OPTION_NAMES = {"ttl_ms": "ttl", "margin_ms": "margin", "renew_every_ms": "renew_every"}


def test_every_lease_option_refusal_of_the_shared_vectors() -> None:
    doc = vectors("lease-options.json")
    checked = 0
    for r in doc["refusals"]:
        if r["option"] == "request_timeout":
            continue  # not an option of this face (the lease crate's default)
        kwargs: dict[str, Any] = {}
        for k, v in r["input"].items():
            kwargs[OPTION_NAMES.get(k, k)] = v / 1000 if k.endswith("_ms") else v
        with pytest.raises(ValueError, match=re.escape(r["rule"])):
            nf.Lease.acquire("redis://127.0.0.1:1/0", connect_timeout=0.2, **kwargs)
        checked += 1
    assert checked >= 15


def test_pod_index_sources_of_the_shared_vectors(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    doc = vectors("pod-index.json")
    # A case of the wide layout reads ids up to 65535 (a StatefulSet of more than 512 pods).
    for v in doc["env_values"]:
        monkeypatch.setenv("NONCEFORGE_PY_POD_INDEX", v["value"])
        layout = v.get("layout", "standard")
        source = "env:NONCEFORGE_PY_POD_INDEX"
        if v.get("refused"):
            with pytest.raises(ValueError, match="id_from"):
                nf.Lease.acquire("redis://127.0.0.1:1/0", id_from=source, layout=layout)
        else:
            assert _native.LeaseHandle.pod_index(source, layout) == v["index"], v
    for i, v in enumerate(doc["labels_files"]):
        f = tmp_path / f"labels{i}"
        f.write_text(v["text"])
        layout = v.get("layout", "standard")
        if v.get("refused"):
            with pytest.raises(ValueError, match="id_from"):
                _native.LeaseHandle.pod_index(f"file:{f}", layout)
        else:
            assert _native.LeaseHandle.pod_index(f"file:{f}", layout) == v["index"], v
    for v in doc["sources"]:
        if not v["ok"]:
            with pytest.raises(ValueError, match="id_from"):
                _native.LeaseHandle.pod_index(v["source"])


def test_store_urls_are_shown_without_their_secrets() -> None:
    doc = vectors("lease-urls.json")
    for c in doc["cases"]:
        assert nf.redact_url(c["url"]) == c["shown"], c
    # A refusal names the store without its password.
    with pytest.raises(nf.LeaseUnreachableError) as info:
        nf.Lease.acquire("redis://app:s3cret@127.0.0.1:1/0", connect_timeout=0.3)
    assert "s3cret" not in str(info.value)
    assert "***" in str(info.value) or "app" not in str(info.value)


def test_a_forked_child_neither_uses_nor_releases_its_parents_lease(redis: Redis) -> None:
    lease = nf.Lease.acquire(redis.url, namespace="fork", ttl=2)
    gen = lease.generator()
    gen.counter()

    def child() -> str:
        out = []
        for call in (gen.counter, lease.generator):
            try:
                call()
                out.append("issued")
            except nf.DisabledError:
                out.append("refused")
        lease.release()  # the parent's: nothing happens in the store
        return ",".join(out)

    assert in_forked_child(child) == "refused,refused"
    assert lease.state == "held"
    poll(lambda: lease.renewals().ok >= 1, "a renewal after the child's release")
    assert lease.state == "held"
    gen.counter()
    lease.release()
