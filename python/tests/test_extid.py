"""External ids: every shared vector (the bytes every face makes), and the refusals."""

# The bad-input tests pass wrong types on purpose: the calls the stubs refuse.
# mypy: disable-error-code="arg-type,call-arg"

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from conftest import vectors
from hypothesis import given, settings
from hypothesis import strategies as st

import nonceforge as nf

DOC = vectors("extid.json")
KEYS = {0: bytes.fromhex(DOC["master_hex"]), 3: bytes.fromhex(DOC["rotated_master_hex"])}


def codec_for(v: dict[str, Any]) -> nf.ExtIdCodec:
    return nf.ExtIdCodec(
        KEYS,
        v["type"],
        version=v["key_version"],
        mode=v["mode"],
        rounds=v["rounds"],
        uuid_version=v["uuid_version"],
        key_version_in_band=v["key_version_in_band"],
    )


def test_every_shared_vector() -> None:
    assert len(DOC["vectors"]) >= 120
    seen = set()
    for v in DOC["vectors"]:
        c = codec_for(v)
        want = uuid.UUID(v["uuid"])
        assert c.encode(v["seq"], v["rand"]) == want, v
        assert c.derived_rand(v["seq"]) == v["derived_rand"], v
        if v["default_call"]:
            assert c.encode(v["seq"]) == want, v
        in_band = v["mode"] == "feistel-uuid" and v["key_version_in_band"]
        back = c.decode_unverified(v["uuid"], key_version=None if in_band else v["key_version"])
        assert back == nf.DecodedUnverified(v["seq"], v["rand"], v["key_version"], v["derived"]), v
        if v["derived"]:
            assert c.decode(want) == nf.Decoded(v["seq"], v["rand"], v["key_version"])
            assert c.decode_seq(v["uuid"]) == v["seq"]
        else:
            with pytest.raises(nf.UnknownIdError, match="was not made by this codec"):
                c.decode(v["uuid"])
        seen.add((v["mode"], v["rounds"], v["uuid_version"], v["key_version_in_band"], v["key_version"]))
    assert len(seen) >= 8


def test_text_forms_round_trip() -> None:
    c = nf.ExtIdCodec(KEYS[0], "user")
    for seq in (0, 1, 42, 2**40, 2**56 - 1):
        u = c.encode(seq)
        for form in ("uuid", "base64url", "base32"):
            for prefix in (False, True):
                for check in (False, True):
                    text = c.encode_text(seq, form=form, prefix=prefix, check=check)
                    assert c.decode_seq(text) == seq, (form, prefix, check, text)
        assert c.decode_seq(u.bytes) == seq
    assert re.fullmatch(r"user_[0-9a-z]{26}", c.encode_text(7, form="base32", prefix=True))


def test_rotation_decodes_every_held_version() -> None:
    old = nf.ExtIdCodec(KEYS[0], "order")
    made = old.encode(1234)
    both = nf.ExtIdCodec(KEYS, "order", version=3)
    assert both.decode(made) == nf.Decoded(1234, old.derived_rand(1234), 0)
    assert both.encode(1234) != made
    assert both.decode(both.encode(1234)).key_version == 3
    only_new = nf.ExtIdCodec({3: KEYS[3]}, "order", version=3)
    with pytest.raises(nf.UnknownIdError):
        only_new.decode(made)


def test_refusals_reveal_nothing() -> None:
    c = nf.ExtIdCodec(KEYS[0], "user")
    other = nf.ExtIdCodec(KEYS[0], "invoice")
    forged = other.encode(99)
    with pytest.raises(nf.UnknownIdError) as info:
        c.decode(forged)
    seq = c.decode_unverified(forged).seq
    assert str(seq) not in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (lambda: nf.ExtIdCodec(b"short", "user"), ValueError, "32"),
        (lambda: nf.ExtIdCodec("k" * 32, "user"), TypeError, "key must be a bytes-like object"),
        (lambda: nf.ExtIdCodec(KEYS[0], "User!"), ValueError, "type"),
        (lambda: nf.ExtIdCodec(KEYS[0], 5), TypeError, "type_name must be a str"),
        (lambda: nf.ExtIdCodec(KEYS, "user"), ValueError, "version is required with a keyring"),
        (lambda: nf.ExtIdCodec(KEYS, "user", version=5), ValueError, "keyring's versions"),
        (lambda: nf.ExtIdCodec({16: KEYS[0]}, "user", version=16), ValueError, "must be in 0..=15"),
        (lambda: nf.ExtIdCodec({}, "user", version=0), ValueError, "holds no key"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user", mode="des"), ValueError, "mode must be"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user", rounds=3), ValueError, "rounds"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user", uuid_version=5), ValueError, "version 8 or 4"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").encode(-1), ValueError, "seq must be in"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").encode(2**64), ValueError, "seq must be in"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").encode(1.5), TypeError, "seq must be an int"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").encode(1, rand=-2), ValueError, "rand must be in"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").decode("nope"), ValueError, ""),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").decode(12), TypeError, "id must be"),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").decode(b"\x00" * 3), ValueError, "16 bytes"),
        (
            lambda: nf.ExtIdCodec(KEYS[0], "user").decode(uuid.uuid4(), key_version=99),
            ValueError,
            "key_version",
        ),
        (lambda: nf.ExtIdCodec(KEYS[0], "user").encode_text(1, form="hex"), ValueError, "form must be"),
    ],
)
def test_bad_input(call: Any, exc: type[Exception], text: str) -> None:
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value), str(info.value)


def test_typeid_texts_parse_to_their_uuid() -> None:
    doc = vectors("typeid.json")
    for v in doc["invalid"]:
        with pytest.raises(ValueError):  # noqa: PT011 - each rule words its own
            nf.ExtIdCodec(KEYS[0], "prefix").parse(v["typeid"])
    checked = 0
    for v in doc["valid"]:
        if not v["prefix"] or not re.fullmatch(r"[a-z_]{1,63}", v["prefix"]) or v["prefix"].startswith("_"):
            continue
        try:
            c = nf.ExtIdCodec(KEYS[0], v["prefix"])
        except ValueError:
            continue
        assert c.parse(v["typeid"]) == uuid.UUID(v["uuid"]), v
        checked += 1
    assert checked >= 2


@settings(max_examples=500, deadline=None)
@given(
    seq=st.integers(min_value=0, max_value=2**56 - 1),
    mode=st.sampled_from(["feistel-uuid", "aes128", "cycle-walk"]),
    version=st.sampled_from([0, 3]),
)
def test_round_trip_property(seq: int, mode: str, version: int) -> None:
    c = nf.ExtIdCodec(KEYS, "prop", version=version, mode=mode)
    made = c.encode(seq)
    assert c.decode(made) == (seq, c.derived_rand(seq), version)
    for form in ("uuid", "base64url", "base32"):
        assert c.decode_seq(c.encode_text(seq, form=form)) == seq
