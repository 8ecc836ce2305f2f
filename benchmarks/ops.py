#!/usr/bin/env python
"""Python bytecodes executed per random game: a speed measure that does not depend on the machine's load.

    python benchmarks/ops.py RULES PLAYERS [GAMES]

Plays GAMES seeded random games (seeds 0.., each decision a random legal action from random.Random(seed))
and counts the bytecodes Python runs for them (sys.settrace with opcode events), setup included and the
first game's code generation left out. Timings on a shared machine move by tens of percent; this count
does not move at all, so it shows a change of 1% in the code a game runs. It is not time: a bytecode
that calls a function or builds a list costs more than one that adds two numbers, so confirm a change
with benchmarks/run.py. Runs about 50 times slower than a plain game.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def bytecodes_per_game(path: str, players: int, games: int) -> int:
    import rulelang

    rs = rulelang.load(path)
    rs.new_game(players, seed=0)  # code is generated at the first game: not counted
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode":
            count += 1
        return tracer

    for seed in range(games):
        rng = random.Random(seed)
        sys.settrace(tracer)
        try:
            g = rs.new_game(players, seed=seed)
            while not g.is_over():
                g.apply(rng.choice(g.legal_actions()))
        finally:
            sys.settrace(None)
    return count // games


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rules")
    p.add_argument("players", type=int)
    p.add_argument("games", type=int, nargs="?", default=5)
    a = p.parse_args()
    print(f"{a.rules} {a.players}p: {bytecodes_per_game(a.rules, a.players, a.games):,} bytecodes per game")


if __name__ == "__main__":
    main()
