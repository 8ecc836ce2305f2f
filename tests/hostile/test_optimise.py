"""Rule files built to make the optimiser blow up: function trees that double at each level, a small
function called from thousands of places, calls nested as deep as the parser allows, long cycles of
mutually recursive functions. Each must load within the time and memory bounds (the optimiser adds at
most its budget of nodes and keeps the depth limit) and play as without the optimiser."""
from __future__ import annotations

from tests.hostile.bounded import run_bounded
import pytest

CHILD = '''
import time
import rulelang
from rulelang import GameError
from rulelang.checker import check_program
from rulelang.program import build_program
from interpreter.ruleset import Ruleset

start = time.process_time()
rs = rulelang.loads(ARGS["text"])
print("load", round(time.process_time() - start, 2))
prog, _ = build_program("<string>", ARGS["text"], ())
plain = Ruleset(prog, check_program(prog), optimise=False)
for r in (rs, plain):
    try:
        g = r.new_game(2, seed=1)
        print("json", g.to_json(), g.scores())
    except GameError as e:
        print("GameError:", e)
'''


def run(text, seconds=30):
    out = run_bounded(CHILD, {"text": text}, seconds=seconds)
    assert out.ok, out.explain()
    lines = out.stdout.splitlines()
    assert float(lines[0].split()[1]) < 10, out.stdout  # the load, in CPU seconds
    assert lines[1] == lines[2], out.stdout  # the same game with and without the optimiser
    return out


def game(funcs, flow):
    return 'game "T" { players 2 }\nvar n: int = 0\n' + funcs + f"flow {{ {flow}  end_game \"done\" }}\n"


def test_a_function_tree_doubling_at_each_level():
    funcs = "function f0(a) = a + 1\n" + "".join(
        f"function f{i}(a) = f{i - 1}(a) + f{i - 1}(a + 1)\n" for i in range(1, 45))  # 45 levels: still inlined (see MAX_CHAIN)
    run(game(funcs, "n = f8(1)"))


@pytest.mark.slow  # minutes of CPU: run by `pytest -m slow` (.ci/run does), not by the README's command
def test_a_small_function_called_from_thousands_of_places():
    funcs = "function f(a) = [x for x in 1..a if x > 1 and x != a and x * 2 != a + 1 and x + 3 != a]\n"
    calls = " ".join(f"n = n + count(f({i % 7}))" for i in range(2500))
    run(game(funcs, calls), seconds=60)


def test_calls_nested_as_deep_as_the_parser_allows():
    funcs = "function f(a) = if a > 100 then a else a * 2 + 1\n"
    run(game(funcs, "n = " + "f(" * 95 + "1" + ")" * 95))


def test_a_long_cycle_of_mutually_recursive_functions():
    k = 1000
    funcs = "".join(f"function g{i}(a) = if a <= 0 then 0 else g{(i + 1) % k}(a - 1) + 1\n" for i in range(k))
    run(game(funcs, "n = g0(50)"))


def test_a_long_chain_of_small_functions():
    # 1,000 functions each calling the one before: the limit of nested calls stops it, with the same
    # message as without the optimiser (such a program is not inlined)
    k = 1000
    funcs = "function h0(a) = a\n" + "".join(f"function h{i}(a) = h{i - 1}(a) + 1\n" for i in range(1, k))
    run(game(funcs, f"n = h{k - 1}(0)"))


@pytest.mark.slow  # tens of seconds of CPU on a loaded machine: run by `pytest -m slow` (.ci/run does)
def test_a_large_loop_test_written_into_a_thousand_loops():
    """A function just under the loop-test limit (inline_loop_tests: up to 200 nodes), the whole test of
    a thousand any() and comprehensions: the writing stops at the optimiser's budget of nodes."""
    body = " and ".join(f"x * {i} != a + {i}" for i in range(1, 24))  # 190 nodes with the rest
    funcs = f"function ok(x, a) = if x > a then {body} else x != a\n"
    calls = " ".join(f"n = n + count([x for x in 1..3 if ok(x, {i % 5})]) + (if any(1..2, y => ok(y, {i % 3})) then 1 else 0)"
                     for i in range(500))  # ~190K nodes to write: past the budget
    run(game(funcs, calls), seconds=60)
