"""Exhaustive mode (interpreter/exhaustive.py, docs/validate.md "Exhaustive mode"): every reachable
state from the start, distinct positions and game-tree nodes counted as OpenSpiel counts them, with the
findings (errors, stuck positions, cycles, check()) and the bounds."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

import rulelang
from interpreter.exhaustive import explore_all, state_key
from rulelang.cli import cli
from tests.hostile.bounded import run_cli_bounded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "shrink")
TICTACTOE = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
KUHN = os.path.join(ROOT, "games", "examples", "kuhn_poker.rules")


def path(name):
    return os.path.join(DATA, name + ".rules")


def counts(r):
    return {k: v for k, v in r.items() if k not in ("findings", "seconds")}


@pytest.fixture(scope="module")
def tictactoe():
    return explore_all(rulelang.load(TICTACTOE), 2, 100_000)


def test_tictactoe_has_the_openspiel_counts(tictactoe):
    # OpenSpiel's tic_tac_toe: 5,478 distinct states (958 of them terminal), 549,946 nodes in its tree
    r = tictactoe
    assert r["complete"] and r["reason"] is None and not r["cyclic"]
    assert (r["positions"], r["nodes"], r["terminal_positions"]) == (5478, 549_946, 958)
    assert r["chance_positions"] == 0 and r["max_depth"] == 9 and r["findings"] == []


def test_tictactoe_counts_agree_with_pyspiel(tictactoe):
    pyspiel = pytest.importorskip("pyspiel")
    get_all_states = pytest.importorskip("open_spiel.python.algorithms.get_all_states")
    game = pyspiel.load_game("tic_tac_toe")
    states = get_all_states.get_all_states(game, -1, True, False, to_string=str)
    memo = {}

    def nodes(s):  # the whole tree, each subtree counted once per board (its string)
        key = str(s)
        if key not in memo:
            memo[key] = 1 if s.is_terminal() else 1 + sum(nodes(s.child(a)) for a in s.legal_actions())
        return memo[key]

    assert tictactoe["positions"] == len(states)
    assert tictactoe["terminal_positions"] == sum(1 for s in states.values() if s.is_terminal())
    assert tictactoe["nodes"] == nodes(game.new_initial_state())


def test_kuhn_poker_expands_chance_like_openspiel():
    # kuhn_poker: 58 states with the chance states (the root deal and the 3 after the first card), 30
    # terminal; every history is its own state there, so the tree has 58 nodes too
    r = explore_all(rulelang.load(KUHN), 2, 10_000)
    assert (r["positions"], r["nodes"], r["chance_positions"], r["terminal_positions"]) == (58, 58, 4, 30)
    pyspiel = pytest.importorskip("pyspiel")
    get_all_states = pytest.importorskip("open_spiel.python.algorithms.get_all_states")
    states = get_all_states.get_all_states(pyspiel.load_game("kuhn_poker"), -1, True, True, to_string=str)
    assert r["positions"] == len(states)
    assert r["chance_positions"] == sum(1 for s in states.values() if s.is_chance_node())
    assert r["terminal_positions"] == sum(1 for s in states.values() if s.is_terminal())


def test_a_transposition_is_one_position():
    rs = rulelang.load(TICTACTOE)

    def after(*ids):
        g = rs.new_game(2, seed=0)
        for i in ids:
            g.apply(i)
        return g
    a = after("place(0,0)", "place(1,1)", "place(0,1)")
    b = after("place(0,1)", "place(1,1)", "place(0,0)")
    assert a.log != b.log and state_key(a) == state_key(b)
    assert state_key(a) != state_key(after("place(0,0)", "place(1,1)", "place(0,2)"))


def _saved_position(game):
    """The reference: the saved state (to_dict) without the history, as JSON with sorted keys."""
    d = game.to_dict()
    for k in ("log", "notes", "turns"):
        d.pop(k, None)
    return json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("name", ["examples/tictactoe", "examples/kuhn_poker", "examples/leduc_poker",
                                  "examples/hex", "examples/dots_and_boxes", "station", "vega", "mars"])
def test_the_position_key_tells_positions_apart_exactly_as_the_saved_state_does(name):
    """Game.position_key (canonical forms, no JSON) groups positions as their saved states do: positions
    of random games, with transpositions (the same moves in other orders) and repeats among them."""
    import random
    rs = rulelang.load(os.path.join(ROOT, "games", name + ".rules"))
    by_key, by_saved = {}, {}
    for seed in range(3):
        rng = random.Random(seed)
        for start in range(2):  # two games from the same seed: their first positions are the same
            g = rs.new_game(min(rs.player_counts), seed=seed)
            for _ in range(60):
                if g.is_over():
                    break
                saved = _saved_position(g)
                by_key.setdefault(g.position_key(), set()).add(saved)
                by_saved.setdefault(saved, set()).add(g.position_key())
                g.apply(rng.choice(g.legal_actions()).id if start or rng.random() < 0.9 else
                        sorted(a.id for a in g.legal_actions())[0])
    assert all(len(saved) == 1 for saved in by_key.values())  # one key: one saved state
    assert all(len(keys) == 1 for keys in by_saved.values())  # one saved state: one key
    assert len(by_key) >= 9  # (Kuhn poker: 9 positions in these games)


def test_a_dead_end_is_found_with_the_path_to_it():
    # stuck.rules: P0 walk/wait/close, then P1. After P0's close, P1 has nothing legal. Positions: the
    # start; P1 to move (walk and wait lead there: a transposition); the stuck game; P0 to move with
    # the gate open or closed; the two ends (open, closed) = 7. Nodes: each end 1; P0 open: 1+1+1+1 = 4;
    # P0 closed: 1+1 = 2; P1: 1+4+2 = 7; the start: 1+7+7+1 (the stuck game) = 16.
    r = explore_all(rulelang.load(path("stuck")), 2, 1000)
    assert (r["positions"], r["nodes"], r["terminal_positions"], r["error_positions"]) == (7, 16, 3, 1)
    (f,) = r["findings"]
    assert f["kind"] == "stuck" and "P1 has no legal action" in f["message"] and "stuck.rules:" in f["message"]
    assert f["log"] == [{"player": 0, "action": "close"}] and f["count"] == 1


def test_a_run_time_error_is_found_on_the_first_path_in_legal_order():
    # trap.rules: depth first, pick(0) first: the first error is P0's pick(2) at the 9th decision, then
    # P1's pick(3). Positions: (moves, armed) with P0 or P1 to move: 1 + 9*2 before the end, 2 ends, and an
    # error state for each armed P1 position (moves 1, 3, 5, 7, 9) = 26.
    r = explore_all(rulelang.load(path("trap")), 2, 1000)
    assert (r["positions"], r["terminal_positions"], r["error_positions"]) == (26, 7, 5)
    (f,) = r["findings"]
    assert f["kind"] == "error" and f["message"].endswith("division by zero (10 / 0) (in pick)")
    assert [e["action"] for e in f["log"]] == ["pick(0)"] * 8 + ["pick(2)", "pick(3)"]
    assert f["count"] == 5


def test_check_runs_once_on_every_distinct_position():
    rs = rulelang.load(path("trap"))
    seen = []

    def check(g):
        seen.append(state_key(g))
        if g.view(None)["vars"]["armed"]:
            return "armed" if len(seen) % 2 else {"kind": "invariant", "message": "armed", "name": "not_armed"}
        return None
    r = explore_all(rs, 2, 1000, check=check)
    assert len(seen) == len(set(seen)) == r["positions"] - r["error_positions"]
    kinds = {(f["kind"], f["message"]): f for f in r["findings"]}
    armed = kinds[("check", "armed")]["count"] + kinds[("invariant", "armed")]["count"]
    assert armed == 10  # armed at moves 1..9, and at the end
    first = min((f for f in r["findings"] if f["message"] == "armed"), key=lambda f: len(f["log"]))
    assert [e["action"] for e in first["log"]] == ["pick(0)"] * 8 + ["pick(2)"]
    assert kinds[("invariant", "armed")]["name"] == "not_armed"
    r = explore_all(rs, 2, 1000, check=lambda g: ["a", "b"] if g.view(None)["vars"]["moves"] == 10 else [])
    assert sorted((f["message"], f["count"]) for f in r["findings"] if f["kind"] == "check") == [("a", 2), ("b", 2)]


def test_a_cycle_makes_the_tree_infinite():
    r = explore_all(rulelang.load(path("cycle")), 1, 1000)
    assert r["complete"] and r["cyclic"] and r["nodes"] is None
    assert (r["positions"], r["terminal_positions"]) == (4, 2)
    (f,) = r["findings"]
    assert f["kind"] == "cycle" and f["log"] == [{"player": 0, "action": "wait"}]


def test_the_bounds_stop_the_walk_and_say_incomplete():
    rs = rulelang.load(TICTACTOE)
    r = explore_all(rs, 2, 100)
    assert not r["complete"] and r["reason"] == "max_states" and r["positions"] == 100 and r["nodes"] is None
    r = explore_all(rs, 2, 100_000, max_seconds=0)
    assert not r["complete"] and r["reason"] == "time" and r["nodes"] is None and r["positions"] < 5478
    r = explore_all(rs, 2, 100_000, max_depth=3)
    assert not r["complete"] and r["reason"] == "max_depth" and r["max_depth"] == 3
    with pytest.raises(ValueError):
        explore_all(rs, 2, 0)
    with pytest.raises(ValueError, match="is for 2 players, not 3"):
        explore_all(rs, 3, 10)


def test_the_walk_is_deterministic_and_the_same_on_both_backends():
    for p, n in ((path("trap"), 2), (KUHN, 2), (path("push"), 1)):
        rs = rulelang.load(p)
        a, b = explore_all(rs, n, 10_000), explore_all(rs.with_backend("closures"), n, 10_000)
        assert counts(a) == counts(b) and a["findings"] == b["findings"]
        assert counts(explore_all(rs, n, 10_000)) == counts(a)


def test_an_error_in_setup_is_a_finding():
    rs = rulelang.loads('game "Broken" { players 1 }\nvar n: int = 0\nsetup { n = 6 / n }\n'
                        'action go { }\nflow { turn 0 { offer [go] to 0 } }\n')
    r = explore_all(rs, 1, 10)
    assert r["positions"] == 0 and r["nodes"] == 0
    (f,) = r["findings"]
    assert f["kind"] == "error" and "division by zero" in f["message"] and f["log"] == []


def test_the_command_prints_the_counts():
    r = CliRunner().invoke(cli, ["explore-all", TICTACTOE, "--players", "2", "--max-states", "10000"])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == ("Tic-tac-toe, 2 players: 5,478 positions, 549,946 tree nodes (958 terminal, "
                                "0 chance), complete")
    r = CliRunner().invoke(cli, ["explore-all", path("stuck"), "--json"])
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["positions"] == 7 and data["findings"][0]["kind"] == "stuck"
    r = CliRunner().invoke(cli, ["explore-all", path("trap"), "--max-states", "5"])
    assert r.exit_code == 0 and "incomplete: stopped at the max_states bound" in r.stdout
    r = CliRunner().invoke(cli, ["explore-all", path("trap"), "--max-states", "0"])
    assert r.exit_code == 2


def test_a_large_game_stops_at_the_bound_in_a_bounded_process():
    out = run_cli_bounded(["explore-all", "games/station.rules", "--players", "4", "--max-states", "200",
                           "--json"], seconds=120)
    assert out.ok, out.explain()
    data = json.loads(out.stdout)
    assert not data["complete"] and data["reason"] == "max_states" and data["positions"] == 200


def test_a_check_that_fails_is_a_finding_not_a_crash():
    from interpreter.errors import GameError

    def check(g):
        if g.view(None)["vars"]["moves"] == 3:
            raise GameError("rules.rules:9:3: invariant 'small' cannot be computed")
        return None
    r = explore_all(rulelang.load(path("trap")), 2, 1000, check=check)
    (f,) = [f for f in r["findings"] if "cannot be computed" in f["message"]]
    assert f["kind"] == "error" and f["count"] == 2 and len(f["log"]) == 3  # moves 3, armed or not
