"""nonceforge.prometheus: the fleet's series in prometheus_client's exposition."""

# The bad-input test passes wrong types on purpose: the calls the stubs refuse.
# mypy: disable-error-code="arg-type,call-arg,dict-item"

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

import nonceforge as nf
from nonceforge.aead import ChaCha20Poly1305
from nonceforge.prometheus import NonceforgeCollector


def test_every_series_under_the_fleets_name_and_type(metrics_vectors: Any) -> None:
    registry = CollectorRegistry()
    gen = nf.NonceGenerator(12)
    registry.register(NonceforgeCollector(generator=gen, sanitizer=True, labels={"service": "orders"}))
    for _ in range(5):
        gen.counter(96)
    ChaCha20Poly1305(os.urandom(32)).encrypt(os.urandom(12), b"x", None)
    text = generate_latest(registry).decode()
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    defs = {m["name"]: m for m in metrics_vectors["metrics"] + metrics_vectors["sanitizer_metrics"]}
    for name in {s.name for s in gen.metrics() + nf.sanitizer_metrics()}:
        # prometheus_client names a counter's family with or without _total (by version)
        shown = types.get(name, types.get(name.removesuffix("_total")))
        assert shown == defs[name]["type"], (name, shown)
        assert re.search(rf"^{name}\{{[^}}]*service=\"orders\"", text, re.M), name
    issued = [
        line
        for line in text.splitlines()
        if line.startswith("nonceforge_nonces_issued_total{")
        and all(p in line for p in ('kind="counter"', 'bits="96"', 'service="orders"'))
    ]
    assert issued, text
    assert issued[0].endswith(" 5.0")


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="needs a generator"):
        NonceforgeCollector()
    with pytest.raises(TypeError, match="generator must be a NonceGenerator"):
        NonceforgeCollector(generator=object())
    with pytest.raises(TypeError, match="labels must map str to str"):
        NonceforgeCollector(sanitizer=True, labels={"a": 2})
