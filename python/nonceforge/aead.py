"""Drop-ins for ``cryptography.hazmat.primitives.ciphers.aead`` that refuse a
repeated (key, nonce): change one import and keep the rest::

    from nonceforge.aead import AESGCM          # was: from cryptography...aead import AESGCM

The same constructor, ``generate_key``, ``encrypt`` and ``decrypt``, the same
bytes out, ``InvalidTag`` (cryptography's own class when it is installed) on a
forged message; a nonce the key sealed with before raises
:class:`~nonceforge.NonceReuseError` and returns nothing. Nonces are 96 bits
(cryptography's AESGCM also takes 8 to 128 bytes: those raise ``ValueError``
here). The sanitizer's settings are keyword-only arguments after the key.
"""

from __future__ import annotations

from nonceforge._errors import InvalidTag, NonceReuseError
from nonceforge._native import AESGCM, AESGCMSIV, ChaCha20Poly1305

__all__ = ["AESGCM", "AESGCMSIV", "ChaCha20Poly1305", "InvalidTag", "NonceReuseError"]
