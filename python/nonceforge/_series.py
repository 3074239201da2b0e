"""What nonceforge.otel and nonceforge.prometheus read: the fleet's series of
a generator (with its lease's), a lease, or the sanitizer, checked once here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Callable, Optional

from nonceforge import _native
from nonceforge._types import Sample

if TYPE_CHECKING:
    from nonceforge.lease import Lease


def series_reader(
    who: str,
    generator: Optional[_native.NonceGenerator],
    lease: Optional[Lease],
    sanitizer: bool,
    labels_name: str,
    labels: Optional[Mapping[str, str]],
) -> tuple[Callable[[], list[Sample]], dict[str, str]]:
    """A function that reads every given source's samples now, and the extra
    labels (``labels_name`` names the argument in errors); ``who`` names the
    caller when nothing was given."""
    if generator is not None and not isinstance(generator, _native.NonceGenerator):
        raise TypeError(f"generator must be a NonceGenerator, not {type(generator).__name__}")
    extra = dict(labels or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
        raise TypeError(f"{labels_name} must map str to str")
    sources: list[Callable[[], list[Sample]]] = []
    if generator is not None:
        sources.append(generator.metrics)
    elif lease is not None:
        sources.append(lease.metrics)
    if sanitizer:
        sources.append(_native.sanitizer_metrics)
    if not sources:
        raise ValueError(f"{who} needs a generator, a lease or sanitizer=True")

    def read() -> list[Sample]:
        out: list[Sample] = []
        for source in sources:
            out.extend(source())
        return out

    return read, extra
