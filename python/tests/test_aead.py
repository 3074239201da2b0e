"""The sanitizer's drop-ins against cryptography itself: byte-identical output,
cryptography's own vectors (the cryptography-vectors package) and Wycheproof's,
InvalidTag, and the refusal of a repeated (key, nonce)."""

# The bad-input tests pass wrong types on purpose: the calls the stubs refuse.
# mypy: disable-error-code="arg-type,call-arg"

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union

import cryptography_vectors
import pytest
from conftest import ROOT
from cryptography.exceptions import InvalidTag as CryptographyInvalidTag
from cryptography.hazmat.primitives.ciphers import aead as ref
from hypothesis import given, settings
from hypothesis import strategies as st

import nonceforge as nf
from nonceforge import aead

Sanitized = Union[aead.AESGCM, aead.ChaCha20Poly1305, aead.AESGCMSIV]
PAIRS: dict[str, tuple[Any, Any]] = {
    "AESGCM": (aead.AESGCM, ref.AESGCM),
    "ChaCha20Poly1305": (aead.ChaCha20Poly1305, ref.ChaCha20Poly1305),
    "AESGCMSIV": (aead.AESGCMSIV, ref.AESGCMSIV),
}

# One live object per (algorithm, key) for the whole module: the sanitizer's
# state for a key lives while an object for it does, so every (key, nonce)
# this module seals is remembered, and a repeat must be refused.
_objects: dict[tuple[str, bytes], Sanitized] = {}
_sealed: set[tuple[str, bytes, bytes]] = set()
_lock = threading.Lock()


def sanitized(name: str, key: bytes) -> Sanitized:
    with _lock:
        if (name, key) not in _objects:
            _objects[(name, key)] = PAIRS[name][0](key)
        return _objects[(name, key)]


def seal_or_refused(name: str, key: bytes, nonce: bytes, msg: bytes, aad: bytes) -> Union[bytes, None]:
    """Seals, or checks the refusal when this (key, nonce) was sealed before here."""
    obj = sanitized(name, key)
    if (name, key, nonce) in _sealed:
        with pytest.raises(nf.NonceReuseError):
            obj.encrypt(nonce, msg, aad)
        return None
    _sealed.add((name, key, nonce))
    return obj.encrypt(nonce, msg, aad)


def test_invalid_tag_is_cryptographys_own_class() -> None:
    assert nf.InvalidTag is CryptographyInvalidTag
    assert aead.InvalidTag is CryptographyInvalidTag


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(PAIRS)),
    size=st.sampled_from([16, 24, 32]),
    nonce=st.binary(min_size=12, max_size=12),
    msg=st.binary(max_size=300),
    aad=st.one_of(st.none(), st.binary(max_size=64)),
)
def test_byte_identical_to_cryptography(
    name: str, size: int, nonce: bytes, msg: bytes, aad: Union[bytes, None]
) -> None:
    if name == "ChaCha20Poly1305":
        size = 32
    if name == "AESGCMSIV" and size == 24:
        size = 16
    key = os.urandom(size)
    ours, theirs = PAIRS[name][0](key), PAIRS[name][1](key)
    sealed = ours.encrypt(nonce, msg, aad)
    assert sealed == theirs.encrypt(nonce, msg, aad)
    assert ours.decrypt(nonce, sealed, aad) == msg == theirs.decrypt(nonce, sealed, aad)
    bad = bytes([sealed[0] ^ 1]) + sealed[1:]
    with pytest.raises(CryptographyInvalidTag):
        ours.decrypt(nonce, bad, aad)
    # bytes-likes as cryptography takes them
    assert ours.decrypt(bytearray(nonce), memoryview(sealed), None if aad is None else bytearray(aad)) == msg


def test_a_repeated_nonce_is_refused_and_nothing_is_returned() -> None:
    key = aead.AESGCM.generate_key(256)
    a = aead.AESGCM(key)
    n = os.urandom(12)
    a.encrypt(n, b"first", b"")
    with pytest.raises(nf.NonceReuseError, match="nonce reuse"):
        a.encrypt(n, b"second", b"")
    # Another object for the same key shares the state.
    with pytest.raises(nf.NonceReuseError):
        aead.AESGCM(key).encrypt(n, b"third", None)
    # Another key, the same nonce: fine.
    aead.AESGCM(aead.AESGCM.generate_key(256)).encrypt(n, b"x", None)


def test_replays_with_check_open() -> None:
    key = os.urandom(32)
    sender = ref.ChaCha20Poly1305(key)
    receiver = aead.ChaCha20Poly1305(key, check_open=True)
    n = os.urandom(12)
    sealed = sender.encrypt(n, b"pay 5", None)
    assert receiver.decrypt(n, sealed, None) == b"pay 5"
    with pytest.raises(nf.NonceReuseError):
        receiver.decrypt(n, sealed, None)


