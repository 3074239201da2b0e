#!/usr/bin/env python3
"""Writes extid.json: external-id vectors computed independently of the Rust code.

HKDF-SHA256, the Feistel network, cycle walking, the UUID placement and the text
forms are written here from the documentation in crates/nonceforge/src/extid/;
AES-128 comes from the `cryptography` package. Run: python3 testdata/vectors/make_extid.py
"""
import base64, json, os

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from vectorlib import hkdf_sha256

B32 = "0123456789abcdefghjkmnpqrstvwxyz"
CHECK = B32 + "*~$=u"


def aes(key, block, decrypt=False):
    c = Cipher(algorithms.AES(key), modes.ECB())
    op = c.decryptor() if decrypt else c.encryptor()
    return op.update(block) + op.finalize()


def keys(master, mode, type_name, version, n):
    return hkdf_sha256(master, f"nonceforge/extid/v1/{mode}/{type_name}/{version}".encode(), n)


def prf(k, x):
    return int.from_bytes(aes(k, x.to_bytes(8, "little") + bytes(8))[:8], "little")


def feistel(ks, l_bits, l, r):
    lm, rm = (1 << l_bits) - 1, (1 << 62) - 1
    for k1, k2 in zip(ks[0::2], ks[1::2]):
        l ^= prf(k1, r) & lm
        r ^= prf(k2, l) & rm
    return l, r


def place(l, r, ver):
    hi = ((l >> 12) << 16) | (ver << 12) | (l & 0xFFF)
    lo = (0b10 << 62) | r
    return ((hi << 64) | lo).to_bytes(16, "big")


def uuid_text(b):
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def base32(b, prefix, check):
    v = int.from_bytes(b, "big")
    s = B32[v >> 125] + "".join(B32[(v >> (5 * i)) & 31] for i in range(24, -1, -1))
    if check:
        s += CHECK[v % 37]
    return (prefix + "_" if prefix else "") + s


def layout(mode, rounds=2, uuid_version=8, in_band=True):
    """The layout's name in the key derivation (docs/contracts.md, section 3):
    the mode; for feistel-uuid, -4 for 4 rounds, -v4 for UUID version 4, -oob
    for the key version out of band."""
    if mode != "feistel-uuid":
        return mode
    return mode + ("-4" if rounds == 4 else "") + ("-v4" if uuid_version == 4 else "") + ("" if in_band else "-oob")


def derived_rand(master, type_name, mode, seq, version=0, rounds=2, uuid_version=8, in_band=True):
    """The random half the call without one uses: F0(seq), F0 = AES-128 under
    HKDF(master, info = nonceforge/extid/v1/rand-<layout>/<type>/<version>, or
    .../rand/... for the default layout), truncated to the mode's random half
    (62 bits in feistel-uuid, 64 otherwise)."""
    bits = 62 if mode == "feistel-uuid" else 64
    name = layout(mode, rounds, uuid_version, in_band)
    label = "rand" if name == "feistel-uuid" else "rand-" + name
    return prf(keys(master, label, type_name, version, 16), seq) & ((1 << bits) - 1)


def encode(master, type_name, mode, seq, rand, version=0, rounds=2, uuid_version=8, in_band=True):
    label = layout(mode, rounds, uuid_version, in_band)
    if mode == "aes128":
        k = keys(master, label, type_name, version, 16)
        return aes(k, seq.to_bytes(8, "big") + rand.to_bytes(8, "big"))
    if mode == "cycle-walk":
        k = keys(master, label, type_name, version, 16)
        c = aes(k, seq.to_bytes(8, "big") + rand.to_bytes(8, "big"))
        while c[0] & 0x80:
            c = aes(k, c)
        return c
    kb = keys(master, label, type_name, version, 64)
    ks = [kb[i * 16:(i + 1) * 16] for i in range(rounds)]
    l, r = feistel(ks, 56 if in_band else 60, seq, rand)
    if in_band:
        l |= (version ^ (r & 0xF)) << 56
    return place(l, r, uuid_version)


