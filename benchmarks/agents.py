"""MCTS against random play: win / draw / loss rates on tic-tac-toe and connect four (and Kuhn poker's
mean chips, a game of hidden information), with MCTS in each seat in turn.

    python benchmarks/agents.py                              # 200 playouts; 100 + 20 + 400 games
    python benchmarks/agents.py --playouts 50 --games 20     # quicker
    python benchmarks/agents.py --only tictactoe --json /tmp/agents.json

Game i is played with seed i; the agents are seeded with interpreter.agents.agent_seed(i, seat), as
`rulelang play --seed i --agents mcts:N,random` seats them, so any game can be replayed from the
command line. Not a test (tests/test_mcts.py checks that MCTS wins clearly); results are recorded in
benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rulelang  # noqa: E402
from interpreter.agents import ChanceAgent, RandomAgent, agent_seed  # noqa: E402
from interpreter.mcts import MCTSAgent  # noqa: E402
from interpreter.simulate import play_game  # noqa: E402

GAMES = [  # (name, file, games by default)
    ("tictactoe", "games/examples/tictactoe.rules", 100),
    ("connect4", "games/examples/connect4.rules", 20),
    ("kuhn_poker", "games/examples/kuhn_poker.rules", 400),
]


def wilson(k, n, z=1.96):
    """The 95% Wilson score interval of a rate k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def run(path, games, playouts):
    rs = rulelang.load(str(ROOT / path))
    rows = {}
    for seat in (0, 1):
        counts = {"win": 0, "draw": 0, "loss": 0}
        score = 0
        start = time.perf_counter()
        for i in range(seat, games, 2) if games > 1 else [0]:
            game = rs.new_game(2, seed=i)
            agents = [RandomAgent(agent_seed(i, s)) for s in range(2)]
            agents[seat] = MCTSAgent(playouts, seed=agent_seed(i, seat))
            play_game(game, agents, chance_agent=ChanceAgent(agent_seed(i, "chance")))
            w = game.winners()
            counts["win" if w == [seat] else "draw" if seat in w else "loss"] += 1
            score += game.scores()[seat]
        n = sum(counts.values())
        rows[f"mcts as P{seat}"] = {**counts, "games": n, "mean_score": score / n if n else 0.0,
                                    "win_95": wilson(counts["win"], n),
                                    "seconds_per_game": (time.perf_counter() - start) / n if n else 0.0}
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--playouts", type=int, default=200, help="MCTS playouts per decision (default 200)")
    ap.add_argument("--games", type=int, default=None, help="games per game file, half with MCTS in each seat")
    ap.add_argument("--only", default="", help="only the games whose name contains this")
    ap.add_argument("--json", dest="json_path", help="also write the results here")
    args = ap.parse_args(argv)
    out = {"playouts": args.playouts, "games": {}}
    print(f"MCTS ({args.playouts} playouts per decision) against random play")
    print(f"{'game':<12} {'seat':<11} {'games':>5} {'win':>6} {'draw':>6} {'loss':>6}  {'win 95% CI':<13} "
          f"{'mean score':>10} {'s/game':>7}")
    for name, path, default in GAMES:
        if args.only not in name:
            continue
        rows = run(path, args.games or default, args.playouts)
        out["games"][name] = rows
        for seat, r in rows.items():
            n = r["games"]
            lo, hi = r["win_95"]
            print(f"{name:<12} {seat:<11} {n:>5} {r['win'] / n:>6.0%} {r['draw'] / n:>6.0%} {r['loss'] / n:>6.0%}  "
                  f"{lo:>5.0%}–{hi:<6.0%} {r['mean_score']:>10.2f} {r['seconds_per_game']:>7.2f}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
