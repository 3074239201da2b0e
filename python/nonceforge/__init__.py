"""nonceforge: values that must never repeat, for Python services.

The same Rust core as the CLI, the PostgreSQL extension and the Node, Go and
Elixir packages, so a Python process is one more member of a polyglot fleet:
the same bytes, the same leases, the same guarantees.

- :class:`NonceGenerator` — counter, sortable and encrypted nonces of 64, 96
  or 128 bits, unique across the fleet (a machine id per member, from
  :class:`Lease`).
- :func:`uuid7`, :func:`tuid6`, :func:`stuid` — time-prefixed ids; the first
  two as :class:`uuid.UUID`.
- :class:`ExtIdCodec` — opaque, UUID-shaped external ids from sequential ids,
  under a keyring with rotation, decoded back with a check.
- :mod:`nonceforge.aead` — ``AESGCM``, ``ChaCha20Poly1305`` and
  ``AESGCMSIV``, drop-ins for cryptography's that refuse a repeated nonce.
- :class:`Lease` — a machine id leased from PostgreSQL, Redis or etcd
  (:class:`LeasePool`: many of them over a few shared connections).
"""

from __future__ import annotations

import os as _os

from nonceforge import _native as _native_module
from nonceforge._errors import (
    ClockBehindError,
    DisabledError,
    ExhaustedError,
    InvalidTag,
    LeaseAllTakenError,
    LeaseError,
    LeaseLostError,
    LeaseRefusedError,
    LeaseTimeoutError,
    LeaseUnreachableError,
    NonceforgeError,
    NonceReuseError,
    UnknownIdError,
)
from nonceforge._native import (
    DEFAULT_EPOCH_UNIX_MS,
    MAX_MACHINE_ID,
    Decoded,
    DecodedUnverified,
    ExtIdCodec,
    LocalNonces,
    NonceGenerator,
    NonceParts,
    __version__,
    from_compact,
    metric_defs,
    parse_duration,
    parse_ids,
    redact_url,
    sanitizer_metrics,
    stuid,
    stuid_unix_us,
    to_compact,
    tuid6,
    unix_ms,
    uuid7,
    uuid7_bytes,
    uuid7_str,
)
from nonceforge._types import Readiness, Renewals, Sample
from nonceforge.lease import Lease, LeasePool

# A forked child (a gunicorn or Celery worker of a preloaded app,
# multiprocessing's fork) must not draw from its parent's generators: they
# would repeat the parent's values under the parent's machine id. Every
# generator made before a fork refuses (DisabledError) in the child.
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_native_module._after_fork_in_child)

__all__ = [
    "DEFAULT_EPOCH_UNIX_MS",
    "MAX_MACHINE_ID",
    "ClockBehindError",
    "Decoded",
    "DecodedUnverified",
    "DisabledError",
    "ExhaustedError",
    "ExtIdCodec",
    "InvalidTag",
    "Lease",
    "LeaseAllTakenError",
    "LeaseError",
    "LeaseLostError",
    "LeasePool",
    "LeaseRefusedError",
    "LeaseTimeoutError",
    "LeaseUnreachableError",
    "LocalNonces",
    "NonceGenerator",
    "NonceParts",
    "NonceReuseError",
    "NonceforgeError",
    "Readiness",
    "Renewals",
    "Sample",
    "UnknownIdError",
    "__version__",
    "from_compact",
    "metric_defs",
    "parse_duration",
    "parse_ids",
    "redact_url",
    "sanitizer_metrics",
    "stuid",
    "stuid_unix_us",
    "to_compact",
    "tuid6",
    "unix_ms",
    "uuid7",
    "uuid7_bytes",
    "uuid7_str",
]
