"""The rule files the adapter tests (test_openspiel_adapter.py, test_pettingzoo.py) run, loaded once."""
from __future__ import annotations

import functools
from pathlib import Path

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
    listed as 2, 3, 4 without loading them (a test checks that this is what they allow)."""
    return [(f.name, n) for f in FILES
            for n in ((2, 3, 4) if f.name in BIG else ruleset(f.name).player_counts)]
