"""The named tuples nonceforge's results come in."""

from __future__ import annotations

from typing import NamedTuple, Optional

__all__ = ["Decoded", "DecodedUnverified", "NonceParts", "Readiness", "Renewals", "Sample"]


class NonceParts(NamedTuple):
    """The fields of a counter or sortable nonce."""

    unix_ms: int
    machine_id: int
    counter: int


class Decoded(NamedTuple):
    """An external id checked and decoded."""

    seq: int
    rand: int
    key_version: int


class DecodedUnverified(NamedTuple):
    """An external id decoded without the check (``derived``: its random half is encode(seq)'s)."""

    seq: int
    rand: int
    key_version: int
    derived: bool


class Sample(NamedTuple):
    """One value of one metric series (testdata/vectors/metrics.json's names)."""

    name: str
    type: str
    labels: dict[str, str]
    value: float


class Readiness(NamedTuple):
    """Whether values are issued now, and if not why (what a readiness probe returns)."""

    ready: bool
    reason: Optional[str]


class Renewals(NamedTuple):
    """A lease's renewals so far, and the last error while the latest failed."""

    ok: int
    failed: int
    last_error: Optional[str]
