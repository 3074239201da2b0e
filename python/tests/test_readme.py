"""Every example of python/README.md and the top README's Python block runs as
written (against a real Redis for the lease examples), and type-checks under
mypy --strict and pyright."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, Redis

# python/README.md's blocks, then the top README's Python part.
BLOCKS = [
    block
    for readme in (ROOT / "python" / "README.md", ROOT / "README.md")
    for block in re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
]


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, redis: Redis, tmp_path: Path) -> None:
    script = tmp_path / f"example_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    env = {**os.environ, "NONCEFORGE_REDIS_URL": redis.url}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, f"block {index}:\n{BLOCKS[index]}\n{out.stdout}\n{out.stderr}"


def test_readme_examples_type_check(tmp_path: Path) -> None:
    for i, block in enumerate(BLOCKS):
        (tmp_path / f"example_{i}.py").write_text(block, encoding="utf-8")
    files = sorted(str(p) for p in tmp_path.glob("example_*.py"))
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "--no-incremental", *files],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    assert pyright is not None, "pyright is not installed beside this Python (python/requirements-dev.txt)"
    out = subprocess.run(
        [pyright, "--pythonpath", sys.executable, *files], capture_output=True, text=True, cwd=tmp_path
    )
    assert out.returncode == 0, out.stdout + out.stderr
