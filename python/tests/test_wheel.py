"""The wheel as a Python user installs it: pip into a fresh virtual environment,
offline, on a PATH without cargo, without cryptography — then imported and used."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

WHEEL = os.environ.get("NONCEFORGE_WHEEL")

SMOKE = """
import os, uuid, nonceforge as nf
from nonceforge.aead import AESGCM, InvalidTag
assert "site-packages" in nf.__file__, nf.__file__
g = nf.NonceGenerator(5)
assert len(g.counter()) == 12 and nf.uuid7().version == 7
assert nf.ExtIdCodec(bytes(32), "user").decode_seq(nf.ExtIdCodec(bytes(32), "user").encode(9)) == 9
a = AESGCM(AESGCM.generate_key(128)); n = os.urandom(12)
ct = a.encrypt(n, b"x", None)
try:
    a.encrypt(n, b"y", None)
    raise SystemExit("a repeated nonce was sealed")
except nf.NonceReuseError:
    pass
try:
    a.decrypt(n, bytes(len(ct)), None)
    raise SystemExit("a forged message opened")
except InvalidTag as e:
    # without cryptography installed, InvalidTag is nonceforge's own
    assert isinstance(e, nf.NonceforgeError)
print("ok", nf.__version__)
"""


@pytest.mark.skipif(WHEEL is None, reason="NONCEFORGE_WHEEL is not set (make python-test sets it)")
def test_the_wheel_installs_and_runs_without_cargo(tmp_path: Path) -> None:
    assert WHEEL is not None
    assert Path(WHEEL).is_file(), WHEEL
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # A PATH with no cargo, rustc or maturin on it: only the venv and the system's basics.
    path = os.pathsep.join([str(env_dir / "bin"), "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": str(tmp_path), "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for tool in ("cargo", "rustc", "maturin"):
        probe = subprocess.run(["sh", "-c", f"command -v {tool}"], env=env, capture_output=True, text=True)
        assert probe.returncode != 0, f"{tool} is on the PATH of the install test: {probe.stdout}"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-index", WHEEL], env=env, check=True, capture_output=True
    )
    out = subprocess.run([str(python), "-c", SMOKE], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("ok ")


def test_this_run_imports_the_installed_package() -> None:
    import nonceforge

    if os.environ.get("NONCEFORGE_WHEEL"):
        # make python-test installs the wheel: the tests run what users install.
        assert "site-packages" in nonceforge.__file__, nonceforge.__file__
    assert sys.version_info >= (3, 9)