def test_threads_never_seal_one_nonce_twice() -> None:
    key = os.urandom(16)
    a = aead.AESGCM(key)
    nonces = [os.urandom(12) for _ in range(200)]
    wins: list[bytes] = []
    refusals: list[bytes] = []
    barrier = threading.Barrier(4)

    def work() -> None:
        barrier.wait()
        for n in nonces:
            try:
                a.encrypt(n, b"m", None)
                wins.append(n)
            except nf.NonceReuseError:
                refusals.append(n)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == sorted(nonces)
    assert len(refusals) == 3 * len(nonces)


def test_large_messages_release_the_gil_and_match() -> None:
    key = os.urandom(32)
    msg = os.urandom(1 << 20)
    n = os.urandom(12)
    assert aead.AESGCM(key).encrypt(n, msg, b"a") == ref.AESGCM(key).encrypt(n, msg, b"a")
    assert aead.AESGCM(key).decrypt(n, ref.AESGCM(key).encrypt(n, msg, b"a"), b"a") == msg


@pytest.mark.parametrize(
    ("call", "exc", "text"),
    [
        (lambda: aead.AESGCM(b"k" * 20), ValueError, "AESGCM key must be 128, 192, or 256 bits."),
        (lambda: aead.AESGCM("k" * 16), TypeError, "key must be a bytes-like object"),
        (lambda: aead.ChaCha20Poly1305(b"k" * 16), ValueError, "ChaCha20Poly1305 key must be 32 bytes."),
        (lambda: aead.AESGCMSIV(b"k" * 24), ValueError, "AESGCMSIV key must be 128 or 256 bits."),
        (lambda: aead.AESGCM.generate_key(100), ValueError, "bit_length must be"),
        (lambda: aead.AESGCM.generate_key("256"), TypeError, "bit_length must be an integer"),
        (lambda: aead.AESGCM(b"k" * 16).encrypt(b"n" * 16, b"m", None), ValueError, "Nonce must be 12 bytes"),
        (
            lambda: aead.AESGCM(b"k" * 16).encrypt(b"n" * 12, "m", None),
            TypeError,
            "data must be a bytes-like object",
        ),
        (lambda: aead.AESGCM(b"k" * 16).encrypt(b"n" * 12, b"m", 5), TypeError, "associated_data must be"),
        (lambda: aead.AESGCM(b"k" * 16, mode="sequential"), ValueError, "mode must be"),
        (lambda: aead.AESGCM(b"k" * 16, window=0), ValueError, "window must be at least 1"),
        (lambda: aead.AESGCM(b"k" * 16).decrypt(b"n" * 12, b"short", None), CryptographyInvalidTag, ""),
    ],
)
def test_bad_input_as_cryptography_words_it(call: Any, exc: type[Exception], text: str) -> None:
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value), str(info.value)


# --- cryptography's own vectors (the cryptography-vectors package) ---------

VECTORS = Path(cryptography_vectors.__file__).parent


def nist_sections(path: Path) -> Iterator[dict[str, str]]:
    params: dict[str, str] = {}
    entry: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line.startswith("["):
            k, _, v = line.strip("[]").partition("=")
            params[k.strip()] = v.strip()
        elif " = " in line or line.endswith("="):
            k, _, v = line.partition("=")
            if k.strip() == "Count" and entry:
                yield entry
                entry = {}
            entry[k.strip()] = v.strip()
            entry.update({f"_{pk}": pv for pk, pv in params.items()})
        elif line == "FAIL":
            entry["FAIL"] = "1"
    if entry:
        yield entry


@pytest.mark.parametrize("bits", [128, 192, 256])
def test_nist_gcm_vectors(bits: int) -> None:
    sealed_checked = opened = 0
    for e in nist_sections(VECTORS / "ciphers" / "AES" / "GCM" / f"gcmEncryptExtIV{bits}.rsp"):
        if e.get("_IVlen") != "96" or e.get("_Taglen") != "128":
            continue
        key, iv = bytes.fromhex(e["Key"]), bytes.fromhex(e["IV"])
        out = seal_or_refused("AESGCM", key, iv, bytes.fromhex(e["PT"]), bytes.fromhex(e["AAD"]))
        if out is not None:
            assert out.hex() == e["CT"] + e["Tag"], e["Count"]
            sealed_checked += 1
    for e in nist_sections(VECTORS / "ciphers" / "AES" / "GCM" / f"gcmDecrypt{bits}.rsp"):
        if e.get("_IVlen") != "96" or e.get("_Taglen") != "128":
            continue
        a = sanitized("AESGCM", bytes.fromhex(e["Key"]))
        ct = bytes.fromhex(e["CT"] + e["Tag"])
        if "FAIL" in e:
            with pytest.raises(CryptographyInvalidTag):
                a.decrypt(bytes.fromhex(e["IV"]), ct, bytes.fromhex(e["AAD"]))
        else:
            assert a.decrypt(bytes.fromhex(e["IV"]), ct, bytes.fromhex(e["AAD"])).hex() == e["PT"]
        opened += 1
    assert sealed_checked >= 100
    assert opened >= 100


