"""docs/index.md's tutorial works as written: each step's fragment is part of the whole file, the file
checks clean, its scenarios pass, and the commands it shows run (simulate, play, compare)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import rulelang
from interpreter.scenarios import run_path
from rulelang.cli import cli

DOC = (Path(__file__).resolve().parent.parent / "docs" / "index.md").read_text(encoding="utf-8")


def blocks(kind):
    return [m.group(1) for m in re.finditer(r"```" + kind + r"\n(.*?)```", DOC, re.S)]


@pytest.fixture(scope="module")
def pig(tmp_path_factory):
    (whole,) = blocks("rules")
    path = tmp_path_factory.mktemp("tutorial") / "pig.rules"
    path.write_text(whole, encoding="utf-8")
    return path


def test_every_step_is_part_of_the_whole_file(pig):
    whole = pig.read_text(encoding="utf-8")
    steps = blocks("text")
    assert len(steps) >= 7
    for step in steps:
        assert step in whole, step


def test_the_file_checks_clean_and_its_scenarios_pass(pig):
    assert rulelang.check(str(pig), cache=False, every_variant=True) == []
    results = run_path(str(pig))
    assert len(results) == 2 and all(r.passed for r in results), [r.message for r in results]


def test_the_commands_of_the_tutorial_run(pig):
    runner = CliRunner()
    r = runner.invoke(cli, ["simulate", str(pig), "--games", "100", "--agents", "heuristic,random", "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["completed"] == 100 and summary["win_rate"][0] > 0.55  # "about 70%"
    r = runner.invoke(cli, ["play", str(pig), "--players", "2", "--agents", "random,random", "--seed", "3"])
    assert r.exit_code == 0 and "Game over" in r.output, r.output
    r = runner.invoke(cli, ["compare", str(pig), "--variant", "short", "--players", "2", "--games", "30",
                            "--agents", "heuristic:10", "--json", "--html", str(pig.parent / "report.html")])
    assert r.exit_code == 0, r.output
