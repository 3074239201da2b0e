"""Pieces shared by the vector writers: HKDF-SHA256 (RFC 5869), written here from
the RFC so that the vectors do not depend on the code they check."""
import hashlib
import hmac


def hkdf_sha256(ikm, info, n):
    prk = hmac.new(b"\x00" * 32, ikm, hashlib.sha256).digest()  # salt absent: 32 zero bytes
    okm, t, i = b"", b"", 1
    while len(okm) < n:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        okm += t
        i += 1
    return okm[:n]
