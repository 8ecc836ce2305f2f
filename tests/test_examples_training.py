"""The training demo (examples/train_openspiel.py, docs/ecosystem.md): OpenSpiel's own tabular Q-learner
trains by self-play on tic-tac-toe's rule file through OpenSpiel's `rl_environment` (which needs the
adapter's information state tensors), and then beats random play from either seat: its mean return
against OpenSpiel's `RandomAgent` is clearly above that of a random agent in the same seat. A test-sized
run (1,000 self-play games, a few seconds of CPU); seeded, so the same every time."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("pyspiel")

ROOT = Path(__file__).resolve().parents[1]


def _example():
    spec = importlib.util.spec_from_file_location("train_openspiel", ROOT / "examples" / "train_openspiel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # thirteen seconds of CPU: run by `pytest -m slow` (.ci/run does)
def test_a_q_learner_trained_on_the_tictactoe_file_beats_random_play():
    ex = _example()
    game, agents = ex.train(str(ROOT / "games" / "examples" / "tictactoe.rules"), episodes=1000, seed=0)
    for seat in (0, 1):
        learned = ex.mean_return(game, agents, seat, games=200, seed=1)
        baseline = ex.mean_return(game, None, seat, games=200, seed=1)
        assert learned > baseline + 0.1, (seat, learned, baseline)
    again = ex.mean_return(game, agents, 0, games=50, seed=4)
    assert again == ex.mean_return(game, agents, 0, games=50, seed=4)  # evaluation does not learn


def test_the_script_prints_both_seats(capsys):
    _example().main([str(ROOT / "games" / "examples" / "kuhn_poker.rules"), "--episodes", "50", "--games", "20"])
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["seat 0", "seat 1"]
