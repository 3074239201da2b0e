"""The named tuples nonceforge's less frequent results come in (the hot calls'
results — Decoded, DecodedUnverified, NonceParts — are native records of
nonceforge._native that behave as named tuples)."""

from __future__ import annotations

from typing import NamedTuple, Optional

__all__ = ["Readiness", "Renewals", "Sample"]


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
