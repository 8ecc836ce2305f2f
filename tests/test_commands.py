"""The command line's structure (issue 33): rulelang/cli.py is the click group and each command is a module of
rulelang/commands/; nothing below the commands imports them or the group; every package is installed."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from rulelang.cli import cli

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ["check", "compare", "explore-all", "fmt", "graph", "lsp", "play", "replay", "serve", "show", "simulate",
            "test", "validate"]  # README.md's list of commands


def test_the_help_lists_every_command():
    r = CliRunner().invoke(cli, ["--help"])
    assert r.exit_code == 0
    listed = [line.split()[0] for line in r.output.split("Commands:\n", 1)[1].splitlines() if line.strip()]
    assert listed == COMMANDS


@pytest.mark.skipif(not hasattr(click.exceptions, "NoSuchCommand"), reason="click before 8.4 suggests no name")
def test_a_mistyped_command_is_a_usage_error_naming_the_close_one():
    r = CliRunner().invoke(cli, ["simulte"])
    assert r.exit_code == 2
    assert "No such command 'simulte'. Did you mean 'simulate'?" in r.output


def test_running_a_command_loads_no_other_command():
    probe = ("import sys\nfrom rulelang.cli import main\ntry:\n    main(['graph', '--help'])\nexcept SystemExit:\n"
             "    pass\nprint(sorted(m for m in sys.modules if m.startswith('rulelang.commands.')), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "['rulelang.commands.common', 'rulelang.commands.graph']"


def test_the_help_loads_nothing_heavy():
    # every command's module is imported for its line of help, and none imports the rules machinery at the top
    probe = ("import sys\nfrom rulelang.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('attrs', 'lark', 'networkx', 'rich', 'interpreter') if m in sys.modules), "
             "file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr
    assert "simulate" in r.stdout and r.stderr.strip() == "[]"


def test_nothing_below_the_commands_imports_them():
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (pip install -e '.[test]')")
    graph = grimp.build_graph("rulelang", "interpreter", cache_dir=None)
    top = {"rulelang.__main__", "rulelang.cli"} | {m for m in graph.modules if m == "rulelang.commands" or m.startswith("rulelang.commands.")}
    for module in sorted(graph.modules - top):
        for above in ("rulelang.cli", "rulelang.commands"):
            chain = graph.find_shortest_chain(importer=module, imported=above)
            assert chain is None, f"{module} imports {above}: {' -> '.join(chain)}"


def test_every_package_is_in_the_distribution():
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads pyproject.toml")
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    found = sorted(".".join(p.parent.relative_to(ROOT).parts)
                   for top in ("rulelang", "interpreter") for p in (ROOT / top).rglob("__init__.py"))
    assert sorted(listed) == found
