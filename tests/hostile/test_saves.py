"""Tampered saves: real saves of Station and of the examples, taken at random points of random seeded
games, tampered with systematically (every JSON path: values of other kinds, out-of-range and huge
numbers, Infinity/NaN text, deep nesting, long strings, missing and extra keys, wrong seats).

Every outcome must be a one-line GameError, or a game that loads AND then survives view(p) for every
seat, legal_actions(), chance_outcomes(), a to_json() round trip and a few random legal actions, with
no exception but GameError / IllegalAction. Cases that could eat memory or time run in a bounded child.
"""
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rulelang
from rulelang import GameError, IllegalAction
from tests.hostile.bounded import run_bounded

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GAMES = [  # (rule file, variants, players, chance)
    ("games/station.rules", (), 2, "sampled"),
    ("games/station.rules", (), 3, "explicit"),
    ("games/station.rules", ("first_play",), 4, "explicit"),
    ("tests/rules/toolkit.rules", (), 3, "explicit"),
    ("tests/rules/toolkit.rules", (), 2, "sampled"),
    ("games/examples/connect4.rules", (), 2, "sampled"),
    ("games/examples/tictactoe.rules", (), 2, "sampled"),
]
STEP_BUDGET = 200_000  # tampered loop counters fail fast (a real decision of these games needs far fewer)
RAW = "\u0000RAW\u0000"  # stands for a raw JSON text put in place of a value

_RULES = {}


def rules(path, variants):
    key = (path, variants)
    if key not in _RULES:
        rs = rulelang.load(os.path.join(ROOT, path), variants=variants)
        rs.step_budget = STEP_BUDGET
        _RULES[key] = rs
    return _RULES[key]


def real_saves(per_game=4, seed=0):
    """(ruleset, save text) at random points of random seeded games."""
    out = []
    for k, (path, variants, n, chance) in enumerate(GAMES):
        rs = rules(path, variants)
        r = random.Random(seed * 100 + k)
        g = rs.new_game(n, seed=r.randrange(1000), chance=chance)
        stops = sorted(r.sample(range(1, 120), per_game - 1))
        step = 0
        out.append((rs, g.to_json()))
        while stops and not g.is_over():
            g.apply(r.choice(g.legal_actions()))
            step += 1
            if step == stops[0]:
                stops.pop(0)
                out.append((rs, g.to_json()))
        if g.is_over():
            out.append((rs, g.to_json()))
    return out


SAVES = []


def saves():
    if not SAVES:
        SAVES.extend(real_saves())
    return SAVES


def paths(d, prefix=()):
    """Every JSON path of a value, as tuples of keys and indexes (at most 8 items of a list)."""
    out = [prefix]
    if isinstance(d, dict):
        for k, v in d.items():
            out.extend(paths(v, prefix + (k,)))
    elif isinstance(d, list):
        for i, v in enumerate(d[:8]):
            out.extend(paths(v, prefix + (i,)))
    return out


def get(d, path):
    for k in path:
        d = d[k]
    return d


REPLACEMENTS = [None, True, False, 0, 1, -1, 2, 3, 99, -99, 2 ** 63, 2 ** 64, -2 ** 64, 10 ** 40, "", "x", "done",
                "action", "choose", "chance", "teal", "s112", "c1", [], [0], [[0, 1]], ["x", 1], {}, {"a": 1},
                {"$set": []}, {"$set": [1, 1]}, {"$map": []}, {"$map": [[1, 2]]}, {"$map": [[{"$map": []}, 1]]},
                {"$pile": "deck", "known": [], "pool": []}, {"$pile": "bag", "known": ["x"], "pool": [1]},
                {"$board": "x"}, {"$done": True}, 0.5, 1.0, 1e300,
                (RAW, "Infinity"), (RAW, "-Infinity"), (RAW, "NaN"), (RAW, "1e999"), (RAW, "9" * 5000),
                (RAW, "[" * 3000 + "]" * 3000), (RAW, "[" * 150 + "]" * 150), ("long", 200_000)]


def tamper(d, path, how, value, r):
    """The save text with the value at `path` replaced, removed, or given an extra key."""
    d = json.loads(json.dumps(d))
    raw = None
    if path:
        parent = get(d, path[:-1])
        key = path[-1]
    if how == "remove" and path:
        del parent[key]
    elif how == "extra":
        target = get(d, path)
        if isinstance(target, dict):
            target["zz"] = 1
        elif isinstance(target, list):
            target.append(target[0] if target else 1)
    elif how == "seat":
        v = get(d, path)
        if isinstance(v, int) and not isinstance(v, bool):
            new = r.choice([v + 1, v - 1, d.get("players", 2), -1, -2, 1 - v])
            if path:
                parent[key] = new
            else:
                d = new
    elif how == "replace":
        if isinstance(value, tuple) and value[0] == RAW:
            raw, new = value[1], RAW
        elif isinstance(value, tuple) and value[0] == "long":
            new = "x" * value[1]
        else:
            new = value
        if path:
            parent[key] = new
        else:
            d = new
    text = json.dumps(d, ensure_ascii=False)
    if raw is not None:
        text = text.replace(json.dumps(RAW), raw)
    return text


