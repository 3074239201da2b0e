"""Shared fixtures: the repository's vector files, and a real Redis on a loopback port."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "testdata" / "vectors"


def vectors(name: str) -> Any:
    """A file of testdata/vectors, parsed."""
    with open(VECTORS / name, encoding="utf-8") as f:
        return json.load(f)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_port(port: int, what: str, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > end:
                raise TimeoutError(f"{what} did not open port {port}") from None
            time.sleep(0.02)


class Redis:
    """redis-server on a free loopback port, without persistence."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.fail("redis-server is not installed (make test installs it: Debian's redis-server)")
        self.dir = tempfile.mkdtemp(prefix="nonceforge-py-redis-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_port(self.port, "redis-server")
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def cli(self, *args: str) -> str:
        out = subprocess.run(
            ["redis-cli", "-p", str(self.port), *args], check=True, capture_output=True, text=True
        )
        return out.stdout.strip()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def redis() -> Iterator[Redis]:
    r = Redis()
    try:
        yield r
    finally:
        r.stop()


def poll(ok: Any, what: str, timeout: float = 20.0) -> None:
    """Waits until ok() is true (tests poll, never sleep a fixed time)."""
    end = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture(scope="session")
def metrics_vectors() -> Any:
    return vectors("metrics.json")


def in_forked_child(body: Any) -> str:
    """Runs body() in a child made by os.fork(); its returned text comes back
    through a pipe (the child ends with os._exit: no atexit, no pytest)."""
    import os

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, str(body()).encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as f:
        got = f.read().decode()
    assert status == 0, status
    return got
