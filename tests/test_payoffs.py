"""`payoff p = EXPR` and Game.returns().

Without a payoff, returns() is zero-sum (what OpenSpiel and PettingZoo expect of a win/loss game): each
seat outside winners() gets -1 and the k winners share what the losers lose, (n - k)/k each; one winner
of two: +1/-1 as before. returns("legacy") keeps the old rule (a shared victory: winners 0, others -1).
With a payoff: each seat's value of it, in both backends; a payoff that is not a number is a positioned
error; a variant may override it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import rulelang

KUHN = Path(__file__).resolve().parents[1] / "games" / "examples" / "kuhn_poker.rules"

RACE = """
game "Race" { players 2..3 }
per player var points: int = 0
action step {
  effect { points[me] += 1 }
}
flow { loop { for p in players { turn p { offer [step] to p } } } }
ending "round" when all(players, p => points[p] >= 1)
score p = if p == 0 then 0 else 1
"""


def finished(text, players, backend="generated", variants=()):
    rs = rulelang.loads(text, variants=variants).with_backend(backend)
    g = rs.new_game(players, seed=0)
    while not g.is_over():
        g.apply(g.legal_actions()[0])
    return g


def test_default_returns_are_zero_sum_when_a_victory_is_shared():
    g = finished(RACE, 3)
    assert g.winners() == [1, 2]
    assert g.returns() == [-1.0, 0.5, 0.5]  # the two winners share the loser's -1
    assert sum(g.returns()) == 0


def test_one_winner_of_two_is_plus_one_minus_one():
    g = finished(RACE, 2)
    assert g.winners() == [1]
    assert g.returns() == [-1.0, 1.0]


def test_legacy_returns_keep_the_old_rule():
    g = finished(RACE, 3)
    assert g.returns("legacy") == [-1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="zero_sum"):
        g.returns("fair")


def test_returns_before_the_end_are_zero():
    rs = rulelang.loads(RACE)
    assert rs.new_game(3, seed=0).returns() == [0.0, 0.0, 0.0]


PAYOFF = RACE + """
# a shared loss: everybody pays 2, the first seat pays 4
payoff p = if p == 0 then -4 else -2
"""


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_a_payoff_gives_each_seat_its_value(backend):
    g = finished(PAYOFF, 3, backend)
    assert g.payoffs() == [-4, -2, -2]
    assert g.returns() == [-4.0, -2.0, -2.0]
    assert g.returns("legacy") == [-1.0, 0.0, 0.0]  # the old rule ignores payoffs
    assert g.winners() == [1, 2]  # winners still come from the score


def test_a_payoff_that_is_not_a_number_is_a_positioned_error():
    with pytest.raises(rulelang.RuleError) as err:
        rulelang.loads(RACE + 'payoff p = "lots"\n')
    d = next(d for d in err.value.diagnostics if d.code == "E301")
    assert "a payoff is a number" in d.message
    assert d.line == RACE.count("\n") + 1 and d.column == 12


def test_two_payoffs_are_an_error_and_a_variant_may_override_one():
    with pytest.raises(rulelang.RuleError) as err:
        rulelang.loads(PAYOFF + "payoff p = 1\n")
    assert any(d.code == "E101" and "'payoff' is declared twice" in d.message for d in err.value.diagnostics)
    text = PAYOFF + 'variant even "nobody pays" { override payoff p = 0 }\n'
    assert finished(text, 3).returns() == [-4.0, -2.0, -2.0]
    assert finished(text, 3, variants=("even",)).returns() == [0.0, 0.0, 0.0]


def test_a_failing_payoff_is_a_one_line_game_error():
    g = finished(RACE + "payoff p = 1 / (p - p)\n", 2)
    with pytest.raises(rulelang.GameError) as err:
        g.returns()
    assert "while computing the payoffs" in str(err.value) and "\n" not in str(err.value)


def test_kuhn_poker_declares_its_chip_payoffs():
    rs = rulelang.load(str(KUHN))
    g = rs.new_game(2, seed=0, chance="explicit")
    for a in ["2", "0", "bet", "bet"]:  # P0 holds the king, P1 the jack; a bet called
        g.apply(a)
    assert g.returns() == [2.0, -2.0]
