"""The rule files the adapter tests (test_openspiel_adapter.py, test_pettingzoo.py) run, loaded once."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest

import rulelang

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "games"
FILES = sorted(GAMES.glob("*.rules")) + sorted((GAMES / "examples").glob("*.rules"))
EXAMPLES = tuple(f.name for f in sorted((GAMES / "examples").glob("*.rules")))
BIG = ("station.rules", "vega.rules", "mars.rules")  # the seeded rulebooks: 2 to 4 players each (a test says so)


@functools.lru_cache(maxsize=None)
def ruleset(name):
    return rulelang.load(str(next(f for f in FILES if f.name == name)))


def cases():
    """(file name, player count) for every rule file at each player count it allows. The big games are
    listed as 2, 3, 4 without loading them (a test checks that this is what they allow); at 3 and 4
    players they are marked slow (seconds each: `pytest -m slow`, which .ci/run runs beside the README's
    command), at 2 players they run with the suite."""
    return [pytest.param(f.name, n, marks=[pytest.mark.slow] if f.name in BIG and n > 2 else [])
            for f in FILES for n in ((2, 3, 4) if f.name in BIG else ruleset(f.name).player_counts)]
