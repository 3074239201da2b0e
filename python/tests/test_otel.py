"""nonceforge.otel: the fleet's series as OpenTelemetry instruments, read by the SDK's reader."""

# The bad-input tests pass wrong types on purpose: the calls the stubs refuse.
# mypy: disable-error-code="arg-type,call-arg,dict-item"

from __future__ import annotations

import os
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import Gauge, InMemoryMetricReader, Sum

import nonceforge as nf
from nonceforge.aead import AESGCM
from nonceforge.otel import register_metrics


def collect(reader: InMemoryMetricReader) -> dict[str, Any]:
    data = reader.get_metrics_data()
    assert data is not None
    return {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}


def test_every_family_with_its_type_labels_and_values(metrics_vectors: Any) -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    gen = nf.NonceGenerator(11)
    register_metrics(meter, generator=gen, sanitizer=True, attributes={"service": "orders"})
    for _ in range(7):
        gen.counter(64)
    a = AESGCM(os.urandom(16))
    a.encrypt(os.urandom(12), b"x", None)
    got = collect(reader)
    defs = {m["name"]: m for m in metrics_vectors["metrics"] + metrics_vectors["sanitizer_metrics"]}
    for name in {s.name for s in gen.metrics() + nf.sanitizer_metrics()}:
        assert name in got, name
        metric = got[name]
        want = Sum if defs[name]["type"] == "counter" else Gauge
        assert isinstance(metric.data, want), (name, type(metric.data))
        if isinstance(metric.data, Sum):
            assert metric.data.is_monotonic
        for point in metric.data.data_points:
            assert point.attributes is not None
            assert point.attributes["service"] == "orders"
            assert set(defs[name]["labels"]) <= set(point.attributes), (name, point.attributes)
    issued = got["nonceforge_nonces_issued_total"].data.data_points
    counter64 = [
        p
        for p in issued
        if dict(p.attributes or {}).get("kind") == "counter" and dict(p.attributes or {}).get("bits") == "64"
    ]
    assert counter64[0].value == 7
    assert all(d[0] in defs for d in nf.metric_defs())


def test_bad_input() -> None:
    meter = MeterProvider(metric_readers=[InMemoryMetricReader()]).get_meter("bad")
    gen = nf.NonceGenerator(1)
    with pytest.raises(TypeError, match="meter must be an OpenTelemetry Meter"):
        register_metrics(object(), generator=gen)
    with pytest.raises(TypeError, match="generator must be a NonceGenerator"):
        register_metrics(meter, generator="gen")
    with pytest.raises(TypeError, match="attributes must map str to str"):
        register_metrics(meter, generator=gen, attributes={"a": 1})
    with pytest.raises(ValueError, match="needs a generator, a lease or sanitizer=True"):
        register_metrics(meter)