def main():
    master = bytes(range(0x20, 0x40))  # 32 bytes
    rotated = bytes(range(0x60, 0x80))
    # FIPS-197 C.1 first, to check this file's AES.
    assert aes(bytes(range(16)), bytes.fromhex("00112233445566778899aabbccddeeff")).hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"
    rows = []
    cases = [(0, 0), (1, 1), (42, 0x1234_5678_9ABC_DEF), (1 << 40, (1 << 62) - 1), ((1 << 56) - 1, 0x2AAA_AAAA_AAAA_AAAA)]
    configs = [
        dict(mode="feistel-uuid"),
        dict(mode="feistel-uuid", rounds=4),
        dict(mode="feistel-uuid", uuid_version=4),
        dict(mode="feistel-uuid", in_band=False),
        dict(mode="aes128"),
        dict(mode="cycle-walk"),
        dict(mode="feistel-uuid", rounds=4, uuid_version=4, in_band=False),
    ]
    # None: the call without a random half (the derived one).
    seqs = [0, 1, 42, 1 << 40, (1 << 56) - 1]
    for cfg in configs:
        for seq, rand in cases + [(s, None) for s in seqs]:
            for type_name in ("user", "order_item"):
                dr = derived_rand(master, type_name, seq=seq, **cfg)
                r = dr if rand is None else rand
                b = encode(master, type_name, seq=seq, rand=r, **cfg)
                rows.append({
                    "type": type_name, "layout": layout(**cfg), "mode": cfg["mode"], "rounds": cfg.get("rounds", 2),
                    "uuid_version": cfg.get("uuid_version", 8), "key_version_in_band": cfg.get("in_band", True),
                    "key_version": 0, "seq": seq, "rand": r, "default_call": rand is None,
                    "derived_rand": dr, "derived": r == dr, "hex": b.hex(), "uuid": uuid_text(b),
                    "base64url": base64.urlsafe_b64encode(b).decode().rstrip("="),
                    "base32": base32(b, None, False), "base32_prefixed_checked": base32(b, type_name, True),
                })
    # After a rotation: version 3 under another master key, in band.
    for seq, rand in cases[:3] + [(7, None)]:
        dr = derived_rand(rotated, "user", "feistel-uuid", seq, version=3)
        r = dr if rand is None else rand
        b = encode(rotated, "user", "feistel-uuid", seq, r, version=3)
        rows.append({"type": "user", "layout": "feistel-uuid", "mode": "feistel-uuid", "rounds": 2, "uuid_version": 8, "key_version_in_band": True,
                     "key_version": 3, "seq": seq, "rand": r, "default_call": rand is None,
                     "derived_rand": dr, "derived": r == dr, "hex": b.hex(), "uuid": uuid_text(b),
                     "base64url": base64.urlsafe_b64encode(b).decode().rstrip("="),
                     "base32": base32(b, None, False), "base32_prefixed_checked": base32(b, "user", True)})
    doc = {
        "about": "nonceforge external-id vectors, written by make_extid.py (an independent implementation). Keys: HKDF-SHA256(master, info = nonceforge/extid/v1/<layout>/<type>/<version>), layout = the mode, and for feistel-uuid -4 (4 rounds), -v4 (UUID version 4), -oob (key version out of band) in that order; key version 0 uses master_hex, key version 3 rotated_master_hex. default_call: the call without a random half, whose rand is derived_rand (AES-128 under HKDF info nonceforge/extid/v1/rand-<layout>/<type>/<version>, or nonceforge/extid/v1/rand/<type>/<version> for the default layout feistel-uuid, of seq as 8 little-endian bytes and 8 zero bytes, first 8 bytes little-endian, truncated to 62 bits in feistel-uuid); derived: whether rand is derived_rand (what decoding reports).",
        "format": 2,
        "format_history": "2 (0.2.0): every layout's keys are derived under its own label (1: under the mode alone, and one derived-half key for every layout); the default layout's ids are unchanged.",
        "master_hex": master.hex(),
        "rotated_master_hex": rotated.hex(),
        "vectors": rows,
    }
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "extid.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
