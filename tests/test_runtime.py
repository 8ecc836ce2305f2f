"""The runtime: determinism, saving and loading, copies, illegal actions, limits, chance, views."""
import json
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

import rulelang
from rulelang import GameError, IllegalAction

HERE = os.path.dirname(__file__)
TOOLKIT = os.path.join(HERE, "rules", "toolkit.rules")


@pytest.fixture(scope="module")
def toolkit():
    return rulelang.load(TOOLKIT)


def play_random(rs, players, seed, pick_seed, chance="sampled", stop_after=None):
    g = rs.new_game(players, seed=seed, chance=chance)
    r = random.Random(pick_seed)
    steps = 0
    while not g.is_over() and (stop_after is None or steps < stop_after):
        g.apply(r.choice(g.legal_actions()))
        steps += 1
    return g


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), pick=st.integers(0, 1000), players=st.sampled_from([2, 3, 4]),
       chance=st.sampled_from(["sampled", "explicit"]))
def test_same_seed_and_decisions_give_byte_identical_games(toolkit, seed, pick, players, chance):
    a = play_random(toolkit, players, seed, pick, chance)
    b = play_random(toolkit, players, seed, pick, chance)
    assert a.to_json() == b.to_json()
    assert a.is_over()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), pick=st.integers(0, 1000), cut=st.integers(0, 30),
       chance=st.sampled_from(["sampled", "explicit"]))
def test_json_round_trip_mid_game_continues_identically(toolkit, seed, pick, cut, chance):
    g = toolkit.new_game(3, seed=seed, chance=chance)
    r = random.Random(pick)
    for _ in range(cut):
        if g.is_over():
            break
        g.apply(r.choice(g.legal_actions()))
    text = g.to_json()
    h = toolkit.load_game(text)
    assert h.to_json() == text
    assert [a.id for a in h.legal_actions()] == [a.id for a in g.legal_actions()]
    r2 = random.Random(pick + 1)
    r3 = random.Random(pick + 1)
    while not g.is_over():
        g.apply(r2.choice(g.legal_actions()))
        h.apply(r3.choice(h.legal_actions()))
    assert g.to_json() == h.to_json()


def test_clone_is_independent(toolkit):
    g = play_random(toolkit, 2, 3, 3, stop_after=5)
    before = g.to_json()
    c = g.clone()
    r = random.Random(9)
    while not c.is_over():
        c.apply(r.choice(c.legal_actions()))
    assert g.to_json() == before
    assert not g.is_over()


def test_illegal_action_is_rejected_and_changes_nothing(toolkit):
    g = toolkit.new_game(2, seed=1)
    before = g.to_json()
    with pytest.raises(IllegalAction) as err:
        g.apply("climb(3)")
    assert "not legal" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(IllegalAction):
        g.apply(42)
    assert g.to_json() == before


def test_require_and_cost_decide_legality(toolkit):
    g = toolkit.new_game(2, seed=1)
    ids = [a.id for a in g.legal_actions()]
    # two gems at the start: climbing 1 or 2 is affordable
    assert {"gain", "climb(1)", "climb(2)", "pick"} == set(ids)
    g.apply("climb(2)")  # P0 pays 2 gems
    g.apply("gain")  # P1
    ids = [a.id for a in g.legal_actions()]
    assert "climb(1)" not in ids and "climb(2)" not in ids  # P0 has no gems left
    assert g.view(None)["vars"]["gems"] == [0, 3]


# A require that stops the game with an error when it is tested (index 9 of a list of one), written after
# or before a cost that P0 cannot pay (3 coins of 1) for k = 3 only (docs/language.md, Actions: the requires
# and costs are tested in the order written, the first that fails rules the candidate out).
_ORDER = """
game "T" {{ players 2 }}
per player var coins: int = 1
var xs: list[int] = [1]
action a(k: 1..3) {{
  {first}
  {second}
  effect {{ coins[me] -= 0 }}
}}
action pass {{ }}
flow {{ loop {{ turn 0 {{ offer [a, pass] to 0 }} }} }}
"""
_COST = "cost coins[me]: if k == 3 then 3 else 0"
_REQUIRE = "require k < 3 or xs[9] > 0"


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_requires_and_costs_are_tested_in_the_order_written(backend):
    cost_first = rulelang.loads(_ORDER.format(first=_COST, second=_REQUIRE)).with_backend(backend)
    g = cost_first.new_game(2)
    assert [a.id for a in g.legal_actions()] == ["a(1)", "a(2)", "pass"]  # a(3): the cost rules it out first
    require_first = rulelang.loads(_ORDER.format(first=_REQUIRE, second=_COST)).with_backend(backend)
    with pytest.raises(GameError) as err:  # a(3): the require is tested first, and fails with an error
        require_first.new_game(2).legal_actions()
    assert "while checking action 'a'" in str(err.value)


