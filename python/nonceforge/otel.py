"""The fleet's metrics as OpenTelemetry instruments (``pip install nonceforge[otel]``).

One observable instrument per family of testdata/vectors/metrics.json — the
names every face exports (docs/operations.md) — read from a generator (with
its lease's series when it is leased), a lease, and the sanitizer's process
figures. The values are read at collection time: nothing is added to the
calls that make nonces. Prometheus users export them with
``opentelemetry-exporter-prometheus`` beside their prometheus_client setup::

    from opentelemetry.sdk.metrics import MeterProvider
    meter = MeterProvider(...).get_meter("orders")
    register_metrics(meter, generator=gen, sanitizer=True)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Callable, Optional

from nonceforge import _native
from nonceforge._series import series_reader
from nonceforge._types import Sample

if TYPE_CHECKING:
    from nonceforge.lease import Lease

__all__ = ["register_metrics"]

# The samples of one collection are read once and shared by every
# instrument's callback (the OpenTelemetry Python API has no batch callback).
_FRESH_FOR = 0.5


class _Snapshot:
    def __init__(self, read: Callable[[], list[Sample]]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._at = -1e18
        self._by_name: dict[str, list[Sample]] = {}

    def of(self, name: str) -> list[Sample]:
        with self._lock:
            now = time.monotonic()
            if now - self._at > _FRESH_FOR:
                by_name: dict[str, list[Sample]] = {}
                for s in self._read():
                    by_name.setdefault(s.name, []).append(s)
                self._by_name, self._at = by_name, now
            return self._by_name.get(name, [])


def register_metrics(
    meter: Any,
    *,
    generator: Optional[_native.NonceGenerator] = None,
    lease: Optional[Lease] = None,
    sanitizer: bool = False,
    attributes: Optional[Mapping[str, str]] = None,
) -> None:
    """Make the fleet's instruments on ``meter`` (an ``opentelemetry.metrics.Meter``)
    for what is given: a generator's series (and its lease's), a lease's
    (when no generator made on it is given), the sanitizer's (``sanitizer=True``).
    ``attributes`` are added to every series (e.g. ``{"service": "orders"}``)."""
    from opentelemetry.metrics import CallbackOptions, Observation

    for method in ("create_observable_counter", "create_observable_gauge"):
        if not callable(getattr(meter, method, None)):
            raise TypeError(f"meter must be an OpenTelemetry Meter (it has no {method}())")
    read, extra = series_reader("register_metrics", generator, lease, sanitizer, "attributes", attributes)
    snapshot = _Snapshot(read)

    def callback(name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        def observe(_options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(s.value, {**extra, **s.labels}) for s in snapshot.of(name)]

        return observe

    for name, kind, _labels, help_text in _native.metric_defs():
        make = meter.create_observable_counter if kind == "counter" else meter.create_observable_gauge
        make(name, callbacks=[callback(name)], description=help_text)
