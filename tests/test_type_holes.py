"""Type holes that made a game's own save unloadable (issue 31.11): a value the checker could vouch for
only loosely (a node stored in an int variable, a number stored as a player, an untyped recursive
function's text stored in a list[int]) is checked when it is stored, with a positioned run-time error,
in both backends. And every state random play reaches in every game file round-trips through save and
load."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import rulelang
from rulelang import GameError

ROOT = Path(__file__).resolve().parent.parent
GAME_FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "games").rglob("*.rules"))

HEAD = '''game "T" { players 2 }
board g = square_grid(2, 2)
var n: int = 0
var w: player = 0
var xs: list[int] = []
var m: map[str, player] = {}
function f(k) = if k <= 0 then "text" else f(k - 1)
'''
HOLES = {
    "a node into an int": ("n = last(nodes(g))", "n is (1,1), not an int"),
    "a number into a player": ("w = 0 + 5", "w is 5, not a player (0 to 1)"),
    "a text into a list[int]": ("xs = [f(3)]", 'xs[0] is "text", not an int'),
    "a number into a map of players": ('m["a"] = 1 + 6', "not a player"),
}


@pytest.mark.parametrize("backend", ["generated", "closures"])
@pytest.mark.parametrize("name", sorted(HOLES))
def test_a_loosely_typed_value_is_checked_where_it_is_stored(name, backend):
    line, said = HOLES[name]
    rs = rulelang.loads(HEAD + "flow {\n  " + line + "\n  end_game\n}\n")
    if backend == "closures":
        rs = rs.with_backend("closures")
    with pytest.raises(GameError) as e:
        rs.new_game(2)
    assert said in str(e.value) and "<string>:9:3:" in str(e.value), str(e.value)


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_values_of_the_right_type_pass_and_the_save_loads(backend):
    rs = rulelang.loads(HEAD + 'function g2(k) = if k <= 0 then 7 else g2(k - 1)\n'
                               'flow {\n  n = 0 + 1\n  w = 0 + 1\n  xs = [g2(3)]\n  m["a"] = 0 + 1\n  end_game\n}\n')
    rs = rs if backend == "generated" else rs.with_backend("closures")
    g = rs.new_game(2)
    assert rs.load_game(g.to_json()).to_json() == g.to_json()


@pytest.mark.parametrize("path", GAME_FILES)
def test_every_state_of_random_play_round_trips_through_a_save(path):
    rs = rulelang.load(str(ROOT / path))
    for seed in range(2):
        players = rs.player_counts[seed % len(rs.player_counts)]
        g = rs.new_game(players, seed=seed)
        rng = random.Random(seed)
        for step in range(400):
            if g.is_over():
                break
            if step % 9 == 0:
                text = g.to_json()
                again = rs.load_game(text)
                assert again.to_json() == text, (path, seed, step)
            g.apply(rng.choice(g.legal_actions()))
        text = g.to_json()
        assert rs.load_game(text).to_json() == text
