"""Writes uuid.json.
the layouts and text forms of the time-prefixed ids —
UUIDv7 (RFC 9562 §5.7, with the 12-bit fraction of the millisecond of §6.2
method 3), tuid6 and stuid (pg_tuid's) — computed here from the layouts as the
docs state them, not by any implementation under test. Every face reads it:
the bytes a (time, random) pair makes, the compact text (base64url without
padding), the timestamp each face reads back, and the creation time PostgreSQL
18's uuid_extract_timestamp gives (versions 1 and 7 only). unix_ns is null where
it passes 2^63 (no face's clock reads that far)."""
import base64, json, os


def compact(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def canonical(b):
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def v7(unix_ns, random):
    ms, frac = unix_ns // 1_000_000, (unix_ns % 1_000_000) * 4096 // 1_000_000
    v = (ms & (2**48 - 1)) << 80 | 0x7 << 76 | frac << 64 | 0b10 << 62 | random & (2**62 - 1)
    return v.to_bytes(16, "big")


def tuid6(unix_ms, random):
    return ((unix_ms & (2**48 - 1)) << 80 | random & (2**80 - 1)).to_bytes(16, "big")


def stuid(unix_us, random):
    return unix_us.to_bytes(8, "big") + random


def v1(unix_100ns_since_1582, node):
    t = unix_100ns_since_1582
    low, mid, high = t & 0xFFFFFFFF, (t >> 32) & 0xFFFF, (t >> 48) & 0x0FFF
    v = low << 96 | mid << 80 | 0x1 << 76 | high << 64 | 0b10 << 62 | node & (2**62 - 1)
    return v.to_bytes(16, "big")


GREGORIAN = 0x01B21DD213814000  # 100 ns ticks from 1582-10-15 to 1970-01-01

V7 = [
    (1_700_000_000_000_000_000, 0x0123456789ABCDEF),
    (1_700_000_000_000_999_999, 2**62 - 1),  # the last fraction of a millisecond: 4095
    (1_700_000_000_000_500_000, 0),  # half a millisecond: 2048
    (1_664_391_451_515_244_140, 0x3FFF0000FFFF0000),
    (0, 1),
    ((2**48 - 1) * 1_000_000 + 999_999, 0x2AAAAAAAAAAAAAAA),  # the last millisecond of the range
]
TUID6 = [
    (1_664_391_451_515, 0x0102030405060708090A),
    (1_700_000_000_000, 0),
    (1_700_000_000_000, 2**80 - 1),
    (2**48 - 1, 0x5555555555555555AAAA),
]
STUID = [
    (1_664_391_451_515_244, bytes(range(24))),
    (1_700_000_000_000_000, b"\xff" * 24),
    (1, bytes(24)),
]


def main():
    out = {
        "about": " ".join(__doc__.split("\n", 1)[1].split()).replace("the layouts and", "The layouts and", 1),
        "v7": [],
        "tuid6": [],
        "stuid": [],
        "extract": [],
        "bad_compact": [],
    }
    for ns, r in V7:
        b = v7(ns, r)
        out["v7"].append({
            "unix_ns": ns if ns < 2**63 else None, "unix_ms": ns // 1_000_000, "fraction": (ns % 1_000_000) * 4096 // 1_000_000,
            "random": str(r & (2**62 - 1)), "uuid": canonical(b), "compact": compact(b), "version": 7,
        })
    for ms, r in TUID6:
        b = tuid6(ms, r)
        out["tuid6"].append({"unix_ms": ms, "random": f"{r:020x}", "uuid": canonical(b), "compact": compact(b)})
    for us, r in STUID:
        b = stuid(us, r)
        out["stuid"].append({"unix_us": us, "hex": b.hex(), "compact": compact(b)})
    # uuid_extract_timestamp: versions 7 and 1 carry a time; others (and a
    # variant that is not RFC 9562's) do not.
    for ns, r in V7[:3]:
        b = v7(ns, r)
        out["extract"].append({"uuid": canonical(b), "version": 7, "unix_ms": ns // 1_000_000})
    for unix_ms in (1_700_000_000_123, 0):
        b = v1(unix_ms * 10_000 + GREGORIAN + 7, 0x112233445566)
        out["extract"].append({"uuid": canonical(b), "version": 1, "unix_ms": unix_ms})
    v4 = bytearray(tuid6(1_700_000_000_000, 2**80 - 1))
    v4[6] = (v4[6] & 0x0F) | 0x40
    v4[8] = (v4[8] & 0x3F) | 0x80
    out["extract"].append({"uuid": canonical(bytes(v4)), "version": 4, "unix_ms": None})
    ncs = bytearray(v7(1_700_000_000_000_000_000, 0))
    ncs[8] &= 0x3F  # variant 00: not RFC 9562's, so no version either
    out["extract"].append({"uuid": canonical(bytes(ncs)), "version": None, "unix_ms": None})
    out["bad_compact"] = [
        {"text": "", "why": "empty"},
        {"text": "AAAAAAAAAAAAAAAAAAAAA", "why": "21 characters"},
        {"text": "AAAAAAAAAAAAAAAAAAAAAAA", "why": "23 characters"},
        {"text": "AAAAAAAAAAAAAAAAAAAAA=", "why": "padding"},
        {"text": "AAAAAAAAAAAAAAAAAAAA+A", "why": "'+' is base64, not base64url"},
        {"text": "AAAAAAAAAAAAAAAAAAAAAB", "why": "the last character leaves spare bits set"},
        {"text": "AAAAAAAAAAAAAAAAAAAAA\u00e9", "why": "not ASCII"},
    ]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "uuid.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
