"""The wheels as Python users install them: pip, offline, from the wheel
directory (pip picks the stable-ABI wheel that fits: cp39-abi3 or cp310-abi3),
into a fresh virtual environment of every CPython found here, on a PATH
without cargo, without cryptography — then imported and used."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

WHEELS = os.environ.get("NONCEFORGE_WHEELS")

SMOKE = """
import os, sys, uuid, nonceforge as nf
from nonceforge.aead import AESGCM, InvalidTag
assert "site-packages" in nf.__file__, nf.__file__
g = nf.NonceGenerator(5)
assert len(g.counter()) == 12 and nf.uuid7().version == 7
c = nf.ExtIdCodec(bytes(32), "user")
assert c.decode_seq(c.encode(9)) == 9
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
print("ok", ".".join(map(str, sys.version_info[:2])), nf.__version__)
"""


def interpreters() -> list[str]:
    """This test's Python, and every other CPython 3.9+ that pyenv holds here."""
    found = {f"{sys.version_info[0]}.{sys.version_info[1]}": sys.executable}
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for exe in sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3"))):
        version = Path(exe).parents[1].name
        major_minor = ".".join(version.split(".")[:2])
        if major_minor.count(".") == 1 and int(major_minor.split(".")[1]) >= 9 and version[-1].isdigit():
            found.setdefault(major_minor, exe)
    return [found[k] for k in sorted(found, key=lambda v: int(v.split(".")[1]))]


@pytest.mark.skipif(WHEELS is None, reason="NONCEFORGE_WHEELS is not set (make python-test sets it)")
@pytest.mark.parametrize("python", interpreters())
def test_the_wheel_installs_and_runs_without_cargo(python: str, tmp_path: Path) -> None:
    assert WHEELS is not None
    assert glob.glob(os.path.join(WHEELS, "nonceforge-*-cp39-abi3-*.whl")), WHEELS
    assert glob.glob(os.path.join(WHEELS, "nonceforge-*-cp310-abi3-*.whl")), WHEELS
    env_dir = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(env_dir)], check=True, capture_output=True)
    py = env_dir / "bin" / "python"
    # A PATH with no cargo, rustc or maturin on it: only the venv and the system's basics.
    path = os.pathsep.join([str(env_dir / "bin"), "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": str(tmp_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for tool in ("cargo", "rustc", "maturin"):
        probe = subprocess.run(["sh", "-c", f"command -v {tool}"], env=env, capture_output=True, text=True)
        assert probe.returncode != 0, f"{tool} is on the PATH of the install test: {probe.stdout}"
    install = [str(py), "-m", "pip", "install", "--no-index", "--find-links", WHEELS, "nonceforge"]
    subprocess.run(install, env=env, check=True, capture_output=True)
    out = subprocess.run([str(py), "-c", SMOKE], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("ok ")


def test_this_run_imports_the_installed_package() -> None:
    import nonceforge

    if WHEELS is not None:
        # make python-test installs the wheel: the tests run what users install.
        assert "site-packages" in nonceforge.__file__, nonceforge.__file__
