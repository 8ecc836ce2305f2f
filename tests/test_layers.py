"""The layers import only downward (pyproject.toml's [tool.importlinter] contracts, checked by
import-linter): the language imports neither the runtime nor an application; the runtime and play
layer imports no application (the command line, the servers, the adapters, the tools)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_layer_imports_only_downward():
    exe = shutil.which("lint-imports") or os.path.join(os.path.dirname(sys.executable), "lint-imports")
    if not os.path.exists(exe):
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_the_code_has_no_unused_or_undefined_names():
    """ruff with pyflakes' rules ([tool.ruff] in pyproject.toml) over the language, the runtime and the tools."""
    exe = shutil.which("ruff") or os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.path.exists(exe):
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    r = subprocess.run([exe, "check", "--no-cache", "rulelang", "interpreter"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