def openssl_entries(path: Path) -> Iterator[dict[str, str]]:
    entry: dict[str, str] = {}
    for raw in [*path.read_text().splitlines(), ""]:
        line = raw.strip()
        if not line or line.startswith("#"):
            if entry:
                yield entry
                entry = {}
            continue
        k, _, v = line.partition("=")
        v = v.strip()
        # boringssl.txt writes some fields as quoted text.
        entry[k.strip().upper()] = v[1:-1].encode().hex() if v.startswith('"') else v


@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("ChaCha20Poly1305", "ChaCha20Poly1305/openssl.txt"),
        ("ChaCha20Poly1305", "ChaCha20Poly1305/boringssl.txt"),
        ("AESGCMSIV", "AES/GCM-SIV/openssl.txt"),
    ],
)
def test_openssl_format_vectors(name: str, file: str) -> None:
    checked = 0
    for e in openssl_entries(VECTORS / "ciphers" / file):
        key = bytes.fromhex(e["KEY"])
        iv = bytes.fromhex(e.get("IV", e.get("NONCE", "")))
        if len(iv) != 12 or len(key) not in (16, 32):
            continue
        pt = bytes.fromhex(e.get("PLAINTEXT", e.get("IN", "")))
        aad = bytes.fromhex(e.get("AAD", e.get("AD", "")))
        ct = bytes.fromhex(e.get("CIPHERTEXT", e.get("CT", "")))
        tag = bytes.fromhex(e["TAG"])
        if len(tag) != 16:
            continue
        if e.get("RESULT") == "CIPHERFINAL_ERROR":
            with pytest.raises(CryptographyInvalidTag):
                sanitized(name, key).decrypt(iv, ct + tag, aad)
        else:
            out = seal_or_refused(name, key, iv, pt, aad)
            assert out is None or out == ct + tag, e
            assert sanitized(name, key).decrypt(iv, ct + tag, aad) == pt
        checked += 1
    assert checked >= 5


def wycheproof_dir() -> Path:
    where = os.environ.get("WYCHEPROOF_DIR")
    if where:
        return Path(where)
    out = subprocess.run(
        [str(ROOT / "tools" / "wycheproof-dir.sh")], capture_output=True, text=True, check=True
    )
    return Path(out.stdout.strip())


@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("AESGCM", "aes_gcm_test.json"),
        ("ChaCha20Poly1305", "chacha20_poly1305_test.json"),
        ("AESGCMSIV", "aes_gcm_siv_test.json"),
    ],
)
def test_wycheproof(name: str, file: str) -> None:
    doc = json.loads((wycheproof_dir() / file).read_text())
    checked = 0
    for group in doc["testGroups"]:
        if group["ivSize"] != 96 or group["tagSize"] != 128 or group["keySize"] not in (128, 192, 256):
            continue
        if name == "AESGCMSIV" and group["keySize"] == 192:
            continue
        for t in group["tests"]:
            key, iv = bytes.fromhex(t["key"]), bytes.fromhex(t["iv"])
            aad, msg = bytes.fromhex(t["aad"]), bytes.fromhex(t["msg"])
            sealed = bytes.fromhex(t["ct"] + t["tag"])
            if t["result"] == "invalid":
                with pytest.raises(CryptographyInvalidTag):
                    sanitized(name, key).decrypt(iv, sealed, aad)
            else:
                out = seal_or_refused(name, key, iv, msg, aad)
                assert out is None or out == sealed, t["tcId"]
                assert sanitized(name, key).decrypt(iv, sealed, aad) == msg, t["tcId"]
            checked += 1
    assert checked >= 50


def test_sanitizer_metrics(metrics_vectors: Any) -> None:
    key = os.urandom(32)
    a = aead.AESGCM(key)
    n = os.urandom(12)
    a.encrypt(n, b"x", None)
    with pytest.raises(nf.NonceReuseError):
        a.encrypt(n, b"y", None)
    names = {m["name"]: m for m in metrics_vectors["sanitizer_metrics"]}
    samples = nf.sanitizer_metrics()
    assert samples
    assert all(s.name in names for s in samples)
    reuse = [s for s in samples if s.labels.get("violation") == "reuse"]
    assert reuse
    assert reuse[0].value >= 1