def check_outcome(rs, text, r):
    """A one-line GameError, or a game that survives being looked at and played."""
    try:
        g = rs.load_game(text)
    except GameError as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith(f"not a saved game of {rs.name}"), msg
        return "refused"
    for p in range(g.n):
        _quiet(g.view, p)
    _quiet(g.view)
    _quiet(g.legal_actions)
    _quiet(g.chance_outcomes)
    _quiet(g.is_chance)
    _quiet(lambda: g.current_player)
    again = rs.load_game(g.to_json())
    assert again.to_json() == g.to_json()
    for _ in range(3):
        acts = _quiet(g.legal_actions)
        if not acts:
            break
        if _quiet(g.apply, r.choice(acts)) is _FAILED:
            break
        _quiet(g.view, 0)
    _quiet(g.to_json)
    return "loaded"


_FAILED = object()


def _quiet(f, *args):
    try:
        return f(*args)
    except (GameError, IllegalAction) as e:
        assert "\n" not in str(e), str(e)
        return _FAILED


# ---------------------------------------------------------------- the campaign (in process)
@settings(deadline=None, max_examples=400, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.data())
def test_tampered_saves_load_or_fail_in_one_line(data):
    pool = saves()
    rs, text = pool[data.draw(st.integers(0, len(pool) - 1), label="save")]
    d = json.loads(text)
    path = data.draw(st.sampled_from(paths(d)), label="path")
    how = data.draw(st.sampled_from(["replace", "replace", "replace", "remove", "extra", "seat"]), label="how")
    value = data.draw(st.sampled_from(REPLACEMENTS), label="value") if how == "replace" else None
    r = random.Random(data.draw(st.integers(0, 2 ** 16), label="seed"))
    check_outcome(rs, tamper(d, path, how, value, r), r)


def test_untampered_saves_load_and_play_on():
    r = random.Random(1)
    for rs, text in saves():
        assert check_outcome(rs, text, r) == "loaded"


def test_every_path_of_a_station_save_with_every_kind_of_value():
    """Systematic: for every path of a Station save in mid-game, every replacement (no sampling)."""
    rs = rules("games/station.rules", ())
    text = [t for r2, t in saves() if r2 is rs][2]
    d = json.loads(text)
    r = random.Random(2)
    seen = {"refused": 0, "loaded": 0}
    some = [v for v in REPLACEMENTS if not (isinstance(v, tuple) and v[0] == "long")]
    for path in paths(d):
        for value in some[::9] if len(path) > 2 else some[::2]:
            seen[check_outcome(rs, tamper(d, path, "replace", value, r), r)] += 1
        if path:
            seen[check_outcome(rs, tamper(d, path, "remove", None, r), r)] += 1
    assert seen["refused"] > 0 and seen["loaded"] > 0


# ---------------------------------------------------------------- huge inputs (bounded child)
HUGE = r'''
import json
import rulelang
from rulelang import GameError
rs = rulelang.load("games/station.rules")
good = json.loads(rs.new_game(2, seed=1).to_json())
compact = json.dumps(good, separators=(",", ":"))
assert '"notes":[]' in compact and '"turns":0' in compact

def attempt(label, text):
    try:
        g = rs.load_game(text)
        print(label, "LOADED", len(g.notes))
    except GameError as e:
        msg = str(e)
        print(label, "refused" if "\n" not in msg else "MULTILINE", msg[:100].replace("\n", " "))

for case in ARGS["cases"]:
    if case == "notes":
        attempt("notes", json.dumps({**good, "notes": "x" * 100_000_000}))
    elif case == "note":
        attempt("note", json.dumps({**good, "notes": ["x" * 50_000_000]}))
    elif case == "text":
        attempt("text", " " * (65 * 1024 * 1024) + json.dumps(good))
    elif case == "data":
        g2 = dict(good)
        name = next(k for k, v in good["data"].items() if isinstance(v, list))  # a list variable of the rules
        g2["data"] = {**good["data"], name: list(range(2_000_000))}
        attempt("data", json.dumps(g2))
    elif case == "nesting":
        attempt("nesting", compact.replace('"notes":[]', '"notes":' + "[" * 1_000_000 + "]" * 1_000_000))
    elif case == "digits":
        attempt("digits", compact.replace('"turns":0', '"turns":' + "9" * 1_000_000))
    elif case == "log":
        attempt("log", json.dumps({**good, "log": [{"player": 0, "action": "x" * 1000}] * 60_000}))
    elif case == "containers":
        assert '"notes":[]' in compact
        attempt("containers", compact.replace('"notes":[]', '"notes":[' + "[]," * 2_000_000 + '"x"]'))
    elif case == "bytes":
        attempt("bytes", b"\xff" * 70_000_000)
'''


@pytest.mark.parametrize("cases", [["notes", "note", "text", "bytes"],
                                   ["data", "nesting", "digits", "log", "containers"]])
def test_huge_saves_are_refused_in_bounded_time_and_memory(cases):
    out = run_bounded(HUGE, {"cases": cases}, seconds=60)
    assert out.ok, out.explain()
    for case in cases:
        assert f"{case} refused" in out.stdout or (case in ("data", "log") and f"{case} LOADED" in out.stdout), \
            out.stdout
    assert "MULTILINE" not in out.stdout
