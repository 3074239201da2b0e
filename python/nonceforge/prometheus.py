"""The fleet's metrics for prometheus_client (``pip install prometheus-client``).

A custom collector: registered once, it reads a generator's series (with its
lease's when it is leased), a lease's, and the sanitizer's process figures at
each scrape, under the names every face exports (testdata/vectors/metrics.json,
docs/operations.md). Nothing is added to the calls that make values::

    from prometheus_client import REGISTRY
    from nonceforge.prometheus import NonceforgeCollector
    REGISTRY.register(NonceforgeCollector(generator=gen, sanitizer=True))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Optional

from nonceforge import _native
from nonceforge._series import series_reader
from nonceforge._types import Sample

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from nonceforge.lease import Lease

__all__ = ["NonceforgeCollector"]


class NonceforgeCollector:
    """A prometheus_client collector of the fleet's series.

    ``generator``: its series and its lease's; ``lease``: a lease's (when no
    generator made on it is given); ``sanitizer=True``: the sanitizer's, for the
    process; ``labels``: added to every series (e.g. ``{"service": "orders"}``).
    """

    def __init__(
        self,
        *,
        generator: Optional[_native.NonceGenerator] = None,
        lease: Optional[Lease] = None,
        sanitizer: bool = False,
        labels: Optional[Mapping[str, str]] = None,
    ) -> None:
        self._read, self._extra = series_reader(
            "NonceforgeCollector", generator, lease, sanitizer, "labels", labels
        )
        self._defs = _native.metric_defs()

    def collect(self) -> Iterator[Metric]:
        """The families with their current values (called by the registry at each scrape)."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        by_name: dict[str, list[Sample]] = {}
        for s in self._read():
            by_name.setdefault(s.name, []).append(s)
        extra_names, extra_values = list(self._extra), list(self._extra.values())
        for name, kind, label_names, help_text in self._defs:
            samples = by_name.get(name)
            if not samples:
                continue
            family = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            metric = family(name, help_text, labels=[*extra_names, *label_names])
            for s in samples:
                metric.add_metric([*extra_values, *(s.labels[n] for n in label_names)], s.value)
            yield metric
