"""Every path of a save, mutated (issue 31.9): saves of each game file (Station, Vega, Mars and the
examples) at several points of seeded random play; at every JSON path the value is removed, replaced by
a value of each JSON kind, or (a number) moved by one. Each mutation is either refused with a one-line
error naming the save, or loads a state that replays identically: its save loads back to the same text,
and it plays on (a few seeded decisions) exactly as the game loaded again from its save, failing only
with one-line rule errors, never with the signs of a state the code cannot run (a local that is not
there, a value of the wrong kind). A single change never makes another stack of frames that the rules
could have built (the frames below the top one wait where they started the one above, the top one at the
pending decision): so a mutation that loads keeps the stack's procedures and depths.

Station and the examples run with the suite, Vega and Mars (large saves) are marked slow. The examples'
paths get every kind of value; each path of the three big games gets the removal, the moves by one and a
third of the kinds of value, the third turning from path to path (every kind still meets every part of the save; all
of them made some 10,000 loads a game, over a minute of CPU each in CI)."""
import json
import os
import random

import pytest

import rulelang
from rulelang import GameError, IllegalAction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GAMES = [  # (rule file, players, chance, slow)
    ("games/station.rules", 3, "explicit", False),
    ("games/vega.rules", 2, "sampled", True),
    ("games/mars.rules", 2, "sampled", True),
    ("games/examples/connect4.rules", 2, "sampled", False),
    ("games/examples/tictactoe.rules", 2, "explicit", False),
    ("games/examples/kuhn_poker.rules", 2, "explicit", False),
]
POINTS = (0, 9, 40)  # decisions played before each save (fewer if the game ends first: then its end)
VALUES = [None, True, False, 0, -1, 7, 2 ** 62, "x", "", [], [0, True], {}, {"$set": []}]
BROKEN = ("has no value here", "a value of the wrong kind")  # what a state the code cannot run says
STEP_BUDGET = 200_000  # a mutated loop counter fails fast


def saves(path, players, chance):
    rs = rulelang.load(os.path.join(ROOT, path))
    rs.step_budget = STEP_BUDGET
    out = []
    g = rs.new_game(players, seed=7, chance=chance)
    r = random.Random(7)
    played = 0
    for point in POINTS:
        while played < point and not g.is_over():
            g.apply(r.choice(g.legal_actions()))
            played += 1
        out.append(g.to_json())
        if g.is_over():
            break
    return rs, out


def paths(d, prefix=()):
    """Every JSON path of a value (every key of an object, the first 8 items of a list)."""
    out = [prefix]
    if isinstance(d, dict):
        for k, v in d.items():
            out.extend(paths(v, prefix + (k,)))
    elif isinstance(d, list):
        for i, v in enumerate(d[:8]):
            out.extend(paths(v, prefix + (i,)))
    return out


def mutations(d, path, kinds=VALUES):
    """(label, mutated save text) for one path: removed, each of the kinds of value, moved by one."""
    parent = d
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    old = parent[key]
    out = []

    def put(label, value, remove=False):
        if remove:
            del parent[key]
        else:
            parent[key] = value
        out.append((label, json.dumps(d)))
        if remove and isinstance(parent, list):
            parent.insert(key, old)
        else:
            parent[key] = old

    put("removed", None, remove=True)
    for v in kinds:
        if json.dumps(v) != json.dumps(old):
            put(f"= {json.dumps(v)}", v)
    if isinstance(old, int) and not isinstance(old, bool):
        put("+1", old + 1)
        put("-1", old - 1)
    return out


def outcome(rs, text, r, stack):
    try:
        g = rs.load_game(text)
    except GameError as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith(f"not a saved game of {rs.name}"), msg
        return "refused"
    assert shape(json.loads(g.to_json())) == stack, "another stack of frames"
    saved = g.to_json()
    again = rs.load_game(saved)
    assert again.to_json() == saved, "the save of the loaded state does not load back to itself"
    for _ in range(3):  # it plays on exactly as the game loaded from its save
        acts = played(g.legal_actions)
        if not isinstance(acts, list) or not acts:
            break
        a = r.choice(acts)
        first, second = played(g.apply, a.id), played(again.apply, a.id)
        assert first == second, (first, second)
        assert g.to_json() == again.to_json()
        if isinstance(first, str):
            break
    return "loaded"


def shape(d):
    return [(f[0], f[3]) for f in d["frames"]]


def played(f, *args):
    """f(*args), or the one-line message of the rule error it raised."""
    try:
        return f(*args)
    except (GameError, IllegalAction) as e:
        msg = str(e)
        assert "\n" not in msg, msg
        assert not any(b in msg for b in BROKEN), msg
        return msg


@pytest.mark.parametrize("path,players,chance,slow", [
    pytest.param(p, n, c, slow, marks=[pytest.mark.slow] if slow else [], id=os.path.basename(p))
    for p, n, c, slow in GAMES])
def test_every_mutation_is_refused_or_replays_identically(path, players, chance, slow):
    rs, texts = saves(path, players, chance)
    seen = {"refused": 0, "loaded": 0}
    r = random.Random(1)
    for text in texts:
        d = json.loads(text)
        stack = shape(d)
        for number, p in enumerate(paths(d)[1:]):
            kinds = VALUES if path.startswith("games/examples/") else VALUES[number % 3::3]
            for label, mutated in mutations(d, p, kinds):
                try:
                    seen[outcome(rs, mutated, r, stack)] += 1
                except AssertionError as e:
                    raise AssertionError(f"{'.'.join(map(str, p))} {label}: {e}") from None
    assert seen["refused"] > 0 and seen["loaded"] > 0, seen
