"""Resource bombs: every built-in and every statement that loops or allocates, run over and over on a
big input inside one decision. Each must stop with a GameError that names the limit it hit, within a few
seconds and under 2 GB, in a bounded child process (a bomb that is not counted would run for hours).

The table must hold a bomb for every built-in in rulelang.library.FUNCTIONS: a new built-in without one
fails `test_every_builtin_has_a_bomb`.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rulelang.library import FUNCTIONS
from tests.hostile.bounded import run_bounded

# Every bomb runs in this file: `xs` is a list of N numbers, `s` the same as a set, `m` a map i -> i,
# `d` a deck, `b` a square board (200 x 200 for the graph searches, small for the rest: it is slow to build); SETUP runs once, then BODY runs in an endless loop (one decision).
TEMPLATE = '''game "T" {{ players 2 }}
board b = square_grid({side}, {side})
var xs: list[int] = []
var ys: list[int] = []
var zs: list[int] = []
var s: set[int] = {{}}
var m: map[int, int] = {{}}
var mm: map[int, list[int]] = {{}}
var d: deck[int] = []
var bg: bag[int] = []
var t: str = "ab"
var k: int = 0
var big: list[any] = []
event ping(n: int)
when ping(n) then {{ emit ping(n + 1)  emit ping(n + 1) }}
function fan(n) = if n <= 0 then 0 else fan(n - 1) + fan(n - 1)
function deep(n) = deep(n + 1)
flow {{ xs = [i for i in 1..{n}]  {setup}  loop {{ {body} }} }}
'''

WORK = "the work budget"
STEPS = "budget"  # the step budget, or the work budget when each call is charged a unit
SIZE = "the size limit"
DEPTH = "the depth limit"

# name -> (setup, body, what the error must name)
BOMBS = {
    # collections
    "count": ("", "let y = count(xs, a => a > 0)", WORK),
    "count_of": ("", "let y = count_of(xs, 7)", WORK),
    "sum": ("", "let y = sum(xs)", WORK),
    "max": ("", "let y = max(xs)", WORK),
    "min": ("", "let y = min(xs)", WORK),
    "max_by": ("", "let y = max_by(xs, a => a)", WORK),
    "min_by": ("", "let y = min_by(xs, a => a)", WORK),
    "sorted": ("", "let y = sorted(xs)", WORK),
    "reversed": ("", "let y = reversed(xs)", WORK),
    "any": ("", "let y = any(xs, a => a < 0)", WORK),
    "all": ("", "let y = all(xs, a => a > 0)", WORK),
    "first": ("s = to_set(xs)", "let y = first(s)", WORK),
    "last": ("s = to_set(xs)", "let y = last(s)", WORK),
    "index_of": ("", "let y = index_of(xs, 0 - 1)", WORK),
    "flatten": ("", "let y = flatten([xs, xs, xs])", WORK),
    "keys": ("m = {i: i for i in xs}", "let y = keys(m)", WORK),
    "values": ("m = {i: i for i in xs}", "let y = values(m)", WORK),
    "get": ("m = {i: i for i in xs}", "let y = get(m, 5, 0)", STEPS),
    "to_set": ("", "let y = to_set(xs)", WORK),
    "to_list": ("s = to_set(xs)", "let y = to_list(s)", WORK),
    "copies": ("", "let y = copies(xs, 1000)", SIZE),
    "slice": ("", "let y = slice(xs, 0, 20000)", WORK),
    # numbers and players: constant work per call, so the loop itself is what stops
    "abs": ("", "let y = abs(0 - 5)", STEPS),
    "clamp": ("", "let y = clamp(5, 0, 3)", STEPS),
    "next_player": ("", "let y = next_player(current)", STEPS),
    "previous_player": ("", "let y = previous_player(current)", STEPS),
    "players_from": ("", "let y = players_from(current)", STEPS),
    "is_eliminated": ("", "let y = is_eliminated(current)", STEPS),
    "seat": ("", "let y = seat(current)", STEPS),
    # boards
    "nodes": ("", "let y = nodes(b)", STEPS),
    "neighbors": ("", "let y = neighbors(b, (0, 0))", STEPS),
    "adjacent": ("", "let y = adjacent(b, (0, 0), (0, 1))", STEPS),
    "attr": ("", 'let y = attr(b, (0, 0), "row")', STEPS),
    "distance": ("", "let y = distance(b, (0, 0), (199, 199))", WORK),
    "reachable": ("", "let y = reachable(b, (0, 0), 400)", WORK),
    "path_exists": ("", "let y = path_exists(b, (0, 0), (199, 199), through: n => true)", WORK),
    "group": ("", "let y = group(b, (0, 0), where: n => true)", WORK),
    "groups": ("", "let y = groups(b, where: n => true)", WORK),
    "line_length": ("", "let y = line_length(b, (0, 0), where: n => true)", WORK),
    # scoring and text
    "award_by_rank": ("m = {i: i for i in xs}", "let y = award_by_rank(m, [3, 2, 1])", WORK),
    "text": ("", "let y = text(xs)", WORK),
}

STATEMENT_BOMBS = {
    "for": ("", "for i in xs { }", WORK),
    "for two names": ("m = {i: i for i in xs}", "for i, v in m { }", WORK),
    "while": ("", "while true { }", STEPS),
    "repeat": ("", "repeat 1000000000 times { }", STEPS),
    "loop": ("", "k += 1", STEPS),
    "list comprehension": ("", "let y = [a for a in xs]", WORK),
    "filtered comprehension": ("", "let y = [a for a in xs if a < 0]", WORK),
    "map comprehension": ("", "let y = {a: a for a in xs}", WORK),
    "range": ("", "let y = 1..(k + 100000)", WORK),
    "add": ("", "add 1 to ys", WORK),
    "remove": ("ys = xs", "remove 1 from ys  add 1 to ys", WORK),
    "move": ("ys = xs", "move 1 from ys to zs  move 1 from zs to ys", WORK),
    "roll": ("", "let r = roll 10000 of 1..6", WORK),
    "draw": ("", "d = xs  let c = draw 10000 from d", WORK),
    "shuffle": ("d = xs", "shuffle d", WORK),
    "bag assignment": ("", "bg = xs", WORK),
    "log": ("", "log xs", WORK),
    "emit chain": ("", "emit ping(0)", "triggers set off triggers"),
    "recursion": ("", "k = fan(60)", WORK),
    "deep recursion": ("", "k = deep(0)", "calls itself more than"),
    "list +": ("", "let y = xs + xs", WORK),
    "set +": ("s = to_set(xs)", "let y = s + s", WORK),
    "text +": ("", "t = t + t", "1,000,000 items"),
    "==": ("zs = [a for a in xs]", "let y = xs == zs", WORK),
    "in": ("", "let y = (0 - 1) in xs", WORK),
    "shared list": ("", "big = [big, big]", WORK),
    "nested list": ("", "big = [big]", DEPTH),
    "write into a map": ("", "k += 1  mm[k] = xs", WORK),
}

CHILD = '''
import time
import rulelang
from rulelang import GameError
rs = rulelang.loads(ARGS["text"])
if ARGS["steps"]:
    rs.step_budget = ARGS["steps"]
start = time.process_time()
try:
    g = rs.new_game(2)
    g.to_json()
    g.view(0)
    print("NO ERROR")
except GameError as e:
    print("GameError:", e)
print("cpu", round(time.process_time() - start, 2))
'''


def run_bomb(setup, body, n=20000, seconds=10, steps=None):
    """The bomb in a bounded child. `steps` lowers the step budget (the Ruleset's step_budget) to keep
    the suite quick where the loop itself, not the work in it, is what must stop."""
    side = 200 if "(199, 199)" in body or "where:" in body or "reachable" in body else 3
    text = TEMPLATE.format(n=n, setup=setup, body=body, side=side)
    return run_bounded(CHILD, {"text": text, "steps": steps}, seconds=seconds)


def check(out, expect):
    assert out.ok, out.explain()
    assert "GameError:" in out.stdout, out.explain()
    assert expect in out.stdout, out.explain()
    cpu = float(out.stdout.split("cpu")[-1])
    assert cpu < 5, out.explain()


def test_every_builtin_has_a_bomb():
    assert set(FUNCTIONS) <= set(BOMBS), sorted(set(FUNCTIONS) - set(BOMBS))


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_builtin_bomb_stops_on_a_limit(name):
    setup, body, expect = BOMBS[name]
    check(run_bomb(setup, body, steps=200_000 if expect == STEPS else None), expect)


@pytest.mark.parametrize("name", sorted(STATEMENT_BOMBS))
def test_statement_bomb_stops_on_a_limit(name):
    setup, body, expect = STATEMENT_BOMBS[name]
    check(run_bomb(setup, body, steps=200_000 if expect == STEPS else None), expect)


# Generated bombs: a random built-in over a random input size; however big or small the input, an
# endless loop of it stops on a limit (for small inputs, the step budget; otherwise the work budget).
_LIST_BOMBS = sorted(name for name, (setup, _, expect) in BOMBS.items() if expect == WORK)


@settings(deadline=None, max_examples=5, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(_LIST_BOMBS), n=st.integers(min_value=1, max_value=40000))
def test_generated_bombs_stop_on_a_budget(name, n):
    setup, body, _ = BOMBS[name]
    out = run_bomb(setup, body, n=n, steps=500_000)
    assert out.ok, out.explain()
    assert "GameError:" in out.stdout and ("budget" in out.stdout or "limit" in out.stdout), out.explain()
    assert float(out.stdout.split("cpu")[-1]) < 5, out.explain()
