"""The Neovim set-up of docs/authoring.md, in a real Neovim (Debian 12's is 0.7.2; .ci/run installs it): a
`.rules` file gets the filetype `rules` (0.7's own filetype.vim calls it `hog`), the language server
starts and its diagnostics reach the buffer."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "editors" / "neovim" / "rulelang.lua"
NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim is not installed (apt-get install neovim)")

REPORT = ('lua vim.wait(WAIT, function() return #vim.diagnostic.get(0) > 0 end, 100); '
          'local d = vim.diagnostic.get(0); '
          'io.stdout:write("filetype=" .. vim.bo.filetype .. "\\n"); '
          'for _, x in ipairs(d) do io.stdout:write("diag " .. x.lnum .. ":" .. x.col .. " " .. '
          'tostring(x.code) .. "\\n") end; vim.cmd("qa!")')


def nvim(folder, config, name="game.rules", wait_ms=120_000):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # this rulelang's command
    env["XDG_STATE_HOME"] = str(folder / ".state")  # the LSP log of Neovim stays in the test's folder
    args = [NVIM, "--headless", "--clean"] + (["-u", str(config)] if config else []) + [name, "+" + REPORT.replace("WAIT", str(wait_ms))]
    out = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, timeout=180)
    return out.stdout + out.stderr


def test_a_rules_file_gets_its_filetype_and_the_language_servers_diagnostics(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    text = (ROOT / "games" / "examples" / "tictactoe.rules").read_text(encoding="utf-8")
    (tmp_path / "game.rules").write_text(text + "const broken = nope\n", encoding="utf-8")
    line = len(text.splitlines())  # 0-based line of the broken constant
    got = nvim(tmp_path, CONFIG)
    assert "filetype=rules" in got, got
    assert f"diag {line}:15 E201" in got, got


def test_without_the_setup_neovim_does_not_know_rules_files(tmp_path):
    """What the set-up fixes (on Neovim 0.7 `.rules` is the `hog` filetype; later ones may say nothing)."""
    (tmp_path / "game.rules").write_text("const a = 1\n", encoding="utf-8")
    got = nvim(tmp_path, None, wait_ms=2000)  # nothing would come: no server
    assert "filetype=rules" not in got and "diag" not in got


def test_the_docs_point_to_the_tested_setup():
    doc = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    assert "editors/neovim/rulelang.lua" in doc
