#!/usr/bin/env python3
"""Writes nonces.json: nonce vectors computed independently of the Rust code.

Layout, HKDF-SHA256 and Speck are written here from their specifications; AES,
Blowfish and 3DES come from the `cryptography` package. The Rust tests read the
JSON and must agree. Run: python3 testdata/vectors/make_nonces.py
"""
import json, os

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from vectorlib import hkdf_sha256

try:
    from cryptography.hazmat.decrepit.ciphers.algorithms import Blowfish, TripleDES
except ImportError:  # older cryptography
    Blowfish, TripleDES = algorithms.Blowfish, algorithms.TripleDES

EPOCH = 1_735_689_600_000  # 2025-01-01T00:00:00Z
CTR_BITS = {64: 13, 96: 45, 128: 64}
# The wide layout: a 16-bit machine id, 96 and 128 bits only.
WIDE_CTR_BITS = {96: 38, 128: 64}


def compose(bits, ts, machine, counter):
    if bits == 64:
        return (ts << 22) | (machine << 13) | counter
    if bits == 96:
        return (ts << 54) | (machine << 45) | counter
    return (ts << 86) | (machine << 77) | counter


def compose_wide(bits, ts, machine, counter):
    assert machine < 1 << 16 and counter < 1 << WIDE_CTR_BITS[bits]
    if bits == 96:
        return (ts << 54) | (machine << 38) | counter
    # 42 | 16 | 6 zero bits | 64
    return (ts << 86) | (machine << 70) | counter


