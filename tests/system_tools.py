"""The Debian programs some tests drive for real: Chromium (web pages, the compare report) and Graphviz
(`rulelang graph --format svg`). `.ci/run` installs both, so in CI they are always there; on a machine
without them the tests that need them are skipped with the command that installs them, unless the
environment says `CI` (set it, e.g. `CI=1 python -m pytest`, to make their absence a failure)."""
from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("RULELANG_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def require(present: bool, what: str, install: str) -> None:
    """Skip (or, with CI set, fail) the calling test unless ``present``."""
    if present:
        return
    message = f"{what} is not installed ({install}; .ci/run installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def require_chromium() -> str:
    require(os.path.exists(CHROMIUM), f"Chromium ({CHROMIUM})", "apt-get install -y chromium")
    return CHROMIUM


def require_dot() -> None:
    require(shutil.which("dot") is not None, "Graphviz's dot", "apt-get install -y graphviz")
