"""Time-prefixed ids: the shared uuid.json vectors, and what the standard library expects of a UUID."""

# The bad-input tests pass wrong types on purpose: the calls the stubs refuse.
# mypy: disable-error-code="arg-type,call-arg"

from __future__ import annotations

import copy
import pickle
import threading
import time
import uuid

import pytest
from conftest import vectors

import nonceforge as nf

DOC = vectors("uuid.json")


def test_compact_forms_and_timestamps_of_the_vectors() -> None:
    assert len(DOC["v7"]) >= 5
    assert len(DOC["tuid6"]) >= 3
    assert len(DOC["stuid"]) >= 3
    for v in DOC["v7"] + DOC["tuid6"]:
        u = nf.from_compact(v["compact"])
        assert u == uuid.UUID(v["uuid"]), v
        assert nf.to_compact(uuid.UUID(v["uuid"])) == v["compact"]
        assert nf.unix_ms(uuid.UUID(v["uuid"])) == v["unix_ms"]
        assert nf.unix_ms(v["uuid"]) == v["unix_ms"]
    for v in DOC["v7"]:
        assert uuid.UUID(v["uuid"]).version == 7
    for v in DOC["stuid"]:
        raw = bytes.fromhex(v["hex"])
        assert nf.from_compact(v["compact"]) == raw
        assert nf.to_compact(raw) == v["compact"]
        assert nf.stuid_unix_us(raw) == v["unix_us"]
    for v in DOC["extract"]:
        assert nf.unix_ms(v["uuid"]) == v["unix_ms"] or v["version"] not in (6, 7), v
    for v in DOC["bad_compact"]:
        with pytest.raises(ValueError):  # noqa: PT011 - the texts differ per rule
            nf.from_compact(v["text"])


def test_uuid7_is_a_standard_uuid_version_7() -> None:
    before = time.time_ns() // 1_000_000
    u = nf.uuid7()
    after = time.time_ns() // 1_000_000
    assert type(u) is uuid.UUID
    assert u.version == 7
    assert u.variant == uuid.RFC_4122
    assert before <= nf.unix_ms(u) <= after
    assert u.is_safe == uuid.SafeUUID.unknown
    # It behaves as one made by uuid.UUID itself.
    same = uuid.UUID(str(u))
    assert u == same
    assert hash(u) == hash(same)
    assert str(u) == str(same)
    assert u.bytes == same.bytes
    assert pickle.loads(pickle.dumps(u)) == u
    assert copy.deepcopy(u) == u
    assert {u: 1}[same] == 1
    with pytest.raises(TypeError):
        u.int = 5  # type: ignore[misc]
    assert len(nf.uuid7_bytes()) == 16
    assert uuid.UUID(nf.uuid7_str()).version == 7


def test_uuid7_increases_within_the_process_across_threads() -> None:
    ids: list[list[uuid.UUID]] = [[] for _ in range(4)]

    def work(i: int) -> None:
        for _ in range(20_000):
            ids[i].append(nf.uuid7())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for mine in ids:
        assert all(a < b for a, b in zip(mine, mine[1:]))
    flat = [u for mine in ids for u in mine]
    assert len(set(flat)) == len(flat)
    # One generator for the process: sorted by value, the ids are all distinct
    # and each thread's own come in its order.
    assert len(sorted(flat)) == 80_000


def test_tuid6_and_stuid() -> None:
    now = time.time_ns() // 1_000_000
    t = nf.tuid6()
    assert type(t) is uuid.UUID
    assert abs(nf.unix_ms(t) - now) < 5_000
    s = nf.stuid()
    assert len(s) == 32
    assert abs(nf.stuid_unix_us(s) // 1000 - now) < 5_000
    assert len({nf.tuid6() for _ in range(10_000)}) == 10_000


@pytest.mark.parametrize(
    ("call", "exc"),
    [
        (lambda: nf.unix_ms(b"\x00" * 15), ValueError),
        (lambda: nf.unix_ms(12), TypeError),
        (lambda: nf.unix_ms("not-a-uuid"), ValueError),
        (lambda: nf.stuid_unix_us(b"\x00" * 16), ValueError),
        (lambda: nf.to_compact(b"\x00" * 20), ValueError),
        (lambda: nf.from_compact("!!!!!!!!!!!!!!!!!!!!!!"), ValueError),
    ],
)
def test_bad_input(call: object, exc: type[Exception]) -> None:
    with pytest.raises(exc):
        call()  # type: ignore[operator]
