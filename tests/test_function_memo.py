"""While the heuristic is computed (Game.heuristics: it reads the state, changes nothing), a rule function
called again with the same arguments answers from memory (docs/runtime.md, "Functions remembered"): its
body runs once, and the call charges the work the first one counted, so the heuristic's values, its work
and where the work budget stops it are those of the closures backend, which remembers nothing."""
from __future__ import annotations

from unittest import mock

import pytest

from interpreter import builtins as budget_module
from rulelang import GameError
from test_backends import HEAD, unoptimised

# `costly` is larger than the generator writes inline (so it is a generated function of its own);
# `shown` takes any value (true and 1 are equal in Python, not in the rules); `size_of` takes a map
# (no key can be made of it: computed each time)
RULES = HEAD + """var xs: list[int] = [5, 1, 4, 1]
var m: map[int, int] = {1: 2, 3: 4}
function costly(k: int): int = count_of(xs, k) + sum([x * k + max(x, k) - min(x, k) + x % 3
  + (if x > k then x - k else k - x) for x in xs if x != k and x + k > 0 and x * 2 != k + 1 and x - 7 != k])
  + count([x for x in xs if x > k + 1 and x < k + 9 and x != 3 and x != 11])
function shown(x) = text(x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x,
  x, x, x, x, x, x, x, x, x, x, x, x, x, x)
function size_of(mm: map[int, int]) = count(mm) + count(mm) + count(mm) + count(mm) + count(mm) + count(mm)
  + count(mm) + count(mm) + count(mm) + count(mm) + count(mm) + count(mm) + count(mm) + count(mm) + count(mm)
  + count(mm) + count(mm) + count(mm) + count(mm)
heuristic p = costly(1) + costly(1) + costly(p) + count(shown(true)) + count(shown(1)) + size_of(m) + size_of(m)
flow { end_game }
"""


def evaluate(rs, backend):
    """(heuristics, work, how many times count_of ran) of a new game of `rs` under `backend`."""
    runs = []
    real = budget_module.IMPLS["count_of"]

    def counting(*args):
        runs.append(args)
        return real(*args)

    with mock.patch.dict(budget_module.IMPLS, {"count_of": counting}):
        game = rs.with_backend(backend).new_game(2, seed=1)  # (the code is generated for the first game)
        runs.clear()
        values = game.heuristics()
        return values, game.work, len(runs)


def test_a_call_repeated_while_the_heuristic_is_computed_runs_once_and_charges_the_same_work():
    rs = unoptimised(RULES)
    assert rs.backend == "generated"
    values, work, runs = evaluate(rs, "generated")
    ref_values, ref_work, ref_runs = evaluate(unoptimised(RULES), "closures")
    # costly's own count_of: costly(1) three times and costly(0) once -> two runs (seat 0 computes costly(1)
    # and costly(0); seat 1's costly(1) calls are remembered); the closures run it six times
    assert (values, work) == (ref_values, ref_work)
    assert (runs, ref_runs) == (2, 6)


def test_true_and_1_are_remembered_apart():
    """Python's `True == 1` would answer shown(1) with shown(true)'s text: 42 words of 4 letters and 41
    spaces against 42 of 1."""
    rs = unoptimised(RULES.replace("heuristic p = ", "heuristic p = count(shown(true)) - count(shown(1)) + 0 * ("
                                   ).replace("size_of(m)\nflow", "size_of(m))\nflow"))
    assert rs.new_game(2, seed=1).heuristics() == [126, 126]


def test_nothing_is_remembered_from_one_heuristic_to_the_next_or_in_play():
    rs = unoptimised(RULES)
    game = rs.new_game(2, seed=1)
    first = game.heuristics()
    assert game.memo is None  # (forgotten when the heuristic is computed: the state may change after)
    assert game.heuristics() == first
    assert game.clone().memo is None


@pytest.mark.parametrize("margin", [-1, 0, 1])
def test_the_work_budget_stops_a_remembered_heuristic_where_it_stops_the_closures(margin):
    """The budget set one unit below, at and above the heuristic's work: the generated code (its repeated
    calls answered from memory, their work charged again) stops exactly where the closures stop."""
    _, work, _ = evaluate(unoptimised(RULES), "closures")
    budget = work + margin
    outcomes = []
    for backend in ("generated", "closures"):
        game = unoptimised(RULES).with_backend(backend).new_game(2, seed=1)
        with mock.patch.object(budget_module, "WORK_BUDGET", budget), \
                mock.patch.object(budget_module, "TIME_CHECK_EVERY", 1):  # (the budget looked at every unit)
            try:
                outcomes.append(game.heuristics())
            except GameError as e:
                outcomes.append("work budget" in str(e))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0] is True) == (margin < 0)


def test_a_function_that_can_call_itself_is_never_answered_from_memory():
    """Its depth check must see every nesting: a value remembered from a shallow call would let a deep one
    pass where the closures stop."""
    rs = unoptimised(HEAD + "function deep(n: int): int = if n > 0 then deep(n - 1) + 1 else 0\n"
                            "heuristic p = deep(3) + deep(3)\nflow { end_game }")
    game = rs.new_game(2, seed=1)
    assert game.heuristics() == [6, 6]
    source = rs.generated_source
    start = source.index("def fn_")
    assert "memo_" not in source[start:source.index("\ndef ", start + 1)]


GAMES_WITH_A_HEURISTIC = ["games/mars.rules", "games/vega.rules", "games/station.rules"]


@pytest.mark.parametrize("path", GAMES_WITH_A_HEURISTIC)
def test_the_game_files_heuristics_are_the_closures_values_and_work(path):
    """Random positions of each game file that declares a heuristic: the same values and the same work in
    both backends (the generated code remembers its functions' calls, the closures do not)."""
    import random
    from pathlib import Path

    import rulelang
    root = Path(__file__).resolve().parents[1]
    gen = rulelang.load(str(root / path))
    ref = gen.with_backend("closures")
    a, b = gen.new_game(3, seed=2), ref.new_game(3, seed=2)
    rng = random.Random(2)
    for step in range(60):
        if a.is_over():
            break
        pick = rng.choice(a.legal_actions()).id
        a.apply(pick)
        b.apply(pick)
        assert (a.heuristics(), a.work) == (b.heuristics(), b.work), (path, step)