_PAID = """
game "T" { players 2 }
per player var gems: 0..9 = 5
action take(n in [2, -10]) {
  cost gems[me]: n
  effect { gems[me] += 0 }
}
flow { loop { offer [take] to 0 } }
"""


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_a_cost_is_paid_as_a_subtraction_before_the_effect(backend):
    # docs/language.md, Actions: taking the action subtracts the amount before the effect, as `-=` would
    # (the same range check, said at the cost)
    rs = rulelang.loads(_PAID).with_backend(backend)
    g = rs.new_game(2)
    g.apply("take(2)")
    assert g.view(None)["vars"]["gems"] == [3, 5]
    with pytest.raises(GameError) as err:  # 3 - (-10) = 13: outside 0..9
        g.apply("take(-10)")
    assert str(err.value).startswith("<string>:5:8:") and "would hold 13, outside its range 0..9" in str(err.value)


def test_triggers_run_after_the_event(toolkit):
    g = toolkit.new_game(2, seed=1)
    g.apply("climb(2)")
    assert g.view(None)["vars"]["bonus"] == [1, 0]


def test_several_choice_is_a_sequence_of_picks_with_done(toolkit):
    g = toolkit.new_game(2, seed=1)
    g.apply("pick")
    ids = [a.id for a in g.legal_actions()]
    assert ids == ["1", "2", "3", "done"]
    g.apply("2")
    assert [a.id for a in g.legal_actions()] == ["3", "done"]  # unordered: no going back to 1
    g.apply("3")  # the second pick completes the choice
    assert g.view(None)["vars"]["picked"] == [2, 3]


def test_explicit_chance_offers_outcomes_with_probabilities(toolkit):
    g = toolkit.new_game(2, seed=1, chance="explicit")
    # setup shuffled the deck: drawing is a chance decision over the four cards
    g.apply("pick")
    assert g.current_player == -1
    outcomes = g.chance_outcomes()
    assert sorted(a.id for a, _ in outcomes) == ["c1", "c2", "c3", "c4"]
    assert all(abs(p - 0.25) < 1e-12 for _, p in outcomes)
    g.apply("c3")
    assert g.view(None)["vars"]["hand"][0] == ["c3"]
    g.apply("done")
    # the bag holds red, red, blue
    probs = {a.id: p for a, p in g.chance_outcomes()}
    assert probs == pytest.approx({"blue": 1 / 3, "red": 2 / 3})


def test_hidden_hands_are_hidden_from_other_players(toolkit):
    g = toolkit.new_game(2, seed=1)
    g.apply("pick")
    g.apply("done")
    mine = g.view(0)["vars"]["hand"]
    theirs = g.view(1)["vars"]["hand"]
    assert len(mine[0]) == 1 and isinstance(mine[0][0], str)
    assert theirs[0] == {"hidden": 1}
    assert "options" not in g.view(0)["pending"]  # P1 decides now; P0 does not see P1's options
    assert "options" in g.view(1)["pending"]


def test_ending_and_scores_and_tiebreak(toolkit):
    g = toolkit.new_game(2, seed=1)
    for a in ["climb(2)", "gain", "gain", "gain", "gain", "gain", "climb(2)", "gain", "gain", "gain", "climb(1)"]:
        g.apply(a)
    assert g.is_over() and g.end_reason == "top of the track"
    assert g.scores()[0] == 5 * 10 + 2
    assert g.winners() == [0]
    assert g.returns() == [1.0, -1.0]


def test_range_types_are_enforced_at_run_time():
    rs = rulelang.loads('''
game "T" { players 2 }
var x: 0..3 = 0
action up { effect { x += 2 } }
flow { loop { turn 0 { offer [up] to 0 } } }
''')
    g = rs.new_game(2)
    g.apply("up")
    with pytest.raises(GameError) as err:
        g.apply("up")
    assert "outside its range 0..3" in str(err.value)
    assert "<string>:4:" in str(err.value)


