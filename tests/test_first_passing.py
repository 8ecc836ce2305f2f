"""`first(xs, x => test)`: the first item that passes the test, `none` when none does (docs/language.md,
"Collections"). Like `any`, it stops at its answer: the items after it are not tested, so a test that
would fail on a later item (a division by zero) does not, and the work is the list's charge and one unit
per item tested. Both backends give the same values and work."""
from __future__ import annotations

import pytest

import rulelang
from rulelang import GameError, RuleError
from test_backends import HEAD

RULES = HEAD + """var xs: list[int] = [3, 0, 5, 8]
var found: list[any] = []
flow {
  found = [first(xs, x => x > 4), first(xs, x => x > 100), first(xs), first([], x => true),
           first({9, 4, 2}, x => x > 3), first(xs, x => x == 3 or 10 / x > 5), first(players, q => q != 0)]
  end_game
}
"""


def game_of(text, backend):
    rs = rulelang.loads(text)
    return rs.with_backend(backend).new_game(2, seed=1)


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_the_first_item_that_passes(backend):
    found = game_of(RULES, backend).view()["vars"]["found"]
    # 5 is the first above 4; nothing is above 100; first(xs) is unchanged; an empty list has none; a set
    # is walked in sorted order (2, 4, 9); 3 passes before 0 is tested (10 / 0 is never computed); seat 1
    assert found == [5, None, 3, None, 4, 3, 1]


def test_an_item_after_the_answer_is_not_tested():
    """The same test on 0 first is the rules' error of a division by zero: what the lazy walk avoided."""
    text = RULES.replace("x => x == 3 or 10 / x > 5", "x => x == 5 or 10 / x > 5")
    with pytest.raises(GameError, match="zero"):
        game_of(text, "generated")


def heuristic_work(expr, items, backend="generated"):
    """The work of a heuristic that computes `expr` over xs = [1, ..., items]."""
    text = HEAD + f"var xs: list[int] = [i for i in 1..{items}]\nheuristic p = if {expr} then 0 else 1\nflow {{ end_game }}\n"
    game = game_of(text, backend)
    start = game.work
    game.heuristics()
    return game.work - start


@pytest.mark.parametrize("items", [3, 40])
def test_the_work_is_the_lists_and_the_items_tested(items):
    """As `any` with the same test (the list's charge, then a unit per item tested: both stop at 3), in
    both backends; `count`, which tests every item, costs more on the long list."""
    first_work = heuristic_work("first(xs, x => x == 3) == 3", items)
    assert first_work == heuristic_work("first(xs, x => x == 3) == 3", items, "closures")
    assert first_work == heuristic_work("any(xs, x => x == 3)", items)
    if items == 40:
        assert first_work < heuristic_work("count(xs, x => x == 3) == 1", items)


def test_the_checker_reads_the_test_with_the_items_type():
    """The test's parameter has the items' type (a number has no field) and the test must be a function."""
    found = codes(HEAD + "var xs: list[int] = [1]\nfunction f() = first(xs, x => x.name)\nflow { end_game }\n")
    assert found and found[0][1] == 3, found
    found = codes(HEAD + "var xs: list[int] = [1]\nfunction f() = first(xs, 3)\nflow { end_game }\n")
    assert [c for c, _, _ in found] == ["E325"], found


def codes(text):
    with pytest.raises(RuleError) as e:
        rulelang.loads(text)
    return [(d.code, d.line, d.message) for d in e.value.diagnostics]