def hexof(bits, v):
    return v.to_bytes(bits // 8, "big").hex()


def speck(block, key, n, m, rounds):
    """Speck2n/mn encryption, words big-endian as in the designers' paper."""
    mask = (1 << n) - 1
    a, b = (7, 2) if n == 16 else (8, 3)
    ror = lambda x, r: ((x >> r) | (x << (n - r))) & mask
    rol = lambda x, r: ((x << r) | (x >> (n - r))) & mask
    w = n // 8
    words = [int.from_bytes(key[i * w:(i + 1) * w], "big") for i in range(m)]
    k, l = words[-1], list(reversed(words[:-1]))
    x, y = int.from_bytes(block[:w], "big"), int.from_bytes(block[w:], "big")
    for i in range(rounds):
        x = ((ror(x, a) + y) & mask) ^ k
        y = rol(y, b) ^ x
        li = ((ror(l[i], a) + k) & mask) ^ i
        k = rol(k, b) ^ li
        l.append(li)
    return x.to_bytes(w, "big") + y.to_bytes(w, "big")


def ecb(alg, key, block):
    e = Cipher(alg(key), modes.ECB()).encryptor()
    return e.update(block) + e.finalize()


CIPHERS = {
    ("speck64-128", 64): (16, lambda k, b: speck(b, k, 32, 4, 27)),
    ("blowfish", 64): (16, lambda k, b: ecb(Blowfish, k, b)),
    ("3des", 64): (24, lambda k, b: ecb(TripleDES, k, b)),
    ("speck96-144", 96): (18, lambda k, b: speck(b, k, 48, 3, 29)),
    ("aes256", 128): (32, lambda k, b: ecb(algorithms.AES, k, b)),
    ("speck128-256", 128): (32, lambda k, b: speck(b, k, 64, 4, 34)),
}


def main():
    # The designers' published Speck vectors, to check this file's Speck first.
    assert speck(bytes.fromhex("3b7265747475432d"), bytes.fromhex("1b1a1918131211100b0a090803020100"), 32, 4, 27).hex() == "8c6fa548454e028b"
    assert speck(bytes.fromhex("656d6974206e69202c726576"), bytes.fromhex("1514131211100d0c0b0a0908050403020100"), 48, 3, 29).hex() == "2bf31072228a7ae440252ee6"
    assert speck(bytes.fromhex("65736f6874206e49202e72656e6f6f70"), bytes.fromhex("1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"), 64, 4, 34).hex() == "4109010405c0f53e4eeeb48d9c188f43"

    layout = []
    for bits in (64, 96, 128):
        cmax = (1 << CTR_BITS[bits]) - 1
        for ts, m, c in [(0, 0, 0), (1, 1, 1), ((1 << 42) - 1, 511, cmax), (123456789, 300, cmax // 3), (0x2AAAAAAAAAA, 0x155, 0)]:
            layout.append({"bits": bits, "timestamp_ms": ts, "machine_id": m, "counter": c, "hex": hexof(bits, compose(bits, ts, m, c))})

    # A generator built when the clock reads exactly `clock`: it starts in the
    # next millisecond (the restart rule). Counter nonce number i has the tick
    # i; the counter carries into the timestamp (64, 96 bits).
    clock, machine = 1_767_225_600_000, 37  # 2026-01-01T00:00:00Z
    start = clock + 1 - EPOCH
    counters = []
    for bits in (64, 96, 128):
        k = CTR_BITS[bits]
        for i in [0, 1, 2, 8191, 8192, 8193, 100_000]:
            ts, c = (start, i) if bits == 128 else (start + (i >> k), i & ((1 << k) - 1))
            counters.append({"bits": bits, "index": i, "hex": hexof(bits, compose(bits, ts, machine, c))})

    base_key = bytes(range(0x40, 0x40 + 40))
    encrypted = []
    for (name, bits), (klen, enc) in CIPHERS.items():
        key = hkdf_sha256(base_key, f"nonceforge/encrypted-nonce/v1/{name}/{bits}".encode(), klen)
        k = CTR_BITS[bits]
        for i in [0, 1, 8192, 100_000]:
            ts, c = (start, i) if bits == 128 else (start + (i >> k), i & ((1 << k) - 1))
            plain = compose(bits, ts, machine, c).to_bytes(bits // 8, "big")
            encrypted.append({"bits": bits, "cipher": name, "index": i, "plain_hex": plain.hex(), "hex": enc(key, plain).hex()})

    # The wide layout: the same generator at machine id 40,000 (above 9 bits).
    wide_machine = 40_000
    wide_layout = []
    for bits in (96, 128):
        cmax = (1 << WIDE_CTR_BITS[bits]) - 1
        for ts, m, c in [(0, 0, 0), (1, 1, 1), ((1 << 42) - 1, 65535, cmax), (123456789, 50_000, cmax // 3), (0x2AAAAAAAAAA, 0xAAAA, 0), (1, 512, 0)]:
            wide_layout.append({"bits": bits, "timestamp_ms": ts, "machine_id": m, "counter": c, "hex": hexof(bits, compose_wide(bits, ts, m, c))})
    wide_counters = []
    for bits in (96, 128):
        for i in [0, 1, 2, 8191, 8192, 100_000]:
            wide_counters.append({"bits": bits, "index": i, "hex": hexof(bits, compose_wide(bits, start, wide_machine, i))})
    wide_encrypted = []
    for (name, bits), (klen, enc) in CIPHERS.items():
        if bits == 64:
            continue
        key = hkdf_sha256(base_key, f"nonceforge/encrypted-nonce/v1/{name}/{bits}".encode(), klen)
        for i in [0, 1, 100_000]:
            plain = compose_wide(bits, start, wide_machine, i).to_bytes(bits // 8, "big")
            wide_encrypted.append({"bits": bits, "cipher": name, "index": i, "plain_hex": plain.hex(), "hex": enc(key, plain).hex()})

    doc = {
        "about": "nonceforge nonce vectors, written by make_nonces.py (an independent implementation). Layout: 42-bit ms timestamp since the epoch | 9-bit machine id | counter (64: 13 bits; 96: 45 bits; 128: 13 zero bits + 64 bits), big-endian.",
        "epoch_unix_ms": EPOCH,
        "layout": layout,
        "generator": {"clock_unix_ms": clock, "machine_id": machine, "base_key_hex": base_key.hex(), "counter": counters, "encrypted": encrypted},
        "wide": {
            "about": "The wide layout (chosen explicitly): 42-bit ms timestamp | 16-bit machine id | counter (96: 38 bits; 128: 6 zero bits + 64 bits); no 64-bit nonces. The generator is the one above at machine id 40000, built with the wide layout.",
            "layout": wide_layout,
            "generator": {"clock_unix_ms": clock, "machine_id": wide_machine, "base_key_hex": base_key.hex(), "counter": wide_counters, "encrypted": wide_encrypted},
        },
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nonces.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