def test_endless_loop_hits_the_step_budget():
    rs = rulelang.loads('''
game "T" { players 2 }
var x: int = 0
flow { loop { x += 1 } }
''')
    with pytest.raises(GameError) as err:
        rs.new_game(2)
    assert "steps without needing a decision" in str(err.value)


def test_trigger_cascade_is_bounded():
    rs = rulelang.loads('''
game "T" { players 2 }
event ping(n: int)
when ping(n) then { emit ping(n + 1) }
action go { effect { emit ping(0) } }
flow { loop { turn 0 { offer [go] to 0 } } }
''')
    g = rs.new_game(2)
    with pytest.raises(GameError) as err:
        g.apply("go")
    assert "triggers set off triggers" in str(err.value)


def test_a_player_without_legal_actions_is_reported_as_stuck():
    rs = rulelang.loads('''
game "T" { players 2 }
var n: int = 0
action go { require n < 1  effect { n += 1 } }
flow { loop { turn 0 { offer [go] to 0 } } }
''')
    g = rs.new_game(2)
    with pytest.raises(GameError) as err:
        g.apply("go")
    assert "stuck" in str(err.value)


def test_bad_save_files_give_one_line_errors(toolkit):
    g = toolkit.new_game(2, seed=1)
    good = json.loads(g.to_json())
    bad_texts = ["", "not json", "[]", json.dumps({**good, "format": "x"}), json.dumps({**good, "game": "Other"}),
                 json.dumps({**good, "players": 9}), json.dumps({**good, "frames": [["nowhere", 0, {}, 0]]}),
                 json.dumps({**good, "data": {}}), json.dumps({**good, "pending": {"kind": "x"}})]
    for text in bad_texts:
        with pytest.raises(GameError) as err:
            toolkit.load_game(text)
        assert "\n" not in str(err.value)


def test_elimination_skips_turns_and_cannot_win():
    rs = rulelang.loads('''
game "T" { players 3 }
per player var pts: int = 0
action win { effect { pts[me] += 5 } }
action knock(p: player) { require p != me  effect { eliminate p } }
flow {
  loop {
    for p in players { turn p { offer [win, knock] to p } }
    if count(players) == 1 { end_game "last one standing" }
  }
}
score p = pts[p]
''')
    g = rs.new_game(3)
    g.apply("win")        # P0 scores 5
    g.apply("knock(0)")   # P1 eliminates P0
    assert g.view(None)["eliminated"] == [0]
    assert g.current_player == 2
    g.apply("knock(1)")   # P2 eliminates P1; only P2 remains
    assert g.is_over() and g.end_reason == "last one standing"
    assert g.winners() == [2]  # P0 has the most points but is out


def test_players_from_skips_the_eliminated_seats_as_they_are_now():
    # docs/language.md: players_from(p) is the seats still in the game, clockwise from p
    rs = rulelang.loads('''
game "T" { players 4 }
var seen: list[any] = []
action knock(p: player) { require p != me  effect { eliminate p } }
action look { effect { seen = seen + [players_from(1), players_from(3)] } }
flow { loop { turn 0 { offer [knock, look] to 0 } } }
''')
    g = rs.new_game(4)
    g.apply("look")
    g.apply("knock(2)")
    g.apply("look")
    g.apply("knock(1)")
    g.apply("look")
    assert g.view(None)["vars"]["seen"] == [[1, 2, 3, 0], [3, 0, 1, 2], [1, 3, 0], [3, 0, 1], [3, 0], [3, 0]]


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_sum_of_values_adds_a_maps_values(backend):
    # docs/language.md: values(m) lists the values in key order, sum() adds a list of numbers; a running
    # total past 2^62 in size stops the rules (here in key order: 2^62 - 1000 twice before the negative)
    rs = rulelang.loads('''
game "T" { players 2 }
var ms: list[map[any, int]] = [{}, {"b": 2, "a": -5, "c": 7}, {2: 1, 1: true, 3: 0}]
var big: map[int, int] = {3: -4611686018427387000, 1: 4611686018427387000, 2: 4611686018427387000}
var r: list[int] = []
var n: int = 0
action add_big { effect { n = sum(values(big)) } }
flow { r = [sum(values(m)) for m in ms]  loop { turn 0 { offer [add_big] to 0 } } }
''').with_backend(backend)
    g = rs.new_game(2)
    assert list(g.data["r"]) == [0, 4, 2]
    with pytest.raises(GameError) as err:
        g.apply("add_big")
    assert "sum() is too large a number" in str(err.value)


