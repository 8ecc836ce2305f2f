"""Every step of run-time work is counted: the issue's short rule files that ran for hours, blew up or
crashed must stop quickly with a GameError naming the limit. Each runs in a bounded child process, so
that a regression fails the test instead of hanging the run."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import rulelang
from rulelang import GameError
from tests.hostile.bounded import run_bounded

CHILD = '''
import time
import rulelang
from rulelang import GameError
rs = rulelang.loads(ARGS["text"])
start = time.process_time()
try:
    g = rs.new_game(2)
    g.to_json()
    g.view(0)
    g.winners()
    print("NO ERROR")
except GameError as e:
    print("GameError:", e)
print("cpu", round(time.process_time() - start, 2))
'''


def run(text, seconds=10):
    return run_bounded(CHILD, {"text": text}, seconds=seconds)


def stops_with(out, words):
    assert out.ok, out.explain()
    assert "GameError:" in out.stdout and words in out.stdout, out.explain()
    assert "\n" not in out.stdout.split("GameError:")[1].split("\ncpu")[0]  # one line
    assert float(out.stdout.split("cpu")[-1]) < 5, out.explain()


def five_lines(body, decl="var xs: list[int] = []"):
    return f'''game "T" {{ players 2 }}
board b = square_grid(200, 200)
{decl}
var m: map[int, int] = {{}}
flow {{ xs = [i for i in 1..100000]  m = {{i: i for i in 1..1000}}  loop {{ {body} }} }}
'''


@pytest.mark.parametrize("body", [
    "let y = sum(xs)",
    "let y = sorted(xs)",
    "let y = award_by_rank(m, [5, 3, 1])",
    "let y = reachable(b, (0, 0), 400)",
    "let y = to_set(xs)",
    "let r = roll 10000 of 1..6",
])
def test_builtins_in_a_loop_charge_the_work_budget(body):
    stops_with(run(five_lines(body)), "the work budget")


@pytest.mark.parametrize("after", ["let y = x == [x, x]", "log x", "let y = to_set([x])", ""])
def test_a_value_sharing_itself_stops_at_a_limit_when_built(after):
    out = run(f'''game "T" {{ players 2 }}
var x: list[any] = []
flow {{ repeat 60 times {{ x = [x, x] }}  {after} }}
''')
    stops_with(out, "before one decision")


def test_a_value_nested_too_deep_stops_at_the_depth_limit():
    out = run('''game "T" { players 2 }
var x: list[any] = []
flow { repeat 100000 times { x = [x] } }
''')
    stops_with(out, "nested more than 100 deep, the depth limit")


def test_a_value_just_inside_the_depth_limit_is_fine():
    rs = rulelang.loads('''game "T" { players 2 }
var x: list[any] = []
flow { repeat 99 times { x = [x] }  end_game "done" }
''')
    g = rs.new_game(2)
    assert g.is_over() and g.end_reason == "done"
    assert "[[[[" in g.to_json()
    g.view(0)


@pytest.mark.parametrize("where", ["score p = f(5000)", "score p = 0\ntiebreak p = f(5000)"])
def test_score_and_tiebreak_recursion_is_a_rule_error(where):
    out = run(f'''game "T" {{ players 2 }}
function f(n) = if n <= 0 then 0 else max(count([1], x => f(n - 1) > 0), 0) + 1
flow {{ end_game "x" }}
{where}
''')
    # the function depth limit (200), or Python's own stack before it (the closures backend): a rule error
    stops_with(out, "calls itself more than 200 deep" if "calls itself" in out.stdout else "nests too deeply")


def test_only_functions_that_call_themselves_count_against_the_depth_limit():
    # docs/language.md: functions may call themselves at most 200 deep; a chain of 230 different functions,
    # each calling the next, cannot nest without end and is not stopped by that limit
    chain = "".join(f"function f{i}(n: int): int = f{i + 1}(n) + 1\n" for i in range(230)) + "function f230(n: int): int = n\n"
    text = 'game "T" { players 2 }\nvar r: int = 0\n' + chain + 'flow { r = f0(5)  end_game "x" }\n'
    rs = rulelang.loads(text)
    assert rs.new_game(2).data["r"] == 235
    out = run(text.replace('end_game "x"', "r = f0(5) + f0(6)  end_game \"x\""))
    assert out.ok and "NO ERROR" in out.stdout, out.explain()
    # the closures (the reference) run the same, or meet Python's own stack first: a rule error, not a crash
    closures = rs.with_backend("closures")
    try:
        assert closures.new_game(2).data["r"] == 235
    except GameError as e:
        assert "nests too deeply" in str(e)
    recursive = 'function f(n: int): int = if n > 0 then f(n - 1) + 1 else 0\n'
    out = run('game "T" { players 2 }\n' + recursive + 'flow { let x = f(500)  end_game "x" }\n')
    stops_with(out, "calls itself more than 200 deep")


def test_sum_respects_the_number_limit():
    out = run('''game "T" { players 2 }
var x: int = 1
flow { repeat 20000 times { x = sum([x, x]) }  end_game "x" }
''')
    stops_with(out, "sum() is too large a number")


def test_the_time_limit_is_per_decision_and_configurable():
    rs = rulelang.loads('''game "T" { players 2 }
var k: int = 0
flow { loop { k += 1 } }
''')
    rs.time_limit = 0.05
    with pytest.raises(GameError) as err:
        rs.new_game(2)
    assert "0.05 seconds of CPU time" in str(err.value) and "the time limit" in str(err.value)


def test_the_time_limit_starts_again_at_each_decision():
    import time
    rs = rulelang.loads('''game "T" { players 2 }
var k: int = 0
action go { effect { k += 1 } }
flow { loop { turn 0 { offer [go] to 0 } } }
''')
    rs.time_limit = 0.2
    g = rs.new_game(2)
    start = time.process_time()
    while time.process_time() - start < 0.3:  # more CPU time than the limit passes between decisions
        pass
    g.apply("go")
    assert g.view(0)["vars"]["k"] == 1


def test_ordinary_work_is_far_below_the_budget():
    # a few thousand items per decision, sorting and searching included, stays well inside the budget
    rs = rulelang.loads('''game "T" { players 2 }
board b = square_grid(30, 30)
var k: int = 0
flow { k = count(sorted([i * 7 % 101 for i in 1..5000])) + count(reachable(b, (0, 0), 60))  end_game "x" }
''')
    g = rs.new_game(2)
    assert g.view(0)["vars"]["k"] == 5000 + 899


def test_listing_the_choices_of_an_action_over_big_changing_domains_is_work():
    """Two parameters over a 2,000-item list that the game changes: 4,000,000 candidates to try for
    one offer. Listing them is counted like any other loop."""
    text = '''game "T" { players 2 }
var xs: list[int] = []
setup { xs = [i for i in 1..2000] }
action pick(a in xs, b in xs) { require a + b < 0 }
action pass { }
flow { loop { offer [pick, pass] to 0 } }
'''
    stops_with(run(text), "while listing the choices of action 'pick'")


_SCALARS = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans(), st.none())
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4).map(tuple), st.frozensets(_SCALARS, max_size=4),
    st.dictionaries(_SCALARS, inner, max_size=4)), max_leaves=12)


@given(_VALUES)
@settings(max_examples=150, deadline=None)
def test_sorting_and_deep_charges_walk_and_read_every_part_once_each(v):
    """The charge of sorted/keys/values (and of count_of, index_of, ...) is the walk of the collection plus
    the reading of every part (times log n comparisons when sorting): a map or set measured once must
    charge exactly what walking it and reading it separately charge."""
    from interpreter.builtins import COSTS, _CONTAINERS, _cost_of, deep_cost
    size = len(v) if v.__class__ in _CONTAINERS else 1
    assert COSTS["values"]((v,)) == (_cost_of(v) + deep_cost(v)) * (size.bit_length() + 1)
    assert COSTS["count_of"]((v, v)) == 2 * (_cost_of(v) + deep_cost(v))


@given(_VALUES)
@settings(max_examples=150, deadline=None)
def test_comparing_two_lists_sets_or_maps_of_one_size_charges_reading_one_whole(v):
    """a == b of two different values of one kind and size reads every part of a (deep_cost), whether a
    is a flat list (charged without the call) or not; anything else is compared for nothing."""
    from interpreter.builtins import CONTAINERS, WORK_BUDGET, deep_cost
    from interpreter.runtime import _equal

    class G:
        work = 0
        work_mark = WORK_BUDGET

    twin = v.__class__(list(v)) if v.__class__ in (tuple, frozenset) else dict(v) if v.__class__ is dict else v
    assert _equal(G, v, twin) is True
    assert G.work == (deep_cost(v) if v.__class__ in CONTAINERS and twin is not v else 0)  # (() is ())
