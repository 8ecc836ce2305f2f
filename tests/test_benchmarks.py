"""The benchmark script's bookkeeping (not its timings): player-count sweeps, row keys, matching
rows against an older results file (``--compare`` must keep working with benchmarks/baseline.json),
and the target lines."""
from __future__ import annotations

import argparse
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _script(name, file):
    """A script of benchmarks/ as a module (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "benchmarks", file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _script("bench_run", "run.py")


def test_players_option(bench):
    assert bench.parse_players(None) is None
    assert bench.parse_players("3") == [3]
    assert bench.parse_players("4, 2,3,2") == [2, 3, 4]
    for bad in ("", "0", "2,", "x", "-1", "2.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            bench.parse_players(bad)


def test_player_counts_to_measure(bench):
    assert bench.counts_to_measure([4, 2, 3], None) == [2, 3, 4]  # every count by default
    assert bench.counts_to_measure([2, 3, 4], [3]) == [3]
    assert bench.counts_to_measure([2, 3, 4], [1, 4, 9]) == [4]
    assert bench.counts_to_measure([2], [3, 4]) == [2]  # none allowed: the smallest, as before


def test_row_keys(bench):
    assert bench.row_key("games/examples/tictactoe.rules", 2, [2]) == "games/examples/tictactoe.rules"
    assert bench.row_key("games/station.rules", 3, [2, 3, 4]) == "games/station.rules@3p"


def test_compare_matches_older_results_by_file_and_players(bench):
    """Results files from before player sweeps (the baseline of the trust round) have one row per file,
    at the smallest player count, keyed by path: such a row is matched by file and player count."""
    old = {"key": "games/station.rules", "kind": "rulelang", "name": "Station", "players": 2, "load_ms": 352.0,
           "games": 6, "playouts_per_s": 7.13, "ms_per_game": 140.2, "decisions_per_s": 5175.9,
           "mean_length": 712.8, "setup_ms": 2.5, "truncated": 0, "clones_per_s": 204883.3}
    baseline = {"rows": [old, {"key": "openspiel:python_tic_tac_toe", "kind": "openspiel", "players": 2,
                               "playouts_per_s": 4000.0}]}
    rows = [
        {**old, "key": f"games/station.rules@{old['players']}p", "file": "games/station.rules",
         "playouts_per_s": 2 * old["playouts_per_s"]},
        {**old, "key": "games/station.rules@9p", "file": "games/station.rules", "players": 9},
        {"key": "openspiel:python_tic_tac_toe", "players": 2, "playouts_per_s": 1.0},
    ]
    out = bench.compare_rows(rows, baseline)
    assert out[f"games/station.rules@{old['players']}p"]["playouts_per_s"] == pytest.approx(2.0)
    assert "games/station.rules@9p" not in out  # another player count is not compared
    assert "openspiel:python_tic_tac_toe" in out


def test_targets(bench):
    result = {
        "ratio_ours_vs_python_tic_tac_toe": 0.7,
        "ratio_connect4_vs_cpp_connect_four": 0.12,
        "rows": [{"key": "games/station.rules@3p", "file": "games/station.rules", "players": 3, "ms_per_game": 19.0},
                 {"key": "games/station.rules@2p", "file": "games/station.rules", "players": 2, "ms_per_game": 99.0}],
        "check_times": [{"key": "games/vega.rules", "cold_ms": 300.0, "warm_ms": 40.0}],
        "workers": {"key": "games/station.rules", "games": 60, "workers": 2, "speedup": 1.9},
    }
    got = {t["name"]: (t["target"], t["meets"]) for t in bench.targets(result)}
    assert got == {
        "tictactoe playouts / OpenSpiel python_tic_tac_toe": (3.0, False),
        "connect4 playouts / OpenSpiel C++ connect_four": (0.1, True),
        "Station, 3 players, ms per random game": (20.0, True),
        "rulelang check games/vega.rules, fresh process, cold": (250.0, False),
        "rulelang check games/vega.rules, fresh process, warm": (50.0, True),
        "simulate games/station.rules (60 games): 2 workers / 1": (1.8, True),
    }
    assert bench.targets({"rows": []}) == []  # nothing measured, no target line


def test_compare_extras(bench):
    base = {"check_times": [{"key": "games/vega.rules", "cold_ms": 800.0, "warm_ms": 800.0}],
            "workers": {"key": "games/station.rules", "players": 3, "games": 60, "workers": 2, "speedup": 1.5}}
    now = {"check_times": [{"key": "games/vega.rules", "cold_ms": 200.0, "warm_ms": None}],
           "workers": {"key": "games/station.rules", "players": 3, "games": 60, "workers": 2, "speedup": 1.8}}
    assert bench.compare_extras(now, base) == pytest.approx(
        {"check games/vega.rules cold": 4.0, "workers speed-up": 1.2})
    now["workers"]["games"] = 4  # another number of games: not comparable
    assert "workers speed-up" not in bench.compare_extras(now, base)
    assert bench.compare_extras(now, {}) == {}


@pytest.fixture(scope="module")
def ops():
    return _script("bench_ops", "ops.py")


def test_ops_reads_the_instruction_count_valgrind_writes(ops):
    text = ("==12== Cachegrind, a cache and branch-prediction profiler\n==12== \n"
            "==12== I   refs:      1,241,134,700\n")
    assert ops.instructions_of(text) == 1_241_134_700
    with pytest.raises(ValueError):
        ops.instructions_of("==12== no count here")


def test_ops_instructions_without_valgrind_is_one_line(ops, monkeypatch):
    monkeypatch.setattr(ops.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit) as stop:
        ops.instructions_per_game("games/examples/tictactoe.rules", 2, 1)
    assert "needs valgrind" in str(stop.value) and "\n" not in str(stop.value)


@pytest.mark.slow  # minutes of CPU: run by `pytest -m slow` (.ci/run does), not by the README's command
@pytest.mark.skipif(not __import__("shutil").which("valgrind"), reason="valgrind is not installed")
def test_ops_instruction_counts_are_the_same_from_run_to_run(ops):
    path = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
    first = ops.instructions_per_game(path, 2, 2)
    assert first > 10_000 and ops.instructions_per_game(path, 2, 2) == first


def test_the_newer_examples_are_paired_with_openspiel_games(bench):
    """Issue 35: each newer example game has an OpenSpiel reference row (keyed with its parameters) and a
    target line for its paired ratio."""
    assert bench.openspiel_key("oware") == "openspiel:oware"
    assert bench.openspiel_key("hex", {"board_size": 7}) == "openspiel:hex(board_size=7)"
    for rel, short, params in bench.NEW_GAME_PAIRS:
        assert os.path.exists(os.path.join(ROOT, rel)), rel
    result = {"rows": [], "new_game_ratios": {
        "games/examples/hex.rules": {"median": 0.3, "min": 0.2, "max": 0.4, "pairs": 5,
                                     "ours": "games/examples/hex.rules", "reference": "openspiel:hex(board_size=7)"},
        "games/examples/oware.rules": {"median": 0.03, "min": 0.02, "max": 0.04, "pairs": 5,
                                       "ours": "games/examples/oware.rules", "reference": "openspiel:oware"}}}
    got = {t["name"]: (t["target"], t["meets"]) for t in bench.targets(result)}
    assert got == {
        "games/examples/hex.rules playouts / OpenSpiel C++ hex(board_size=7)": (0.25, True),
        "games/examples/oware.rules playouts / OpenSpiel C++ oware": (0.25, False),
    }


def test_the_native_benchmark_pairs_every_example_with_openspiel():
    """benchmarks/native.py (the native path against the Python path): the six games of issue 35,
    tic-tac-toe and connect four, each a file that exists, and the three rulebooks; its geometric mean."""
    native = _script("bench_native", "native.py")
    rels = [rel for rel, _, _ in native.PAIRS]
    assert rels[:6] == [rel for rel, _, _ in native.NEW_GAME_PAIRS]
    assert {"games/examples/tictactoe.rules", "games/examples/connect4.rules"} <= set(rels)
    for rel in rels + [rel for rel, _ in native.RULEBOOKS]:
        assert os.path.exists(os.path.join(ROOT, rel)), rel
    assert abs(native._geo([0.5, 2.0]) - 1.0) < 1e-12 and native._geo([]) is None