@pytest.mark.parametrize("m", [{}, {"a": 1}, {"b": 2, "a": -5, "c": 7}, {i: i for i in range(17)},
                               {(i, i): 2 for i in range(9)}, {frozenset({i}): 1 for i in range(3)}])
def test_sum_of_values_charges_what_values_then_sum_charge(m):
    from interpreter import builtins as B

    class G:
        work, work_mark = 0, 1 << 60
    g = G()
    assert B.sum_of_values(g, m, None) == sum(m.values())
    once = B.COSTS["values"]((m,)) + B.COSTS["sum"]((B.b_values(None, m),))
    assert g.work == once
    # the same map asked again (its answer kept): the same sum, charged again the same
    assert B.sum_of_values(g, m, None) == sum(m.values())
    assert g.work == 2 * once
    other = dict(m)  # an equal map made anew: computed, charged alike
    assert B.sum_of_values(g, other, None) == sum(m.values()) and g.work == 3 * once


CHOOSE_ONE = '''
game "T" { players 2 }
var got: list[any] = []
var pool: list[any] = POOL
action ask { effect { let x = choose one of pool by 1 OPTIONAL prompt "which?"  got = got + [x] } }
flow { loop { turn 0 { offer [ask] to 0 } } }
'''


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_choose_one_as_the_language_reference_says(backend):
    # docs/language.md, "choose": one item; `optional` allows `done` (none); duplicates offered once;
    # no options and nothing required: none without asking; no options and one required: an error
    def game(pool, optional):
        text = CHOOSE_ONE.replace("POOL", pool).replace("OPTIONAL", "optional" if optional else "")
        return rulelang.loads(text).with_backend(backend).new_game(2)

    g = game('["b", "a", "b", 3]', True)
    g.apply("ask")
    assert g.current_player == 1 and [a.id for a in g.legal_actions()] == ["b", "a", "3", "done"]
    saved = g.to_json()
    g.apply("3")
    g.apply("ask")
    g.apply("done")
    assert g.view(None)["vars"]["got"] == [3, None]
    g2 = rulelang.loads(CHOOSE_ONE.replace("POOL", '["b", "a", "b", 3]').replace("OPTIONAL", "optional")) \
        .with_backend(backend).load_game(saved)
    assert [a.id for a in g2.legal_actions()] == ["b", "a", "3", "done"]
    g2.apply("a")
    assert g2.view(None)["vars"]["got"] == ["a"] and g2.current_player == 0
    g = game("[]", True)
    g.apply("ask")  # nothing to choose and nothing required: none, without a decision
    assert g.view(None)["vars"]["got"] == [None] and g.current_player == 0
    g = game("[]", False)
    with pytest.raises(GameError) as err:
        g.apply("ask")
    assert "must choose 1 from only 0 options" in str(err.value)


def test_runaway_computation_is_bounded():
    rs = rulelang.loads('''
game "T" { players 2 }
function f(n) = if n == 0 then 1 else f(n - 1) + f(n - 1)
var x: int = 0
var big: list[int] = []
action go { effect { x = f(40) } }
action grow { effect { big = [a for a in [c for c in 1..1000000] if count([b for b in 1..1000000]) > 0] } }
flow { loop { turn 0 { offer [go, grow] to 0 } } }
ending "never" when false
''')
    for action in ("go", "grow"):
        g = rs.new_game(2)
        with pytest.raises(GameError) as err:
            g.apply(action)
        assert "before one decision" in str(err.value)


def test_choosing_exactly_n_always_ends_with_n_items():
    rs = rulelang.loads('''
game "T" { players 2 }
var got: list[int] = []
action go { effect { let xs = choose 2 of [1, 2, 3] by me  got = xs  end_game "done" } }
flow { turn 0 { offer [go] to 0 } }
''')
    g = rs.new_game(2)
    g.apply("go")
    assert [a.id for a in g.legal_actions()] == ["1", "2"]  # picking 3 first would leave nothing to pair
    g.apply("2")
    assert [a.id for a in g.legal_actions()] == ["3"]
    g.apply("3")
    assert g.view(None)["vars"]["got"] == [2, 3]


def test_games_are_identical_across_processes_with_different_hash_seeds():
    """Determinism may not depend on Python's per-process string hashing (set and dict orders)."""
    import subprocess
    import sys

    root = os.path.dirname(HERE)
    script = (
        "import hashlib, random, rulelang\n"
        f"rs = rulelang.load({os.path.join(root, 'games', 'station.rules')!r})\n"
        "g = rs.new_game(2, seed=3)\n"
        "r = random.Random(3)\n"
        "while not g.is_over():\n"
        "    g.apply(r.choice(g.legal_actions()))\n"
        "print(hashlib.sha256(g.to_json().encode()).hexdigest())\n"
    )
    outs = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=root)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        outs.add(out.stdout.strip())
    assert len(outs) == 1


