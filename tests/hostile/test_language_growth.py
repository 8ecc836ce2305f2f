"""Resource bombs for the statements added for Vega's language growth (`draw N from A into B`,
`shuffle B into A`): run in an endless loop inside one decision, each must stop with a GameError naming
the work budget, quickly and under 2 GB (see test_budgets.py, whose harness this reuses)."""
from __future__ import annotations

import pytest

from tests.hostile.test_budgets import WORK, check, run_bomb

BOMBS = {
    "draw into, moving items back and forth": ("d = xs", "draw 10000 from d into bg  shuffle bg into d", WORK),
    "draw into a list": ("d = xs", "draw 10000 from d into ys  d = ys  ys = []", WORK),
    "draw one into, over and over": ("d = xs", "draw one from d into zs  shuffle zs into d", WORK),
    "shuffle an empty list into a big deck": ("d = xs", "shuffle ys into d", WORK),
    "shuffle a big list into a deck and back": ("", "shuffle xs into d  draw 10000 from d into xs  draw 10000 from d into xs", WORK),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_growth_statement_bomb_stops_on_the_work_budget(name):
    setup, body, expect = BOMBS[name]
    check(run_bomb(setup, body), expect)
