"""The type hints agree with the code: mypy, configured by pyproject.toml's [tool.mypy] (the modules it lists in
``files``, each function's hints checked against its body and its callers), finds no error."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CPU_SECONDS = 600  # a bound, not a measure: mypy takes a few seconds of CPU here


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


@pytest.mark.slow  # mypy over the typed modules, 12 to 17 s: `pytest -m slow` (.ci/run runs it beside the README's command)
def test_mypy_finds_no_error_in_the_typed_modules(tmp_path):
    exe = shutil.which("mypy") or os.path.join(os.path.dirname(sys.executable), "mypy")
    if not os.path.exists(exe):
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([exe, "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"], cwd=ROOT,
                       capture_output=True, text=True, env=env, timeout=4 * CPU_SECONDS, preexec_fn=_bounded)
    assert r.returncode == 0 and r.stdout == "", r.stdout[-4000:] + r.stderr[-2000:]