@pytest.mark.parametrize("effect, message", [
    ("x = count(0..999999, a => count(0..999999, b => b == a) > 5)", "steps of computation"),
    ("x = sum([count([b for b in 0..999999]) for a in 0..999999])", "steps of computation"),
    ("let xs = roll 1000000000 of 1..6", "from 0 to 10,000 at once"),
    ("repeat 100 times { x += x + 1 }", "too large a number"),
    ("repeat 40 times { s = s + s }", "more than 1,000,000 items"),
    ("let xs = choose (0 - 3) of [1, 2] by me", "cannot choose -3 items"),
    ("pos = [50, 60]", "outside its range 0..10"),
    ("add 77 to small", "outside its range 0..5"),
])
def test_runaway_values_and_counts_stop_with_a_rule_error(effect, message):
    rs = rulelang.loads(f'''
game "T" {{ players 2 }}
var x: int = 1
var s: str = "ab"
per player var pos: 0..10
var small: list[0..5] = []
action go {{ effect {{ {effect} }} }}
flow {{ loop {{ turn 0 {{ offer [go] to 0 }} }} }}
ending "never" when false
''')
    g = rs.new_game(2)
    with pytest.raises(GameError) as err:
        g.apply("go")
    assert message in str(err.value)


def test_a_draw_keeps_taking_from_the_pile_it_started_on():
    rs = rulelang.loads('''
game "T" { players 2 }
var piles: map[str, deck[int]] = {}
var which: str = "a"
var got: list[int] = []
setup { piles["a"] = [1, 2, 3]  piles["b"] = [7, 8, 9]  shuffle piles["a"] }
action go { effect { let xs = draw 2 from piles[which]  got = xs  end_game "done" } }
when turn_start(p) then { which = "a" }
flow { turn 0 { offer [go] to 0 } }
''')
    g = rs.new_game(2, chance="explicit")
    g.apply("go")
    g.apply("2")
    assert [a.id for a in g.legal_actions()] == ["1", "3"]
    g.apply("3")
    assert g.view(None)["vars"]["got"] == [2, 3]


def test_boards_inside_collections_survive_a_save():
    rs = rulelang.loads('''
game "T" { players 2 }
board grid = square_grid(2, 2)
board road { a -- b }
action go { effect { let bs = [grid, road]  let n = choose one of nodes(last(bs)) by me  end_game "done" } }
flow { turn 0 { offer [go] to 0 } }
''')
    g = rs.new_game(2)
    g.apply("go")
    assert rs.load_game(g.to_json()).to_json() == g.to_json()
    with pytest.raises(GameError):
        rs.load_game("[" * 100000 + "]" * 100000)


def test_a_listing_remembers_only_short_lists_without_repeats():
    # docs/runtime.md: a list found without repeats is remembered (lists never change once made); a list
    # with repeats gives its items once each, in order; a long list is never kept (memory stays bounded)
    from interpreter.generate import _NO_REPEATS, distinct_items
    xs = (3, 1, 2)
    assert distinct_items(xs) is xs and _NO_REPEATS.get(id(xs)) is xs
    assert distinct_items(xs) is xs  # asked again: remembered
    ys = (3, 1, 3, 2)
    assert list(distinct_items(ys)) == [3, 1, 2] and id(ys) not in _NO_REPEATS
    big = tuple(range(65))
    assert distinct_items(big) is big and id(big) not in _NO_REPEATS


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_count_of_counts_the_items_equal_to_the_value(backend):
    """count_of(xs, x): how many items of xs equal x (docs/language.md), for lists of numbers, of lists,
    of texts and for a set (its items once each)."""
    rs = rulelang.loads('game "C" { players 2 }\nvar r: list[int] = []\n'
                        'flow { r = [count_of([1, 2, 1], 1), count_of([[1], [1, 2], [1]], [1]), '
                        'count_of(["a", "b"], "c"), count_of({3, 4}, 3), count_of([], 5)] }')
    g = (rs if backend == "generated" else rs.with_backend("closures")).new_game(2, seed=1)
    assert g.data["r"] == (2, 2, 0, 1, 0)
